"""Holdout case: a loop that calls torch.cuda.synchronize() after every op "to time it", around ~50 us
ops, then does ~100 us of host-side logging per op.

Ground truth: host_sync.
"""
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import torch  # noqa: E402
from _suite import run  # noqa: E402

a = torch.randn(4096, 4096, device="cuda")
timings = []


def step():
    x = a
    for _ in range(10):
        t0 = time.perf_counter()
        x = torch.sin(x) * 0.5
        torch.cuda.synchronize()
        timings.append(time.perf_counter() - t0)
        end = time.perf_counter() + 100e-6  # host-side logging of the timing
        while time.perf_counter() < end:
            pass
    return x


run("py_sync_per_op", step, default_steps=20)
