"""The NCCL-only stretch (issue 9's last one-time class), on a real two-GPU H200 capture (suite/onetime_nccl.toml,
ground truth written and committed before capture): 200 all-reduces with no compute, then 30 bf16 GEMMs with no
communication, no step markers. The collectives hold more GPU operations and more GPU time than the compute loop,
so the longest repeating run is theirs; the steady state must still be the compute loop, the stretch one-time
communication reported with its cost, the two ranks not compared as if each collective were a step, and no
low-parallelism advice given for the NCCL kernel. From the nsys export of both ranks and from each rank's
PyTorch-profiler trace."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from kernel_profiler.analysis.consistency import main_timeline
from kernel_profiler.analysis.decide import rank_timeline
from kernel_profiler.analysis.engine import analyze
from kernel_profiler.analysis.ranks import analyze_ranks
from kernel_profiler.analysis.timeline import triage
from kernel_profiler.artifacts import load_paths

CASE = tomllib.loads((Path(__file__).parent.parent / "suite" / "onetime_nccl.toml").read_text())["case"][0]
NAME = CASE["name"]
TIMELINES = ["nsys.sqlite", "trace_rank0.json.gz", "trace_rank1.json.gz"]


def _one_rank(arts):
    """The timeline of one rank, as the engine and the timeline tool take it (the first rank of a 2-process report)."""
    tl = main_timeline(arts.timelines)
    if tl.kernels["pid"].nunique() > 1:
        tl = rank_timeline(tl, int(sorted(tl.kernels.groupby("pid"), key=lambda g: g[1]["device"].min())[0][0]))
    return tl


@pytest.mark.parametrize("fmt", TIMELINES)
def test_steady_state_is_the_compute_loop_not_the_collectives(captures, fmt):
    r = triage(_one_rank(load_paths([captures.path(NAME, fmt)])))
    s = r.summary
    assert r.verdict == CASE["steady"], (r.verdict, s.window_source)
    assert "repeated part" in s.window_source and s.repeats == 30
    assert re.search(CASE["kernel"], s.top_kernels[0].name) and len(s.top_kernels) == 1
    assert not any(re.search(CASE["onetime_kernel"], k.name, re.I) for k in s.top_kernels)


@pytest.mark.parametrize("fmt", TIMELINES)
def test_the_stretch_is_one_time_communication_with_its_cost(captures, fmt):
    r = triage(_one_rank(load_paths([captures.path(NAME, fmt)])))
    s = r.summary
    assert r.onetime is not None and r.onetime.mechanism == "startup_dominated"
    for cls in CASE["onetime"]:
        assert cls in s.onetime_by_class, s.onetime_by_class
    # the 200 collectives hold more GPU time than the 30 GEMMs of the steady window
    assert s.onetime_by_class["communication"] > s.kernel_ns
    assert "communication" in r.onetime.evidence[0].meaning


def test_ranks_are_not_compared_on_a_communication_only_stretch(captures):
    arts = load_paths([captures.path(NAME, "nsys.sqlite")])
    ra = analyze_ranks(arts)
    assert ra.straggler is None and ra.finding.bound != "comms" and ra.finding.mechanism is None
    assert "communication stretch" in ra.finding.bottleneck and len(ra.rows) == CASE["ranks"]
    assert not ra.answers and ra.verdict == "no straggler"
    d = analyze([captures.path(NAME, "nsys.sqlite")])
    assert d.straggler_verdict == "no straggler" and d.bound != "comms"
    assert re.search(CASE["kernel"], d.primary.kernel or "")


@pytest.mark.parametrize("fmt", TIMELINES)
def test_no_low_parallelism_advice(captures, fmt):
    d = analyze([captures.path(NAME, fmt)])
    for f in [d.primary, *d.secondary]:
        assert f.mechanism not in CASE["no_advice"], f.bottleneck
        assert not re.search(r"too few blocks|launch at least \d+ blocks", (f.fix.change if f.fix else ""), re.I)


@pytest.mark.parametrize("fmt", TIMELINES)
def test_kernel_mechanism_of_the_steady_state_leads(captures, fmt):
    """With the ncu report a live ask made of the GEMM (14 replay passes, default request), the answer is the steady
    compute loop's mechanism; the one-time work is listed apart."""
    d = analyze([captures.path(NAME, fmt), captures.path(NAME, "ncu.ncu-rep")])
    assert (d.bound, d.mechanism) == (CASE["bound"], CASE["mechanism"]), d.bottleneck
    assert any(f.bottleneck.startswith("One-time work") for f in d.secondary)
