"""The kinds of metric by name: a rate (throughput, busy, occupancy, useful bytes per sector) rises toward the
roofline, a cost (time, bytes, sectors, instructions, stalls) falls; one pipe's or one cache's utilization is
neither. Read by the fix check (fixes.py) and by the reader of a fix's predicted move (direction.py)."""
from __future__ import annotations

import re
from typing import Optional

# the kinds of metric, first match wins: (pattern, direction toward the roofline)
RATE = re.compile(r"bytes?[ _]per[ _]sector|activity|useful bytes|per[_ ]second|/s\b|bandwidth|throughput|utili[sz]|busy|"
                  r"active|occupancy|issue|\bipc\b|efficien|hit[ _]rate|threads?(?:[ _]per[ _]|/)inst|thread_inst_executed_per|"
                  r"clock|flops?/s|tflop|speed|\brate\b|pct_of_peak|% of (?:the )?peak|fraction of peak|sol\b", re.I)
COST = re.compile(r"time|duration|latency|\blag\b|_lag|_ns\b|step|wall|idle|wait|stall|sync|bytes|traffic|sector|request|transaction|"
                  r"wavefront|conflict|spill|local|replay|inst|launches|kernel[ _]count|number of kernels|kernels per|cop(?:y|ies)|"
                  r"passes|atom|_red\b|divergen|calls|count", re.I)
# one pipe's or one cache's share of its peak (see metric_direction)
PIPE = re.compile(r"pipe_(?!tensor)|\b(?:XU|FMA|ALU|FP64|LSU|MIO)(?: pipe|(?= (?:utili[sz]ation|busy|activity)))|^(?:lts|l1tex)__throughput|"
                  r"\b(?:L2|L1|L1TEX) (?:cache )?(?:throughput|utili[sz]ation|busy)", re.I)


def metric_direction(metric: str) -> Optional[str]:
    """The way a metric moves toward the roofline by its kind (a rate rises, a cost falls); None for neither, and
    for one pipe's or one cache's utilization: it falls when the fix takes wasted work off that unit (conversions
    off XU, a GEMM off the FMA pipe onto tensor cores, wasted sectors or spills off L2) and rises when it feeds the
    limiting unit better."""
    if PIPE.search(metric):
        return None
    if RATE.search(metric):
        return "increase"
    if COST.search(metric):
        return "decrease"
    return None
