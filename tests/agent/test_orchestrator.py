"""The orchestrator's rules: order of the method, dominant kernels only, the critic loop and its limit."""
from __future__ import annotations

import pytest

from kernel_profiler.agent.orchestrator import offered_tools
from kernel_profiler.agent.session import replay, run_ask
from kernel_profiler.agent.tools import tool_specs, REGISTRY
from kernel_profiler.analysis.engine import analyze
from kernel_profiler.render.markdown import markdown

from .scripted import ScriptedModel, call


def test_tool_specs_from_pydantic_models():
    specs = {s.name: s for s in tool_specs()}
    assert set(specs) == {"timeline", "kernel_profile", "sass", "gpu_telemetry", "read_source", "find_targets",
                          "submit_answer"}
    for name, s in specs.items():
        declared = REGISTRY[name].input.model_json_schema()
        for p in declared["properties"].values():
            p.pop("live_only", None)  # the marker stays out of what a model reads
        assert s.input_schema == declared
    assert set(specs["submit_answer"].input_schema["required"]) >= {"bottleneck", "explanation", "fix"}


def test_captures_only_offer_no_program_tools_and_no_live_ncu_options():
    live = {s.name: s for s in tool_specs(offered_tools(["./app"]), live=True)}
    read = {s.name: s for s in tool_specs(offered_tools(None), live=False)}
    assert set(live) - set(read) == {"gpu_telemetry", "find_targets"}
    assert set(live["kernel_profile"].input_schema["properties"]) == {"kernel_regex", "launch_skip", "launch_count",
                                                                      "sections", "section_set"}
    assert set(read["kernel_profile"].input_schema["properties"]) == {"kernel_regex"}
    assert read["kernel_profile"].input_schema["required"] == ["kernel_regex"]


def test_a_tool_not_offered_is_refused(captures, tmp_path):
    art = str(captures.case_dir("cu_softmax_naive"))
    good = analyze([art]).as_answer().model_dump(mode="json")
    m = ScriptedModel([call("timeline", 1), call("gpu_telemetry", 2), call("submit_answer", 3, **good)])
    r = run_ask("q", None, [art], "expert", None, lambda s: None, root=tmp_path, model=m)
    assert [t.name for t in m.requests[0]["tools"]] == ["timeline", "kernel_profile", "sass", "read_source",
                                                        "submit_answer"]
    refused = m.requests[2]["last"]
    assert refused["is_error"] and refused["content"]["error"] == "OrderViolation"
    assert "not offered" in refused["content"]["message"] and r.accepted


def test_no_kernel_profile_before_timeline(captures, tmp_path):
    art = str(captures.case_dir("cu_softmax_naive"))
    good = analyze([art]).as_answer().model_dump(mode="json")
    m = ScriptedModel([call("kernel_profile", 1, kernel_regex="softmax_rows"), call("timeline", 2),
                       call("submit_answer", 3, **good)])
    r = run_ask("q", None, [art], "expert", None, lambda s: None, root=tmp_path, model=m)
    refused = m.requests[1]["last"]
    assert refused["is_error"] and refused["content"]["error"] == "OrderViolation"
    assert "timeline" in refused["content"]["message"] and r.accepted


def test_kernel_profile_only_on_dominant_kernels(captures, tmp_path):
    art = str(captures.case_dir("cu_softmax_naive"))
    m = ScriptedModel([call("timeline", 1), call("kernel_profile", 2, kernel_regex="not_a_kernel_here"),
                       call("kernel_profile", 3, kernel_regex="softmax_rows"),
                       lambda msgs: call("submit_answer", 4, **analyze([art]).as_answer().model_dump(mode="json"))])
    r = run_ask("q", None, [art], "expert", None, lambda s: None, root=tmp_path, model=m)
    refused = m.requests[2]["last"]
    assert refused["content"]["error"] == "OrderViolation" and "dominate" in refused["content"]["message"]
    ok = m.requests[3]["last"]
    assert not ok["is_error"] and ok["content"]["kernels"][0]["key"] == "softmax_rows"
    assert r.accepted


def test_host_bound_refuses_kernel_profile(captures, tmp_path):
    art = str(captures.case_dir("cu_tiny_launches"))
    good = analyze([art]).as_answer().model_dump(mode="json")
    m = ScriptedModel([call("timeline", 1), call("kernel_profile", 2, kernel_regex="tiny_update"),
                       call("submit_answer", 3, **good)])
    r = run_ask("q", None, [art], "expert", None, lambda s: None, root=tmp_path, model=m)
    assert m.requests[1]["force_tool"] == "submit_answer"
    refused = m.requests[2]["last"]
    assert refused["content"]["error"] == "OrderViolation" and "host-bound" in refused["content"]["message"]
    assert r.accepted and r.stopped_after_timeline


def test_rejected_answers_end_inconclusive(captures, tmp_path):
    """An answer with invented numbers is sent back with reasons twice, then the user gets 'inconclusive'."""
    art = str(captures.case_dir("cu_softmax_naive"))
    invented = {"bottleneck": "softmax_rows is memory-bound: 17.3 sectors per request.",
                "evidence": [{"metric": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "value": 123456789.0,
                              "unit": "sector", "artifact": "ncu.ncu-rep"}],
                "explanation": "Scattered loads waste 77.7% of each sector because lanes read different rows.",
                "fix": {"change": "Coalesce the loads.", "metric": "dram__bytes_read.sum", "direction": "decrease"}}
    m = ScriptedModel([call("timeline", 1), call("submit_answer", 2, **invented), call("submit_answer", 3, **invented),
                       call("submit_answer", 4, **invented)])
    rec = tmp_path / "t.jsonl"
    stages: list[str] = []
    r = run_ask("q", None, [art], "expert", str(rec), stages.append, root=tmp_path, model=m)
    assert r.inconclusive and not r.accepted
    assert [v["verdict"] for v in r.verdicts] == ["reject"] * 3
    back = m.requests[2]["last"]
    assert back["is_error"] and back["content"]["verdict"] == "reject" and back["content"]["reasons"]
    assert "ncu" in r.settle and "softmax_rows" in r.settle
    assert "# Inconclusive" in markdown(r) and "What would settle it" in markdown(r)
    # the run replays to the same inconclusive end
    r2 = replay(rec)
    assert r2.inconclusive and r2.as_answer() == r.as_answer()


def test_no_program_and_no_artifacts_suggests_targets(tmp_path):
    (tmp_path / "bench_softmax.py").write_text("import torch\n# softmax benchmark\nif __name__ == '__main__': pass\n")
    from kernel_profiler.errors import UsageError

    with pytest.raises(UsageError, match="bench_softmax.py"):
        run_ask("why is my softmax slow", None, [], "expert", None, lambda s: None, root=tmp_path)
