"""Two-rank data-parallel training step with a planted straggler (or none).

Launched with `torchrun --nproc_per_node=2 mr_train.py --case CASE`. Each step:
forward/backward stand-in (bf16 matrix products, `WORK` of them), then an NCCL
all-reduce of a 256 MB gradient buffer. Every step is an NVTX range "step" and
a ProfilerStep#N annotation; per-rank step times (wall clock, synchronized at
the end of each step) and NVML telemetry of the rank's own GPU are written as
JSON next to the other artifacts.

Cases (ground truth in suite/multirank.toml):
  balanced   both ranks do the same work                  -> no straggler
  uneven     rank 1 does 2x the matrix products            -> straggler rank 1, rank_imbalance
  host_slow  rank 1 spends 6 ms of host time per step before
             launching its work (a busy-wait standing in for
             slow data loading on that host)                -> straggler rank 1, host outlier
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
from kernel_profiler.telemetry import Sampler  # noqa: E402

WORK = 6
N = 8192


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--case", choices=["balanced", "uneven", "host_slow"], required=True)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--out", default=".")
    p.add_argument("--torch-trace", action="store_true")
    a = p.parse_args()
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    x = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(N, N, device="cuda", dtype=torch.bfloat16) * 0.01
    grad = torch.randn(64 * 1024 * 1024, device="cuda")  # 256 MB fp32
    work = WORK * (2 if (a.case == "uneven" and rank == 1) else 1)

    def step():
        if a.case == "host_slow" and rank == 1:
            end = time.perf_counter() + 6e-3
            while time.perf_counter() < end:
                pass
        h = x
        for _ in range(work):
            h = torch.matmul(h, w)
        grad.add_(h[0, 0].float())
        dist.all_reduce(grad)

    for _ in range(a.warmup):
        step()
    torch.cuda.synchronize()
    dist.barrier()
    prof = None
    if a.torch_trace:
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                  torch.profiler.ProfilerActivity.CUDA])
        prof.__enter__()
    times = []
    with Sampler(interval_s=0.02, devices=[local]) as s:
        for i in range(a.steps):
            t0 = time.perf_counter()
            torch.cuda.nvtx.range_push("step")
            with torch.profiler.record_function(f"ProfilerStep#{i}"):
                step()
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()
            times.append(time.perf_counter() - t0)
    if prof is not None:
        prof.__exit__(None, None, None)
        prof.export_chrome_trace(str(out / f"trace_rank{rank}.json"))
    else:
        s.write(out / f"telemetry_rank{rank}.json", rank=rank)
        (out / f"steps_rank{rank}.json").write_text(json.dumps({
            "kind": "kernel-profiler.steps", "rank": rank, "case": a.case, "step_s": times}))
    print(f"rank {rank} {a.case}: median step {sorted(times)[len(times) // 2] * 1e3:.2f} ms")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
