"""A fix that states only where a metric will land ("GPU busy → ~97%", "wavefronts/ld -> ~1"): the direction it says
is the way from the value the captures measure for what its words describe to that target.

Read only when the words describe measured values that all lie on one side of the target; a target that some of the
described values exceed and others fall short of says no direction.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

from .context import subject
from .match import candidates, describes, sentence_concepts
from .numbers import quantities
from .use import Use

if TYPE_CHECKING:
    from .context import Context

# "<words> → ~97%": a target after an arrow, with no value of its own before the arrow (that move `direction` reads)
_TARGET = re.compile(r"(?P<head>[^\n.;:,()|]{2,60}?)[ \t]*(?:→|->|=>|⟶)[ \t]*(?:~|≈|about[ \t]+|roughly[ \t]+|near[ \t]+)?"
                     r"(?P<q>\d+(?:\.\d+)?[ \t]*(?:%|[A-Za-zµμ]+(?:/s)?)?)")
_TARGET_FAMILIES = ("pct", "ratio", "count")  # the families a target of this kind is written in


def target_direction(c: "Context", text: str) -> Optional[tuple[str, str]]:
    """The words and direction of the first target in `text` whose described measured values all lie on one side
    of it; None when there is none."""
    key = subject(c)
    for m in _TARGET.finditer(text.replace("`", "")):
        head = m["head"].strip()
        if re.search(r"\d", head[-14:]) or not re.search(r"[A-Za-z]{2}", head):
            continue  # "2.7 ms -> 0.1 ms": a move of two values; "-> ~1" with no words: nothing named
        written = m["q"] if re.search(r"[A-Za-zµμ%]", m["q"]) else m["q"] + " x"  # "-> ~1": a bare ratio
        qs = [q for q in quantities(written) if q.family in _TARGET_FAMILIES]
        if not qs:
            continue
        q = qs[0]
        concepts = sentence_concepts(head)
        if not concepts:
            continue
        for fam, target, _ in candidates(q):  # the value as written, then as held ("97%" is a ratio of 0.97)
            found = [f for f in c.facts.by_family.get(fam, [])
                     if (f.kernel is None or f.kernel == key) and describes(f, q, concepts, set(), Use(predicted=True))]
            least = min((len(f.concepts - concepts) for f in found), default=0)  # the facts the words name best
            said = [f.value for f in found if len(f.concepts - concepts) == least]  # ("busy": the busy fraction,
            if said:  # not the migrations' share of the busy time)
                if all(v > target for v in said):
                    return head, "decrease"
                if all(v < target for v in said):
                    return head, "increase"
                break
    return None
