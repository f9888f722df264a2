"""The near-peak check, both ways: a cause blamed on a kernel that runs at its roofline, and a near-peak claim about a
program whose kernels each run at their own floor while it moves its data through DRAM several times (an unfused
chain), which the engine's measured extra passes refute."""
from __future__ import annotations

import re

from ..catalog import CATALOG, NEAR_PEAK_GAP
from .context import Context
from .scope import kernel_mentions


def extra_passes(c: Context) -> list[str]:
    """A near_peak claim over captures whose program-level finding is excess DRAM traffic, unless the answer's fix
    removes the passes (fuses the chain)."""
    d = c.facts.diagnosis
    if d is None or d.primary.mechanism != "excess_dram_traffic":
        return []
    if CATALOG["excess_dram_traffic"].words.search(c.answer.fix_text or "") or \
            re.search(r"\bfus(?:e|es|ed|ing|ion)\b", c.answer.fix_text or "", re.I):
        return []  # "each kernel is at its floor; fuse them": the waste named by its fix
    return [f"The answer calls the work near its peak, but the program streams its data through DRAM in extra passes: "
            f"{d.primary.bottleneck} Each kernel can sit at its own floor while the program's floor is one pass: "
            f"name the extra passes and remove them (fuse the chain)."]


def check_near_peak(c: Context) -> list[str]:
    if c.claimed == "near_peak":
        return extra_passes(c)
    if c.claimed is None or (c.claimed in CATALOG and CATALOG[c.claimed].scope == "program"):
        return []
    out = []
    for k in sorted(kernel_mentions(c.answer.bottleneck, c.facts) | c.scope.primary):
        r = c.facts.rooflines.get(k)
        if r is not None and r.stated_gap <= NEAR_PEAK_GAP:
            out.append(f"`{c.facts.kernels.get(k, k)}` runs near its roofline (duration/floor = {r.stated_gap:.2f}), so "
                       f"'{c.claimed}' cannot be what limits it: say it is done and point at the next-largest cost.")
    return out
