"""Shared driver for the Python capture-suite programs.

Each program defines a `step()` and calls `run(step, ...)`. The driver runs
warm-up steps, then the measured steps, each inside an NVTX range "step" (seen
by Nsight Systems) and a `ProfilerStep#N` annotation (seen by the PyTorch
profiler). `--torch-trace PATH` records the measured steps with
torch.profiler and exports a Kineto trace. It prints the program's own
per-step time (wall clock, one synchronization at the end).
"""
from __future__ import annotations

import argparse
import contextlib
import os
import time

import torch


def options(default_steps: int, default_warmup: int = 3) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=int(os.environ.get("STEPS", default_steps)))
    p.add_argument("--warmup", type=int, default=default_warmup)
    p.add_argument("--torch-trace", default=None, help="write a Kineto trace of the measured steps here")
    return p.parse_known_args()[0]


def run(name: str, step, default_steps: int, default_warmup: int = 3) -> None:
    opts = options(default_steps, default_warmup)
    for _ in range(opts.warmup):
        step()
    torch.cuda.synchronize()
    prof = None
    if opts.torch_trace:
        prof = torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        )
        prof.__enter__()
    t0 = time.perf_counter()
    for i in range(opts.steps):
        torch.cuda.nvtx.range_push("step")
        ctx = torch.profiler.record_function(f"ProfilerStep#{i}") if prof else contextlib.nullcontext()
        with ctx:
            step()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - t0
    if prof is not None:
        prof.__exit__(None, None, None)
        prof.export_chrome_trace(opts.torch_trace)
    print(f"{name}: {opts.steps} steps, mean step {elapsed / max(opts.steps, 1) * 1e3:.4f} ms")
