"""Holdout-8 case: boolean-mask selection in a loop. Each step walks 64 rows of a [64, 2M] fp32 tensor and
sums the entries above a threshold with row[row > 2.0].sum(). Indexing with a boolean mask must know how many
elements survive to allocate the result, so PyTorch runs nonzero() and copies the count to the host: a
device-to-host copy plus a stream synchronization inside every row. The host stops at each one until the GPU has
drained its queue, and only then issues the gather and the sum of that row: the GPU sits idle for the host's
round trip and launch latency 64 times a step, although each row is only ~50 us of GPU work.

Ground truth: host / host_sync (an implicit synchronization per row via the data-dependent output size).
Fix: a shape-static formulation, torch.where(row > 2.0, row, 0).sum() (or (x * (x > 2.0)).sum(dim=1) for all rows
at once): no nonzero, no copy to the host, no sync; the GPU stays busy and the step shortens by the idle share.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import torch  # noqa: E402
from _suite import run  # noqa: E402

torch.manual_seed(84)
x = torch.randn(64, 1 << 21, device="cuda")  # 512 MB


def step():
    total = torch.zeros((), device="cuda")
    for i in range(x.shape[0]):
        row = x[i]
        total += row[row > 2.0].sum()  # boolean mask -> nonzero -> D2H count + sync
    return total


run("py_mask_sync", step, default_steps=10)
