"""The causal chain of an answer's mechanism: measurement -> mechanism -> gap, in any wording (a verb or connective
of cause, a number related to a ceiling or to idle time, a chain in arrow notation). A list of counters with no
such chain is a dump, not an explanation."""
from __future__ import annotations

import re
from typing import Optional

from .numbers import METRIC_TOKEN, scrub, sentences

_CAUSAL = re.compile(r"\b(because|since|so that|so|causes?|caused|due to|therefore|thus|which (means|makes|forces|"
                     r"leaves|limits|splits)|means|forc\w+|lead\w*|result\w*|split\w*|serializ\w+|wait\w*|stall\w*|"
                     r"cannot|can['’]t|instead|hence|drains?|starv\w+|bound by|limited by|limits?|saturat\w+|queue\w*|costs?|overlap\w*|comes? from|explains?|dominat\w+|"
                     r"add up|block\w*|pay(?:s|ing)?|spends?|so no|only|eats?|spins?|hides?|expos\w+|amortiz\w+|bottleneck\w*|"
                     r"sets? the|governs?|determines?|caps?|throttl\w+|leaves? \w+ idle)\b", re.I)
_GAP = re.compile(r"roofline|floor|\bgap\b|peak|ceiling|speed[- ]of[- ]light|\bSOL\b|TB/s|GB/s|FLOP/s|"
                  r"% of (the )?(peak|ceiling|hardware|bandwidth)|\bidl(e|es|ed|ing)\b|\bbusy\b|\bwait\w*|\bspin\w*|overlap|"
                  r"\d(\.\d+)?\s?x\b|times (slower|faster|the|longer|more)|bandwidth|throughput|done once|one-time|"
                  r"start-?up|copy time|fraction of|step time|per[- ]step|drain\w*", re.I)
# a sentence that relates a measured number to a ceiling, to idle/wait time or to another number ("124 us is 1.17x the
# 106 us floor", "the idle time (29.9 ms) is all launch overhead", "the lag is ~1% of a 10.5 ms step"): an explanation,
# not a list of counters ("the kernel shows 32 wavefronts and a 3x gap")
_LINK = re.compile(r"\b(is|are|was|runs?|takes?|sits?|reach\w*|gets?|moves?|delivers?|costs?|spends?|accounts? for|"
                   r"means?|makes?|leaves?|stays?|remains?|needs?|comes? to)\b|=|≈|→|->", re.I)
_REPORTS = re.compile(r"\b(shows?|lists?|reports?|counters?|the table|elevated|these are)\b", re.I)
_RELATED = re.compile(r"roofline|floor|ceiling|\blimit\b|speed[- ]of[- ]light|\bSOL\b|\blink\b|the least|at best|"
                      r"theoretical|full rate|\bidl\w+|\bwait\w*|\bbusy\b|\bstep\b|\d(\.\d+)?\s?(?:x\b|×)|\bgap\b|"
                      r"times (slower|faster|longer|more)|\b(than|versus|vs\.?|against|compared|instead of)\b", re.I)


def relates(sentence: str) -> bool:
    """Whether the sentence relates a number to a ceiling, to idle/wait time or to another number."""
    plain = scrub(sentence)
    return bool(re.search(r"\d", plain) and _LINK.search(plain) and _RELATED.search(plain)
                and not _REPORTS.search(plain))


_ARROW_STEP = re.compile(r"\s(?:->|→|=>|⇒)\s")


def causal_chain(mechanism: str, claimed: list[str], verdict: str = "", fix: str = "",
                 evidence: str = "") -> Optional[str]:
    """None when the mechanism links a cause to the gap (in any wording: a verb or connective of cause, or a number
    related to a ceiling or to idle time); else what is missing. The cause or the gap may be stated in the verdict
    (the bottleneck: "damp spends its time converting float<->double ... the XU pipe is 93.8% busy") when the
    mechanism works out the rest. The gap may be stated by the fix that closes it ("pinned copies run at tens of GB/s
    instead of 1.7 GB/s, so the ~156 ms should become a few milliseconds"). A terse note may give its cause on an
    evidence line, in words ("stalls: long_scoreboard = 92.5% -> each of the 64 warps waits on its own loads")."""
    text = scrub(mechanism or "")
    words = re.findall(r"[A-Za-z]{3,}", text)
    prose = [s for s in sentences(mechanism) if len(re.findall(r"[A-Za-z]{3,}", scrub(s))) >= 6
             and len(METRIC_TOKEN.findall(s)) <= 2]
    arrows = len(_ARROW_STEP.findall(text)) >= 2  # "stride 32 floats -> same bank -> 32-way": a chain in notation
    told = _ARROW_STEP.search(scrub(verdict)) or any(_CAUSAL.search(scrub(s)) for s in sentences(verdict))
    if told and any(relates(s) for s in sentences(mechanism)) and len(re.findall(r"[A-Za-z]{3,}", scrub(verdict))) >= 6:
        prose = prose or sentences(mechanism)  # "- floor: ... = 0.39 ms -> ~27x gap" under a verdict that gives the
        words = words + re.findall(r"[A-Za-z]{3,}", scrub(verdict))  # cause ("spills -> local traffic sets the time")
    if (len(words) < 10 and not (arrows and len(words) >= 6)) or not prose:
        return "the mechanism is not an explanation (too few words of prose)"
    related = any(relates(s) for s in sentences(mechanism))
    said = prose + sentences(verdict) + [x for x in sentences(evidence) if len(re.findall(r"[A-Za-z]{3,}", scrub(x))) >= 6]
    led = "near_peak" in claimed and any(_ARROW_STEP.search(scrub(s)) for s in prose)  # a kernel left alone at its
    # roofline, its planted cause gone: "no MUFU.RCP in sass -> the 6 divisions are gone"
    if not related and not arrows and not led and not any(_CAUSAL.search(scrub(s)) for s in said):
        return ("the mechanism names no cause (no 'because', 'limits', 'stalls', 'waits', ..., and no number related "
                "to a ceiling or to idle time)")
    if not claimed:
        return "the mechanism names no recognisable cause (bank conflicts, uncoalesced access, spills, occupancy, ...)"
    if not related and not _GAP.search(text) and not _GAP.search(scrub(verdict)) and \
            not any(relates(s) for s in sentences(fix)):
        return "the mechanism is not tied to the gap to the roofline (or to the idle/copy time)"
    return None
