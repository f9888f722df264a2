"""The Claude adapter against a LOCAL mock of the Messages API (hand-built protocol fixtures, not recorded
Claude sessions): tool-use round trip, prompt caching, usage, SDK retries on 429/529, and the fallback
to the offline expert on an auth error."""
from __future__ import annotations

import time

import pytest

from kernel_profiler.agent import transcript as tx
from kernel_profiler.agent.models.claude import ClaudeModel
from kernel_profiler.agent.orchestrator import replay, run_ask
from kernel_profiler.agent.protocol import ModelUnavailable, ToolSpec
from kernel_profiler.agent.tools import tool_specs
from kernel_profiler.critic import Answer
from kernel_profiler.engine import analyze

from .mock_messages_api import MockMessagesAPI, error, text_only, tool_use


@pytest.fixture
def api():
    with MockMessagesAPI() as m:
        yield m


def claude(api, **kw) -> ClaudeModel:
    return ClaudeModel(api_key="sk-test-not-a-key", base_url=api.url, **{"max_retries": 2, **kw})


def test_tool_use_round_trip_to_submit_answer(api, captures, tmp_path):
    art = str(captures.case_dir("cu_softmax_naive"))
    answer = Answer.from_diagnosis(analyze([art])).model_dump(mode="json")
    api.script = [
        (200, {}, tool_use("timeline", {"top": 5}, 1, text="Timeline first.",
                           usage={"input_tokens": 900, "output_tokens": 30, "cache_creation_input_tokens": 2500,
                                  "cache_read_input_tokens": 0})),
        (200, {}, text_only("I think it is memory-bound.", 2)),  # no tool call: the orchestrator nudges
        (200, {}, tool_use("kernel_profile", {"kernel_regex": "softmax_rows", "launch_skip": 3, "launch_count": 1,
                                              "sections": ["SpeedOfLight", "MemoryWorkloadAnalysis_Tables"]}, 3)),
        (200, {}, tool_use("sass", {"kernel_regex": "softmax_rows"}, 4)),
        (200, {}, tool_use("submit_answer", answer, 5)),
        (200, {}, tool_use("verdict", {"verdict": "accept", "reasons": []}, 6)),  # the model review
    ]
    rec = tmp_path / "claude.jsonl"
    stages: list[str] = []
    r = run_ask("why is my softmax slow", None, [art], "claude", str(rec), stages.append, root=tmp_path,
                model=claude(api))
    assert r.accepted and r.model == "claude:claude-sonnet-5-5"
    assert r.tool_calls == ["timeline", "kernel_profile", "sass", "submit_answer"]
    assert [v["stage"] for v in r.verdicts] == ["deterministic", "model"]
    assert len(api.requests) == 6
    first = api.requests[0]
    assert first["path"] == "/v1/messages"
    h = first["headers"]
    assert h.get("x-api-key") == "sk-test-not-a-key" or h.get("authorization") == "Bearer sk-test-not-a-key"
    body = first["json"]
    assert body["model"] == "claude-sonnet-5-5"
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert all("cache_control" not in t for t in body["tools"][:-1])
    assert [t["name"] for t in body["tools"]] == [s.name for s in tool_specs()]
    assert body["tools"][1]["input_schema"] == tool_specs()[1].input_schema
    # after the text-only turn, the model is nudged back to the tools
    nudge = api.requests[2]["json"]["messages"][-1]
    assert nudge["role"] == "user" and "submit_answer" in nudge["content"][-1]["text"]
    assert api.requests[2]["json"]["tool_choice"] == {"type": "auto"}
    # tool results travel back as tool_result blocks answering the tool_use ids
    msgs = api.requests[3]["json"]["messages"]
    results = [b for m in msgs if m["role"] == "user" for b in m["content"] if b.get("type") == "tool_result"]
    assert results[0]["tool_use_id"] == "toolu_fixture_01" and '"verdict": "kernel"' in results[0]["content"]
    uses = [b for m in msgs if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]
    assert uses[0]["name"] == "timeline"
    # the review is forced through the verdict tool
    review = api.requests[5]["json"]
    assert review["tool_choice"] == {"type": "tool", "name": "verdict"} and review["tools"][0]["name"] == "verdict"
    # token usage summed from every turn
    assert r.usage.cache_creation_input_tokens == 2500 and r.usage.input_tokens > 900
    # the recorded transcript replays without the network
    header, evs = tx.read(rec)
    assert header["model"] == "claude:claude-sonnet-5-5"
    assert any(e["event"] == "model_response" and e["turn"]["usage"]["cache_creation_input_tokens"] == 2500
               for e in evs)
    r2 = replay(rec)
    assert r2.accepted and r2.answer == r.answer


def test_bad_model_turn_args_refused_by_sandbox(api, captures, tmp_path):
    art = str(captures.case_dir("cu_softmax_naive"))
    answer = Answer.from_diagnosis(analyze([art])).model_dump(mode="json")
    api.script = [
        (200, {}, tool_use("timeline", {}, 1)),
        (200, {}, tool_use("kernel_profile", {"kernel_regex": "softmax_rows`reboot`"}, 2)),
        (200, {}, tool_use("submit_answer", answer, 3)),
        (200, {}, tool_use("verdict", {"verdict": "accept"}, 4)),
    ]
    r = run_ask("q", None, [art], "claude", None, lambda s: None, root=tmp_path, model=claude(api))
    msgs = api.requests[2]["json"]["messages"]
    last = msgs[-1]["content"][-1]
    assert last["type"] == "tool_result" and last["is_error"] and "SandboxViolation" in last["content"]
    assert r.accepted


def _spec():
    return [ToolSpec(name="timeline", description="d", input_schema={"type": "object", "properties": {}})]


def test_retry_on_429_then_success(api):
    api.script = [(429, {"retry-after": "0.01"}, error("rate_limit_error", "slow down")),
                  (200, {}, tool_use("timeline", {}, 1))]
    t0 = time.monotonic()
    turn = claude(api).respond("sys", [{"role": "user", "content": "q"}], _spec())
    assert time.monotonic() - t0 < 5
    assert turn.tool_calls[0].name == "timeline" and len(api.requests) == 2
    assert [r["headers"].get("x-stainless-retry-count") for r in api.requests] == ["0", "1"]


def test_retry_on_529_then_success(api):
    api.script = [(529, {"retry-after": "0.01"}, error("overloaded_error", "Overloaded")),
                  (529, {"retry-after-ms": "10"}, error("overloaded_error", "Overloaded")),
                  (200, {}, tool_use("timeline", {}, 1))]
    turn = claude(api).respond("sys", [{"role": "user", "content": "q"}], _spec())
    assert turn.tool_calls[0].name == "timeline" and len(api.requests) == 3
    assert turn.usage.cache_read_input_tokens == 3000


def test_overload_after_retries_is_model_unavailable(api):
    api.script = [(529, {"retry-after": "0.01"}, error("overloaded_error", "Overloaded"))] * 3
    with pytest.raises(ModelUnavailable, match="overloaded"):
        claude(api).respond("sys", [{"role": "user", "content": "q"}], _spec())
    assert len(api.requests) == 3  # 1 + the SDK's max_retries; no retry loop of our own


def test_rate_limit_after_retries_is_model_unavailable(api):
    api.script = [(429, {"retry-after": "0.01"}, error("rate_limit_error", "slow down"))] * 3
    with pytest.raises(ModelUnavailable, match="429"):
        claude(api).respond("sys", [{"role": "user", "content": "q"}], _spec())


def test_connection_error_is_model_unavailable():
    m = ClaudeModel(api_key="k", base_url="http://127.0.0.1:9", max_retries=0)
    with pytest.raises(ModelUnavailable, match="reach"):
        m.respond("sys", [{"role": "user", "content": "q"}], _spec())


def test_no_key_is_model_unavailable(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    with pytest.raises(ModelUnavailable, match="ANTHROPIC_API_KEY"):
        ClaudeModel().respond("sys", [{"role": "user", "content": "q"}], _spec())


def test_auth_error_falls_back_to_expert_with_notice(api, captures, tmp_path):
    api.script = [(401, {}, error("authentication_error", "invalid x-api-key"))]
    art = str(captures.case_dir("cu_softmax_naive"))
    rec = tmp_path / "fallback.jsonl"
    stages: list[str] = []
    r = run_ask("why is my softmax slow", None, [art], "claude", str(rec), stages.append, root=tmp_path,
                model=claude(api, max_retries=3))
    assert len(api.requests) == 1  # 401 is not retried
    assert r.accepted and r.model == "offline-expert"
    assert r.notices and "falling back to the offline expert" in r.notices[0] and "401" in r.notices[0]
    assert any("falling back" in s for s in stages)
    _, evs = tx.read(rec)
    assert any(e["event"] == "notice" for e in evs)
    r2 = replay(rec)  # the fallback run replays too
    assert r2.answer == r.answer
