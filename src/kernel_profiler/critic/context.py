"""What one review works with: the answer, the facts of its captures, and what the checks found on the way."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .answer import Answer, EvidenceItem, NumberAudit
from .facts import Facts
from .scope import Scope


@dataclass
class Context:
    """What one review works with: the facts, the scope of the answer, and what the checks found."""

    answer: Answer
    facts: Facts
    raw: str
    scope: Scope = field(default_factory=lambda: Scope(set()))
    claimed: Optional[str] = None
    audit: list[NumberAudit] = field(default_factory=list)
    signature: Optional[str] = None
    strict: list[bool] = field(default_factory=list)  # per number of `_items`: must match (an evidence headline)

    def texts(self) -> list[tuple[str, str]]:
        a = self.answer
        return [("bottleneck", a.bottleneck), ("mechanism", a.explanation)] + [("evidence", e.meaning) for e in a.evidence]

    def described(self) -> list[tuple[str, str, str, Optional[EvidenceItem]]]:
        """(where, text, words that describe its numbers, the evidence item): an evidence line is described by its
        metric and kernel too."""
        a = self.answer
        return [("bottleneck", a.bottleneck, "", None), ("mechanism", a.explanation, "", None)] + \
            [("evidence", e.meaning, f"{e.metric or ''} {e.kernel or ''} ", e) for e in a.evidence]


def subject(c: Context) -> Optional[str]:
    """The profiled kernel the answer is about: of the kernels its bottleneck names, the one named first (a set's
    order changes from run to run with Python's hash seed; the verdict must not)."""
    text = c.answer.bottleneck or ""

    def first(k: str) -> tuple[int, str]:
        at = text.find(c.facts.kernels.get(k, k) or k)
        return (at if at >= 0 else len(text) + 1, k)
    prim = sorted((k for k in c.scope.primary if k in c.facts.profiles), key=first)
    return prim[0] if prim else (min(c.scope.primary, key=first) if c.scope.primary else None)
