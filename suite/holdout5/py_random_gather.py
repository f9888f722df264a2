"""Holdout-5 case: gather 32M random elements of a 1 GiB float32 table (table[idx], idx int64, uniformly
random). Each lane of a warp reads a 4-byte element from a different, random 32-byte sector: 32 sectors per
request, so DRAM moves ~8x (or more) the useful bytes of the gathered values; index and output streams are
coalesced.

Ground truth: memory / uncoalesced_global (scattered reads). Fix: sort the indices (if order can be restored
afterwards), or gather whole rows (>= 128 B) instead of single scalars.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import torch  # noqa: E402
from _suite import run  # noqa: E402

g = torch.Generator(device="cuda").manual_seed(57)
table = torch.randn(1 << 28, device="cuda", generator=g)                              # 1 GiB
idx = torch.randint(0, 1 << 28, (1 << 25,), device="cuda", generator=g)              # 32M int64, 256 MB


def step():
    return table[idx]


run("py_random_gather", step, default_steps=10)
