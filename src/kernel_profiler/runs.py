"""A Diagnosis from a recorded run: a capture folder/file, or an `ask --record` transcript.

For a transcript, the diagnosis is rebuilt from the recorded tool results with
the offline expert's own decision (no profiler, no GPU, no network), so a
report of a run shows exactly the numbers that run saw.
"""
from __future__ import annotations

import json
from pathlib import Path

from .diagnosis import Diagnosis
from .errors import ArtifactError


def is_transcript(path: Path) -> bool:
    if not path.is_file():
        return False
    try:
        with open(path, "rb") as f:
            head = f.readline(65536)
        return b'"format_version"' in head and b'"question"' in head
    except OSError:
        return False


def diagnosis_from_transcript(path: Path) -> Diagnosis:
    from .agent.models.expert import ExpertModel, _State

    messages: list[dict] = []
    try:
        lines = Path(path).read_text().splitlines()
        for line in lines[1:]:
            ev = json.loads(line)
            if ev.get("event") == "tool_result":
                messages.append({"role": "tool", "tool_call_id": ev.get("id"), "name": ev["name"],
                                 "content": ev.get("content"), "is_error": bool(ev.get("is_error"))})
    except (OSError, ValueError, KeyError) as e:
        raise ArtifactError(path, f"not a readable kernel-profiler transcript ({e})") from e
    if not any(m["name"] == "timeline" for m in messages):
        raise ArtifactError(path, "the transcript holds no timeline result to report on")
    return ExpertModel().diagnosis(_State(messages))


def diagnosis_for(path: Path) -> Diagnosis:
    """Captures are analyzed; a transcript is rebuilt from its recorded tool results."""
    if is_transcript(path):
        return diagnosis_from_transcript(path)
    from .engine import analyze

    return analyze([path])
