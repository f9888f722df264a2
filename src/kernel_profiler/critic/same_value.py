"""A number whose words point at one metric but whose value is, in its own unit, another measured value of the kernel
in question (or of the program): "| host API time per call | 2.90 µs avg |" for the memset call's mean, read by its
words as a kernel's mean. Such a number is real, described loosely, and is matched to the value it equals (the audit
says which, and what its words suggested) rather than refused as made up.
"""
from __future__ import annotations

import re
from typing import Optional

from .concepts import LEVELS, text_concepts
from .facts import Fact, Facts
from .match import is_ceiling
from .numbers import Quantity
from .unverified import HOST_SIDE, KERNEL_WORD, PER_CALL, clause_of, own_concepts

PRECISE = 0.01  # a value written to within this share of itself (three significant figures or more)
_DIMENSIONED = frozenset({"time", "bytes", "byte_rate", "flop_rate", "hz"})
_DIGITS = re.compile(r"\d[\d,]*\.\d+")  # a count or ratio with a fraction written ("81.6 cycles")
_EACH = re.compile(r"\beach\b|\bper[- ]call\b", re.I)


def equal_elsewhere(q: Quantity, sentence: str, kernels: set[str], facts: Facts,
                    contradicted: Optional[Fact]) -> Optional[Fact]:
    """The measured value the number equals to the precision it is written with, where that equality is unlikely by
    chance: a time, a size in bytes or a rate written to 1% or better ("2.90 µs", not "~3 us" or "0.27 ms"), or a count
    or ratio written with a fraction to three significant figures ("81.6 cycles"). Device attributes, ceilings and
    peaks are no measurement; shares are too dense (a kernel holds hundreds of percentages) for a value alone to say
    which one was meant."""
    if q.tol > PRECISE * abs(q.value):
        return None  # rounded, or approximate: many values lie that close
    if q.family not in _DIMENSIONED:
        digits = _DIGITS.match(q.written)
        if q.family not in ("count", "ratio") or digits is None or \
                len(digits.group().replace(",", "").replace(".", "").lstrip("0")) < 3:
            return None
    if contradicted is not None and _claims_statistic(q, sentence, contradicted):
        return None
    named = frozenset(x for x in text_concepts(clause_of(sentence, q)) if x in LEVELS or x.startswith("api:"))
    for f in facts.near(q.family, abs(q.value), q.tol):
        if f.family == q.family and (f.kernel is None or f.kernel in kernels) and \
                abs(f.value - abs(q.value)) <= q.tol * (1 + 1e-9) and not is_ceiling(f) and \
                not f.metric.startswith(("device", "ceiling")) and "peak_sustained" not in f.metric and \
                not _other_thing(named, f):
            return f
    return None


def _other_thing(named: frozenset[str], f: Fact) -> bool:
    """Whether the words name a memory level or an API function and the fact is of another one ("DRAM moves
    3.89 TB/s" for L2's rate): the thing named is the thing the number must be of."""
    levels, apis = named & LEVELS, {x for x in named if x.startswith("api:")}
    return bool(levels and f.concepts & LEVELS and not f.concepts & levels) or \
        bool(apis and any(x.startswith("api:") for x in f.concepts) and not f.concepts & apis)


def _claims_statistic(q: Quantity, sentence: str, f: Fact) -> bool:
    """Whether the number's own words claim the contradicted statistic of a thing they name: a time for each call of
    an API function ("400 `cudaDeviceSynchronize` calls at 112 us each"), or a statistic of a kernel's launches with no
    word of the host's side ("the GEMM kernel launches: median 54 us per launch")."""
    per_call = PER_CALL.match(f.metric)  # "api.<function>." or "timeline.kernel_"
    if per_call is None:
        return False
    own = own_concepts(sentence, q)
    stat = any(x.startswith("stat_") for x in own)
    if per_call.group(1).startswith("api."):
        each = bool(_EACH.search(sentence[q.end:q.end + 12]))
        return f"api:{per_call.group(1)[4:-1].lower()}" in own and (stat or each)
    return stat and bool(KERNEL_WORD.search(sentence)) and not HOST_SIDE.search(sentence)
