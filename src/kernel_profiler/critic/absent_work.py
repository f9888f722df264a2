"""Work an answer blames that the kernel never executes (issue 10, item 2: a claim whose signature the captures
contradict is refused with the measurement that contradicts it).

FP64 work (a float expression promoted to double by a double literal, DFMA, F2F conversions) has a plain
signature: the kernel's FP64 pipe is busy and its SASS holds double-precision instructions. An answer whose verdict
blames FP64 work for a kernel whose FP64 pipe measured 0% (or whose SASS holds no such instruction)
describes another build (the unfixed twin) or another kernel.
"""
from __future__ import annotations

import re
from typing import Optional

from .context import Context
from .context import subject
from .unverified import ruled_out

_FP64_WORDS = re.compile(r"\bFP64\b|double[- ]precision|\bdouble (?:literals?|math|arithmetic|constants?)\b|"
                         r"promot\w* (?:\w+ ){0,3}to (?:FP64|double)\b|\bDFMA\b|\bDADD\b|\bDMUL\b|\bF2F\.F(?:64|32)\.F",
                         re.I)
_ZERO = re.compile(r"[^.;:,\n\d]{0,20}?(?:(?:\bat|\bis|=|:)\s*)?~?\b0(?:\.0+)?\s*%?(?![\d.])")
_FP64_OPS = ("DFMA", "DADD", "DMUL", "DSETP", "DMNMX", "F2F")
_FP64_PIPE = "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active"


def _executed_fp64(c: Context, key: str) -> Optional[tuple[bool, str]]:
    """(whether the kernel executed FP64 work, the measurement that says so); None when nothing measured it."""
    prof = c.facts.profiles.get(key)
    pipe = prof.get(_FP64_PIPE) if prof is not None else None
    if pipe is not None:
        return float(pipe) > 0, f"its FP64 pipe is active {float(pipe):.1f}% of cycles ({_FP64_PIPE})"
    ops = c.facts.sass_ops.get(key)
    if ops:
        n = sum(v for op, v in ops.items() if op.startswith(_FP64_OPS))
        return n > 0, f"its SASS holds {n} DFMA/DADD/DMUL/F2F instructions"
    return None


def blames_fp64(verdict: str) -> Optional[str]:
    """The words by which a verdict blames FP64 work, or None ("the FP64 detour is gone", "the FP64 pipe is at 0"
    say it is absent)."""
    return next((m.group(0) for m in _FP64_WORDS.finditer(verdict) if not ruled_out(verdict, m.start(), m.end())
                 and not _ZERO.match(verdict, m.end())), None)


def blamed_absent_fp64(c: Context) -> list[str]:
    blamed = blames_fp64(c.answer.bottleneck)  # the verdict: a mechanism may name FP64 work to say it is gone
    key = subject(c)
    if blamed is None or key is None:
        return []
    got = _executed_fp64(c, key)
    if got is None or got[0]:
        return []
    return [f"The answer blames FP64 work ('{blamed}'), but `{c.facts.kernels.get(key, key)}` executes "
            f"none: {got[1]}. That describes another build or another kernel."]
