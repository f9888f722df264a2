"""A Diagnosis from a recorded run: a capture folder/file, or an `ask --record` transcript.

For a transcript, the diagnosis is rebuilt from the recorded tool results with
the offline expert's own decision (no profiler, no GPU, no network), so a
report of a run shows exactly the numbers that run saw.
"""
from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from .answer import Diagnosis
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
    from .agent import transcript as tx
    from .agent.models.expert import diagnosis_of

    try:
        _header, events = tx.read(path)  # the one reader: header and format version checked
    except tx.TranscriptError as e:
        raise ArtifactError(path, f"not a readable kernel-profiler transcript ({e})") from e
    messages: list[dict] = []
    for ev in events:
        if ev["event"] != "tool_result":
            continue
        if not isinstance(ev.get("name"), str):
            raise ArtifactError(path, f"not a readable kernel-profiler transcript (tool_result event "
                                      f"{ev.get('seq', '?')} names no tool)")
        messages.append({"role": "tool", "tool_call_id": ev.get("id"), "name": ev["name"],
                         "content": ev.get("content"), "is_error": bool(ev.get("is_error"))})
    if not any(m["name"] == "timeline" for m in messages):
        raise ArtifactError(path, "the transcript holds no timeline result to report on")
    try:
        return diagnosis_of(messages)
    except ValidationError as e:
        raise ArtifactError(path, f"the transcript's recorded tool results do not match this version's tools "
                                  f"({e.errors()[0]['msg'] if e.errors() else e})") from None


def diagnosis_for(path: Path) -> Diagnosis:
    """Captures are analyzed; a transcript is rebuilt from its recorded tool results."""
    if is_transcript(path):
        return diagnosis_from_transcript(path)
    from .analysis.engine import analyze

    return analyze([path])
