"""Case: Triton y = a*x + y over 4M fp32 elements with a persistent-style loop
launched on a grid of only 16 programs.

Planted bottleneck: 16 CTAs occupy 16 of 132 SMs; DRAM bandwidth stays a few
percent of peak (low_parallelism). Fix: launch one program per block of
elements (or at least several per SM).
"""
import torch
import triton
import triton.language as tl
from _suite import run

N = 4 * 1024 * 1024
PROGRAMS = 16


@triton.jit
def saxpy_loop(x_ptr, y_ptr, n, a, BLOCK: tl.constexpr, NPROG: tl.constexpr):
    pid = tl.program_id(0)
    for start in range(pid * BLOCK, n, NPROG * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        m = offs < n
        x = tl.load(x_ptr + offs, mask=m)
        y = tl.load(y_ptr + offs, mask=m)
        tl.store(y_ptr + offs, a * x + y, mask=m)


x = torch.randn(N, device="cuda")
y = torch.randn(N, device="cuda")


def step():
    saxpy_loop[(PROGRAMS,)](x, y, N, 1.0001, BLOCK=1024, NPROG=PROGRAMS)


run("tr_low_parallelism", step, default_steps=5, default_warmup=1)
