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


def _no_fix_outcome(answer: dict) -> dict:
    """The answer with a fix whose metric and direction the checks cannot find (a rejection they cannot confirm)."""
    a = {**answer, "fix": {**answer["fix"], "metric": None, "direction": None, "expected": "",
                           "change": "Pad the shared tile to 33 columns."}}
    return a


def test_a_rejection_the_checks_could_not_confirm_is_settled_by_the_model_review(captures, tmp_path):
    art = str(captures.case_dir("cu_transpose_conflict"))
    unsure = _no_fix_outcome(analyze([art]).as_answer().model_dump(mode="json"))
    m = ReviewingModel([call("timeline", 1, top=3), call("kernel_profile", 2, kernel_regex="transpose_tile"),
                        call("submit_answer", 3, **unsure), verdict("accept")])
    r = run_ask("why is my transpose slow", None, [art], "expert", None, lambda s: None, root=tmp_path, model=m)
    assert r.accepted
    assert [(v["stage"], v["verdict"]) for v in r.verdicts] == [("deterministic", "reject"), ("model", "accept")]
    assert r.verdicts[0]["grounds"] == "unconfirmed"
    prompt = m.requests[3]["last"]["content"]
    assert "## Unconfirmed" in prompt and "The fix names no metric" in prompt and "No measurement contradicts it" in prompt


def test_the_model_review_can_uphold_an_unconfirmed_rejection(captures, tmp_path):
    art = str(captures.case_dir("cu_transpose_conflict"))
    good = analyze([art]).as_answer().model_dump(mode="json")
    why = "The fix gives no metric or direction: say that wavefronts per shared load fall from 32 to ~1."
    m = ReviewingModel([call("timeline", 1, top=3), call("kernel_profile", 2, kernel_regex="transpose_tile"),
                        call("submit_answer", 3, **_no_fix_outcome(good)), verdict("reject", why),
                        call("submit_answer", 4, **good), verdict("accept")])
    r = run_ask("why is my transpose slow", None, [art], "expert", None, lambda s: None, root=tmp_path, model=m)
    assert r.accepted
    back = m.requests[4]["last"]  # the investigating agent gets the reviewer's reasons
    assert back["is_error"] and back["content"]["reasons"] == [why]
    assert [v["stage"] for v in r.verdicts] == ["deterministic", "model", "deterministic", "model"]


def test_a_contradicted_rejection_goes_back_without_a_model_review(captures, tmp_path):
    art = str(captures.case_dir("cu_transpose_conflict"))
    good = analyze([art]).as_answer().model_dump(mode="json")
    wrong = {**good, "bound": "host", "mechanism": "host_sync",
             "bottleneck": "The program is host-bound: it synchronizes after every launch."}
    m = ReviewingModel([call("timeline", 1, top=3), call("kernel_profile", 2, kernel_regex="transpose_tile"),
                        call("submit_answer", 3, **wrong), call("submit_answer", 4, **good), verdict("accept")])
    r = run_ask("why is my transpose slow", None, [art], "expert", None, lambda s: None, root=tmp_path, model=m)
    assert r.accepted
    assert [(v["stage"], v["verdict"]) for v in r.verdicts] == [("deterministic", "reject"),
                                                                ("deterministic", "accept"), ("model", "accept")]
    assert r.verdicts[0]["grounds"] == "contradicted"
    assert m.requests[3]["last"]["is_error"]  # the agent's next turn follows the rejection: no review in between


def test_without_a_reviewing_model_an_unconfirmed_rejection_stands(captures, tmp_path):
    art = str(captures.case_dir("cu_transpose_conflict"))
    good = analyze([art]).as_answer().model_dump(mode="json")
    m = ScriptedModel([call("timeline", 1, top=3), call("kernel_profile", 2, kernel_regex="transpose_tile"),
                       call("submit_answer", 3, **_no_fix_outcome(good)), call("submit_answer", 4, **good)])
    r = run_ask("why is my transpose slow", None, [art], "expert", None, lambda s: None, root=tmp_path, model=m)
    assert r.accepted
    assert [(v["stage"], v["verdict"]) for v in r.verdicts] == [("deterministic", "reject"), ("deterministic", "accept")]
