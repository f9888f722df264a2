"""Case: Triton 4-bin histogram of 64M int32 values with one global atomic add
per element.

Planted bottleneck: all updates serialize on 4 addresses in L2
(atomic_contention). Fix: reduce within the program first (tl.histogram or a
per-block sum per bin), then one atomic per bin per program.
"""
import torch
import triton
import triton.language as tl
from _suite import run

N = 64 * 1024 * 1024


@triton.jit
def hist4(v_ptr, bins_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(v_ptr + offs, mask=m, other=0)
    tl.atomic_add(bins_ptr + (v & 3), 1, mask=m)


v = torch.randint(0, 1 << 30, (N,), device="cuda", dtype=torch.int32)
bins = torch.zeros(4, device="cuda", dtype=torch.int32)


def step():
    bins.zero_()
    hist4[(triton.cdiv(N, 1024),)](v, bins, N, BLOCK=1024)


step()
torch.cuda.synchronize()
assert int(bins.sum()) == N
run("tr_atomic_hist", step, default_steps=10)
