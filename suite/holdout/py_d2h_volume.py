"""Holdout case: each step computes on a 512 MB tensor for a few hundred microseconds, then copies the
whole result back into a pinned host buffer (checkpoint-style), and waits for it.

Ground truth: transfer_volume (pinned already: the volume itself dominates).
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import torch  # noqa: E402
from _suite import run  # noqa: E402

x = torch.randn(128 * 1024 * 1024, device="cuda")
host = torch.empty(x.shape, dtype=x.dtype, pin_memory=True)


def step():
    y = x * 1.0001
    host.copy_(y, non_blocking=True)
    torch.cuda.synchronize()


run("py_d2h_volume", step, default_steps=8)
