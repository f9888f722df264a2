"""What the captures must show for a claim of a mechanism to stand: one pure signature function per mechanism.

A signature reads one kernel's measurements (ncu metrics, roofline, SASS opcode counts, compiler spills) or
the timeline summary and says present, absent or unknown, with the measurement that says so. Each catalog
entry (catalog.py) names its signature here; the critic checks a claimed mechanism with `check`.
"""
from __future__ import annotations

import math
import re

from typing import Optional

from .catalog import GEMM_NAME, NEAR_PEAK_GAP, TENSOR_OPS
from .signature_base import ABSENT, PRESENT, UNKNOWN, Measured  # noqa: F401 (the signatures' vocabulary)
# where data and work are placed (host memory read over PCIe, managed pages, the legacy default stream)
from .signatures_placement import sig_default_stream, sig_managed_migration, sig_zero_copy  # noqa: F401
# the program's time: idle host time and its causes, copies, start-up
from .signatures_program import (sig_host_idle, sig_idle_cause, sig_pageable, sig_startup,  # noqa: F401
                                 sig_transfer, sig_transfer_volume)


def _ratio(x: Measured, a: str, b: str) -> Optional[float]:
    va, vb = x.m(a), x.m(b)
    return va / vb if va is not None and vb else None


def sig_bank_conflict(x: Measured) -> tuple[str, str]:
    best = None
    for op in ("ld", "st"):
        inst = x.m(f"smsp__sass_inst_executed_op_shared_{op}.sum")
        conf = x.m(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum")
        wf = x.m(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum")
        if inst:
            ways = 1 + conf / inst if conf is not None else (wf / inst if wf else None)
            if ways is not None and (best is None or ways > best[0]):
                best = (ways, op, conf)
    shared_inst = sum(x.m(f"smsp__sass_inst_executed_op_shared_{op}.sum") or 0 for op in ("ld", "st"))
    if x.profile is not None and shared_inst == 0 and x.m("smsp__sass_inst_executed_op_shared_ld.sum") is not None:
        return ABSENT, "the kernel executes no shared-memory instructions (smsp__sass_inst_executed_op_shared_ld.sum = 0)"
    if best is None:
        lds = x.ops("LDS", "STS")
        if lds == 0:
            return ABSENT, "its SASS has no shared-memory instructions (LDS/STS = 0)"
        return UNKNOWN, "no shared-memory counters"
    ways, op, conf = best
    txt = f"shared {op} instructions need {ways:.2f} wavefronts each (bank conflicts {conf or 0:,.0f})"
    return (PRESENT if ways >= 2.0 else ABSENT), txt


def sig_uncoalesced(x: Measured) -> tuple[str, str]:
    bps = [v for v in (x.m("smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"),
                       x.m("smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio")) if v]
    spr = _ratio(x, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
    if bps:
        worst = min(bps)
        txt = f"{worst:.1f} useful bytes per 32-byte global sector" + (f", {spr:.1f} sectors per load request" if spr else "")
        minor = _minor_side(x)
        if worst < 20.0 and minor is not None:
            return ABSENT, minor
        return (PRESENT if worst < 20.0 else ABSENT), txt
    if spr is not None:
        return (PRESENT if spr > 8.0 else ABSENT), f"{spr:.1f} sectors per global load request"
    return UNKNOWN, "no coalescing counters"


MINOR_TRAFFIC = 0.10  # a direction (loads or stores) carrying under this share of the DRAM bytes sets no limit


def _minor_side(x: Measured) -> Optional[str]:
    """Why wasted sectors on one side do not limit the kernel: only that side wastes them, and it moves a small
    share of the DRAM bytes (lane-0 stores of a row sum next to coalesced reads of the whole input)."""
    ld = x.m("smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio")
    st = x.m("smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio")
    rd, wr = x.m("dram__bytes_read.sum"), x.m("dram__bytes_write.sum")
    if None in (ld, st, rd, wr) or not rd + wr:
        return None
    for side, bad, good, share in (("store", st, ld, wr / (rd + wr)), ("load", ld, st, rd / (rd + wr))):
        if bad < 20.0 <= good and share < MINOR_TRAFFIC:
            return (f"only the {side}s waste sectors ({bad:.1f} useful bytes per sector), and they move {share:.0%} of "
                    f"the DRAM bytes; the other side uses {good:.1f} of 32")
    return None


def sig_local(x: Measured) -> tuple[str, str]:
    loc = (x.m("l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum") or 0) + (x.m("l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum") or 0)
    ldl = x.ops("LDL", "STL")
    if x.m("l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum") is not None:
        if loc > 0:
            return PRESENT, f"{loc:,.0f} local-memory sectors"
        return ABSENT, "no local-memory traffic (local load/store sectors = 0)"
    if ldl is not None:
        return (PRESENT if ldl else ABSENT), f"{ldl} LDL/STL instructions in the SASS"
    if any(x.spill):
        return PRESENT, f"compiler: {x.spill[0]}-byte stack, {x.spill[1]} spill bytes"
    return UNKNOWN, "no local-memory counters"




# a convolution's transform-domain kernels (FFT, Winograd): the per-frequency products summed over channels are the
# matrix products of a convolution that cuDNN runs on the FMA pipe when it picks these algorithms over implicit GEMM
_CONV_TRANSFORM = re.compile(r"fft|winograd|mult_and_sum", re.I)


# kernels whose name says they run on the tensor cores: cuBLAS's Hopper nvjet GEMMs, CUTLASS "tensorop" kernels, and
# names that carry their MMA instruction (wgmma/gmma/hmma/imma, the s1688/s16816 mma.sync shapes)
TENSOR_CORE_NAME = re.compile(r"\bnvjet_|tensorop|[whi]?gmma|hmma|imma|_s16816|_s1688|_s884", re.I)


def sig_no_tensor_cores(x: Measured) -> tuple[str, str]:
    tensor = x.m("sm__pipe_tensor_cycles_active.sum.pct_of_peak_sustained_elapsed")
    mma = x.ops(*TENSOR_OPS)
    fma = x.m("sm__pipe_fma_cycles_active.sum.pct_of_peak_sustained_active")
    ffma = x.ops("FFMA")
    if (tensor is not None and tensor >= 5.0) or mma:
        return ABSENT, (f"tensor pipes active {tensor:.1f}% of peak" if tensor is not None else f"{mma} MMA instructions in the SASS")
    r = x.roofline
    gemm_like = bool(GEMM_NAME.search(x.name) or _CONV_TRANSFORM.search(x.name)) or (r is not None and (r.arithmetic_intensity or 0) >= 8
                                                     and (x.m("smsp__sass_inst_executed_op_shared_ld.sum") or 0) > 0)
    fma_busy = (fma is not None and fma >= 10.0) or bool(ffma)
    if tensor is None and mma is None:
        if TENSOR_CORE_NAME.search(x.name or ""):  # no counters, but cuBLAS/CUTLASS name the math path in the kernel
            return ABSENT, f"`{x.name}` is a tensor-core kernel by its name (cuBLAS nvjet, tensorop, wgmma, hmma)"
        return UNKNOWN, "no tensor-pipe counter or SASS"
    if gemm_like and fma_busy and (r is None or r.math_path == "fp32"):
        return PRESENT, (f"tensor pipes {tensor or 0:.2f}% active, FMA pipe {fma or 0:.0f}% busy"
                         + (f", {ffma} FFMA in the SASS" if ffma else ""))
    why = "not matrix-like (no GEMM name, no shared-memory tiling at high intensity)" if not gemm_like else \
        f"the FMA pipe is idle ({fma or 0:.0f}%)"
    return ABSENT, f"the kernel is {why}"


ISSUE_HIDES_LATENCY = 60.0  # % of active cycles with an instruction issued: above it, latency is not the limiter


def sig_occupancy(x: Measured) -> tuple[str, str]:
    ach = x.m("sm__warps_active.avg.pct_of_peak_sustained_active")
    theo = x.m("sm__maximum_warps_per_active_cycle_pct")
    if ach is None and theo is None:
        return UNKNOWN, "no occupancy counters"
    limits = {n.split("launch__occupancy_limit_")[1]: v for n in
              ("launch__occupancy_limit_registers", "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps",
               "launch__occupancy_limit_blocks") if (v := x.m(n)) is not None}
    limiter = min(limits, key=limits.get) if limits else "unknown"
    txt = f"achieved occupancy {ach or 0:.0f}%, theoretical {theo or 0:.0f}% (limiter: {limiter})"
    low = (ach if ach is not None else theo) <= 40.0
    if not (low and (theo is None or theo <= 50.0)):
        return ABSENT, txt
    issue = x.m("smsp__issue_active.avg.pct_of_peak_sustained_active")
    if issue is not None and issue >= ISSUE_HIDES_LATENCY:  # the few warps there are keep the schedulers issuing
        return ABSENT, (f"{txt}, but the schedulers issue on {issue:.0f}% of active cycles: the warps present "
                        f"already hide the latency, so more warps cannot speed it up")
    return PRESENT, txt


def sig_low_parallelism(x: Measured) -> tuple[str, str]:
    grid, sms = x.m("launch__grid_size"), x.m("launch__sm_count")
    if not grid or not sms:
        return UNKNOWN, "no launch statistics"
    waves = x.m("launch__waves_per_multiprocessor")
    if grid >= sms and waves and waves <= TAIL_WAVES_MAX and waves / math.ceil(waves) < TAIL_FILL_MIN:
        return PRESENT, (f"grid of {grid:,.0f} blocks on {sms:.0f} SMs is {waves:.3g} waves: the last wave runs "
                         f"{waves - math.floor(waves):.0%} full, so the SMs sit idle {1 - waves / math.ceil(waves):.0%} "
                         f"of the kernel (a tail)")
    overlaps = x.program.get("timeline.overlapping_kernel_pairs") if x.program else None
    if grid < sms and overlaps and _window_kernels(x) and overlaps >= _window_kernels(x):
        return ABSENT, (f"grid of {grid:,.0f} blocks on {sms:.0f} SMs, but the step's kernels run concurrently "
                        f"({overlaps:,.0f} overlapping kernel pairs in the steady window): the other launches fill "
                        f"the SMs one kernel leaves idle")
    return (PRESENT if grid < sms else ABSENT), f"grid of {grid:,.0f} blocks on {sms:.0f} SMs"


def _window_kernels(x: Measured) -> int:
    """Kernels in the steady window (0 without a timeline)."""
    return x.timeline.kernel_count if x.timeline is not None else 0


TAIL_WAVES_MAX = 4.0  # a few waves: a partial last one is a large share of the kernel
TAIL_FILL_MIN = 0.75  # waves / whole waves launched under this: a quarter or more of the SM time idles in the tail


SHARED_ATOMIC_SHARE = 0.02  # shared atomics this common among warp instructions are the kernel's inner loop,
SHARED_ATOMIC_BUSY = 25.0  # and contended when their wavefronts keep the shared pipe this busy (% of peak)


ATOMIC_MIN_REQUESTS = 1000  # fewer global atomic requests per launch than this cannot contend enough to cost time


def sig_atomic(x: Measured) -> tuple[str, str]:
    n = sum(x.m(m) or 0 for m in ("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
                                  "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"))
    have = x.m("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum") is not None
    sass = x.ops("ATOM", "RED")
    shared, inst = x.m("smsp__inst_executed_op_shared_atom.sum"), x.m("smsp__inst_executed.sum")
    busy = x.m("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum.pct_of_peak_sustained_elapsed")
    if shared and inst and busy and shared / inst >= SHARED_ATOMIC_SHARE and busy >= SHARED_ATOMIC_BUSY:
        return PRESENT, (f"{shared:,.0f} shared-memory atomic instructions ({shared / inst:.1%} of warp instructions), "
                         f"their wavefronts {busy:.0f}% of the shared pipe's peak")  # e.g. a float atomicAdd's CAS loop
    if have:
        req = n + (x.m("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum") or 0) + \
            (x.m("smsp__sass_inst_executed_op_global_st.sum") or 0)
        share = n / req if req else 0.0
        present = share >= 0.05 and n >= ATOMIC_MIN_REQUESTS  # 16 atomics of 144 requests are no contention
        few = "" if n >= ATOMIC_MIN_REQUESTS else ": too few to contend"
        return (PRESENT if present else ABSENT), f"{n:,.0f} global atomic requests ({share:.1%} of global requests){few}"
    if sass is not None:
        return (PRESENT if sass else ABSENT), f"{sass} ATOM/RED instructions in the SASS"
    return UNKNOWN, "no atomic counters"


DIVERGED_LANES = 24.0  # fewer active threads per warp instruction than this: divergence costs a quarter or more


def sig_divergence(x: Measured) -> tuple[str, str]:
    a = x.m("smsp__thread_inst_executed_per_inst_executed.ratio")
    if a is None:
        return UNKNOWN, "no divergence counter"
    return (PRESENT if a < DIVERGED_LANES else ABSENT), f"{a:.1f} of 32 threads active per warp instruction"


SM_ACTIVE_MIN = 0.7  # SMs active for less of the elapsed time than this: idle SMs, not issue, set the time


def sm_active_share(x: Measured) -> Optional[float]:
    """The share of the elapsed cycles the SMs were active (the `_active` percentages count only that part)."""
    active, elapsed = x.m("sm__cycles_active.avg"), x.m("sm__cycles_elapsed.avg")
    return active / elapsed if active is not None and elapsed else None


def sig_instruction(x: Measured) -> tuple[str, str]:
    sm = x.m("sm__throughput.avg.pct_of_peak_sustained_elapsed")
    if sm is None:
        return UNKNOWN, "no SM throughput"
    active = sm_active_share(x)
    if sm >= 40.0 and active is not None and active < SM_ACTIVE_MIN:
        return ABSENT, (f"SM throughput {sm:.0f}% of peak, but the SMs are active only {active:.0%} of the elapsed "
                        f"cycles: idle SMs (a partial wave, too few blocks), not instruction issue, set the time")
    return (PRESENT if sm >= 40.0 else ABSENT), f"SM throughput {sm:.0f}% of peak"


ISSUE_NEAR_PEAK = 80.0  # % of cycles issuing: the issue slots are the ceiling an instruction-bound kernel sits at


def sig_near_peak(x: Measured) -> tuple[str, str]:
    """At its roofline (duration near the floor of bytes and FLOPs), or at the instruction-issue ceiling the
    roofline does not draw (integer/address work that issues nearly every cycle)."""
    r = x.roofline
    if r is None:
        return UNKNOWN, "no roofline"
    g = r.stated_gap
    issue = x.m("smsp__issue_active.avg.pct_of_peak_sustained_active")
    if g > NEAR_PEAK_GAP * 1.2 and issue is not None and issue >= ISSUE_NEAR_PEAK:
        lanes = x.m("smsp__thread_inst_executed_per_inst_executed.ratio")
        if lanes is not None and lanes < DIVERGED_LANES:  # issue slots spent on masked lanes: not a ceiling of work
            return ABSENT, (f"the SM issues {issue:.0f}% of cycles, but only {lanes:.1f} of 32 lanes are active per "
                            f"instruction: {1 - lanes / 32:.0%} of the issued work is masked off")
        return PRESENT, f"duration / roofline floor = {g:.2f}, but the SM issues an instruction {issue:.0f}% of cycles"
    return (PRESENT if g <= NEAR_PEAK_GAP * 1.2 else ABSENT), f"duration / roofline floor = {g:.2f}"


def sig_excess_traffic(x: Measured) -> tuple[str, str]:
    """Extra passes through DRAM between kernels need more than one kernel per step in the steady window."""
    s = x.timeline
    steps = (s.steps or s.repeats) if s is not None else None
    if s is None or not steps or not s.top_kernels:
        return UNKNOWN, "no steady window with steps"
    if len(s.top_kernels) == 1 and s.kernel_count <= steps * 1.05:
        return ABSENT, (f"the steady window runs one kernel per step ({s.kernel_count} launches of "
                        f"`{s.top_kernels[0].name[:60]}` in {steps} steps): there is no chain of passes to fuse")
    return (PRESENT if s.kernel_count >= 2 * steps else UNKNOWN), f"{s.kernel_count / steps:.1f} kernels per step"


def straggler(x: Measured):
    """(last rank to enter the collectives, the others, its median entry lag, the noise threshold, the step) or None."""
    from .analysis.ranks import NOISE_ABS_NS, NOISE_FRAC_OF_STEP  # the engine's own thresholds
    rows = [r for r in x.ranks if r.collective_enter_lag_ns is not None]
    if len(rows) < 2:
        return None
    last = max(rows, key=lambda r: r.collective_enter_lag_ns)
    steps = sorted(r.step_p50_ns for r in rows if r.step_p50_ns)
    step = steps[len(steps) // 2] if steps else 0.0
    spread = last.collective_enter_lag_ns - min(r.collective_enter_lag_ns for r in rows)
    return last, [r for r in rows if r is not last], spread, max(NOISE_ABS_NS, NOISE_FRAC_OF_STEP * step), step


def sig_straggler(x: Measured) -> tuple[str, str]:
    """One rank enters the collectives late by more than noise: the others wait for it."""
    st = straggler(x)
    if st is None:
        return UNKNOWN, "fewer than two ranks compared"
    last, _, spread, noise, step = st
    if spread < noise:
        return ABSENT, (f"the ranks enter each collective within {spread / 1e6:.2f} ms of each other (noise: "
                        f"{noise / 1e6:.2f} ms of a {step / 1e6:.1f} ms step): there is no straggler")
    return PRESENT, f"rank {last.rank} enters each collective {spread / 1e6:.2f} ms after the first rank"


def _median(vals: list[float]) -> Optional[float]:
    vals = sorted(v for v in vals if v)
    return vals[len(vals) // 2] if vals else None


def sig_throttle(x: Measured) -> tuple[str, str]:
    """A straggler whose lower, throttled SM clock accounts for its longer compute (analysis/ranks.py's rule)."""
    from .analysis.ranks import THROTTLE_EXPLAINS
    from .telemetry import POWER_REASONS, THERMAL_REASONS
    st, txt = sig_straggler(x)
    if st != PRESENT:
        return st, txt
    last, others, *_ = straggler(x)
    clock, other_clock = last.sm_clock_mhz_median, _median([r.sm_clock_mhz_median for r in others])
    if not clock or not other_clock:
        return UNKNOWN, f"{txt}; no clock telemetry"
    reasons = [r for r in last.throttle_reasons if r in THERMAL_REASONS | POWER_REASONS]
    k = other_clock / clock
    c = (last.compute_ns_per_step or 0) / (_median([r.compute_ns_per_step for r in others]) or 1)
    if not reasons or k <= 1.01:
        return ABSENT, (f"{txt}, but its SM clock ({clock:.0f} MHz) is not throttled below the others' "
                        f"({other_clock:.0f} MHz){'' if reasons else ', no thermal or power throttle reason'}")
    if (k - 1) < THROTTLE_EXPLAINS * (c - 1):
        return ABSENT, (f"{txt}; its clock is {k:.2f}x lower ({clock:.0f} vs {other_clock:.0f} MHz) but its "
                        f"compute takes {c:.2f}x as long: the clock does not explain it, the work does")
    return PRESENT, f"{txt}; its clock is {k:.2f}x lower ({', '.join(reasons)})"


def sig_comms(x: Measured) -> tuple[str, str]:
    """All ranks arrive together and still spend a large share of the step inside collectives."""
    from .analysis.ranks import COLLECTIVE, COMMS_BOUND_SHARE
    st, txt = sig_straggler(x)
    if st == UNKNOWN:
        return st, txt
    if st == PRESENT:
        return ABSENT, f"{txt}: the others wait for a late rank, not for the transfer"
    s = x.timeline
    if s is not None and s.top_kernels and not any(COLLECTIVE.search(k.name) for k in s.top_kernels):
        return ABSENT, (f"the steady window ({s.window_ns / 1e6:.1f} ms) runs no collective kernel: the collectives "
                        f"are one-time work outside it")
    _, _, _, _, step = straggler(x)
    share = (min(r.collective_ns_per_step or 0 for r in x.ranks) / step) if step else 0.0
    return (PRESENT if share >= COMMS_BOUND_SHARE else ABSENT), f"collectives take {share:.0%} of every rank's step"


def sig_unknown(x: Measured) -> tuple[str, str]:
    return UNKNOWN, ""




def check(mechanism: str, x: Measured) -> tuple[str, str]:
    """The claimed mechanism's signature on what the captures measured (unknown for an id not in the catalog)."""
    from .catalog import CATALOG

    e = CATALOG.get(mechanism)
    if e is None:
        return UNKNOWN, ""
    sig = globals()[e.signature]
    return sig(x, e.idle_cause) if e.idle_cause else sig(x)

