"""Arithmetic written out in an answer ("2.13 GB / 4.81 TB/s = 442 us", "531 / 442 = 1.2x") is recomputed: a
result that does not follow from its operands is a made-up number, whatever fact it happens to equal.

Operands and result are read with their units (base units: ns, byte, byte/s, FLOP/s, Hz); an amount over a rate
is a time, an amount over a time a rate, a per-cycle count times a clock a rate. The check refuses only a result
off by more than its rounding at every power of 1000 (a unit the reader mixes up is not called a wrong sum).
"""
from __future__ import annotations

import re
from typing import Optional

from .numbers import BARE, Quantity, quantities, scrub, sentences, to_quantity

_OP = re.compile(r"\s*(/|x|×|\*|\+|\s-\s)\s*$")
_EQ = re.compile(r"^\s*(=|≈)\s*~?\s*$")
TOL = 0.03


def _numbers(sentence: str) -> list[Quantity]:
    qs = quantities(sentence)
    t = scrub(sentence)
    bare = [to_quantity(m["num"], m["exp"], m["mult"], None, m.start(), m.end()) for m in BARE.finditer(t)
            if not any(q.start <= m.start() < q.end for q in qs)]
    return sorted(qs + bare, key=lambda q: q.start)


def _apply(a: Quantity, op: str, b: Quantity) -> Optional[float]:
    op = op.strip()
    if op in ("+", "-"):
        return a.value + b.value if op == "+" else a.value - b.value
    if op in ("x", "×", "*"):
        v = a.value * b.value
        return v / 1e9 if "time" in (a.family, b.family) else v  # a rate (per s) times a time (ns)
    if not b.value:
        return None
    v = a.value / b.value
    if b.family in ("byte_rate", "flop_rate", "hz") and a.family != b.family:
        return v * 1e9  # an amount over a rate: seconds, in ns
    if b.family == "time" and a.family != "time":
        return v * 1e9  # an amount over a time (ns): per second
    return v


def wrong_arithmetic(text: str) -> list[str]:
    """Each 'A op B = C' of the text whose C is not A op B."""
    out = []
    for s in sentences(text):
        t = scrub(s)
        nums = _numbers(s)
        for a, b, c in zip(nums, nums[1:], nums[2:]):
            op = _OP.search(t[a.end:b.start])
            if not op or not _EQ.match(t[b.end:c.start]) or a.family == "pct" or c.value == 0:
                continue
            if op.group(1).strip() in ("+", "-") and a.family != b.family:
                continue
            got = _apply(a, op.group(1), b)
            if got is None or got == 0:
                continue
            tol = max(TOL, c.tol / abs(c.value), a.tol / max(abs(a.value), 1e-30) + b.tol / max(abs(b.value), 1e-30))
            ratio = abs(c.value / got)
            if not any(abs(ratio / 1000.0 ** k - 1) <= tol for k in range(-5, 6)) and \
                    not (c.family == "pct" and abs(ratio / 100 - 1) <= tol):
                out.append(f"'{t[a.start:c.end].strip()}' does not hold: {a.written} {op.group(1).strip()} "
                           f"{b.written} is not {c.written}")
    return out
