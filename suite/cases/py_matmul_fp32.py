"""Case: fp32 8192^3 matrix product with TF32 disabled (PyTorch's default for
matmul is `allow_tf32 = False`, i.e. 'highest' precision).

Planted bottleneck: cuBLAS runs the product on the FP32 FMA pipe; it is close
to the FP32 ceiling (~67 TFLOP/s) but the tensor cores are idle
(no_tensor_cores). Fix: `torch.backends.cuda.matmul.allow_tf32 = True`
(or `torch.set_float32_matmul_precision('high')`) or bf16 inputs.
"""
import torch
from _suite import run

torch.backends.cuda.matmul.allow_tf32 = False
a = torch.randn(8192, 8192, device="cuda")
b = torch.randn(8192, 8192, device="cuda")


def step():
    return torch.matmul(a, b)


run("py_matmul_fp32", step, default_steps=8, default_warmup=2)
