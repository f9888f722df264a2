"""Case: tanh-GELU of a 64M-element fp32 tensor written out by hand.

Planted bottleneck (default): eight separate elementwise kernels (pow, mul,
add, mul, tanh, add, mul, mul), each streaming 256-512 MB through DRAM at
near-peak bandwidth: ~8x the bytes one fused pass needs (excess_dram_traffic).
FIXED=1: torch.nn.functional.gelu(x, approximate="tanh"), one kernel.
"""
import os

import torch
from _suite import run

FIXED = os.environ.get("FIXED") == "1"
x = torch.randn(64 * 1024 * 1024, device="cuda")


def step():
    if FIXED:
        return torch.nn.functional.gelu(x, approximate="tanh")
    return 0.5 * x * (1.0 + torch.tanh(0.7978845608 * (x + 0.044715 * x**3)))


run("py_unfused_gelu", step, default_steps=20)
