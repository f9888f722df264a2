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
    grounds.py   what a rejection rests on: a measurement that contradicts the answer, or only what the checks could
                 not confirm (the model reviewer of `ask` settles those)
    review.py    what the model reviewer (a second agent) receives

`critique(answer, artifacts, diagnosis)` returns a `Verdict` with the reasons and, for every number,
the fact or derivation it matched. `critique_read(text, artifacts)` (and `critique_text`, the CLI's and the MCP
server's entry) reads an answer's text: by its layout, and a second time by the role of each sentence when the
layout's reading misses only a causal chain or a fix's outcome (`Verdict.reading` says which reading stood).
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
from .fixes import NO_DIRECTION, NO_METRIC
from .form import clean, parse_answer, read_by_role
from .grounds import SAID, grounds
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
    failed: dict[str, list[str]] = {}
    for name, fn in CHECKS.items():
        r = fn(ctx)
        if r:
            failed[name] = r
        reasons += [x for x in r if x not in reasons]
    return Verdict(verdict="reject" if failed else "accept", reasons=reasons, grounds=grounds(failed),
                   checks={name: name not in failed for name in CHECKS}, failed=failed,
                   numbers=ctx.audit, mechanism=ctx.claimed, signature=ctx.signature)


# what a reading of the layout can miss while the answer has it: a causal chain, a fix's measured outcome
_READING_FAILURES = {"not_a_dump": None, "fix": {NO_METRIC, NO_DIRECTION}}


def _failed_on_reading(v: Verdict) -> bool:
    """Whether every check the verdict failed is one a misread layout fails (a mechanism not found where the layout
    put it, a fix whose outcome sentence went to another part), none a check of what the answer claims."""
    return v.verdict == "reject" and bool(v.failed) and all(
        name in _READING_FAILURES and (_READING_FAILURES[name] is None or set(r) <= _READING_FAILURES[name])
        for name, r in v.failed.items())


def critique_text(text: str, paths: Iterable[str | Path]) -> Verdict:
    """The verdict on an answer's text about the captures at `paths` (see `critique_read`)."""
    return critique_read(text, load_paths(list(paths)))


def critique_read(text: str, artifacts: Artifacts, diagnosis: Optional[Diagnosis] = None) -> Verdict:
    """The verdict on an answer's text. An answer rejected only for what its layout's reading missed (no causal
    chain, a fix with no measured outcome) is read a second time by the role of each sentence; the second reading
    stands only when every check, those of its claim and numbers included, accepts it."""
    if diagnosis is None:
        from ..analysis.engine import diagnose
        diagnosis = diagnose(artifacts)
    first = critique(parse_answer(text), artifacts, diagnosis, raw=text)
    if not _failed_on_reading(first):
        return first
    other = read_by_role(text)
    if other is None:
        return first
    second = critique(other, artifacts, diagnosis, raw=text)
    return second.model_copy(update={"reading": "role"}) if second.verdict == "accept" else first


__all__ = ["SAID", "Answer", "EvidenceItem", "Verdict", "NumberAudit", "AnswerFormatError", "parse_answer", "critique",
           "critique_text", "critique_read", "quantities", "gather_facts", "CHECKS", "clean"]
