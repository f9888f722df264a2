"""Holdout-6 case: a batch arrives from the data pipeline as Python lists (2048 rows of 256 Python floats) and
each step turns it into a GPU tensor with torch.tensor(rows, dtype=torch.float32, device="cuda"). Converting
524288 Python float objects one by one into a tensor is CPU work of tens of milliseconds per step; the upload
that follows is only 2 MB, and the GPU work (a 2048x256 @ 256x4096 product, a GELU and a row sum) takes well
under a millisecond. The GPU idles while the interpreter walks the lists.

Ground truth: host / host_work (CPU-side tensor creation from Python lists every step). Fix: have the pipeline
produce arrays (NumPy / a pinned torch tensor, torch.from_numpy) or build the batch in a DataLoader worker;
then one 2 MB copy per step.
"""
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import torch  # noqa: E402
from _suite import run  # noqa: E402

random.seed(66)
batches = [[[random.random() for _ in range(256)] for _ in range(2048)] for _ in range(2)]  # 2 x 524288 floats
w = torch.randn(256, 4096, device="cuda")
n = [0]


def step():
    rows = batches[n[0] % 2]
    n[0] += 1
    x = torch.tensor(rows, dtype=torch.float32, device="cuda")  # Python floats -> tensor on the CPU, then upload
    h = torch.nn.functional.gelu(x @ w)
    return h.sum(dim=1)


run("py_tensor_from_list", step, default_steps=10)
