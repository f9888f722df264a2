"""Holdout case: each step builds a 128 MB batch in NumPy and uploads it with torch.from_numpy(...).cuda().

Ground truth: pageable_transfer: NumPy memory is pageable, so every upload is staged at low bandwidth.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import numpy as np  # noqa: E402
import torch  # noqa: E402
from _suite import run  # noqa: E402

batch = np.random.default_rng(0).random(32 * 1024 * 1024, dtype=np.float32)


def step():
    x = torch.from_numpy(batch).cuda()
    return x.sum()


run("py_numpy_upload", step, default_steps=10)
