"""Holdout-5 case: a batch built from 1024 separate 4 KB CPU tensors (pageable), each sent to the GPU with its
own .to("cuda"), then stacked and reduced. Each call costs tens of microseconds of host time in PyTorch and the
driver (a pageable copy is staged through a driver buffer and the call returns only after staging), while each
copy moves only 4 KB (a couple of microseconds on the copy engine): the GPU idles between copies.

Ground truth: host / launch_overhead (per-call overhead of many tiny copies; the 4 MB per step is no volume
problem). Fix: build the batch on the CPU (one torch.stack into a pinned buffer) and upload it with ONE
non_blocking copy: ~1000x fewer calls.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import torch  # noqa: E402
from _suite import run  # noqa: E402

torch.manual_seed(56)
samples = [torch.randn(1024) for _ in range(1024)]  # 1024 x 4 KB, pageable


def step():
    parts = [s.to("cuda") for s in samples]
    batch = torch.stack(parts)
    return batch.sum(dim=1)


run("py_small_uploads", step, default_steps=10)
