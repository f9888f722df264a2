"""Rendering an answer as JSON (the shape `kernel-profiler schema` publishes)."""
from __future__ import annotations

import json

from ..answer import Answer, AskResult


def to_json(a: Answer) -> str:
    """The answer as JSON; an AskResult says first what the answer is about (`source`, `source_note`)."""
    d = a.model_dump(mode="json")
    if isinstance(a, AskResult):
        d = {"source": d.pop("source"), "source_note": d.pop("source_note"), **d}
    return json.dumps(d, indent=2, ensure_ascii=False)


def show(a: Answer, as_json: bool) -> str:
    """What `ask`/`replay` print: the JSON, or the Markdown answer."""
    from .markdown import markdown

    return to_json(a) if as_json else markdown(a)
