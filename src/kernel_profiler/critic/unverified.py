"""Numbers the captures cannot check, told apart from numbers the captures contradict.

A number that matches no fact and no declared derivation (match.py) is one of two things:
  - a contradicted measurement: the words of its own clause name something the captures measure for the
    kernel in scope (or the program), the number is presented as that measurement (not as a reference, a
    ceiling, a bound, a floor or a prediction), and no measured value of it is within rounding. Rejected,
    with the value the capture holds.
  - an unverified number: knowledge (a link's ceiling, a size from the source, a tile size), a prediction,
    or something no capture measures, in a clause that says so (`hedged`) or in a sentence that cites no
    measured value. Not a reason to reject: the audit (`critique --json`) lists it as unverified, so a user
    sees exactly what the critic could not check. A number that sits among measured values of its sentence,
    unhedged, is arithmetic on them and must be a declared derivation (checks.py).
The headline value of an evidence line is the measurement the answer rests on: it must match (checks.py).
"""
from __future__ import annotations

import re
from typing import Optional

from .concepts import text_concepts, unit_concepts
from .facts import Fact, Facts
from .match import Use, describes, is_ceiling, candidates
from .numbers import METRIC_TOKEN, Quantity

# clause boundaries: punctuation, dashes, and the conjunctions that start another statement
_CLAUSE = re.compile(r"[,;:()\[\]]|\s[—–-]\s|\s(?:and|but|while|whereas|so|because|which|where)\s", re.I)
# words that make a number something other than a measurement of this run
_NOT_MEASURED = re.compile(
    r"\b(ideal\w*|"
    r"ceiling|peak|limit|theoretical\w*|max(?:imum)?|min(?:imum)?|target|at best|nominal|spec\w*|datasheet|rated|"
    r"practical|budget|need\w*|must|per the source|in the source|source code|allocat\w+|array of|tensor of|"
    r"elements?|tile|shape|size of)\b", re.I)


def clause_of(sentence: str, q: Quantity) -> str:
    """The clause of `sentence` that holds the number."""
    return _clause(sentence, q.start, q.end)


def hedged(sentence: str, q: Quantity) -> bool:
    """Whether the number's clause presents it as something other than a measurement of this run (a ceiling, a
    prediction, a size from the source)."""
    return bool(_NOT_MEASURED.search(clause_of(sentence, q)))


def contradiction(q: Quantity, sentence: str, kernels: set[str], facts: Facts, use: Use) -> Optional[Fact]:
    """The measured fact the number claims to be but is not (its nearest value), or None when the number is not
    presented as a measurement the captures hold."""
    if use.bound:  # an inequality is checked as one (match.match_bound)
        return None
    clause = clause_of(sentence, q)
    if hedged(sentence, q) and not use.achieved:
        return None
    concepts = frozenset(text_concepts(clause) | unit_concepts(q.unit))
    tokens = {t.replace(" ", "") for t in METRIC_TOKEN.findall(clause.replace("`", " "))}
    if not concepts - {"ratio"} and not tokens:
        return None
    best: Optional[tuple[float, Fact]] = None
    for fam, v, _ in candidates(q):
        for f in facts.by_family.get(fam, []):
            if f.kernel is not None and f.kernel not in kernels:
                continue
            if (is_ceiling(f) and not use.achieved) or f.derivation is not None:
                continue
            if not describes(f, q, concepts, tokens, use):
                continue
            off = abs(f.value - v) / max(abs(v), abs(f.value), 1e-30)
            if best is None or off < best[0]:
                best = (off, f)
    return best[1] if best else None


# a cause named to rule it out: negated, gone, fixed, residual, or the road not taken
_RULED_OUT = re.compile(
    r"\b(no|not|never|none|nor|without|isn't|aren't|wasn't|weren't|doesn't|don't|didn't|cannot|can't|no longer|"
    r"gone|removed|eliminated|fixed|resolved|ruled out|rather than|instead of|unlike|absent|negligible|residual|"
    r"neither|free of|rules? out)\b|\w-free\b", re.I)
_SENTENCE_END = re.compile(r"\.(?!\d)")


def _clause(text: str, start: int, end: int) -> str:
    """The clause of `text` around text[start:end] (bounded by `_CLAUSE` and sentence ends)."""
    a = max([0] + [m.end() for pat in (_CLAUSE, _SENTENCE_END) for m in pat.finditer(text, 0, start)])
    ends = [m.start() for pat in (_CLAUSE, _SENTENCE_END) if (m := pat.search(text, end))]
    return text[a:min(ends, default=len(text))]


def ruled_out(text: str, start: int, end: int) -> bool:
    """Whether the words at text[start:end] name a cause inside a clause that rules it out."""
    return bool(_RULED_OUT.search(_clause(text, start, end)))


_BINDS = re.compile(r"`?\s*(?:=|:|is|of)\s*(?:~|about\s+)?$")


def bound_metric(sentence: str, q: Quantity) -> Optional[str]:
    """The metric a number is written as the value of ("`launch__grid_size` = 132"), if any."""
    before = sentence[:q.start].replace("`", " ")
    last = None
    for m in METRIC_TOKEN.finditer(before):
        last = m
    if last is None or not _BINDS.search(before[last.end():]) or len(before) - last.end() > 6:
        return None
    return last.group(0).replace(" ", "")
