"""The offline expert on real H200 captures: the same tools, the same order, a four-part answer the critic accepts."""
from __future__ import annotations

import json

import pytest

from kernel_profiler.agent import transcript as tx
from kernel_profiler.answer import AskResult
from kernel_profiler.agent.session import replay, run_ask
from kernel_profiler.agent.protocol import ReplayDivergence
from kernel_profiler.analysis.engine import analyze
from kernel_profiler.render.markdown import markdown


def ask(captures, case, tmp_path, **kw) -> tuple[AskResult, list[str], object]:
    stages: list[str] = []
    rec = tmp_path / f"{case}.jsonl"
    r = run_ask(f"why is {case} slow", None, [str(captures.case_dir(case))], "expert", str(rec), stages.append,
                root=tmp_path, **kw)
    return r, stages, rec


def events(path, kind=None):
    header, evs = tx.read(path)
    return [e for e in evs if kind is None or e["event"] == kind]


def test_softmax_four_part_answer_accepted(captures, tmp_path):
    r, stages, rec = ask(captures, "cu_softmax_naive", tmp_path)
    assert r.accepted and not r.inconclusive
    assert r.tool_calls == ["timeline", "kernel_profile", "sass", "submit_answer"]
    a = r
    assert a.bound == "memory" and a.mechanism == "uncoalesced_global"
    assert a.bottleneck and a.explanation and a.fix and len(a.evidence) >= 2
    assert a.fix.metric and a.fix.direction in ("increase", "decrease")
    # the same answer the engine gives from the same captures
    d = analyze([captures.case_dir("cu_softmax_naive")])
    assert a.bottleneck == d.bottleneck and a.mechanism == d.mechanism
    assert a.as_answer() == d.as_answer()  # the engine's answer, field for field
    assert [v["verdict"] for v in r.verdicts] == ["accept"]
    assert any(s.startswith("timeline:") for s in stages) and any("critic" in s for s in stages)
    md = markdown(r)
    for h in ("## Bottleneck", "## Evidence", "## Mechanism", "## Fix"):
        assert h in md
    # the kernel profile was asked of the dominant kernel only
    kp = [e for e in events(rec, "tool_call") if e["name"] == "kernel_profile"][0]
    assert kp["input"]["kernel_regex"] == "softmax_rows"
    sass = [e for e in events(rec, "tool_result") if e["name"] == "sass"][0]
    assert not sass["is_error"] and sass["content"]["memory_forms"]


def test_the_critic_accepts_the_expert_not_by_construction(captures, tmp_path):
    """The expert's accepted answer, with one evidence number off by 37% or with another mechanism claimed
    (bank conflicts on a kernel whose shared-memory counters contradict them), is rejected by the same critic."""
    from kernel_profiler.artifacts import load_paths
    from kernel_profiler.critic import critique

    r, _, _ = ask(captures, "cu_softmax_naive", tmp_path)
    assert r.accepted
    arts = load_paths([captures.case_dir("cu_softmax_naive")])
    a = r.as_answer()
    assert critique(a, arts).verdict == "accept"
    lie = a.model_copy(deep=True)
    lie.evidence[0].value = round(lie.evidence[0].value * 1.37, 3)
    v = critique(lie, arts)
    assert v.verdict == "reject" and not v.checks["numbers"], v.reasons
    other = a.model_copy(deep=True)
    other.mechanism = "shared_bank_conflict"
    v = critique(other, arts)
    assert v.verdict == "reject" and not v.checks["signature"], v.reasons


def test_host_bound_stops_after_timeline(captures, tmp_path):
    r, stages, rec = ask(captures, "cu_tiny_launches", tmp_path)
    assert r.accepted and r.stopped_after_timeline
    assert r.tool_calls == ["timeline", "submit_answer"]
    assert r.bound == "host" and r.mechanism == "launch_overhead"
    names = [e["name"] for e in events(rec, "tool_call")]
    assert "kernel_profile" not in names and "sass" not in names
    # the orchestrator forced the answer right after the host-bound timeline
    reqs = events(rec, "model_request")
    assert reqs[1]["force_tool"] == "submit_answer"


def test_host_bound_with_insist_profiles_kernels(captures, tmp_path):
    r, _, _ = ask(captures, "cu_tiny_launches", tmp_path, insist=True)
    assert "kernel_profile" in r.tool_calls
    assert r.bound == "host"  # the timeline still decides the answer


def test_near_peak_gemm_is_done(captures, tmp_path):
    r, _, _ = ask(captures, "cu_cublas_bf16", tmp_path)
    assert r.accepted and r.mechanism == "near_peak"
    assert r.tool_calls[-2] == "sass"


def test_record_replay_round_trip(captures, tmp_path):
    r, _, rec = ask(captures, "cu_softmax_naive", tmp_path)
    header, evs = tx.read(rec)
    assert header["format_version"] == tx.FORMAT_VERSION and header["model"] == "offline-expert"
    assert header["machine"]["hostname"] and "gpu" in header["machine"]
    kinds = {e["event"] for e in evs}
    assert {"model_request", "model_response", "tool_call", "tool_result", "answer", "critic_verdict"} <= kinds
    r2 = replay(rec)
    assert r2.replayed and r2.as_answer() == r.as_answer() and r2.accepted == r.accepted and r2.tool_calls == r.tool_calls


def test_tampered_transcript_diverges(captures, tmp_path):
    _, _, rec = ask(captures, "cu_softmax_naive", tmp_path)
    lines = rec.read_text().splitlines()
    out = []
    for line in lines:
        e = json.loads(line)
        if e.get("event") == "tool_call" and e.get("name") == "kernel_profile":
            e["input"]["kernel_regex"] = "softmax.*"
        out.append(json.dumps(e))
    bad = tmp_path / "tampered.jsonl"
    bad.write_text("\n".join(out) + "\n")
    with pytest.raises(ReplayDivergence, match="differs from the recorded one"):
        replay(bad)


def test_truncated_transcript_diverges(captures, tmp_path):
    _, _, rec = ask(captures, "cu_softmax_naive", tmp_path)
    lines = rec.read_text().splitlines()
    cut = [l for l in lines if json.loads(l).get("event") != "tool_result" or json.loads(l).get("name") != "sass"]
    bad = tmp_path / "cut.jsonl"
    bad.write_text("\n".join(cut) + "\n")
    with pytest.raises(ReplayDivergence):
        replay(bad)


def test_transcript_written_as_it_goes(captures, tmp_path):
    """Each event is flushed: the file is complete JSONL at every step."""
    seen: list[int] = []
    rec = tmp_path / "live.jsonl"

    def progress(msg: str) -> None:
        if rec.exists():
            text = rec.read_text()
            assert text.endswith("\n")
            seen.append(len(text.splitlines()))

    run_ask("why slow", None, [str(captures.case_dir("cu_softmax_naive"))], "expert", str(rec), progress,
            root=tmp_path)
    assert seen and seen == sorted(seen) and seen[-1] > 5
