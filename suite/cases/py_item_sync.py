"""Case: a training-style loop that reads the loss back with `.item()` every
iteration and then updates host-side running statistics (~200 us of Python,
a busy-wait standing in for logging/metrics code).

Planted bottleneck (default): `.item()` blocks the host until the GPU has
finished (~0.3 ms of bf16 matrix products per iteration); the host's
bookkeeping and the next dispatch then run while the GPU sits idle with an
empty queue: host and GPU work serialize (host_sync).
FIXED=1: the loss is accumulated on the GPU and read once per step (10
iterations); the bookkeeping overlaps the GPU's work.
"""
import os
import time

import torch
from _suite import run

FIXED = os.environ.get("FIXED") == "1"
w = torch.randn(2048, 4096, device="cuda", dtype=torch.bfloat16) * 0.02
x = torch.randn(4096, 2048, device="cuda", dtype=torch.bfloat16)
history: list[float] = []


def host_bookkeeping(seconds: float = 200e-6) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def step():
    acc = torch.zeros((), device="cuda")
    for it in range(10):
        h = x @ w           # 4096 x 4096 x 2048
        h = (h @ x) * 1e-3  # 4096 x 2048 x 4096
        loss = h.float().square().mean()
        if FIXED:
            acc += loss
        else:
            history.append(loss.item())
        host_bookkeeping()
    if FIXED:
        history.append(acc.item())


run("py_item_sync", step, default_steps=20)
