"""A kernel at its roofline is done: the finding that says so, and stops `detect` from inventing a problem."""
from __future__ import annotations

from typing import Optional

from ...answer import Evidence, Finding, Fix, Roofline
from ...artifacts.tables import KernelProfile
from ...catalog import CATALOG, NEAR_PEAK_GAP
from ...display import bandwidth, flop_rate
from ...kernel_name import KernelName
from .evidence import ev


def detect_near_peak(k: KernelProfile, r: Optional[Roofline]) -> Optional[Finding]:
    if r is None or r.stated_gap > NEAR_PEAK_GAP:  # the floor for what the work needs (method.md)
        return None
    rate = (f"{bandwidth(r.achieved_bandwidth)} of {bandwidth(r.peak_bandwidth)} DRAM bandwidth"
            if r.stated_limiter == "memory" else
            f"{flop_rate(r.achieved_flops)} of {flop_rate(r.peak_flops)} on the {r.math_path} path")
    gap, floor = r.stated_gap, r.stated_floor_ns
    return Finding(
        bound="near_peak", mechanism="near_peak", kernel=k.name, roofline=r,
        bottleneck=(f"`{KernelName(k.name).display(60)}` is done: it runs within {100 * (gap - 1):.0f}% of its {r.stated_limiter} roofline "
                    f"({rate})."),
        evidence=[
            ev(k, "gpu__time_duration.sum", "ns", "measured kernel duration (ncu, replayed in isolation)"),
            Evidence(metric="derived.roofline_floor_ns", value=floor, unit="ns", artifact=k.source, kernel=k.name,
                     meaning=f"floor = max(FLOPs/peak, bytes needed/bandwidth) from {r.ceiling_source}"),
            Evidence(metric="derived.roofline_gap", value=round(gap, 3), unit="ratio", artifact=k.source,
                     kernel=k.name, meaning="duration / floor; 1.0 is the roofline"),
        ],
        explanation=(f"The kernel already moves data (or does math) at {100 / gap:.0f}% of the hardware ceiling for "
                     f"the path it uses, so no change inside it can buy more than {100 * (gap - 1):.0f}%. Counters "
                     f"that look unhealthy in isolation (low occupancy, many registers, bank conflicts) are not "
                     f"limiting it. Further gains come from doing less work (fusion, lower precision, skipping "
                     f"passes) or from the next-largest cost in the program."),
        fix=Fix(change=CATALOG["near_peak"].fix_text(),
                metric="gpu__time_duration.sum", direction="decrease",
                expected=f"at most {100 * (gap - 1):.0f}% from tuning this kernel", current_value=r.duration_ns,
                target_value=floor),
        confidence=0.9,
    )
