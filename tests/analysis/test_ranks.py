"""Cross-rank straggler analysis on real two-GPU captures (nvidia-h200-x2, torchrun, NCCL all-reduce).

Ground truth: suite/multirank.toml (written before capture). Each case is checked from the nsys report
holding both ranks (with per-rank step times and NVML telemetry) and, independently, from the two
per-rank PyTorch traces of a separate run.
"""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from kernel_profiler.analysis.engine import analyze

TRUTH = tomllib.loads((Path(__file__).parent.parent.parent / "suite" / "multirank.toml").read_text())["case"]
NSYS = ["nsys.sqlite", "steps_rank0.json", "steps_rank1.json", "telemetry_rank0.json", "telemetry_rank1.json"]
KINETO = ["trace_rank0.json.gz", "trace_rank1.json.gz"]


@pytest.mark.parametrize("files", [NSYS, KINETO], ids=["nsys+telemetry", "per-rank-traces"])
@pytest.mark.parametrize("case", TRUTH, ids=[c["name"] for c in TRUTH])
def test_straggler(case, files, captures):
    d = analyze([captures.path(case["name"], f) for f in files])
    assert len(d.ranks) == 2
    if case["straggler_rank"] < 0:
        assert d.straggler_verdict == "no straggler" and d.straggler_rank is None
        assert d.mechanism not in ("rank_imbalance", "thermal_throttle")
    else:
        assert d.straggler_verdict == "straggler"
        assert (d.straggler_rank, d.mechanism) == (case["straggler_rank"], case["mechanism"])
        assert d.straggler_cause == case.get("cause", "uneven_work")


def test_power_capped_clock_is_not_blamed(captures):
    """mr_uneven: the busier GPU drops to ~1575 MHz under its power cap, yet the cause is the uneven work."""
    d = analyze([captures.path("mr_uneven", f) for f in NSYS])
    slow = next(r for r in d.ranks if r.rank == d.straggler_rank)
    fast = next(r for r in d.ranks if r.rank != d.straggler_rank)
    assert slow.sm_clock_mhz_median < fast.sm_clock_mhz_median  # the clocks do differ...
    assert "sw_power_cap" in slow.throttle_reasons
    assert d.mechanism == "rank_imbalance" and d.straggler_cause == "uneven_work"  # ...but are not the cause


def test_step_percentiles_per_rank(captures):
    d = analyze([captures.path("mr_balanced", f) for f in NSYS])
    for r in d.ranks:
        assert r.steps >= 20 and r.step_p50_ns <= r.step_p90_ns <= r.step_p99_ns <= r.step_max_ns


def test_ask_compares_ranks_before_profiling_kernels(captures):
    from kernel_profiler.agent.session import run_ask

    r = run_ask("why is my training step slow", None, [str(captures.case_dir("mr_uneven"))], "expert", None,
                lambda _m: None)
    assert r.accepted and not r.inconclusive
    names = [c["name"] if isinstance(c, dict) else c for c in r.tool_calls]
    assert "kernel_profile" not in str(names)  # a straggler ends the investigation before ncu
    assert r.mechanism == "rank_imbalance" and "Rank 1" in r.bottleneck
