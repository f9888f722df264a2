"""Benchmark: analysing a many-rank job, per-rank traces read in worker processes or all in one.

Builds a job of N ranks from the real two-rank capture tests/data/captures/mr_uneven (rank r is
trace_rank{r % 2}.json.gz with its steps repeated to --kernels-per-rank kernels, and its
distributedInfo rewritten: rank r of world size N). Then runs `kernel-profiler analyze <job dir> --json`
in a fresh process for each worker setting (KERNEL_PROFILER_WORKERS) and reports the wall time and the
peak memory of the whole process tree (the CLI plus its worker processes, /proc sampled every 0.2 s), and the CPU seconds of that tree (the last
sample of each process, so up to 0.2 s short per process): CPU/wall says how many cores the job really got.
(The repeated steps make a timing workload, not a diagnosis case: tests/artifacts/test_parallel.py checks the
verdict on the real traces.)

    python bench/bench_ranks.py                          # 2, 4, 8, 16 ranks; 1 worker vs one per core
    python bench/bench_ranks.py --ranks 16 --kernels-per-rank 50000
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_triage import ROOT, build_trace  # noqa: E402

SRC = ROOT / "tests" / "data" / "captures" / "mr_uneven"


def _span_us(src: Path) -> float:
    with gzip.open(src) as f:
        ev = [e for e in json.load(f)["traceEvents"] if isinstance(e.get("ts"), (int, float))]
    return max(e["ts"] + e.get("dur", 0) for e in ev) - min(e["ts"] for e in ev)


def build_job(ranks: int, per_rank: int, out: Path) -> int:
    # One repeat period for every rank (the longer trace's span + 1 ms): repeat k of each rank starts at the
    # same offset, so the ranks meet in their collectives as in the real capture.
    period = max(_span_us(SRC / f"trace_rank{r}.json.gz") for r in (0, 1)) + 1000.0
    total = 0
    for r in range(ranks):
        src = SRC / f"trace_rank{r % 2}.json.gz"
        with gzip.open(src) as f:
            info = json.load(f)["distributedInfo"]
        info.update(rank=r, world_size=ranks)
        for pg in info.get("pg_config", []):
            pg.update(pg_size=ranks, ranks=list(range(ranks)))
        total += build_trace(src, per_rank, out / f"trace_rank{r}.json", False, {"distributedInfo": info},
                             period)["bytes"]
    return total


_TICK = os.sysconf("SC_CLK_TCK")


def _tree(root: int) -> dict[int, tuple[int, float]]:
    """{pid: (RSS kB, CPU seconds so far)} of a process and all its descendants."""
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                ppid = int(open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()[1])
                kids.setdefault(ppid, []).append(int(d))
            except (OSError, IndexError, ValueError):
                pass
    out, todo = {}, [root]
    while todo:
        pid = todo.pop()
        todo += kids.get(pid, [])
        try:
            stat = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            rss = next(int(line.split()[1]) for line in open(f"/proc/{pid}/status") if line.startswith("VmRSS:"))
            out[pid] = (rss, (int(stat[11]) + int(stat[12])) / _TICK)  # utime + stime
        except (OSError, IndexError, ValueError, StopIteration):
            pass
    return out


def run(job: Path, workers: str) -> dict:
    env = dict(os.environ, KERNEL_PROFILER_WORKERS=workers,
               PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "kernel_profiler.cli", "analyze", str(job), "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    peak, cpu = 0, {}
    while proc.poll() is None:
        tree = _tree(proc.pid)
        peak = max(peak, sum(rss for rss, _ in tree.values()))
        cpu.update({pid: c for pid, (_, c) in tree.items()})  # last sample of each process (workers end early)
        time.sleep(0.2)
    out, err = proc.communicate()
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"analyze failed (rc={proc.returncode}): {err[-2000:]}")
    d = json.loads(out)
    return {"seconds": seconds, "cpu": sum(cpu.values()), "peak_mb": peak / 1024, "ranks": len(d.get("ranks") or [])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", default="2,4,8,16", help="comma list of job sizes")
    ap.add_argument("--kernels-per-rank", type=int, default=20_000)
    ap.add_argument("--workers", default=f"1,{len(os.sched_getaffinity(0))}", help="comma list of worker counts")
    args = ap.parse_args()
    print(f"{'ranks':>5} {'JSON MiB':>8} {'workers':>7} {'seconds':>8} {'CPU s':>7} {'CPU/wall':>8} "
          f"{'peak RSS MB (tree)':>19}")
    for n in map(int, args.ranks.split(",")):
        with tempfile.TemporaryDirectory(prefix="kp-ranks-") as tmp:
            size = build_job(n, args.kernels_per_rank, Path(tmp))
            for w in args.workers.split(","):
                r = run(Path(tmp), w)
                assert r["ranks"] == n, r
                print(f"{n:>5} {size / 2**20:>8.0f} {w:>7} {r['seconds']:>8.2f} {r['cpu']:>7.1f} "
                      f"{r['cpu'] / r['seconds']:>8.2f} {r['peak_mb']:>19.0f}", flush=True)
    print(f"machine: {os.cpu_count()} CPUs, {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB, "
          f"Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
