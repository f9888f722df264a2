"""Every committed transcript replays with no GPU, no profilers and no network."""
from __future__ import annotations

from kernel_profiler.answer import Answer

from pathlib import Path

import pytest

from kernel_profiler.agent import transcript as tx
from kernel_profiler.agent.session import replay

TRANSCRIPTS = sorted((Path(__file__).resolve().parents[2] / "transcripts").glob("*.jsonl"))


def test_there_are_at_least_four_transcripts():
    assert len(TRANSCRIPTS) >= 4


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.name)
def test_transcript_replays(path, monkeypatch):
    import kernel_profiler.agent.tools as tools

    def no_tools(*a, **k):
        raise AssertionError("a replay must not run a tool")

    monkeypatch.setattr(tools, "call_tool", no_tools)
    monkeypatch.setattr("kernel_profiler.agent.live.call_tool", no_tools)
    header, events = tx.read(path)
    assert header["model"] and header["machine"]["hostname"] and header["question"]
    if "claude" in header["model"].lower():  # no Claude session was ever recorded here: a fake says so everywhere
        assert header["model_server"]["not_a_claude_session"] and "not Claude" in header["model"]
        turns = [e["turn"]["model"] for e in events if e["event"] == "model_response"]
        assert turns and all("not Claude" in m for m in turns)
    r = replay(path)
    assert r.replayed and r.answered
    final = [e for e in events if e["event"] == "answer" and e.get("final")][-1]
    assert r.accepted == final["accepted"] and r.as_answer() == Answer.model_validate(final["answer"])
    if not r.inconclusive:
        assert r.bottleneck and r.mechanism and r.explanation and r.fix and r.evidence
