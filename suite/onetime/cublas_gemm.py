"""One-time case: cuBLAS GEMMs repeated back to back after cuBLAS/cuBLASLt initialisation.

DTYPE=fp32 (TF32 off): 8192^3 fp32 GEMMs, 5 of them: the FMA path, no tensor cores (no_tensor_cores).
DTYPE=bf16: 8192^3 bf16 GEMMs, 20 of them: the cuBLAS tensor-core kernel, near peak (near_peak).
Ground truth (suite/onetime.toml): the first matmul pays cuBLAS handle creation and kernel-module
loading (one-time library initialisation, reported apart); the steady state is the repeated GEMMs:
kernel-bound. No step markers.
"""
import os

import torch
from _ot import env_int, whole_program

DTYPE = os.environ.get("DTYPE", "fp32")
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
dt = torch.bfloat16 if DTYPE == "bf16" else torch.float32
reps = env_int("REPS", 20 if DTYPE == "bf16" else 5)

with whole_program():
    a = torch.randn(8192, 8192, device="cuda", dtype=dt)
    b = torch.randn(8192, 8192, device="cuda", dtype=dt)
    for _ in range(reps):
        c = a @ b
    torch.cuda.synchronize()
print(f"cublas_gemm {DTYPE}: done", float(c[0, 0]))
