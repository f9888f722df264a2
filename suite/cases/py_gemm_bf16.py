"""Case: bf16 8192^3 matrix product through torch.matmul (cuBLAS).

Ground truth: near_peak. cuBLAS runs it on the Hopper tensor cores close to the
measured ~785 TFLOP/s bf16 ceiling; nothing to fix in the kernel.
"""
import torch
from _suite import run

a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)


def step():
    return torch.matmul(a, b)


run("py_gemm_bf16", step, default_steps=20)
