"""Holdout-6 case: every step computes a 256 MB fp32 feature map on the GPU (~1 ms of elementwise work) and then
"logs" it with feats.cpu(): a device-to-host copy into freshly allocated, pageable host memory. A pageable
download is staged through a driver bounce buffer and copied again by the CPU, so it runs at a few GB/s (tens
of milliseconds for 256 MB) instead of the ~50 GB/s a pinned destination gets over PCIe/C2C, and .cpu() blocks
until it is done. The copy is nearly all of each step; the GPU idles for the rest.

Ground truth: transfer / pageable_transfer (D2H into pageable memory). Fix: copy into a preallocated pinned
buffer with non_blocking=True (and download only what is logged, or every N steps).
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import torch  # noqa: E402
from _suite import run  # noqa: E402

torch.manual_seed(65)
x = torch.randn(8192, 8192, device="cuda")  # 256 MB
w = torch.randn(8192, device="cuda")
logged = []


def step():
    feats = torch.tanh(x * w + 0.5)
    logged.append(feats.cpu())  # 256 MB into pageable memory, blocking
    if len(logged) > 2:
        logged.pop(0)


run("py_d2h_pageable", step, default_steps=10)
