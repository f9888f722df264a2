"""The method's order and stopping rules (order.order_violation, enforced by call_tool through the tool context),
so every client -- ask's orchestrator, the MCP server, a replay -- is held to it. Real H200 captures."""
from __future__ import annotations

from kernel_profiler.agent.sandbox import Sandbox
from kernel_profiler.agent.context import ToolContext
from kernel_profiler.agent.tools import call_tool


def ctx_for(captures, tmp_path, case, insist=False):
    return ToolContext(sandbox=Sandbox(root=tmp_path, scratch=tmp_path / "scratch"),
                       artifacts=[str(captures.case_dir(case))], insist=insist)


def test_kernel_tools_wait_for_the_timeline(captures, tmp_path):
    ctx = ctx_for(captures, tmp_path, "cu_softmax_naive")
    for name in ("kernel_profile", "sass"):
        out = call_tool(ctx, name, {"kernel_regex": "softmax_rows"})
        assert out.is_error and out.content["error"] == "OrderViolation" and "timeline" in out.content["message"]
    assert not call_tool(ctx, "timeline", {}).is_error
    wrong = call_tool(ctx, "kernel_profile", {"kernel_regex": "fill_hash"})  # in the report, not dominant
    assert wrong.is_error and "dominate GPU time" in wrong.content["message"]
    assert not call_tool(ctx, "kernel_profile", {"kernel_regex": "softmax_rows"}).is_error
    assert not call_tool(ctx, "sass", {"kernel_regex": "softmax_rows"}).is_error


def test_a_host_bound_timeline_stops_kernel_profiling_unless_insisted(captures, tmp_path):
    ctx = ctx_for(captures, tmp_path, "cu_tiny_launches")
    tl = call_tool(ctx, "timeline", {})
    assert tl.content["verdict"] == "host"
    k = tl.content["dominant_kernels"][0]["name"].split("(")[0]
    out = call_tool(ctx, "kernel_profile", {"kernel_regex": k})
    assert out.is_error and "host-bound" in out.content["message"]
    ins = ctx_for(captures, tmp_path / "insist", "cu_tiny_launches", insist=True)
    call_tool(ins, "timeline", {})
    assert call_tool(ins, "kernel_profile", {"kernel_regex": k}).content.get("error") != "OrderViolation"
