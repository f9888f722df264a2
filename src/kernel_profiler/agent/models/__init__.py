"""Model backends behind protocol.Model: the offline expert, Claude, and transcript replay."""
from __future__ import annotations

import os
from typing import Optional

from ...errors import UsageError
from ..protocol import Model


def make_model(spec: Optional[str]) -> Model:
    """`expert` | `claude` | `claude:NAME` | `auto` (Claude when ANTHROPIC_API_KEY is set, else the expert).

    `replay:FILE` is handled by `session.replay`: a ReplayModel with the recorded environment (tool results and
    verdicts read back from the transcript)."""
    spec = (spec or "auto").strip()
    if spec == "auto":
        spec = "claude" if os.environ.get("ANTHROPIC_API_KEY") else "expert"
    if spec in ("expert", "offline", "offline-expert"):
        from .expert import ExpertModel

        return ExpertModel()
    if spec == "claude" or spec.startswith("claude:"):
        from .claude import ClaudeModel

        name = spec.partition(":")[2] or None
        return ClaudeModel(model=name)
    raise UsageError(f"unknown model {spec!r}: use expert, claude, claude:NAME or replay:FILE")
