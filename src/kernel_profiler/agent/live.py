"""The live environment of an investigation: the tools run now, in the sandbox, and the critic checks each answer
against the captures (the user's and those the tools made)."""
from __future__ import annotations

from typing import Any, Optional

from .context import ToolContext
from .tools import call_tool


class LiveEnvironment:
    """protocol.Environment over a ToolContext."""

    replayed = False

    def __init__(self, ctx: ToolContext):
        self.ctx = ctx
        self.last_check = None  # the deterministic critic's last Verdict (its audit goes to the model reviewer)

    def tool(self, name: str, args: dict, refusal: Optional[str]) -> tuple[Any, bool]:
        if refusal:
            return {"error": "OrderViolation", "message": refusal}, True
        out = call_tool(self.ctx, name, args)
        return out.content, out.is_error

    def submitted(self, args: dict) -> None:
        pass

    def schema_verdict(self, verdict: dict) -> dict:
        return verdict

    def captures(self):
        # Loaded and diagnosed once per set of captures (ToolContext caches both), not once per answer.
        arts = self.ctx.collected_artifacts()
        return (arts, self.ctx.collected_diagnosis()) if arts is not None else None

    def check(self, answer) -> dict:
        from ..critic import critique

        loaded = self.captures()
        if loaded is None:
            return {"stage": "deterministic", "verdict": "reject",
                    "reasons": ["No capture was made or given, so no number in the answer can be checked."]}
        v = critique(answer, loaded[0], diagnosis=loaded[1])
        self.last_check = v
        out = {"stage": "deterministic", "verdict": v.verdict, "reasons": list(v.reasons)}
        if v.grounds:
            out["grounds"] = v.grounds
        return out

    def review_context(self):
        return self.ctx.collected_diagnosis(), self.last_check

    def model_verdict(self, review: dict) -> dict:
        return review

    def describe(self, name: str, args: dict) -> Optional[str]:
        return None

    def finish(self) -> None:
        pass
