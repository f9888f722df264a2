"""Run a Python program under the PyTorch profiler and export a Kineto trace (the timeline when nsys is absent).

    python -m kernel_profiler.agent.torch_trace OUT.json -- script.py [args...]
    python -m kernel_profiler.agent.torch_trace OUT.json -- -m package.module [args...]

Runs in the target's own interpreter (it must have torch); the whole run is
recorded, CPU and CUDA activity, and written to OUT.json even if the program
raises. Imports torch only here, never in kernel-profiler itself.
"""
from __future__ import annotations

import runpy
import sys


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: python -m kernel_profiler.agent.torch_trace OUT.json -- script.py [args...]", file=sys.stderr)
        return 2
    out, rest = argv[0], argv[2:]
    import torch
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
    module = rest[0] == "-m"
    target = rest[1] if module else rest[0]
    sys.argv = ([target] + rest[2:]) if module else rest
    if not module:  # as `python script.py` does: the script's folder comes first on sys.path
        import os

        sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
    code = 0
    prof = profile(activities=activities)
    prof.__enter__()
    try:
        if module:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(target, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        prof.__exit__(None, None, None)
        prof.export_chrome_trace(out)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
