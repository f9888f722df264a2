"""What a number's own clause says about it: the memory level it names, whether it calls the number a unit's share of
its peak, the CUDA API function named beside it. match.py narrows the facts a number may match with these words."""
from __future__ import annotations

from .concepts import LEVELS, text_concepts

API_CLAUSE = "api_clause"  # the number's own clause names a CUDA API function: it is that function's statistic
UNIT_SHARE = "unit_share"  # the number's own clause calls it a unit's share of its peak ("85.7% DRAM throughput")
_SOL = frozenset({"sol", "sol_dram", "sol_mem", "sol_sm"})
_STATS = frozenset({"stat_median", "stat_mean", "stat_max", "stat_min"})


def clause_words(clause: str, concepts: frozenset[str], near: str = "") -> frozenset[str]:
    """The number's concepts narrowed by its own clause: the memory levels and the statistic it names ("DRAM at 85.7% while L2 sits
    at 91.5%": 91.5 is the L2's; "SM throughput 0.51% and DRAM 0.33%": 0.51 is of no level), and `UNIT_SHARE` when
    it calls the number a unit's share of its peak (a throughput is measured, or a rate over its ceiling: never a ratio of two byte counts); an API
    function named right beside the number (`near`) makes it that function's statistic."""
    words = text_concepts(clause)  # a statistic too: "telemetry shows sm clock median 1575 MHz, so its GEMMs are
    out = (concepts - LEVELS - _STATS) | (words & (LEVELS | _STATS))  # ~1.53 ms": the median is the clock's, not theirs
    apis = {w for w in text_concepts(near) if w.startswith("api:")} & words
    if apis:  # "400 `cudaDeviceSynchronize` calls at 112 us each": that API's statistics ("after each of the 64
        out = (out - {c for c in out if c.startswith("api:")}) | apis | {API_CLAUSE}  # `smooth` launches": not)
    return out | {UNIT_SHARE} if words & _SOL else out
