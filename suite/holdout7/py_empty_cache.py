"""Holdout-7 case: torch.cuda.empty_cache() called at the end of every step ("to keep memory low"). Each step
makes four 512 MB temporaries (x * w, tanh, the product, the sum with x) and reduces the result; after `del`
the caching allocator would keep those blocks for the next step, but empty_cache() hands them back to the
driver (cudaFree, which also synchronizes), so the next step must cudaMalloc 2 GiB again. Creating and
mapping a 512 MB allocation costs milliseconds of host/driver time each (4 per step), while the GPU work of the
step (four elementwise passes over 512 MB and a sum, ~1.5 ms) is a small part of it. The GPU idles inside
cudaMalloc/cudaFree.

Ground truth: host / allocator_churn (device allocations released and re-made every step). Fix: drop the
empty_cache() call (the caching allocator then reuses the same blocks every step: no cudaMalloc/cudaFree in the
steady state), or preallocate the workspaces and use out= / in-place ops.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import torch  # noqa: E402
from _suite import run  # noqa: E402

torch.manual_seed(76)
x = torch.randn(16384, 8192, device="cuda")  # 512 MB
w = torch.randn(8192, device="cuda")


def step():
    a = x * w
    b = torch.tanh(a)
    c = a * b + x
    s = c.sum()
    del a, b, c
    torch.cuda.empty_cache()  # give the 2 GiB of freed blocks back to the driver ... every step
    return s


run("py_empty_cache", step, default_steps=10)
