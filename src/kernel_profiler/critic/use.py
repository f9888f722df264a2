"""How a number is used in its sentence: achieved ("achieves 989 TFLOP/s"), the reference of a comparison ("of 4.81
TB/s"), a bound ("under 2%"), or the target of a predicted move ("from ~126 us to roughly 60-70 us")."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from .numbers import Quantity


@dataclass(frozen=True)
class Use:
    """How a number is used in its sentence."""

    achieved: bool = False  # presented as what the program achieves ("achieves 989 TFLOP/s")
    reference: bool = False  # the reference of a comparison or a rate ("of 4.81 TB/s", "at 4.81 TB/s", "vs ...")
    bound: Optional[str] = None  # "upper" ("under 2%", "well under 1 ms") or "lower" ("more than 10x"): an inequality
    across: bool = False  # "over 16M elements": a lower bound or the count it is spread across
    predicted: bool = False  # the target of a predicted move ("from ~126 us to roughly 60-70 us", "-> ~0.8 ms")


_ACHIEVED = re.compile(r"\b(measured(?:\s+at)?|achiev\w*|reach\w*|deliver\w*|sustain\w*|attain\w*|hits?|runs? at|running at|gets?|"
                       r"(?:measures|shows|reports)\s+(?:(?!at\b|as\b)[\w`-]+\s+){1,4}(?:at|as))\s+"
                       r"(?:(?:only|about|roughly|nearly|almost|a|full|the|~)\s*)*(?:\*\*|__)?$", re.I)
_REFERENCE = re.compile(r"(?:\bof|\bvs\.?|\bversus|\bagainst|\bat|/|\bout of|\bthan)\s+"
                        r"(?:(?:its|the|a|an|about|roughly|only|~|nominal|device|DRAM|HBM|memory|dense|[\w-]+\s+ceiling of)\s*)*$",
                        re.I)


_MEASURED_AFTER = re.compile(r"\s*(?:\)\s*)?(?:\w+\s+)?(?:measured|observed)\b", re.I)  # "64.0 GB/s measured for this GPU"
_RATES = frozenset({"byte_rate", "flop_rate", "pct", "hz"})  # what a program achieves ("runs at 170 us" is a time)
_UPPER = re.compile(r"(?:\bunder|\bbelow|\bless than|\bat most|\bno more than|\bfewer than|<=?(?!-)|≤)\s*(?:~|about\s+)?$", re.I)
_LOWER = re.compile(r"(?:\bover|\babove|\bmore than|\bat least|\bgreater than|\bexceeds?|(?<![-=])>=?|≥)\s*(?:~|about\s+)?$", re.I)


def number_use(sentence: str, q: Quantity) -> Use:
    """Whether the number is presented as achieved, as the reference it is compared with, or as a bound; the target
    of a predicted move is none of these (a prediction, checked by no measurement)."""
    whole = (sentence or "")[:q.start]
    before = re.split(r"[,;:()]|\d", whole[-60:])[-1]
    if _TARGET.search(whole[-80:]) or _MOVE_TO.search(whole[-60:]) or _ESTIMATE_AFTER.match(sentence[q.end:]) or \
            _ESTIMATE_HEAD.search(whole) or \
            (q.unit or "").lower() in ("x", "×") and _FACTOR_MOVE.search(before):
        return Use(predicted=True)  # ("to drop ~8x", "should fall 3x": the factor of a predicted move)
    if _PREMISE.match(re.split(r"[;]|\.\s", whole)[-1]):
        return Use(predicted=True)  # "Assuming cuBLAS reaches 50-70% of the TF32 figure, ...": a premise, not measured
    bound = "upper" if _UPPER.search(before) else "lower" if _LOWER.search(before) else None
    across = bound == "lower" and q.family == "count" and bool(re.search(r"\bover\s*(?:~|about\s+)?$", before, re.I))
    # "256 iterations per element over 16M elements": across them, or more than them; a bound that fails is unverified
    hypothetical = _MODAL.search(before) and _ACHIEVED.search(before)  # "even a perfect FFMA kernel could only reach ~67 TFLOP/s": a ceiling
    return Use(achieved=q.family in _RATES and not hypothetical and
               bool(_ACHIEVED.search(before) or _MEASURED_AFTER.match(sentence[q.end:]) or
                    _MEASURED_PEAK.search(whole[-60:])),
               reference=bool(_REFERENCE.search(before) or _REFERENCE_RESULT.search(whole) or hypothetical), bound=bound,
               across=across)


# a ceiling presented as measured: "| measured bf16 peak | **989.4 TFLOP/s** |" (the capture's ceiling, or wrong)
_MEASURED_PEAK = re.compile(r"\bmeasured\s+(?:[\w-]+\s+){0,2}(?:peak|ceiling|roof\w*)\b[^.;\d]{0,12}$", re.I)
# a move's target named by its verb: "bf16 halves the floor to ~53 us", "brings the step down to 2.4 ms"
_MOVE_TO = re.compile(r"\b(?:halv(?:e|es|ing)|cut(?:s|ting)?|drop(?:s|ping)?|fall(?:s|ing)?|bring(?:s|ing)?|reduc(?:e|es|ing)|"
                      r"lower(?:s|ing)?|rais(?:e|es|ing)|shrink(?:s|ing)?|push(?:es|ing)?)\s+(?:[\w-]+\s+){0,3}?"
                      r"(?:down\s+|up\s+)?to\s+(?:[~≈]|about\s+|roughly\s+|around\s+|approximately\s+)*$", re.I)
# a number labelled an estimate where it stands: "~53 us (estimate)", "0.5 ms (est.)"
_ESTIMATE_AFTER = re.compile(r"\s*\((?:an?\s+)?(?:estimate|est\.|estimated|projected)\b", re.I)
# a line labelled an estimate before its numbers: "- bf16 variant (estimate): 268 MB -> ~56 us floor, ~60-65 us kernel"
_ESTIMATE_HEAD = re.compile(r"\((?:an?\s+)?(?:estimates?|est\.|estimated|projected)\)\s*:", re.I)
# the target of a move: "from ~126 us to roughly 60-70", "from 4,096 down to 1", "1.52ms -> ~0.8"
_TARGET = re.compile(r"(?:\bfrom\s+[~≈]?[\d.,]+[kKMG]?\s*[^\s\d]*\s+(?:\w+\s+)?to|\d[^\s\d]*\s*(?:→|->|=>|⟶))\s*"
                     r"(?:(?:~|≈|about|roughly|around|approximately|under|below|over|above|at most|at least|well|only|just|"
                     r"the|a|low|high|single|double)\s*)*(?:[\d.,]+\s*[-–]\s*)?$", re.I)
_FACTOR_MOVE = re.compile(r"\b(?:drop|fall|shrink|rise|grow|improve|speed\w* up|go (?:down|up)|decrease|increase|"
                          r"be cut|cut|halve|multiply|climb)\w*\s+(?:by\s+)?(?:~|≈|about\s+|roughly\s+|around\s+)?$",
                          re.I)
_MODAL = re.compile(r"\b(?:could|would|might|should)\b", re.I)
_PREMISE = re.compile(r"\W*(?:assuming|suppos(?:e|ing)|if we assume|let['’]?s (?:say|assume)|hypothetically)\b", re.I)


# "against 540,672 FLOP per cycle x 1.59 GHz = 861 TFLOP/s": the result of an expression that follows a comparison word
# is the reference of that comparison
_REFERENCE_RESULT = re.compile(r"\b(?:against|versus|vs\.?|compared (?:with|to))\s(?:(?!,\s|[;:.]\s).)*=\s*~?\s*$", re.I)
