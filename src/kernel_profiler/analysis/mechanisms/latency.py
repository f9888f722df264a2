"""Latency-side mechanisms: too little work in flight to keep the GPU busy (serialized atomics, a grid smaller
than the GPU, occupancy capped by a per-block resource)."""
from __future__ import annotations

from typing import Optional

from ...answer import Evidence, Finding, Fix, Roofline
from ...artifacts.tables import KernelProfile
from ...catalog import CATALOG
from ...kernel_name import KernelName
from .counters import (ATOMIC_REQUESTS, DRAM_SOL, GLOBAL_ST_INST, GRID, L2_ATOMIC_SECTORS, LD_REQUESTS, MEM_SOL,
                       OCC_ACHIEVED, OCC_LIMITS, OCC_THEORETICAL, REGISTERS, SM_COUNT, SMEM_DYNAMIC, SMEM_STATIC, STALL,
                       sol)
from .evidence import ev, gap_text

# Atomic requests at least this share of global memory requests, with the memory system idle.
ATOMIC_MIN_SHARE = 0.05
ATOMIC_MAX_SOL = 40.0
# Theoretical occupancy at or under this %, and no unit busier than LATENCY_MAX_SOL %.
OCCUPANCY_MAX_PCT = 25.0
LATENCY_MAX_SOL = 60.0


def detect_atomic_contention(k: KernelProfile, r: Optional[Roofline]) -> Optional[Finding]:
    atomics = sum(k.get(n) or 0.0 for n in ATOMIC_REQUESTS)
    loads = k.get(LD_REQUESTS) or 0.0
    stores = k.get(GLOBAL_ST_INST) or 0.0
    peak_sol = max(sol(k).values(), default=0.0)
    if atomics <= 0 or atomics / (atomics + loads + stores) < ATOMIC_MIN_SHARE or peak_sol >= ATOMIC_MAX_SOL:
        return None
    l2 = sum(k.get(n) or 0.0 for n in L2_ATOMIC_SECTORS)
    return Finding(
        bound="latency", mechanism="atomic_contention", kernel=k.name, roofline=r,
        bottleneck=(f"`{KernelName(k.name).display(60)}` is serialized on contended global atomics: {atomics:,.0f} atomic requests "
                    f"while no unit of the GPU is more than {peak_sol:.0f}% busy."),
        evidence=[
            Evidence(metric="+".join(ATOMIC_REQUESTS), value=atomics, unit="request", artifact=k.source, kernel=k.name,
                     meaning=f"global atomic requests ({atomics / (atomics + loads + stores):.0%} of global memory requests)"),
            Evidence(metric="+".join(L2_ATOMIC_SECTORS), value=l2, unit="sector", artifact=k.source, kernel=k.name,
                     meaning="L2 sectors processed by atomic units"),
            ev(k, MEM_SOL, "%", "memory throughput: the hardware is idle, the updates wait on each other"),
        ],
        explanation=(f"Many threads update the same few addresses; the L2 atomic unit applies updates to one address "
                     f"one after another, so throughput collapses to the rate of a handful of addresses while every "
                     f"other unit waits; {gap_text(r)}."),
        fix=Fix(change=CATALOG["atomic_contention"].fix_text(),
                metric="+".join(ATOMIC_REQUESTS), direction="decrease",
                expected="by about the block size (hundreds of times fewer global atomics); kernel time down by 10x or more",
                current_value=atomics),
        confidence=0.85,
    )


def detect_low_parallelism(k: KernelProfile, r: Optional[Roofline]) -> Optional[Finding]:
    grid, sms = k.get(GRID), k.get(SM_COUNT)
    if not grid or not sms or grid >= sms:
        return None
    return Finding(
        bound="latency", mechanism="low_parallelism", kernel=k.name, roofline=r,
        bottleneck=(f"`{KernelName(k.name).display(60)}` launches only {grid:.0f} blocks on a {sms:.0f}-SM GPU: "
                    f"{sms - grid:.0f} SMs have nothing to do."),
        evidence=[
            ev(k, GRID, "block", "blocks in the grid"),
            ev(k, SM_COUNT, "SM", "multiprocessors on the device"),
            ev(k, DRAM_SOL if k.get(DRAM_SOL) is not None else MEM_SOL, "%", "memory throughput stays low"),
        ],
        explanation=(f"Each block runs on one SM, so at most {grid / sms:.0%} of the GPU works and the memory system "
                     f"sees too few requests in flight to approach its bandwidth; {gap_text(r)}."),
        fix=Fix(change=CATALOG["low_parallelism"].fix_text(min_grid=2 * sms),
                metric=GRID, direction="increase", expected=f"from {grid:.0f} to >= {2 * sms:.0f} blocks; kernel time "
                f"down by up to ~{sms / grid:.0f}x, until the roofline is reached", current_value=grid,
                target_value=2 * sms),
        confidence=0.85,
    )


def detect_occupancy_limit(k: KernelProfile, r: Optional[Roofline]) -> Optional[Finding]:
    theo, achieved = k.get(OCC_THEORETICAL), k.get(OCC_ACHIEVED)
    peak_sol = max(sol(k).values(), default=0.0)
    if theo is None or theo > OCCUPANCY_MAX_PCT or peak_sol >= LATENCY_MAX_SOL:
        return None
    limits = {label: v for label, m in OCC_LIMITS.items() if (v := k.get(m)) is not None}
    limiter = min(limits, key=limits.get) if limits else "unknown"
    detail = {
        "shared memory": f"{((k.get(SMEM_DYNAMIC) or 0) + (k.get(SMEM_STATIC) or 0)) / 1024:.0f} KB of shared memory per block",
        "registers": f"{k.get(REGISTERS) or 0:.0f} registers per thread",
    }.get(limiter, limiter)
    return Finding(
        bound="latency", mechanism="occupancy_limit", kernel=k.name, roofline=r,
        bottleneck=(f"`{KernelName(k.name).display(60)}` is latency-bound: {detail} caps occupancy at {theo:.1f}% "
                    f"({limits.get(limiter, 0):.0f} block(s) per SM), too few warps to hide memory latency."),
        evidence=[
            ev(k, OCC_THEORETICAL, "%", f"theoretical occupancy, limited by {limiter}"),
            ev(k, OCC_LIMITS.get(limiter, OCC_THEORETICAL), "block", f"blocks per SM allowed by {limiter}"),
            ev(k, STALL.format("long_scoreboard"), "cycles/issue", "warps waiting on memory loads"),
        ],
        explanation=(f"With {theo:.1f}% of the SM's warp slots usable, each SM has too few independent loads in flight "
                     f"to cover DRAM latency (Little's law), so neither compute nor memory is busy "
                     f"(peak unit {peak_sol:.0f}%); {gap_text(r)}."),
        fix=Fix(change=CATALOG["occupancy_limit"].fix_text(limiter, limiter=limiter),
                metric=OCC_ACHIEVED, direction="increase",
                expected=f"achieved occupancy from {achieved or 0:.0f}% toward 50%+; DRAM throughput and kernel time improve several-fold",
                current_value=achieved),
        confidence=0.8,
    )
