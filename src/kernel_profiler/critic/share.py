"""The kernels a program-level verdict blames must carry the program's GPU time: "the attention step is compute-bound
in the two batched GEMMs" is refused when those GEMMs take 13% of the steady window's kernel time (the other 87%
is what a longer run repeats, and no change to the GEMMs can move it)."""
from __future__ import annotations

import re

from .bound_words import answer_bound, timeline_verdict
from .context import Context
from .scope import kernel_mentions

MINOR_SHARE = 0.25  # kernels under this share of the window's kernel time do not set a kernel-bound program's pace
# the verdict speaks of the program, not of one kernel asked about
_PROGRAM = re.compile(r"\b(?:step|program|iteration|forward|backward|training|inference|decode|prefill|workload|"
                      r"model|layer|attention|loop|run)\b", re.I)


def check_share(c: Context) -> list[str]:
    said = c.answer.bottleneck or ""
    if not _PROGRAM.search(said) or timeline_verdict(c.facts) != "kernel":
        return []
    if answer_bound(c) not in ("memory", "compute", "latency", "near_peak", "kernel"):
        return []
    named = kernel_mentions(said, c.facts)
    shares = {k: max((f.value for f in c.facts.named("timeline.kernel_share", k) if f.kernel == k), default=None)
              for k in named}
    if not named or any(v is None for v in shares.values()):
        return []  # a kernel outside the window's table: no share to weigh
    total = sum(shares.values())
    if total >= MINOR_SHARE:
        return []
    names = ", ".join(f"`{c.facts.kernels.get(k, k)}`" for k in sorted(named))
    return [f"The verdict blames {names} for the program, but {'they take' if len(named) > 1 else 'it takes'} "
            f"{total:.0%} of the steady window's kernel time (timeline.kernel_share): the rest of the kernels set the "
            f"pace; name the largest cost."]
