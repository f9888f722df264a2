"""What every detector's finding says the same way: an evidence line read from the report, and the gap to the
roofline in words."""
from __future__ import annotations

from typing import Optional

from ...answer import Evidence, Roofline
from ...artifacts.tables import KernelProfile
from ...display import duration, quantity, size, times


def ev(k: KernelProfile, metric: str, unit: str, meaning: str, value: Optional[float] = None) -> Evidence:
    v = k.get(metric) if value is None else value
    return Evidence(metric=metric, value=float(v if v is not None else float("nan")), unit=unit,
                    artifact=k.source, kernel=k.name, meaning=meaning)


def gap_text(r: Optional[Roofline]) -> str:
    """The gap to the roofline, stated against the floor for what the work needs (and, when the kernel moved
    more bytes than that, the floor at the traffic it measured)."""
    if r is None:
        return "the roofline could not be computed (duration, DRAM bytes or ceilings missing)"
    if r.needed_floor_ns is None:  # a roofline from before schema 1.1
        return (f"it runs {times(r.gap)} its {r.limiter} floor of {duration(r.floor_ns)} "
                f"({duration(r.duration_ns)} measured)")
    if r.stated_limiter == "compute":
        work = f"the {quantity(r.flops, 'flop')} it executes on the {r.math_path} path"
    else:
        work = f"the {size(r.needed_bytes)} it needs to move"
    out = (f"it runs {times(r.needed_gap)} its {r.stated_limiter} floor of {duration(r.needed_floor_ns)} for {work} "
           f"({duration(r.duration_ns)} measured)")
    if r.moved_floor_differs:
        out += (f"; at the {size(r.dram_bytes)} it moved from DRAM the floor is {duration(r.floor_ns)} "
                f"({times(r.gap)})")
    return out


def floor_words(r: Optional[Roofline]) -> str:
    return f"its floor of {duration(r.stated_floor_ns)}" if r is not None else "its floor"
