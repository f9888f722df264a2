"""Holdout case: torch.softmax over the last dim of a 65536 x 4096 fp32 tensor (1 GiB in, 1 GiB out).

Ground truth: near_peak: PyTorch's fused softmax kernel streams close to DRAM bandwidth.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import torch  # noqa: E402
from _suite import run  # noqa: E402

x = torch.randn(65536, 4096, device="cuda")


def step():
    return torch.softmax(x, dim=-1)


run("py_torch_softmax", step, default_steps=20)
