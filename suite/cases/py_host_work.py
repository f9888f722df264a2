"""Case: each step runs ~1 ms of bf16 matrix products, then prepares the next
batch on the CPU with NumPy (generating and sorting 1M values, several ms).

Planted bottleneck: the GPU waits for the host's own computation between steps;
there are few launches and no synchronization in the loop (host_work).
Fix: prepare batches ahead of time in a DataLoader worker / another thread, or
do the preprocessing on the GPU.
"""
import numpy as np
import torch
from _suite import run

rng = np.random.default_rng(0)
a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
scale = 1.0


def step():
    global scale
    c = a
    for _ in range(6):
        c = torch.matmul(c, b) * 0.01
    batch = np.sort(rng.random(1_000_000))
    scale = float(batch[len(batch) // 2])
    c.mul_(scale)


run("py_host_work", step, default_steps=20)
