"""Where an answer proposes its change, when its layout does not say: the last block (a paragraph, or an item of a
list) that proposes a change or predicts what one will do, and says which metric moves which way ("Recommended:
submit the step as a CUDA graph; expect the step to fall toward ~0.13 ms", "- The ask: launch one program per block
... Expect DRAM throughput to climb from 5.5 % to roughly 70 %+")."""
from __future__ import annotations

import re
from typing import Optional

from .direction import fix_metric_direction
from .numbers import sentences
from .paragraphs import paragraphs
from .roles import says_what_to_do
from .visible import clean

# a sentence that predicts what a change will do ("the step time, which should fall ...", "could be removed by")
_PREDICTS = re.compile(r"\b(?:should|would|will|could|can)\s+(?:then\s+|also\s+)?(?:go|fall|drop|rise|climb|halve|double|"
                      r"move|come|land|reach|shrink|grow|improve|disappear|vanish|cut|reduce|lower|raise|increase|"
                      r"decrease|remove|save|take|bring|push|be (?:removed|eliminated|cut|halved|hidden|overlapped))\b|"
                      r"\bexpect(?:s|ing)?\b|\bexpected\s+(?:to|outcome|effect|result|gain|speed-?up)\b", re.I)
_LEAVE = re.compile(r"\bleave (?:it|this|that|the kernel)\b|\bnothing (?:to|left to) (?:fix|change|gain)\b", re.I)
_ITEM = re.compile(r"^[ \t]*(?:[-*+•]|\d{1,2}[.)])[ \t]+", re.M)


def _blocks(text: str) -> list[str]:
    """The paragraphs of a text, a list's items each a block of its own."""
    out = []
    for para in paragraphs(clean(text or "")):
        starts = [m.start() for m in _ITEM.finditer(para)]
        if len(starts) < 2:
            out.append(para)
            continue
        cuts = ([0] if starts[0] > 0 else []) + starts + [len(para)]
        out += [para[a:b].strip() for a, b in zip(cuts, cuts[1:]) if para[a:b].strip()]
    return out


def last_proposal(text: str) -> Optional[tuple[str, str, str]]:
    """The last block that proposes a change and states the move of a metric: (block, metric, direction)."""
    for block in reversed(_blocks(text)):
        if not any(says_what_to_do(x) or _PREDICTS.search(x) for x in sentences(block)) or _LEAVE.search(block):
            continue  # ("the kernel is at its roofline: leave it"): a verdict that changes nothing, no move
        metric, direction = fix_metric_direction(block)
        if metric and direction in ("increase", "decrease"):
            return block, metric.strip(), direction
    return None
