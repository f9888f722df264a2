"""Per-rank traces read in worker processes: a 16-rank job built from the real two-rank captures
(mr_uneven: rank 1 does twice the matrix products), each trace copied with its rank id rewritten."""
from __future__ import annotations

import gzip
import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd
import pytest

from kernel_profiler.artifacts import kineto, load_paths, parallel
from kernel_profiler.analysis.engine import analyze
from kernel_profiler.errors import ArtifactError, UnsupportedCapture

WILD = Path(__file__).parent.parent / "data" / "wild"


def build_job(captures, case: str, ranks: int, out: Path) -> Path:
    """`ranks` per-rank traces: rank r is the real trace of rank r % 2, with distributedInfo rewritten."""
    out.mkdir()
    docs = []
    for r in (0, 1):
        with gzip.open(captures.path(case, f"trace_rank{r}.json.gz")) as f:
            docs.append(json.load(f))
        assert (docs[r]["distributedInfo"]["rank"], docs[r]["distributedInfo"]["world_size"]) == (r, 2)
    for r in range(ranks):
        doc = docs[r % 2]
        info = doc["distributedInfo"]
        info.update(rank=r, world_size=ranks)
        for pg in info.get("pg_config", []):
            pg.update(pg_size=ranks, ranks=list(range(ranks)))
        with gzip.open(out / f"trace_rank{r}.json.gz", "wt") as f:
            json.dump(doc, f, indent=1)
    return out


class CountingPool(ProcessPoolExecutor):
    submitted = 0

    def submit(self, *args, **kwargs):
        CountingPool.submitted += 1
        return super().submit(*args, **kwargs)


@pytest.fixture
def in_workers(monkeypatch):
    """Worker processes even for small test files, two of them whatever the machine."""
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv("KERNEL_PROFILER_WORKERS", "2")
    monkeypatch.setattr(parallel, "ProcessPoolExecutor", CountingPool)
    CountingPool.submitted = 0
    return CountingPool


def test_sixteen_ranks_read_in_workers_match_reading_here(captures, tmp_path, in_workers):
    job = build_job(captures, "mr_uneven", 16, tmp_path / "job")
    arts = load_paths([job])
    assert in_workers.submitted == 16
    assert sorted(t.rank for t in arts.timelines) == list(range(16))
    for t in arts.timelines[:3]:  # what came back from a worker is what this process reads itself
        here = kineto.load(job / Path(t.source).name)
        for a, b in ((t.kernels, here.kernels), (t.api, here.api), (t.ranges, here.ranges)):
            pd.testing.assert_frame_equal(a, b)
        assert (t.gpus, t.rank, t.processes) == (here.gpus, here.rank, here.processes)


def test_sixteen_rank_job_names_the_same_straggler(captures, tmp_path, in_workers):
    """Every odd rank replays rank 1's real trace: the straggler is an odd rank, for the same reason as with two."""
    two = analyze([captures.path("mr_uneven", f"trace_rank{r}.json.gz") for r in (0, 1)])
    in_workers.submitted = 0
    d = analyze([build_job(captures, "mr_uneven", 16, tmp_path / "job")])
    assert in_workers.submitted == 16
    assert len(d.ranks) == 16
    assert (d.straggler_verdict, d.mechanism, d.straggler_cause) == \
        (two.straggler_verdict, two.mechanism, two.straggler_cause) == ("straggler", "rank_imbalance", "uneven_work")
    assert d.straggler_rank % 2 == 1


def test_errors_raised_in_a_worker_reach_the_caller_typed(tmp_path, in_workers):
    folder = tmp_path / "mixed"
    folder.mkdir()
    for f in ("k13_hta_amd_mi250.json.gz", "k15_hta_inference_rank1_oldschema.json.gz"):
        (folder / f).write_bytes((WILD / f).read_bytes())
    arts = load_paths([folder])  # inside a folder: the refusal is a warning
    assert in_workers.submitted == 2 and [t.rank for t in arts.timelines] == [1]
    assert any("not an NVIDIA GPU" in w for w in arts.warnings)
    with pytest.raises(UnsupportedCapture, match="not an NVIDIA GPU"):  # named explicitly: refused
        load_paths(sorted(folder.iterdir()))
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "a.json").write_bytes(b'{"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1, ')
    (bad / "b.json").write_bytes((WILD / "k15_hta_inference_rank1_oldschema.json.gz").read_bytes())
    with pytest.raises(ArtifactError, match="truncated") as err:
        load_paths([bad / "a.json", bad / "b.json"])
    assert err.value.path == str(bad / "a.json")


def test_worker_count_is_bounded(monkeypatch):
    monkeypatch.delenv("KERNEL_PROFILER_WORKERS", raising=False)
    assert 1 <= parallel.worker_count(16) <= min(16, parallel._cores())
    assert parallel.worker_count(1) == 1
    monkeypatch.setattr(parallel, "_available_bytes", lambda: parallel.WORKER_BYTES)  # memory for one worker only
    assert parallel.worker_count(16) == 1
    monkeypatch.setenv("KERNEL_PROFILER_WORKERS", "4")
    assert parallel.worker_count(16) == 4 and parallel.worker_count(3) == 3
