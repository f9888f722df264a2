"""Replay of a transcript: a model and an environment that read the file, so nothing runs.

`ReplayModel` hands back the recorded model turns in order and checks each
request against the recorded one (number of messages, forced tool, tool names).
`RecordedEnvironment` (a protocol.Environment) hands back the recorded tool
results and critic verdicts, after checking that the tool call the run makes now
is the recorded one (name and arguments). Any difference, or running past the
end of the transcript, raises ReplayDivergence. The orchestrator runs its one
loop over them.
"""
from __future__ import annotations

import json
from typing import Any, Optional

from pydantic import ValidationError

from ..protocol import ModelTurn, ReplayDivergence, ToolSpec
from ..transcript import TranscriptError


def canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, default=str, separators=(",", ":"))


class ReplayModel:
    offline = True  # no backend to lose: an error is a divergence, never a fallback to another model

    def __init__(self, events: list[dict], source: str = "transcript"):
        self.source = source
        # Pair each response with the request before it; a request with no response (the backend
        # failed and the run fell back to the expert) is not replayed.
        self._req, self._resp = [], []
        pending: Optional[dict] = None
        for e in events:
            if e["event"] == "model_request":
                pending = e
            elif e["event"] == "model_response":
                self._req.append(pending or {})
                self._resp.append(e)
                pending = None
        self._i = 0
        for e in self._resp:
            if not isinstance(e.get("turn"), dict):
                raise TranscriptError(f"{source}: model_response event {e.get('seq', '?')} holds no model turn object")
        models = {e["turn"].get("model") for e in self._resp}
        self.recorded_models = sorted(m for m in models if m)
        self.name = f"replay:{'+'.join(self.recorded_models) or 'unknown'}"
        self.reviews = any(r.get("purpose") == "review" for r in self._resp)
        # Behave as the recorded backend did: reviews through structured output, and whether it accepted a forced
        # tool choice (transcripts older than the flag were all recorded with forcing).
        self.structured_review = any(q.get("purpose") == "review" and q.get("structured") for q in self._req)
        self.forced_tool_choice = all(q.get("forced_tool_choice", True) for q in self._req if q)

    def respond(self, system: str, messages: list[dict], tools: list[ToolSpec],
                force_tool: Optional[str] = None) -> ModelTurn:
        i = self._i
        if i >= len(self._resp):
            raise ReplayDivergence(f"{self.source}: the run asks for model turn {i + 1}, but the transcript records "
                                   f"only {len(self._resp)}")
        req = self._req[i]
        if req:
            now = {"n_messages": len(messages), "force_tool": force_tool, "tools": [t.name for t in tools]}
            rec = {k: req.get(k) for k in now}
            if canonical(now) != canonical(rec):
                raise ReplayDivergence(f"{self.source}: model request {i + 1} differs from the recorded one: "
                                       f"recorded {rec}, now {now}")
        self._i += 1
        try:
            return ModelTurn.model_validate(self._resp[i]["turn"])
        except ValidationError as e:
            raise TranscriptError(f"{self.source}: model_response event {self._resp[i].get('seq', '?')} is not a "
                                  f"valid model turn ({e.errors()[0]['msg'] if e.errors() else e})") from None

    def review(self, system: str, prompt: str, schema: dict) -> ModelTurn:
        """The recorded structured-output review."""
        return self.respond(system, [{"role": "user", "content": prompt}], [], None)

    def finished(self) -> bool:
        return self._i == len(self._resp)


class RecordedEnvironment:
    """Recorded tool results and critic verdicts, handed out in order after checking the call."""

    replayed = True

    def __init__(self, events: list[dict], source: str = "transcript"):
        self.source = source
        self._calls = [e for e in events if e["event"] == "tool_call"]
        for e in self._calls:
            if not isinstance(e.get("name"), str):
                raise TranscriptError(f"{source}: tool_call event {e.get('seq', '?')} names no tool")
        self._results = {e.get("id"): e for e in events if e["event"] == "tool_result"}
        self._verdicts = [e for e in events if e["event"] == "critic_verdict"]
        self._i = 0
        self._v = 0

    def result(self, name: str, args: dict) -> tuple[Any, bool]:
        i = self._i
        if i >= len(self._calls):
            raise ReplayDivergence(f"{self.source}: the run calls {name}({canonical(args)[:200]}) but the transcript "
                                   f"records only {len(self._calls)} tool calls")
        rec = self._calls[i]
        if rec["name"] != name or canonical(rec.get("input", {})) != canonical(args):
            raise ReplayDivergence(f"{self.source}: tool call {i + 1} differs from the recorded one: recorded "
                                   f"{rec['name']}({canonical(rec.get('input', {}))[:300]}), now "
                                   f"{name}({canonical(args)[:300]})")
        self._i += 1
        res = self._results.get(rec["id"])
        if res is None:
            if name == "submit_answer":
                return None, False
            raise ReplayDivergence(f"{self.source}: tool call {i + 1} ({name}) has no recorded result (the recorded "
                                   f"run was interrupted there)")
        return res.get("content"), bool(res.get("is_error"))

    def verdict(self, stage: str) -> dict:
        if self._v >= len(self._verdicts):
            raise ReplayDivergence(f"{self.source}: the run reaches critic verdict {self._v + 1} ({stage}) but the "
                                   f"transcript records only {len(self._verdicts)}")
        rec = self._verdicts[self._v]
        if rec.get("stage") != stage:
            raise ReplayDivergence(f"{self.source}: critic verdict {self._v + 1} was a {rec.get('stage')} review, "
                                   f"now a {stage} review")
        self._v += 1
        out = {"verdict": rec.get("verdict"), "reasons": rec.get("reasons", [])}
        if rec.get("grounds"):
            out["grounds"] = rec["grounds"]  # (what a deterministic rejection rested on, where it was recorded)
        return out

    def finished(self) -> bool:
        return self._i == len(self._calls) and self._v == len(self._verdicts)

    # ------------------------------------------------------------ protocol.Environment
    def tool(self, name: str, args: dict, refusal: Optional[str]) -> tuple[Any, bool]:
        content, is_error = self.result(name, args)
        if refusal and not is_error:
            raise ReplayDivergence(f"the recorded run allowed {name}, this run refuses it: {refusal}")
        return content, is_error

    def submitted(self, args: dict) -> None:
        self.result("submit_answer", args)

    def schema_verdict(self, verdict: dict) -> dict:
        self.verdict("schema")
        return verdict

    def check(self, answer) -> dict:
        return {"stage": "deterministic", **self.verdict("deterministic")}

    def captures(self):
        return None  # nothing is read now: the recorded answers were checked when they were recorded

    def review_context(self):
        return None, None  # nothing is read now: the reviewer's turn is the recorded one

    def model_verdict(self, review: dict) -> dict:
        rec = self.verdict("model")
        if (rec["verdict"], rec["reasons"]) != (review["verdict"], review["reasons"]):
            raise ReplayDivergence(f"the replayed model review gives {review['verdict']}, the recorded one "
                                   f"{rec['verdict']}")
        return review

    def describe(self, name: str, args: dict) -> Optional[str]:
        return "replaying the recorded timeline" if name == "timeline" else None

    def finish(self) -> None:
        if not self.finished():
            raise ReplayDivergence("the replayed run ended before using every recorded tool call and verdict")
