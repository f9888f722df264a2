"""Case: Triton kernel that writes y = 2 * x^T for a 8192 x 8192 fp32 matrix by
walking the output in order and gathering the input by column.

Planted bottleneck: consecutive lanes read addresses 32 KB apart (one row of x
each), so every 4-byte load of a warp touches 32 sectors (uncoalesced_global).
Fix: load tiles of x along rows and transpose in registers/shared memory
(a 2-D block with tl.trans), so both the loads and the stores are contiguous.
"""
import torch
import triton
import triton.language as tl
from _suite import run

N = 8192


@triton.jit
def gather_transpose(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    row = offs // n  # output row == input column
    col = offs % n   # output column == input row
    v = tl.load(x_ptr + col * n + row)
    tl.store(y_ptr + offs, v * 2.0)


x = torch.randn(N, N, device="cuda")
y = torch.empty_like(x)


def step():
    gather_transpose[(N * N // 1024,)](x, y, N, BLOCK=1024)


step()
torch.cuda.synchronize()
assert torch.equal(y[5, 7], x[7, 5] * 2.0)
run("tr_strided", step, default_steps=20)
