"""A model's second opinion on an answer handed to `critique --review`: the reviewer of `ask`, on the same facts.

The deterministic checks run first. The model then reviews an answer they accept, and settles a rejection that rests
only on what they could not confirm (critic.grounds); a rejection the captures contradict stands without it. The
reviewer sees the answer, the engine's analysis of the same captures (its one tool result: `critique` makes no tool
calls), the engine's findings, what the checks matched and, for an unconfirmed rejection, their open reasons. An
outage, a refusal or a reply that is no verdict leaves the checks' verdict standing, with a notice.
"""
from __future__ import annotations

import os
from typing import Callable

from pydantic import ValidationError

from ..analysis.engine import diagnose
from ..artifacts import load_paths
from ..critic import critique_read, parse_answer
from ..critic.answer import ModelReview, Verdict
from ..critic.review import review_input
from ..errors import UsageError
from .orchestrator import JSON_REVIEW_SYSTEM, ReviewVerdict
from .prompts import render
from .protocol import ModelStopped, ModelUnavailable

QUESTION = "(none given: the answer was handed to `kernel-profiler critique`)"


def reviewer(spec: str):
    """The Claude model a `--review` spec names (claude or claude:NAME)."""
    from .models import make_model

    if not (spec == "claude" or spec.startswith("claude:")):
        raise UsageError(f"--review {spec!r}: the reviewer is a model: use --review claude or claude:NAME")
    if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
        raise UsageError("--review needs ANTHROPIC_API_KEY: export it, or leave --review out for the checks alone")
    return make_model(spec)


def reviewed(text: str, paths: list[str], model, notice: Callable[[str], None]) -> Verdict:
    """The checks' verdict on `text`, settled by `model` where they accept it or could not confirm their rejection."""
    arts = load_paths(paths)
    diagnosis = diagnose(arts)
    v = critique_read(text, arts, diagnosis)
    if v.verdict == "reject" and v.grounds != "unconfirmed":
        return v  # contradicted by a measurement: no review settles that
    unconfirmed = v.reasons if v.verdict == "reject" else []
    results = [{"name": "analyze", "is_error": False, "content": diagnosis.model_dump(mode="json")}]
    prompt = render("critic.md.j2", **review_input(QUESTION, parse_answer(text).model_dump(mode="json"), [], results,
                                                   diagnosis, v, unconfirmed))
    try:
        turn = model.review(JSON_REVIEW_SYSTEM, prompt, ReviewVerdict.model_json_schema())
    except (ModelUnavailable, ModelStopped) as e:
        notice(f"the model review did not run ({e}); the checks' verdict stands")
        return v
    if turn.stop_reason == "refusal":
        notice(f"{model.name} refused to review the answer ({turn.stop_detail}); the checks' verdict stands")
        return v
    try:
        r = ReviewVerdict.model_validate(turn.structured or {})
    except ValidationError:
        notice(f"{model.name} returned no valid verdict; the checks' verdict stands")
        return v
    return v.model_copy(update={"verdict": r.verdict,
                                "review": ModelReview(model=model.name, verdict=r.verdict, reasons=r.reasons)})
