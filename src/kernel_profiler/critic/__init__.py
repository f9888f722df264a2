"""The critic: checks an answer's claim against the captures it cites, not its form.

    form.py      clean (hidden text out), parse (JSON, Markdown headings of any style, terse notes), reviewer-addressed text
    direction.py the metric a fix names and the direction it says it will move
    facts.py     every value the captures hold, with provenance (artifact, kernel, metric, unit)
    concepts.py  what a number measures: one vocabulary for metric names and answer words
    registry_facts.py  program-level timeline facts computed by the metrics registry (metrics.TIMELINE)
    match.py     a number -> the fact its sentence describes, or a declared derivation of cited facts
    stride.py    a lane stride checked against the sectors per request it implies
    arithmetic.py  written-out arithmetic ("A / B = C") recomputed from its operands
    checks.py    the deterministic checks (numbers, mechanism signature, bound, fix, ...)
    review.py    what the model reviewer (a second agent) receives

`critique(answer, artifacts, diagnosis)` returns a `Verdict` with the reasons and, for every number,
the fact or derivation it matched.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Optional

from ..artifacts import load_paths
from ..artifacts.tables import Artifacts
from ..answer import Answer, Diagnosis
from .answer import AnswerFormatError, EvidenceItem, NumberAudit, Verdict
from .checks import CHECKS, build_context
from .facts import Facts, gather_facts
from .form import clean, parse_answer
from .numbers import quantities

_FACTS_CACHE: dict[tuple[int, int], tuple[Artifacts, Diagnosis, Facts]] = {}
FACTS_CACHED = 2  # sets of captures kept (each holds its loaded timeline tables: a large trace is gigabytes)


def facts_for(artifacts: Artifacts, diagnosis: Diagnosis) -> Facts:
    """The facts of one set of captures (kept while the same objects are reviewed again)."""
    key = (id(artifacts), id(diagnosis))
    hit = _FACTS_CACHE.get(key)
    if hit is None or hit[0] is not artifacts or hit[1] is not diagnosis:
        if len(_FACTS_CACHE) >= FACTS_CACHED:
            _FACTS_CACHE.clear()
        hit = (artifacts, diagnosis, gather_facts(artifacts, diagnosis))
        _FACTS_CACHE[key] = hit
    return hit[2]


def _raw_of(a: Answer) -> str:
    return "\n".join([a.bottleneck, a.explanation, a.fix_text] + [e.meaning for e in a.evidence])


def _cleaned(a: Answer) -> Answer:
    c = a.model_copy(deep=True)
    c.bottleneck, c.explanation = clean(a.bottleneck), clean(a.explanation)
    if c.fix is not None:
        c.fix.change, c.fix.expected = clean(c.fix.change), clean(c.fix.expected)
    for e in c.evidence:
        e.meaning = clean(e.meaning)
    return c


def critique(answer: Answer, artifacts: Artifacts, diagnosis: Optional[Diagnosis] = None,
             raw: Optional[str] = None) -> Verdict:
    """Check an answer against the captures; deterministic. `raw`: the answer's text as given (hidden parts too)."""
    if diagnosis is None:
        from ..analysis.engine import diagnose
        diagnosis = diagnose(artifacts)
    ctx = build_context(_cleaned(answer), facts_for(artifacts, diagnosis), raw if raw is not None else _raw_of(answer))
    reasons: list[str] = []
    checks: dict[str, bool] = {}
    for name, fn in CHECKS.items():
        r = fn(ctx)
        checks[name] = not r
        reasons += [x for x in r if x not in reasons]
    return Verdict(verdict="accept" if all(checks.values()) else "reject", reasons=reasons, checks=checks,
                   numbers=ctx.audit, mechanism=ctx.claimed, signature=ctx.signature)


def critique_text(text: str, paths: Iterable[str | Path]) -> Verdict:
    return critique(parse_answer(text), load_paths(list(paths)), raw=text)


__all__ = ["Answer", "EvidenceItem", "Verdict", "NumberAudit", "AnswerFormatError", "parse_answer", "critique",
           "critique_text", "quantities", "gather_facts", "CHECKS", "clean"]
