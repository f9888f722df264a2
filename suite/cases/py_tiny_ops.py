"""Case: an optimizer-like update done as 200 separate tiny tensor ops per step
on a 1024-element tensor (PyTorch eager).

Planted bottleneck: every op costs ~10 us of Python/ATen dispatch and a kernel
launch for ~2 us of GPU work; the GPU idles between kernels (launch_overhead).
Fix: fuse the update (torch.compile, a foreach/fused op) or batch many small
tensors into one.
"""
import torch
from _suite import run

x = torch.randn(1024, device="cuda")


def step():
    for _ in range(100):
        x.mul_(1.0001).add_(0.0001)


run("py_tiny_ops", step, default_steps=50)
