"""Mechanism detectors: one small pure function per mechanism, grouped by the resource they blame.

Each detector reads named ncu metrics of one profiled kernel (and its roofline)
and returns a `Finding` when its mechanism explains the kernel's gap to the
roofline, else None. Thresholds are module constants with the reason next to
them. `detect` runs them in priority order: a kernel that reads host memory over
PCIe first (zero-copy: its ceiling is the link, which no DRAM roofline draws), matrix
work off the tensor cores next (its true ceiling is the tensor path, so even a kernel near its FP32
roofline is not done), then the near-peak check (a kernel at its roofline gets
no invented problem), then the specific mechanisms, then generic fallbacks.
"""
from __future__ import annotations

from typing import Callable, Optional

from ...answer import Finding, Roofline
from ...artifacts.tables import KernelProfile
from .compute import detect_instruction_bound, detect_no_tensor_cores, detect_warp_divergence
from .fallback import fallback
from .host_memory import detect_zero_copy
from .latency import detect_atomic_contention, detect_low_parallelism, detect_occupancy_limit
from .memory import detect_bank_conflicts, detect_local_memory, detect_uncoalesced
from .near_peak import detect_near_peak

DETECTORS: list[Callable[[KernelProfile, Optional[Roofline]], Optional[Finding]]] = [
    detect_zero_copy,
    detect_no_tensor_cores,
    detect_near_peak,
    detect_warp_divergence,
    detect_local_memory,
    detect_atomic_contention,
    detect_uncoalesced,
    detect_bank_conflicts,
    detect_low_parallelism,
    detect_occupancy_limit,
]
# Other mechanisms on the same kernel are reported only when the gap is at least this large:
# a kernel within 2x of its roofline has one story, not several.
SECONDARY_MIN_GAP = 2.0


def detect(k: KernelProfile, r: Optional[Roofline]) -> list[Finding]:
    """Every mechanism that fires for this kernel, in priority order (first = primary)."""
    out = []
    for det in DETECTORS:
        f = det(k, r)
        if f is None:
            continue
        if f.roofline is None:
            f.roofline = r
        out.append(f)
        if f.mechanism == "near_peak":
            break  # a kernel at its roofline gets no invented problem
    if not out:
        out = [detect_instruction_bound(k, r) or fallback(k, r)]
        out[0].roofline = out[0].roofline or r
    if r is not None and r.gap < SECONDARY_MIN_GAP:
        out = out[:1]
    return out
