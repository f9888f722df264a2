"""The evidence engine names the planted bottleneck of every capture-suite case,
from its real H200 captures (nsys sqlite, ncu report, SASS, ptxas log).

Ground truth comes from suite/cases.toml, written before the captures were made.
"""
from __future__ import annotations

import pytest

from conftest import suite_cases
from kernel_profiler.analysis.engine import analyze

CASES = suite_cases()
TRUTH = [c for c in CASES if c.get("mechanism") and not c.get("recapture")]
FIXES = [c for c in CASES if c.get("fix_of") and not c.get("recapture")]
PYTHON_TIMELINE = [c for c in TRUTH if c["source"].endswith(".py") and c["bound"] in ("host", "transfer")]


@pytest.mark.parametrize("case", TRUTH, ids=[c["name"] for c in TRUTH])
def test_names_planted_bottleneck(case, captures):
    d = analyze([captures.case_dir(case["name"])])
    assert (d.bound, d.mechanism) == (case["bound"], case["mechanism"]), d.bottleneck
    assert 2 <= len(d.evidence) <= 3
    for e in d.evidence:
        assert e.artifact and e.metric and e.value == e.value  # traceable, not NaN
    if d.bound not in ("host", "transfer", "near_peak"):
        assert d.fix is not None and d.fix.metric and d.fix.direction


@pytest.mark.parametrize("case", FIXES, ids=[c["name"] for c in FIXES])
def test_fix_removes_the_planted_mechanism(case, captures):
    d = analyze([captures.case_dir(case["name"])])
    assert d.mechanism != case["expect_moved"], d.bottleneck


@pytest.mark.parametrize("case", PYTHON_TIMELINE, ids=[c["name"] for c in PYTHON_TIMELINE])
def test_pytorch_trace_alone_gives_the_same_timeline_verdict(case, captures):
    """An independent capture (the PyTorch profiler's Kineto trace of another run) agrees with nsys."""
    d = analyze([captures.path(case["name"], "trace.json.gz")])
    assert (d.bound, d.mechanism) == (case["bound"], case["mechanism"]), d.bottleneck


def test_near_peak_kernel_gets_no_invented_problem(captures):
    d = analyze([captures.case_dir("cu_cublas_bf16")])
    assert d.mechanism == "near_peak"
    assert d.roofline is not None and d.roofline.gap <= 1.25
    assert d.roofline.achieved_flops <= d.roofline.peak_flops  # never above the ceiling
    assert all(f.kernel != d.primary.kernel for f in d.secondary)


def test_kernel_bound_timeline_without_ncu_asks_for_a_kernel_profile(captures):
    d = analyze([captures.path("cu_softmax_naive", "nsys.sqlite")])
    assert d.bound == "inconclusive" and d.mechanism is None
    assert any("ncu" in m for m in d.missing)
    assert d.confidence < 0.5


def test_timeline_only_low_parallelism_from_grid(captures):
    d = analyze([captures.path("tr_low_parallelism", "trace.json.gz")])
    assert (d.bound, d.mechanism) == ("latency", "low_parallelism")


def test_roofline_agrees_with_program_clock(captures):
    """The ncu duration of the softmax kernel is within 5% of the program's own median step (cudaEvents)."""
    import re

    log = captures.path("cu_softmax_naive", "run.log").read_text()
    step_ms = float(re.search(r"median step ([0-9.]+) ms", log).group(1))
    d = analyze([captures.path("cu_softmax_naive", "ncu.ncu-rep")])
    assert d.roofline.duration_ns / 1e6 == pytest.approx(step_ms, rel=0.05)
