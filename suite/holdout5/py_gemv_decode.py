"""Holdout-5 case: decode-style MLP with 4 tokens: h = (h @ W_up.T) @ W_down.T through 4 layers of bf16
weights, 8192 x 28672 each (448 MiB per matrix, 3.5 GiB per step). With 4 rows, each weight element is read
once for 2 x 4 FLOPs: 4 FLOP per byte, far below the bf16 ridge point (~200 FLOP/B on an H200), so every
product is bound by streaming its weights from DRAM; cuBLAS does that close to DRAM bandwidth.

Ground truth: near_peak (DRAM-bound by construction; the kernels are near their byte floor). The lever is
algorithmic: more tokens per weight read (batching), not kernel tuning and not tensor-core utilisation.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import torch  # noqa: E402
from _suite import run  # noqa: E402

D, F, LAYERS, TOKENS = 8192, 28672, 4, 4
g = torch.Generator(device="cuda").manual_seed(55)
up = [torch.randn(F, D, device="cuda", dtype=torch.bfloat16, generator=g) * D ** -0.5 for _ in range(LAYERS)]
down = [torch.randn(D, F, device="cuda", dtype=torch.bfloat16, generator=g) * F ** -0.5 for _ in range(LAYERS)]
h0 = torch.randn(TOKENS, D, device="cuda", dtype=torch.bfloat16, generator=g)


def step():
    h = h0
    for wu, wd in zip(up, down):
        h = (h @ wu.t()) @ wd.t()
    return h


run("py_gemv_decode", step, default_steps=10)
