"""The one decision (analysis/decide.py) on real H200 captures: `analyze` (engine.run) and a model that sees only
the timeline tool's result (`decide_over_tools`, what the offline expert calls) reach the same primary finding."""
from __future__ import annotations

import pytest

from kernel_profiler.agent.context import ToolContext
from kernel_profiler.agent.sandbox import Sandbox
from kernel_profiler.agent.tools import call_tool
from kernel_profiler.agent.tools.timeline import TimelineOutput
from kernel_profiler.analysis import decide
from kernel_profiler.analysis.consistency import reconcile
from kernel_profiler.analysis.engine import analyze
from kernel_profiler.artifacts import load_paths

# host-bound, transfer-bound, kernel-bound (grid smaller than the GPU), one-time work, one kernel launched once
TIMELINES = ["cu_tiny_launches", "cu_pageable_copy", "cu_grid_stride_small_grid", "ot_cu_launch_once",
             "ot_py_triton_jit", "cu_softmax_naive"]


def _tool_timeline(captures, tmp_path, paths) -> TimelineOutput:
    ctx = ToolContext(sandbox=Sandbox(root=tmp_path, scratch=tmp_path / "scratch"), artifacts=[str(p) for p in paths])
    out = call_tool(ctx, "timeline", {"top": 5})
    assert not out.is_error, out.content
    return TimelineOutput.model_validate(out.content)


@pytest.mark.parametrize("case", TIMELINES)
def test_engine_and_tool_results_decide_alike(captures, tmp_path, case):
    paths = [captures.path(case, "nsys.sqlite")]
    d = analyze(paths)
    tlo = _tool_timeline(captures, tmp_path, paths)
    primary, secondary = decide.decide_over_tools(tlo.verdict, tlo.findings, tlo.startup_note, None, [])
    assert (primary.bound, primary.mechanism, primary.bottleneck) == (d.primary.bound, d.primary.mechanism,
                                                                     d.primary.bottleneck)
    assert [f.mechanism for f in secondary] == [f.mechanism for f in d.secondary]
    # the verdict the tool reports is the timeline stage's
    stage = decide.read_timeline(reconcile(load_paths(paths)))
    assert tlo.verdict == stage.verdict
    assert (tlo.verdict in decide.TIMELINE_VERDICTS) == bool(stage.answer)


@pytest.mark.parametrize("case, straggler", [("mr_uneven", True), ("mr_balanced", False)])
def test_ranks_are_compared_before_the_timeline(captures, tmp_path, case, straggler):
    """Several ranks: the rank comparison leads when it names a straggler, and stays a note otherwise, on both
    paths."""
    paths = [captures.path(case, f"trace_rank{r}.json.gz") for r in (0, 1)]
    d = analyze(paths)
    stage = decide.read_timeline(reconcile(load_paths(paths)))
    assert stage.ranks is not None and (stage.verdict == "ranks") == straggler
    tlo = _tool_timeline(captures, tmp_path, paths)
    assert tlo.verdict == stage.verdict and tlo.straggler_rank == d.straggler_rank
    primary, _ = decide.decide_over_tools(tlo.verdict, tlo.findings, tlo.startup_note, None, [])
    if straggler:
        assert primary.bottleneck == d.primary.bottleneck == stage.ranks.finding.bottleneck
    else:
        assert any(f.bottleneck == stage.ranks.finding.bottleneck for f in d.secondary)


def test_decide_order():
    """The decision's order: a timeline answer beats everything, work spread over
    kernels beats one kernel, a kernel finding beats the timeline-only one; nothing at all is inconclusive."""
    from kernel_profiler.answer import Finding

    host = Finding(bound="host", mechanism="launch_overhead", bottleneck="host", confidence=0.9)
    program = Finding(bound="memory", mechanism="excess_dram_traffic", bottleneck="program", confidence=0.8)
    kern = Finding(bound="memory", mechanism="uncoalesced_global", bottleneck="kernel", confidence=0.8)
    only = Finding(bound="inconclusive", bottleneck="timeline only", confidence=0.3)
    kernels = [("k", 0.9, [kern])]
    assert decide.decide([host], program, kernels, only) == (host, [kern])
    assert decide.decide([], program, kernels, only) == (program, [kern])
    assert decide.decide([], None, kernels, only) == (kern, [])
    assert decide.decide([], None, [], only) == (only, [])
    assert decide.decide([], None, [], None)[0].bound == "inconclusive"
