"""The method's order and stopping rules, for every client of the tools (ask's orchestrator, MCP, replay)."""
from __future__ import annotations

import re
from typing import Optional

from ..analysis.decide import TIMELINE_VERDICTS
from ..kernel_name import KernelName
from .sandbox import SandboxViolation, check_regex

# Tools that come after the timeline in the method (timeline -> one kernel deep -> SASS).
ORDERED_TOOLS = ("kernel_profile", "sass")


def matches(rx: re.Pattern, name: str) -> bool:
    """A kernel regex matches a name as given or as its KernelName.qualified (no return type, no argument list)."""
    return bool(rx.search(name) or rx.search(KernelName(name).qualified))


def order_violation(timeline: Optional[dict], name: str, args: dict, insist: bool) -> Optional[str]:
    """The method's order and stopping rules:
      * no kernel_profile or sass before a timeline;
      * a ranks-, host-, transfer- or start-up-bound timeline ends the investigation: kernel profiling would
        tell nothing (unless the user insisted);
      * kernel_profile only with a regex matching a kernel that dominates GPU time per the timeline.
    `timeline` is the timeline tool's successful result (JSON). Returns the refusal, or None."""
    if name not in ORDERED_TOOLS:
        return None
    if timeline is None:
        return f"{name} is refused before the timeline: call `timeline` first (the method never inverts the order)."
    verdict = timeline.get("verdict")
    if verdict in TIMELINE_VERDICTS and not insist:
        return (f"{name} is refused: the timeline is {verdict}-bound, so kernel profiling would tell nothing. "
                f"Submit the answer from the timeline.")
    if name == "kernel_profile":
        dom = [k.get("name", "") for k in timeline.get("dominant_kernels", [])]
        try:
            rx = re.compile(check_regex(str(args.get("kernel_regex", ""))))
        except SandboxViolation:
            return None  # the sandbox refuses it, with its own reason
        if dom and not any(matches(rx, n) for n in dom):
            return (f"kernel_profile is refused: {args.get('kernel_regex')!r} matches none of the kernels that "
                    f"dominate GPU time ({', '.join(KernelName(n).qualified[:60] for n in dom)}).")
    return None
