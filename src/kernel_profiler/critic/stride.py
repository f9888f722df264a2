"""A byte distance between the lanes of a warp, checked against the coalescing it implies (a declared derivation)."""
from __future__ import annotations

import math
from typing import Optional

from .facts import Fact, Facts
from .numbers import Quantity

SECTOR_BYTES, WARP = 32.0, 32
_SPR = {op: (f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum", f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum")
        for op in ("ld", "st")}


def _applies(q: Quantity, concepts: frozenset[str]) -> bool:
    """A byte distance in a sentence about lanes, sectors or coalescing."""
    return q.family == "bytes" and "stride" in concepts and bool({"sectors", "coalescing", "divergence", "lanes"} & concepts)


def _stride_ops(concepts: frozenset[str]) -> list[str]:
    """The global access a stride sentence speaks of: stores where it speaks of writes only, loads where of reads
    only (or of neither), either where of both."""
    if "write" in concepts:
        return ["ld", "st"] if "read" in concepts else ["st"]
    return ["ld"]


def match_stride(q: Quantity, concepts: frozenset[str], kernels: set[str], facts: Facts) -> Optional[tuple[str, list[str]]]:
    """A byte distance between the lanes of a warp ("rows 2 KB apart", "a 32 KB row pitch") is checked against the
    coalescing it implies: a warp of 4-byte loads at a stride of s bytes touches min(32, ceil((31 s + 4) / 32)) sectors per
    request (the span of 31 strides + 4 bytes, in 32-byte sectors), which must agree with the measured sectors per global
    request of the kernel, of the loads or the stores the sentence speaks of (`_stride_ops`)."""
    if not _applies(q, concepts):
        return None
    if q.value < 4:
        return None
    predicted = float(min(WARP, math.ceil(((WARP - 1) * q.value + 4) / SECTOR_BYTES)))  # sectors the 32 lanes span
    for key in kernels:
        for op in _stride_ops(concepts):
            sec = [f for f in facts.named(_SPR[op][0], key) if f.kernel == key]
            req = [f for f in facts.named(_SPR[op][1], key) if f.kernel == key]
            if sec and req and req[0].value:
                measured = sec[0].value / req[0].value
                if abs(measured - predicted) <= 0.1 * measured:
                    what = "loads" if op == "ld" else "stores"
                    return (f"lane stride -> {predicted:.0f} sectors per request for 4-byte {what}, as measured "
                            f"({measured:.1f})", list(_SPR[op]))
    return None


def stride_miss(q: Quantity, concepts: frozenset[str], kernels: set[str], facts: Facts) -> Optional[Fact]:
    """The measured sectors per request a lane stride contradicts (None when the stride agrees or cannot be checked)."""
    if not _applies(q, concepts):
        return None
    if q.value < 4 or match_stride(q, concepts, kernels, facts) is not None:
        return None
    for key in sorted(kernels):
        for op in _stride_ops(concepts):
            sec = [f for f in facts.named(_SPR[op][0], key) if f.kernel == key]
            if sec and [f for f in facts.named(_SPR[op][1], key) if f.kernel == key]:
                return sec[0]
    return None
