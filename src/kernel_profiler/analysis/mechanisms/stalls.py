"""Where the warps wait: the largest stall reason, ncu's own guided-analysis rule about it, and what would settle
the question when no detector names a mechanism."""
from __future__ import annotations

import re
from typing import Optional

from ...answer import Evidence
from ...artifacts.tables import KernelProfile
from .counters import STALL
from .evidence import ev

# What each warp stall reason means (ncu's WarpStateStats names).
STALL_MEANING = {
    "long_scoreboard": "waiting for global or local memory (L1TEX) results",
    "short_scoreboard": "waiting for shared-memory or special-function results",
    "math_pipe_throttle": "a math pipe is saturated",
    "not_selected": "eligible but not picked: instruction issue is the limit",
    "selected": "issuing",
    "barrier": "waiting at a block barrier (__syncthreads)",
    "mio_throttle": "the shared-memory/special-function (MIO) queue is full",
    "lg_throttle": "the local/global memory queue is full",
    "wait": "fixed-latency dependencies",
    "membar": "waiting at a memory barrier",
    "branch_resolving": "resolving branch targets",
    "no_instruction": "instruction-cache misses",
    "dispatch_stall": "the dispatcher stalled",
    "drain": "draining memory stores at exit",
    "tex_throttle": "the texture queue is full",
    "imc_miss": "constant-cache misses",
    "sleeping": "sleeping",
}
# ncu's guided-analysis rules about stalls and issue (rule ids as ncu 2025.x names them).
NCU_STALL_RULES = ("CPIStall", "IssueSlotUtilization", "HighPipeUtilization")
# Metrics only a report with the SourceCounters section (e.g. --set full) holds.
SOURCE_COUNTERS = ("smsp__pcsamp_sample_count", "memory_l2_theoretical_sectors_global")


def top_stall(k: KernelProfile) -> Optional[tuple[str, float, str]]:
    """The largest warp stall reason (cycles per issued instruction), excluding 'selected': (reason, value, metric)."""
    prefix, suffix = STALL.split("{}")
    best = None
    for m, v in k.metrics.items():
        if m.startswith(prefix) and m.endswith(suffix) and v:
            reason = m[len(prefix):-len(suffix)]
            if reason != "selected" and (best is None or v > best[1]):
                best = (reason, v, m)
    return best


def _speedup(rule: dict) -> float:
    """The estimated speedup (%) an ncu rule states, NaN when it states none."""
    try:
        return float(rule.get("speedup") or "nan")
    except (TypeError, ValueError):
        return float("nan")


def stall_rule(k: KernelProfile) -> Optional[dict]:
    """ncu's own stall/issue rule with the largest estimated speedup, if the report holds one."""
    hits = []
    for r in k.rules:
        sp = _speedup(r)
        if r.get("id") in NCU_STALL_RULES and r.get("message"):
            hits.append((0.0 if sp != sp else sp, -NCU_STALL_RULES.index(r["id"]), r))
    return max(hits, key=lambda h: h[:2])[2] if hits else None  # ties: the stall rule first


def _first_sentence(text: str) -> str:
    head = re.split(r"(?<=[a-z0-9)])\.\s", text.strip(), maxsplit=1)[0]
    return head.rstrip(".") + "."


def stall_words(k: KernelProfile) -> str:
    """A sentence naming the largest stall reason and ncu's own rule about it (evidence the report already holds)."""
    out = ""
    top = top_stall(k)
    if top:
        reason, v, _ = top
        out = (f" Warps stall mostly on {reason} ({v:.1f} cycles per issued instruction: "
               f"{STALL_MEANING.get(reason, reason.replace('_', ' '))}).")
    rule = stall_rule(k)
    if rule:
        sp = _speedup(rule)
        est = f", estimated speedup up to {sp:.0f}%" if sp == sp and sp > 0 else ""
        out += f" ncu's own guided analysis (rule {rule['id']}{est}): \"{_first_sentence(rule['message'])}\""
    return out


def stall_evidence(k: KernelProfile) -> list[Evidence]:
    top = top_stall(k)
    if top is None:
        return []
    reason, _, metric = top
    return [ev(k, metric, "cycles/issue", f"largest warp stall reason: {STALL_MEANING.get(reason, reason)}")]


def next_look(k: KernelProfile, what: str) -> list[str]:
    """What would settle it, without asking for evidence the report already holds."""
    if any(k.get(m) is not None for m in SOURCE_COUNTERS):
        top = top_stall(k)
        behind = f"the instructions behind the {top[0]} stalls" if top else what
        return [f"{behind}: the report already holds per-instruction samples (SourceCounters); list them with "
                f"`ncu --import {k.source.rsplit('/', 1)[-1]} --page source --csv`"]
    return [f"a full-set ncu report (--set full) with SourceCounters to locate {what}"]
