"""One-time case: a communication-only NCCL stretch, then a steady compute loop (2 ranks, no step markers).

Launched with `torchrun --nproc_per_node=2 nccl_stretch.py [--torch-trace DIR]`. Each rank first syncs the
initial parameters of a 3.2 B-parameter model across ranks, as a data-parallel start-up does: 200 all-reduces
of 64 MB buckets of one flat fp32 buffer, back to back, with no compute at all (the buffer is torch.empty, so
no kernel fills it). Then it runs its steady work: 30 bf16 8192^3 matrix products (the cuBLAS tensor-core
kernel), with no communication. Ground truth (suite/onetime_nccl.toml, written before capture): the steady
state is the compute loop (kernel-bound, near peak); the NCCL stretch is one-time communication reported apart
with its cost, although it holds more GPU operations (200 vs 30) and more GPU time than the compute loop;
no low-parallelism advice for the NCCL kernels (a ring all-reduce runs on a few blocks by design).
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

import torch
import torch.distributed as dist

BUCKETS = int(os.environ.get("BUCKETS", 200))
BUCKET = 16 * 1024 * 1024  # fp32 elements: 64 MB
STEPS = int(os.environ.get("STEPS", 30))
N = 8192


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--torch-trace", default=None, help="write one Kineto trace per rank into this folder")
    a = p.parse_args()
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    prof = None
    if a.torch_trace:
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                  torch.profiler.ProfilerActivity.CUDA])
        prof.__enter__()
    flat = torch.empty(BUCKETS * BUCKET, device="cuda")  # the model's parameters, one flat buffer
    for i in range(BUCKETS):  # the initial parameter sync: communication only
        dist.all_reduce(flat[i * BUCKET:(i + 1) * BUCKET])
    torch.cuda.synchronize()
    x = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
    for _ in range(STEPS):  # the steady work: compute only
        y = x @ w
    torch.cuda.synchronize()
    if prof is not None:
        prof.__exit__(None, None, None)
        out = Path(a.torch_trace)
        out.mkdir(parents=True, exist_ok=True)
        prof.export_chrome_trace(str(out / f"trace_rank{rank}.json"))
    print(f"rank {rank}: nccl_stretch done", float(y[0, 0]))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
