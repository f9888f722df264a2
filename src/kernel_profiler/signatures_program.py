"""Signatures of the program's time (the timeline's steady window): a GPU idle on its host and the host cause of that
idle time, copies that fill the window (from pageable memory, or at the link's rate), one-time start-up. Part of
signatures.py's vocabulary (it imports them, so `signatures.check` finds them by name)."""
from __future__ import annotations

from typing import Optional

from .catalog import IDLE_CAUSE_SHARE
from .signature_base import ABSENT, PRESENT, UNKNOWN, Measured


def _busy(x: Measured) -> Optional[float]:
    return x.timeline.busy_fraction if x.timeline is not None and x.timeline.window_ns else None


def sig_host_idle(x: Measured) -> tuple[str, str]:
    b = _busy(x)
    if b is None:
        return UNKNOWN, "no timeline"
    return (PRESENT if b <= 0.75 else ABSENT), f"GPU busy {b:.0%} of the steady window"


TINY_CALLS_PER_STEP = 100  # copies per step beyond which each call's fixed cost, its sync included, is the limit


def _synced_tiny_copies(x: Measured) -> bool:
    """Whether the idle time's syncs are those of many small copies, one each (a pageable `.to("cuda")` per tensor
    returns only after its staging copy): the per-call cost of too many calls, not a sync the code adds."""
    copies, syncs = x.program.get("api.cudaMemcpyAsync.calls"), x.program.get("timeline.sync_calls")
    steps = x.program.get("timeline.steps") or 0
    return bool(copies and syncs and steps and abs(syncs - copies) <= 0.05 * copies and
                copies / steps >= TINY_CALLS_PER_STEP)


def sig_idle_cause(x: Measured, cause: str) -> tuple[str, str]:
    """The GPU idles in the steady window and a real share of the idle time (IDLE_CAUSE_SHARE) has this host cause."""
    st, txt = sig_host_idle(x)
    if st != PRESENT:
        return st, txt
    s = x.timeline
    ns = s.idle_by_cause.get(cause, 0.0)
    share = ns / s.idle_ns if s.idle_ns else 0.0
    said = f"{txt}; {share:.0%} of the idle time is {cause.replace('_', ' ')}"
    if cause == "launch_overhead" and share < IDLE_CAUSE_SHARE and _synced_tiny_copies(x):
        return PRESENT, (f"{said}, but every one of the {x.program['api.cudaMemcpyAsync.calls']:,.0f} small copies ends "
                         f"in its own stream synchronization: the sync is part of each call's cost")
    if cause == "host_work" and share < IDLE_CAUSE_SHARE:  # the CPU's work between launches looks like launch overhead
        gaps = (ns + s.idle_by_cause.get("launch_overhead", 0.0)) / s.idle_ns if s.idle_ns else 0.0
        return (PRESENT if gaps >= IDLE_CAUSE_SHARE else ABSENT), f"{said}, {gaps:.0%} with the gaps between launches"
    return (PRESENT if share >= IDLE_CAUSE_SHARE else ABSENT), said


def sig_transfer(x: Measured) -> tuple[str, str]:
    s = x.timeline
    if s is None or not s.window_ns:
        return UNKNOWN, "no timeline"
    frac = s.copy_ns / s.window_ns
    return (PRESENT if frac >= 0.3 else ABSENT), f"copies take {frac:.0%} of the steady window"


def sig_transfer_volume(x: Measured) -> tuple[str, str]:
    """Copies dominate and move at the link's pinned rate: only the volume is left to cut."""
    st, txt = sig_transfer(x)
    if st != PRESENT:
        return st, txt
    share = x.program.get("timeline.pageable_share")
    if share is not None and share >= 0.5:
        return ABSENT, (f"{txt}, but {share:.0%} of host<->device bytes are copied from pageable memory, which "
                        f"goes through a staging copy below the link's rate: the copies themselves are slow")
    return PRESENT, txt


def sig_pageable(x: Measured) -> tuple[str, str]:
    st, txt = sig_transfer(x)
    if st != PRESENT:
        return st, txt
    share = x.program.get("timeline.pageable_share", 0.0)
    return (PRESENT if share >= 0.5 else ABSENT), f"{txt}; {share:.0%} of host<->device bytes from pageable memory"


def sig_startup(x: Measured) -> tuple[str, str]:
    s = x.timeline
    if s is None:
        return UNKNOWN, "no timeline"
    return UNKNOWN, f"start-up {s.startup_ns / 1e9:.2f} s, steady window {s.window_ns / 1e6:.1f} ms"
