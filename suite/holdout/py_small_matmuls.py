"""Holdout case: a per-token decode-style loop of 300 small (64x64) bf16 matrix products per step.

Ground truth: launch_overhead (host-bound): each product is ~3 us of GPU work behind ~10 us of eager dispatch.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import torch  # noqa: E402
from _suite import run  # noqa: E402

w = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16) * 0.1
h0 = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16)


def step():
    h = h0
    for _ in range(300):
        h = torch.tanh(h @ w)
    return h


run("py_small_matmuls", step, default_steps=20)
