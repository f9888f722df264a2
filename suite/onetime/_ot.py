"""Shared bits of the one-time-work suite's Python programs.

These programs mark NO steps (no NVTX ranges, no ProfilerStep annotations):
kernel-profiler must find the repeated part from the GPU work itself.
`--torch-trace PATH` records the WHOLE program with the PyTorch profiler (from
before the first CUDA call to the end), so the one-time work is in the trace too.
"""
from __future__ import annotations

import argparse
import os

import torch


def options() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--torch-trace", default=None, help="write a Kineto trace of the whole program here")
    return p.parse_known_args()[0]


class whole_program:
    """Context manager: the PyTorch profiler around the whole program when --torch-trace is given."""

    def __init__(self) -> None:
        self.path = options().torch_trace
        self.prof = None

    def __enter__(self):
        if self.path:
            self.prof = torch.profiler.profile(
                activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA])
            self.prof.__enter__()
        return self

    def __exit__(self, *exc):
        torch.cuda.synchronize()
        if self.prof is not None:
            self.prof.__exit__(*exc)
            self.prof.export_chrome_trace(self.path)
        return False


def env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))
