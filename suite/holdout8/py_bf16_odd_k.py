"""Holdout-8 one-time case (no step markers): a bf16 projection y = a @ w with a [8192, 8191] activation and a
[8191, 8192] weight, multiplied 40 times (a benchmark loop over a checkpoint whose inner dimension is 8191).
One-time work first: both operands are made on the CPU (a "checkpoint load") and uploaded with .cuda() (two
pageable 134 MB copies), and the first matmul pays cuBLAS/cuBLASLt initialisation (handle, workspace,
heuristics, module loading). Steady state: 40 GEMMs of 1.1 TFLOP each. With K = 8191 the rows of `a` are
16382 bytes apart -- not 16-byte aligned -- so cuBLAS cannot use its Hopper kernels (TMA + wgmma need 16-byte
aligned rows) and falls back to an alignment-1 tensor-core kernel that loads operands element by element:
several times the ~1.4 ms an aligned 8192^3 bf16 GEMM takes on the H200.

Ground truth (steady state): compute / instruction_bound -- the fallback GEMM kernel is limited by its own
instruction stream (narrow loads, legacy mma.sync tiles), far from the tensor-core roofline; the uploads and the
cuBLAS start-up are one-time work to report apart. Fix at the call site: pad K to a multiple of 8 (8192; zero
columns/rows do not change the product), once, before the loop: the GEMM time should drop several-fold and the
tensor-core throughput rise to near the aligned kernel's.
PAD=1 (the fixed twin): the same operands padded once with zeros to K = 8192 on the GPU.
"""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "onetime"))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from _ot import env_int, whole_program  # noqa: E402

PAD = os.environ.get("PAD") == "1"
M, K, N = 8192, 8191, 8192
g = torch.Generator().manual_seed(82)
a_cpu = torch.randn(M, K, generator=g).to(torch.bfloat16)  # the "checkpoint", on the CPU
w_cpu = (torch.randn(K, N, generator=g) * 0.02).to(torch.bfloat16)

with whole_program():
    a = a_cpu.cuda()  # one-time pageable uploads
    w = w_cpu.cuda()
    if PAD:  # the call-site fix: K 8191 -> 8192 with a zero column of a and a zero row of w
        a = F.pad(a, (0, 1))
        w = F.pad(w, (0, 0, 0, 1))
    for _ in range(env_int("REPS", 40)):
        y = a @ w
    torch.cuda.synchronize()
print("bf16_odd_k: done", PAD, tuple(a.shape), float(y[0, 0]))
