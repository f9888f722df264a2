"""The model review is a second agent: it sees the answer, the tool calls with their arguments, the engine's
findings and what the deterministic checks matched; its rejection goes back to the investigating agent."""
from __future__ import annotations

from kernel_profiler.agent.session import run_ask
from kernel_profiler.agent.protocol import ModelTurn, ToolCall
from kernel_profiler.analysis.engine import analyze

from agent.scripted import ScriptedModel, call


class ReviewingModel(ScriptedModel):
    reviews = True


def verdict(v: str, *reasons: str) -> ModelTurn:
    return ModelTurn(tool_calls=[ToolCall(id=f"v-{v}", name="verdict", input={"verdict": v, "reasons": list(reasons)})],
                     model="scripted")


def test_review_sees_calls_findings_and_audit_and_its_rejection_goes_back(captures, tmp_path):
    art = str(captures.case_dir("cu_transpose_conflict"))
    good = analyze([art]).as_answer().model_dump(mode="json")
    why = "The evidence does not show the shared pipe is the busy unit: cite l1tex throughput."
    m = ReviewingModel([call("timeline", 1, top=3), call("kernel_profile", 2, kernel_regex="transpose_tile"),
                        call("submit_answer", 3, **good), verdict("reject", why),
                        call("submit_answer", 4, **good), verdict("accept")])
    r = run_ask("why is my transpose slow", None, [art], "expert", None, lambda s: None, root=tmp_path, model=m)
    assert r.accepted
    prompt = m.requests[3]["last"]["content"]  # the first review turn
    assert 'timeline({"top": 3})' in prompt and 'kernel_profile({"kernel_regex": "transpose_tile"})' in prompt
    assert "memory / shared_bank_conflict on `transpose_tile`" in prompt  # the engine's finding
    assert "Signature: shared_bank_conflict: present" in prompt
    assert "transpose_tile: " in prompt and "gpu__time_duration.sum" in prompt  # the facts the checks read
    back = m.requests[4]["last"]  # what the investigating agent got back for its first submission
    assert back["is_error"] and back["content"]["reasons"] == [why]
    assert [v["stage"] for v in r.verdicts] == ["deterministic", "model", "deterministic", "model"]
    assert r.verdicts[1]["verdict"] == "reject" and r.verdicts[1]["reasons"] == [why]
