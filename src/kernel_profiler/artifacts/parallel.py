"""Read several capture files at once, one worker process each (a job's per-rank traces).

Each worker runs the file's one reader and sends back what it returns: compact columnar tables
(a Timeline's numpy/pandas columns pickle as flat buffers; repeated kernel names are shared strings).
The parent never holds a file's text or its parsed events, only those tables, so memory grows with
the kernels kept, not with the JSON read. Workers: at most one per core, per file, and per
`WORKER_BYTES` of available memory (a streaming Kineto read stays well under it whatever the file
size); KERNEL_PROFILER_WORKERS=N sets the number (1: read everything in this process). Small inputs
are read in this process: starting a worker costs more than reading them.
"""
from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Callable

# Read in this process when the files together are smaller than this (bytes on disk).
PARALLEL_MIN_BYTES = 32 << 20
# Memory one worker may need: interpreter + numpy/pandas (~80 MB), one block of events, its tables.
WORKER_BYTES = 1 << 30


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _available_bytes() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def worker_count(n_files: int) -> int:
    """Workers for n files: KERNEL_PROFILER_WORKERS if set, else bounded by cores, files and memory."""
    env = os.environ.get("KERNEL_PROFILER_WORKERS", "").strip()
    if env.isdigit() and int(env) > 0:
        return min(int(env), max(n_files, 1))
    avail = _available_bytes()
    by_memory = max(1, avail // WORKER_BYTES) if avail else n_files
    return max(1, min(_cores(), n_files, by_memory))


def _call(load: Callable, path: Path) -> Any:
    os.environ["KERNEL_PROFILER_PROGRESS"] = "0"  # several workers share the terminal: no progress bars
    return load(path)


def load_all(jobs: list[tuple[Callable, Path]], in_workers: list[bool] | None = None, workers: int | None = None,
             min_bytes: int | None = None) -> list[Any]:
    """`load(path)` for every job, in order; an exception a load raised is returned in its place.
    Jobs marked in `in_workers` (all by default) run in worker processes when there are several and
    they are big enough together; the others run here."""
    marked = [i for i, ok in enumerate(in_workers if in_workers is not None else [True] * len(jobs)) if ok]
    total = sum(jobs[i][1].stat().st_size for i in marked)
    n = workers or worker_count(len(marked))
    if n <= 1 or len(marked) < 2 or total < (PARALLEL_MIN_BYTES if min_bytes is None else min_bytes):
        return [_safe(load, p) for load, p in jobs]
    out: list[Any] = [None] * len(jobs)
    # forkserver: workers fork from a clean server process, never from this one's threads (MCP server, HTTP
    # clients); the readers are imported there once.
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["kernel_profiler.artifacts"])
    with ProcessPoolExecutor(max_workers=n, mp_context=ctx) as pool:
        futures = {i: pool.submit(_call, *jobs[i]) for i in marked}
        for i, (load, p) in enumerate(jobs):
            if i not in futures:
                out[i] = _safe(load, p)
        for i, f in futures.items():
            try:
                out[i] = f.result()
            except Exception as e:  # the reader's own typed error, raised again by the caller
                out[i] = e
    return out


def _safe(load: Callable, path: Path) -> Any:
    try:
        return load(path)
    except Exception as e:
        return e
