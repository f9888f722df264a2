"""The Claude adapter and the orchestrator's model-turn handling, through the real `anthropic` client against a
LOCAL FAKE of the Messages API (tests/agent/fake_messages_api.py) that enforces the documented request rules of
claude-sonnet-5-5. Replies come from scripted brains (tests/agent/claude_brains.py): protocol fixtures, never a
recorded Claude session. Every investigation runs on real H200 captures (tests/data/captures)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import anthropic
import pytest

from kernel_profiler.agent import transcript as tx
from kernel_profiler.agent.models.claude import Caps, ClaudeModel
from kernel_profiler.agent.orchestrator import offered_tools
from kernel_profiler.agent.session import replay, run_ask
from kernel_profiler.agent.protocol import ModelRequestError, ModelUnavailable, ToolSpec
from kernel_profiler.agent.tools import tool_specs

from .claude_brains import Investigator
from .fake_messages_api import (API_KEY, DROP, FakeMessagesAPI, Reply, approx_tokens, error, refusal, reply, script,
                                text, thinking, tool)

# Input tokens summed over every request of a kernel-bound diagnosis (issue 11: <= 15k), counted by the fake's
# usage accounting: every input token, prompt-cache reads included (usage.total_input_tokens), when kernel_profile
# and sass share a turn (as the system prompt asks); the tokens processed at full price (input_tokens +
# cache_creation_input_tokens) are bounded by the same budget in every flow. TOTAL_SEQUENTIAL bounds the total
# with one tool per turn (a request more, reading the whole conversation again).
TOKEN_BUDGET = 15_000
TOTAL_SEQUENTIAL = 25_000


def uncached(u) -> int:
    return u.input_tokens + u.cache_creation_input_tokens
KERNEL_BOUND = ["cu_softmax_naive", "cu_transpose_conflict", "cu_local_array", "cu_sgemm_fp32", "cu_histogram_atomic"]


def claude(api: FakeMessagesAPI, **kw) -> ClaudeModel:
    return ClaudeModel(api_key=API_KEY, base_url=api.url, **{"max_retries": 2, **kw})


def ask(api, captures, tmp_path, case="cu_softmax_naive", record=None, **kw):
    art = str(captures.case_dir(case))
    stages: list[str] = []
    r = run_ask(f"why is my {case} slow", None, [art], "claude", str(record) if record else None, stages.append,
                root=tmp_path, model=claude(api, **kw))
    return r, stages


def _blocks(msg):
    return msg["content"] if isinstance(msg["content"], list) else [{"type": "text", "text": msg["content"]}]


def _spec():
    return [ToolSpec(name="timeline", description="d", input_schema={"type": "object", "properties": {}})]


# ------------------------------------------------------------------ the whole ask
def test_complete_ask_through_the_fake(captures, tmp_path):
    brain = Investigator()
    rec = tmp_path / "claude.jsonl"
    with FakeMessagesAPI(brain) as api:
        r, stages = ask(api, captures, tmp_path, record=rec)
    assert api.violations == [] and api.brain_errors == []
    assert r.accepted and not r.inconclusive and r.model == "claude:claude-sonnet-5-5"
    assert r.tool_calls == ["timeline", "kernel_profile", "sass", "submit_answer"]
    assert [(v["stage"], v["verdict"]) for v in r.verdicts] == [("deterministic", "accept"), ("model", "accept")]
    assert r.mechanism == "uncoalesced_global" and not r.notices
    bodies = api.requests
    assert len(bodies) == 5
    for b in bodies:  # never a setting claude-sonnet-5-5 refuses; effort set; at most 4 cache breakpoints
        assert b.get("tool_choice", {"type": "auto"}) == {"type": "auto"}
        assert not {"temperature", "top_p", "top_k", "thinking"} & set(b)
        assert b["output_config"]["effort"] == "medium"
        assert b["messages"][-1]["role"] == "user"
    first = bodies[0]
    assert first["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert first["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert [t["name"] for t in first["tools"]] == [s.name for s in tool_specs(offered_tools(None))]
    # the conversation's tail is cached too
    assert _blocks(bodies[2]["messages"][-1])[-1]["cache_control"] == {"type": "ephemeral"}
    # assistant turns go back verbatim: the thinking block with its signature, the text, the tool_use
    sent = bodies[2]["messages"][1]["content"]
    got = api.responses[0]["content"]
    assert [b["type"] for b in sent] == ["thinking", "tool_use"] and sent[0]["signature"] == got[0]["signature"]
    assert [b["type"] for b in bodies[3]["messages"][3]["content"]] == ["thinking", "text", "tool_use"]
    # the review is one structured-output request, no tools
    review = bodies[4]
    assert review["output_config"]["format"]["type"] == "json_schema" and "tools" not in review
    assert brain.review_prompts and "softmax" in brain.review_prompts[0]
    # tokens: the fake's usage accounting, reported by ask, within the budget
    assert r.usage.total_input_tokens == api.total_input_tokens() <= TOTAL_SEQUENTIAL
    assert uncached(r.usage) <= TOKEN_BUDGET
    assert r.usage.cache_read_input_tokens > 0 and r.usage.output_tokens > 0
    # the transcript names the model and replays without the network
    header, evs = tx.read(rec)
    assert header["model"] == "claude:claude-sonnet-5-5"
    final = [e for e in evs if e["event"] == "answer" and e.get("final")][-1]
    assert final["model"] == "claude:claude-sonnet-5-5"
    r2 = replay(rec)
    assert r2.accepted and r2.as_answer() == r.as_answer()


@pytest.mark.parametrize("case", KERNEL_BOUND)
def test_kernel_bound_diagnoses_stay_within_the_token_budget(case, captures, tmp_path):
    with FakeMessagesAPI(Investigator(batch=True)) as api:
        r, _ = ask(api, captures, tmp_path, case=case)
    assert api.violations == [] and api.brain_errors == []
    assert r.accepted and r.model == "claude:claude-sonnet-5-5"
    assert r.tool_calls == ["timeline", "kernel_profile", "sass", "submit_answer"]
    assert r.usage.total_input_tokens == api.total_input_tokens() <= TOKEN_BUDGET, (case, r.usage)
    assert uncached(r.usage) <= TOKEN_BUDGET, (case, r.usage)


def test_several_tool_calls_in_one_turn(captures, tmp_path):
    with FakeMessagesAPI(Investigator(batch=True)) as api:
        r, _ = ask(api, captures, tmp_path)
    assert api.violations == []
    assert r.accepted and r.tool_calls == ["timeline", "kernel_profile", "sass", "submit_answer"]
    results = [b for b in api.requests[2]["messages"][-1]["content"] if b["type"] == "tool_result"]
    uses = [b["id"] for b in api.responses[1]["content"] if b["type"] == "tool_use"]
    assert [b["tool_use_id"] for b in results] == uses and len(uses) == 2


def test_review_rejection_goes_back_to_the_agent_and_is_fixed(captures, tmp_path):
    why = "The evidence shows scattered loads but the fix does not say how much DRAM traffic falls."
    brain = Investigator(reviews=[{"verdict": "reject", "reasons": [why]}, {"verdict": "accept", "reasons": []}])
    with FakeMessagesAPI(brain) as api:
        r, stages = ask(api, captures, tmp_path)
    assert api.violations == []
    assert r.accepted and r.model == "claude:claude-sonnet-5-5"
    assert [(v["stage"], v["verdict"]) for v in r.verdicts] == [
        ("deterministic", "accept"), ("model", "reject"), ("deterministic", "accept"), ("model", "accept")]
    back = [b for m in api.requests[5]["messages"] for b in _blocks(m) if b.get("type") == "tool_result"][-1]
    assert back["is_error"] and why in back["content"]
    assert brain.submissions == 2


def test_critic_rejection_is_fixed_on_the_next_attempt(captures, tmp_path):
    # the spoiled values name metrics the captures hold under no such name (a ratio of two counters, a SASS count):
    # the checks cannot confirm them, so the review settles them; it finds none of them in the tool results
    why = "None of the three evidence values is in the tool results: quote them as kernel_profile reports them."
    brain = Investigator(spoil_first=True, reviews=[{"verdict": "reject", "reasons": [why]},
                                                    {"verdict": "accept", "reasons": []}])
    with FakeMessagesAPI(brain) as api:
        r, _ = ask(api, captures, tmp_path)
    assert api.violations == []
    assert r.accepted and [(v["stage"], v["verdict"]) for v in r.verdicts] == [
        ("deterministic", "reject"), ("model", "reject"), ("deterministic", "accept"), ("model", "accept")]
    assert r.verdicts[0]["grounds"] == "unconfirmed" and "## Unconfirmed" in brain.review_prompts[0]
    assert r.tool_calls.count("submit_answer") == 2


def test_an_unconfirmed_rejection_is_settled_by_the_review_request_and_replays(captures, tmp_path):
    rec = tmp_path / "unsure.jsonl"
    brain = Investigator(unsure_first=True)  # its first fix names no metric or direction: unconfirmed, not wrong
    with FakeMessagesAPI(brain) as api:
        r, _ = ask(api, captures, tmp_path, record=rec)
    assert api.violations == [] and api.brain_errors == []
    assert r.accepted and r.tool_calls.count("submit_answer") == 1
    assert [(v["stage"], v["verdict"]) for v in r.verdicts] == [("deterministic", "reject"), ("model", "accept")]
    assert r.verdicts[0]["grounds"] == "unconfirmed"
    review = [b for b in api.requests if b.get("output_config", {}).get("format")]
    assert len(review) == 1 and "tools" not in review[0]  # one structured-output request, as for any review
    assert "## Unconfirmed" in brain.review_prompts[0] and "The fix names no metric" in brain.review_prompts[0]
    r2 = replay(rec)  # the recorded verdicts carry their grounds, so the replay escalates the same rejection
    assert r2.accepted and [v["stage"] for v in r2.verdicts] == ["deterministic", "model"]


# ------------------------------------------------------------------ stop reasons
def test_max_tokens_never_runs_the_truncated_tool_call(captures, tmp_path):
    big = "x " * 400
    brain = Investigator()
    first = {"n": 0}

    def b(req):
        first["n"] += 1
        if first["n"] == 1:  # too long for max_tokens=64: the fake cuts the tool_use short
            return reply(thinking(big), text("Timeline first."), tool("timeline", {"top": 5}))
        return brain(req)

    with FakeMessagesAPI(b) as api:
        r, _ = ask(api, captures, tmp_path, max_tokens=64)
    assert api.responses[0]["stop_reason"] == "max_tokens"
    assert api.requests[0]["max_tokens"] == 64 and api.requests[1]["max_tokens"] >= 32768
    assert api.violations == [] and r.accepted
    # nothing of the cut-off reply reached the conversation
    assert all("toolu_fake_001" not in json.dumps(m) for m in api.requests[2]["messages"])


def test_max_tokens_twice_stops_with_the_reason(captures, tmp_path):
    huge = "word " * 40_000
    with FakeMessagesAPI(script(reply(text(huge), tool("timeline", {})), reply(text(huge), tool("timeline", {})))) as api:
        r, stages = ask(api, captures, tmp_path, max_tokens=64)
    assert len(api.requests) == 2 and r.tool_calls == [] and r.inconclusive
    assert r.model == "claude:claude-sonnet-5-5" and "max_tokens" in r.notices[0]


def test_refusal_stops_with_its_message(captures, tmp_path):
    with FakeMessagesAPI(script(refusal("cannot help with this request", category="cyber"))) as api:
        r, stages = ask(api, captures, tmp_path)
    assert len(api.requests) == 1 and r.inconclusive and not r.answered and r.tool_calls == []
    assert r.model == "claude:claude-sonnet-5-5"  # no silent fallback to the expert
    assert "refused" in r.notices[0] and "cannot help with this request" in r.notices[0]


def test_pause_turn_is_continued(captures, tmp_path):
    brain = Investigator()
    paused = Reply([thinking("Long thought, paused."), text("Let me look at the timeline.")], "pause_turn")
    with FakeMessagesAPI(script(paused, *[brain] * 8)) as api:
        r, _ = ask(api, captures, tmp_path)
    assert api.violations == [] and r.accepted
    second = api.requests[1]["messages"]
    assert second[-1]["role"] == "assistant" and second[-1]["content"][0]["signature"] == \
        api.responses[0]["content"][0]["signature"]


def test_text_only_turns_are_answered_by_instruction_not_forced_tool_choice(captures, tmp_path):
    brain = Investigator()
    with FakeMessagesAPI(script(reply(text("Thinking aloud.")), reply(text("Still thinking.")), *[brain] * 8)) as api:
        r, _ = ask(api, captures, tmp_path)
    assert api.violations == [] and r.accepted
    third = api.requests[2]
    assert third["tool_choice"] == {"type": "auto"}
    assert "Call `timeline` now" in json.dumps(third["messages"][-1])


def test_host_bound_timeline_asks_for_the_answer_in_the_conversation(captures, tmp_path):
    with FakeMessagesAPI(Investigator()) as api:
        r, _ = ask(api, captures, tmp_path, case="cu_tiny_launches")
    assert api.violations == [] and r.accepted and r.tool_calls == ["timeline", "submit_answer"]
    assert "Call `submit_answer` now" in json.dumps(api.requests[1]["messages"][-1])
    assert uncached(r.usage) <= TOKEN_BUDGET


# ------------------------------------------------------------------ failures
@pytest.mark.parametrize("failure,expect", [
    ([401], "401"), ([403], "403"), ([429] * 3, "429"), ([500] * 3, "HTTP 500"), ([529] * 3, "529"),
    ([DROP] * 3, "cannot reach"),
])
def test_outages_fall_back_to_the_expert_with_the_reason(failure, expect, captures, tmp_path):
    rec = tmp_path / "fallback.jsonl"
    with FakeMessagesAPI(Investigator()) as api:
        api.fail(*failure)
        r, stages = ask(api, captures, tmp_path, record=rec)
    assert r.accepted and r.model == "offline-expert"
    assert "falling back to the offline expert" in r.notices[0] and expect in r.notices[0]
    assert any("falling back" in s for s in stages)
    _, evs = tx.read(rec)
    final = [e for e in evs if e["event"] == "answer" and e.get("final")][-1]
    assert final["model"] == "offline-expert" and any(e["event"] == "notice" for e in evs)
    assert replay(rec).as_answer() == r.as_answer()


def test_a_transient_429_is_retried_by_the_sdk(captures, tmp_path):
    with FakeMessagesAPI(Investigator()) as api:
        api.fail(429)
        r, _ = ask(api, captures, tmp_path)
    assert r.accepted and r.model == "claude:claude-sonnet-5-5" and not r.notices
    assert [h.get("x-stainless-retry-count") for h in api.headers[:2]] == ["0", "1"]


def test_unknown_model_fails_loudly(captures, tmp_path):
    with FakeMessagesAPI(Investigator()) as api:
        with pytest.raises(ModelRequestError, match="404 not_found_error.*claude-sonnet-9"):
            ask(api, captures, tmp_path, model="claude-sonnet-9")
    assert len(api.requests) == 1  # not retried, no fallback


def test_a_request_the_model_refuses_fails_loudly_not_by_fallback(captures, tmp_path):
    m_api = FakeMessagesAPI(script(reply(tool("timeline", {}))))
    with m_api as api:
        m = claude(api)
        m.caps = Caps(forced_tool_choice=True, effort=True)  # a wrong capability table would force a tool
        with pytest.raises(ModelRequestError, match="400 invalid_request_error.*forced tool use"):
            m.respond("sys", [{"role": "user", "content": "q"}], _spec(), force_tool="timeline")
    assert api.violations and "forced tool use" in api.violations[0]


def test_cli_exits_2_with_one_line_on_a_refused_request(captures, tmp_path):
    art = str(captures.case_dir("cu_softmax_naive"))
    with FakeMessagesAPI(Investigator()) as api:
        env = {**os.environ, "ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": api.url,
               "PYTHONPATH": os.pathsep.join(sys.path)}
        p = subprocess.run([sys.executable, "-m", "kernel_profiler.cli", "ask", "why slow", "--artifacts", art,
                            "--model", "claude:claude-nope"], capture_output=True, text=True, env=env, cwd=tmp_path,
                           timeout=120)
    assert p.returncode == 2, p.stderr
    err = [ln for ln in p.stderr.splitlines() if "refused the request" in ln]
    assert len(err) == 1 and "404" in err[0] and "claude-nope" in err[0] and "Traceback" not in p.stderr


def test_ask_json_reports_tokens(captures, tmp_path):
    art = str(captures.case_dir("cu_softmax_naive"))
    with FakeMessagesAPI(Investigator()) as api:
        env = {**os.environ, "ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": api.url,
               "PYTHONPATH": os.pathsep.join(sys.path)}
        p = subprocess.run([sys.executable, "-m", "kernel_profiler.cli", "ask", "why is my softmax slow",
                            "--artifacts", art, "--model", "claude", "--json"], capture_output=True, text=True,
                           env=env, cwd=tmp_path, timeout=180)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["model"] == "claude:claude-sonnet-5-5" and out["accepted"]
    assert out["usage"]["total_input_tokens"] == api.total_input_tokens() <= TOTAL_SEQUENTIAL
    assert out["usage"]["input_tokens"] + out["usage"]["cache_creation_input_tokens"] <= TOKEN_BUDGET
    assert api.violations == []


def test_no_key_is_model_unavailable(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    with pytest.raises(ModelUnavailable, match="ANTHROPIC_API_KEY"):
        ClaudeModel().respond("sys", [{"role": "user", "content": "q"}], _spec())


# ------------------------------------------------------------------ the fake itself keeps the contract
def _raw(api):
    return anthropic.Anthropic(api_key=API_KEY, base_url=api.url, max_retries=0)


def _one_turn(api):
    """A real first turn from the fake (thinking + tool_use), as an API client would hold it."""
    c = _raw(api)
    m = c.messages.create(model="claude-sonnet-5-5", max_tokens=1024, tools=[{"name": "t", "input_schema":
                          {"type": "object"}}], messages=[{"role": "user", "content": "go"}])
    return c, [b.to_dict() for b in m.content]


BASE = dict(model="claude-sonnet-5-5", max_tokens=100, messages=[{"role": "user", "content": "hi"}])


@pytest.mark.parametrize("extra,words", [
    ({"temperature": 0.2}, "sampling"), ({"top_k": 5}, "sampling"),
    ({"thinking": {"type": "disabled"}}, "between_tools"),
    ({"thinking": {"type": "enabled", "budget_tokens": 2048}}, "not supported"),
    ({"tools": [{"name": "t", "input_schema": {"type": "object"}}], "tool_choice": {"type": "tool", "name": "t"}},
     "forced tool use"),
    ({"tools": [{"name": "t", "input_schema": {"type": "object"}}], "tool_choice": {"type": "any"}}, "forced"),
    ({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "The answer is"}]}, "prefill"),
    ({"system": [{"type": "text", "text": f"s{i}", "cache_control": {"type": "ephemeral"}} for i in range(5)]},
     "maximum of 4"),
    ({"thinking": {"type": "between_tools"}, "output_config": {"effort": "max"}}, "between_tools"),
])
def test_fake_refuses_what_the_model_refuses(extra, words):
    with FakeMessagesAPI(script(reply(text("ok")))) as api:
        with pytest.raises(anthropic.BadRequestError, match=words):
            _raw(api).messages.create(**BASE, extra_body=extra)  # raw JSON: this SDK has no `temperature` any more


def test_fake_checks_thinking_signatures_and_tool_result_pairing():
    b = script(reply(thinking("plan"), tool("t", {"a": 1})), *[reply(text("done"))] * 6)  # 400s never reach it
    with FakeMessagesAPI(b) as api:
        c, blocks = _one_turn(api)
        tools = [{"name": "t", "input_schema": {"type": "object"}}]
        uid = blocks[1]["id"]
        ok = [{"type": "tool_result", "tool_use_id": uid, "content": "1"}]

        def send(assistant, user):
            return c.messages.create(model="claude-sonnet-5-5", max_tokens=100, tools=tools, messages=[
                {"role": "user", "content": "go"}, {"role": "assistant", "content": assistant},
                {"role": "user", "content": user}])

        tampered = [{**blocks[0], "thinking": "a different plan"}, blocks[1]]
        with pytest.raises(anthropic.BadRequestError, match="signature"):
            send(tampered, ok)
        with pytest.raises(anthropic.BadRequestError, match="verbatim"):
            send([blocks[1]], ok)  # the thinking block dropped
        with pytest.raises(anthropic.BadRequestError, match="without tool_result"):
            send(blocks, [{"type": "text", "text": "no result"}])
        with pytest.raises(anthropic.BadRequestError, match="without tool_result"):
            send(blocks, [{"type": "text", "text": "first"}, *ok])
        assert send(blocks, ok).content[0].text == "done"
        # a signature from another conversation does not verify
        with pytest.raises(anthropic.BadRequestError, match="signature"):
            c.messages.create(model="claude-sonnet-5-5", max_tokens=100, tools=tools, messages=[
                {"role": "user", "content": "another conversation"}, {"role": "assistant", "content": blocks},
                {"role": "user", "content": ok}])


def test_fake_usage_counts_cache_reads_and_writes():
    sysblk = [{"type": "text", "text": "You are a profiler. " * 200, "cache_control": {"type": "ephemeral"}}]
    with FakeMessagesAPI(script(reply(text("a")), reply(text("b")))) as api:
        c = _raw(api)
        u1 = c.messages.create(**{**BASE, "system": sysblk}).usage
        u2 = c.messages.create(**{**BASE, "system": sysblk}).usage
    assert u1.cache_creation_input_tokens > 500 and u1.cache_read_input_tokens == 0
    assert u2.cache_read_input_tokens == u1.cache_creation_input_tokens and u2.cache_creation_input_tokens == 0
    # letters/4 (softmax, rows), punctuation runs/2 (_ and .), digits/3 (1709856, 0)
    assert approx_tokens("softmax_rows 1709856.0") == 2 + 1 + 1 + 3 + 1 + 1


def test_fake_scripted_errors_reach_the_client():
    with FakeMessagesAPI(script(error(422, "invalid_request_error", "bad schema"))) as api:
        with pytest.raises(anthropic.UnprocessableEntityError):
            _raw(api).messages.create(**BASE)


def test_an_outage_mid_investigation_hands_over_to_the_expert(captures, tmp_path):
    brain = Investigator()
    overloaded = error(529, "overloaded_error", "Overloaded", **{"retry-after": "0.01"})
    with FakeMessagesAPI(script(brain, overloaded, overloaded, overloaded)) as api:
        r, _ = ask(api, captures, tmp_path)
    assert r.tool_calls[0] == "timeline" and r.accepted and r.model == "offline-expert"
    assert "529" in r.notices[0] and "falling back to the offline expert" in r.notices[0]


def test_no_counter_access_reaches_the_model_and_the_run_still_answers(captures, tmp_path, monkeypatch):
    import kernel_profiler.agent.tools as tools
    from kernel_profiler.errors import CounterPermission

    def no_counters(ctx, inp):
        raise CounterPermission("ncu reported ERR_NVGPUCTRPERM")

    monkeypatch.setitem(tools.REGISTRY, "kernel_profile", tools.REGISTRY["kernel_profile"].__class__(
        **{**tools.REGISTRY["kernel_profile"].__dict__, "fn": no_counters}))
    brain = Investigator()
    with FakeMessagesAPI(brain) as api:
        r, _ = ask(api, captures, tmp_path)
    assert api.violations == [] and r.model == "claude:claude-sonnet-5-5"
    assert brain.errors[0]["error"] == "CounterPermission" and "NVreg_RestrictProfilingToAdminUsers=0" in \
        brain.errors[0]["message"]
    assert r.tool_calls[:2] == ["timeline", "kernel_profile"] and r.answered
    system = api.requests[0]["system"][0]["text"]
    assert "ERR_NVGPUCTRPERM" in system and "ToolMissing" in system and "`mechanism` id" in system
