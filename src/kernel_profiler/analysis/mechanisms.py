"""Mechanism detectors: one small pure function per mechanism.

Each detector reads named ncu metrics of one profiled kernel (and its roofline)
and returns a `Finding` when its mechanism explains the kernel's gap to the
roofline, else None. Thresholds are module constants with the reason next to
them. `detect` runs them in priority order: matrix work off the tensor cores
first (its true ceiling is the tensor path, so even a kernel near its FP32
roofline is not done), then the near-peak check (a kernel at its roofline gets
no invented problem), then the specific mechanisms, then generic fallbacks.
"""
from __future__ import annotations

import re
from typing import Callable, Optional

from ..artifacts.tables import KernelProfile
from ..catalog import CATALOG, GEMM_NAME, NEAR_PEAK_GAP
from ..answer import Evidence, Finding, Fix, Roofline
from ..display import bandwidth, duration, flop_rate, quantity, size, times
from ..kernel_name import KernelName
from .roofline import DURATION as DURATION_METRIC
from .roofline import fp32_tensor_alternative

# --- metric names (sm_90, ncu 2025.x) ---
SM_SOL = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
MEM_SOL = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
DRAM_SOL = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"
L1_SOL = "l1tex__throughput.avg.pct_of_peak_sustained_active"
TENSOR_ACTIVE = "sm__pipe_tensor_cycles_active.sum.pct_of_peak_sustained_elapsed"
FMA_ACTIVE = "sm__pipe_fma_cycles_active.sum.pct_of_peak_sustained_active"
INST = "smsp__inst_executed.sum"
DIVERGENCE = "smsp__thread_inst_executed_per_inst_executed.ratio"
LD_BYTES_PER_SECTOR = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"
ST_BYTES_PER_SECTOR = "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio"
LD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
LD_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
ST_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
LOCAL_LD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum"
LOCAL_ST_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum"
LOCAL_SPILL = "derived__local_spilling_requests"
SHARED_LD_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
SHARED_ST_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
SHARED_LD_INST = "smsp__sass_inst_executed_op_shared_ld.sum"
SHARED_ST_INST = "smsp__sass_inst_executed_op_shared_st.sum"
BANK_CONFLICTS_LD = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
BANK_CONFLICTS_ST = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
GLOBAL_ST_INST = "smsp__sass_inst_executed_op_global_st.sum"
ATOMIC_REQUESTS = ("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum")
L2_ATOMIC_SECTORS = ("lts__t_sectors_srcunit_tex_op_atom.sum", "lts__t_sectors_srcunit_tex_op_red.sum")
GRID = "launch__grid_size"
SM_COUNT = "launch__sm_count"
OCC_THEORETICAL = "sm__maximum_warps_per_active_cycle_pct"
OCC_ACHIEVED = "sm__warps_active.avg.pct_of_peak_sustained_active"
OCC_LIMITS = {
    "registers": "launch__occupancy_limit_registers",
    "shared memory": "launch__occupancy_limit_shared_mem",
    "warps per block": "launch__occupancy_limit_warps",
    "blocks per SM": "launch__occupancy_limit_blocks",
    "barriers": "launch__occupancy_limit_barriers",
}
REGISTERS = "launch__registers_per_thread"
SMEM_DYNAMIC = "launch__shared_mem_per_block_dynamic"
SMEM_STATIC = "launch__shared_mem_per_block_static"
STALL = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"

# --- thresholds ---
# Tensor pipe under this % of peak = the tensor cores are not doing the matrix work.
TENSOR_IDLE_PCT = 5.0
# FP32 FLOPs per DRAM byte above which FMA work is matrix-like (the H100/H200 FP32 ridge is ~14-20).
GEMM_MIN_INTENSITY = 20.0
# Shared-memory loads per instruction above which the kernel is tiling through shared memory.
GEMM_SHARED_LD_FRACTION = 0.05
# Active threads per warp instruction below half a warp: divergence halves throughput or worse.
DIVERGENCE_MAX_ACTIVE = 16.0
# SM throughput at which instruction issue, not memory, is the limiter.
COMPUTE_BOUND_SOL = 60.0
# Useful bytes per 32-byte global sector below this = at least half of every sector fetched is wasted.
COALESCED_MIN_BYTES_PER_SECTOR = 16.0
# n-way shared-memory conflict (wavefronts per instruction) at or above this is a real serialization.
BANK_CONFLICT_MIN_WAYS = 4.0
# ...and the shared-memory pipe is busy: L1/shared throughput at least this %, or warps stalled on the
# MIO queue at least this many cycles per issued instruction.
SHARED_PIPE_BUSY_PCT = 50.0
MIO_STALL_MIN = 5.0
# Local-memory sectors at least this share of (local + global) L1 sectors.
LOCAL_MIN_SHARE = 0.25
# Atomic requests at least this share of global memory requests, with the memory system idle.
ATOMIC_MIN_SHARE = 0.05
ATOMIC_MAX_SOL = 40.0
# Theoretical occupancy at or under this %, and no unit busier than LATENCY_MAX_SOL %.
OCCUPANCY_MAX_PCT = 25.0
LATENCY_MAX_SOL = 60.0
# Memory-bound fallback.
MEMORY_BOUND_SOL = 60.0


def _m(k: KernelProfile, name: str) -> Optional[float]:
    return k.get(name)


def _ev(k: KernelProfile, metric: str, unit: str, meaning: str, value: Optional[float] = None) -> Evidence:
    v = k.get(metric) if value is None else value
    return Evidence(metric=metric, value=float(v if v is not None else float("nan")), unit=unit,
                    artifact=k.source, kernel=k.name, meaning=meaning)


def _gap_text(r: Optional[Roofline]) -> str:
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


def stall_rule(k: KernelProfile) -> Optional[dict]:
    """ncu's own stall/issue rule with the largest estimated speedup, if the report holds one."""
    hits = []
    for r in k.rules:
        try:
            sp = float(r.get("speedup") or "nan")
        except (TypeError, ValueError):
            sp = float("nan")
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
        try:
            sp = float(rule.get("speedup") or "nan")
        except (TypeError, ValueError):
            sp = float("nan")
        est = f", estimated speedup up to {sp:.0f}%" if sp == sp and sp > 0 else ""
        out += f" ncu's own guided analysis (rule {rule['id']}{est}): \"{_first_sentence(rule['message'])}\""
    return out


def _stall_evidence(k: KernelProfile) -> list[Evidence]:
    top = top_stall(k)
    if top is None:
        return []
    reason, _, metric = top
    return [_ev(k, metric, "cycles/issue", f"largest warp stall reason: {STALL_MEANING.get(reason, reason)}")]


def next_look(k: KernelProfile, what: str) -> list[str]:
    """What would settle it, without asking for evidence the report already holds."""
    if any(k.get(m) is not None for m in SOURCE_COUNTERS):
        top = top_stall(k)
        behind = f"the instructions behind the {top[0]} stalls" if top else what
        return [f"{behind}: the report already holds per-instruction samples (SourceCounters); list them with "
                f"`ncu --import {k.source.rsplit('/', 1)[-1]} --page source --csv`"]
    return [f"a full-set ncu report (--set full) with SourceCounters to locate {what}"]


def _floor_words(r: Optional[Roofline]) -> str:
    return f"its floor of {duration(r.stated_floor_ns)}" if r is not None else "its floor"


def sol(k: KernelProfile) -> dict[str, float]:
    return {n: v for n, v in (("sm", _m(k, SM_SOL)), ("memory", _m(k, MEM_SOL)), ("dram", _m(k, DRAM_SOL))) if v is not None}


def detect_no_tensor_cores(k: KernelProfile, r: Optional[Roofline]) -> Optional[Finding]:
    if r is None or r.math_path != "fp32" or not r.flops:
        return None
    tensor = _m(k, TENSOR_ACTIVE)
    if tensor is None:  # "the tensor cores sit idle" needs their activity measured, never assumed 0
        return None
    intensity = r.arithmetic_intensity if r.arithmetic_intensity is not None else float("inf")
    inst = _m(k, INST) or 0.0
    shared_ld = _m(k, SHARED_LD_INST) or 0.0
    tiled = inst > 0 and shared_ld / inst >= GEMM_SHARED_LD_FRACTION
    # Matrix-like: named as a GEMM/matmul, or tiled through shared memory at high arithmetic intensity.
    # (Measured intensity alone can be low for a GEMM with small tiles that re-reads its operands.)
    gemm_like = bool(GEMM_NAME.search(k.name)) or (tiled and intensity >= GEMM_MIN_INTENSITY)
    if tensor >= TENSOR_IDLE_PCT or not gemm_like:
        return None
    tf32 = fp32_tensor_alternative(k)
    frac = r.achieved_flops / r.peak_flops
    fix_gain = f"up to ~{tf32 / r.peak_flops:.0f}x more math throughput" if tf32 else "several-fold"
    return Finding(
        bound="compute", mechanism="no_tensor_cores", kernel=k.name,
        bottleneck=(f"`{KernelName(k.name).display(60)}` does matrix multiplication on the FP32 FMA pipe at {flop_rate(r.achieved_flops)} "
                    f"({frac:.0%} of the FP32 ceiling) while the tensor cores sit idle."),
        evidence=[
            _ev(k, TENSOR_ACTIVE, "%", f"tensor pipes active {tensor:.2f}% of peak: no tensor-core work"),
            Evidence(metric="derived.fp32_flops_per_second", value=r.achieved_flops, unit="flop/s", artifact=k.source,
                     kernel=k.name, meaning=f"{quantity(r.flops, 'flop')} in {duration(r.duration_ns)}, "
                                            f"against an FP32 ceiling of {flop_rate(r.peak_flops)}"),
            _ev(k, FMA_ACTIVE, "%", "FMA pipe busy: the FP32 path is where the time goes"),
        ],
        explanation=(("Its measured DRAM traffic is inflated (small tiles re-read the operands: only "
                      f"{intensity:.0f} FLOP per DRAM byte), so " if r.limiter == "memory" else
                      f"Its arithmetic intensity ({intensity:.0f} FLOP per DRAM byte) puts it right of the ridge; ")
                     + f"{_gap_text(r)} on the FP32 path. But FP32 FMA is "
                     f"the slowest path for matrix products on this GPU: the tensor cores offer "
                     + (f"{flop_rate(tf32)} in TF32 and about twice that in BF16/FP16. " if tf32 else
                        "several times the FP32 rate in TF32, and about twice that in BF16/FP16. ")
                     + f"The true ceiling "
                     f"for this work is the tensor path, so the gap to it is several times the FP32 gap."),
        fix=Fix(change=CATALOG["no_tensor_cores"].fix_text(),
                metric=TENSOR_ACTIVE, direction="increase",
                expected=f"tensor pipe from ~0% to well above 50%; kernel time down by {fix_gain}",
                current_value=tensor),
        confidence=0.85,
    )


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
            _ev(k, "gpu__time_duration.sum", "ns", "measured kernel duration (ncu, replayed in isolation)"),
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


def detect_warp_divergence(k: KernelProfile, r: Optional[Roofline]) -> Optional[Finding]:
    active = _m(k, DIVERGENCE)
    sm = _m(k, SM_SOL) or 0.0
    if active is None or active >= DIVERGENCE_MAX_ACTIVE or sm < COMPUTE_BOUND_SOL:
        return None
    return Finding(
        bound="compute", mechanism="warp_divergence", kernel=k.name, roofline=r,
        bottleneck=(f"`{KernelName(k.name).display(60)}` is instruction-bound with divergent warps: on average only {active:.1f} of 32 "
                    f"threads are active per executed instruction."),
        evidence=[
            _ev(k, DIVERGENCE, "threads/inst", f"{active:.1f} active threads per warp instruction (32 = no divergence)"),
            _ev(k, SM_SOL, "%", "SM throughput: instruction issue is the busy resource"),
            _ev(k, INST, "inst", "warp instructions executed"),
        ],
        explanation=(f"Threads of one warp take different branches, so the warp executes every path in turn with the "
                     f"other lanes masked off: the SM issues ~{32 / active:.0f}x the instructions the work needs and is "
                     f"saturated doing it; {_gap_text(r)}."),
        fix=Fix(change=CATALOG["warp_divergence"].fix_text(),
                metric=DIVERGENCE, direction="increase",
                expected=f"from {active:.1f} toward 32 active threads per instruction; warp instructions and kernel "
                         f"time down by up to ~{32 / active:.0f}x", current_value=active, target_value=32.0),
        confidence=0.85,
    )


def detect_local_memory(k: KernelProfile, r: Optional[Roofline]) -> Optional[Finding]:
    local = (_m(k, LOCAL_LD_SECTORS) or 0.0) + (_m(k, LOCAL_ST_SECTORS) or 0.0)
    glob = (_m(k, LD_SECTORS) or 0.0) + (_m(k, ST_SECTORS) or 0.0)
    if local <= 0 or local / (local + glob) < LOCAL_MIN_SHARE:
        return None
    spills = _m(k, LOCAL_SPILL) or 0.0
    kind = "register spills" if spills > 0 else "a per-thread array the compiler placed in local memory"
    return Finding(
        bound="memory", mechanism="local_memory_spill", kernel=k.name, roofline=r,
        bottleneck=(f"`{KernelName(k.name).display(60)}` is memory-bound on local-memory traffic ({kind}): "
                    f"{local / (local + glob):.0%} of its L1 sectors are local loads and stores."),
        evidence=[
            _ev(k, LOCAL_LD_SECTORS, "sector", "local-memory load sectors"),
            _ev(k, LOCAL_ST_SECTORS, "sector", "local-memory store sectors"),
            _ev(k, "dram__bytes_write.sum", "byte", "DRAM bytes written (local data evicted from L2 lands here)"),
        ],
        explanation=(f"Local memory is per-thread storage in device memory, cached in L1/L2. {kind.capitalize()} turns "
                     f"what should be register accesses into loads and stores through the memory hierarchy, which "
                     f"dominate the kernel's traffic; {_gap_text(r)}."),
        fix=Fix(change=CATALOG["local_memory_spill"].fix_text(),
                metric=LOCAL_LD_SECTORS, direction="decrease", expected="to ~0; kernel time toward " + _floor_words(r),
                current_value=_m(k, LOCAL_LD_SECTORS), target_value=0.0),
        confidence=0.85,
    )


def detect_atomic_contention(k: KernelProfile, r: Optional[Roofline]) -> Optional[Finding]:
    atomics = sum(_m(k, n) or 0.0 for n in ATOMIC_REQUESTS)
    loads = _m(k, LD_REQUESTS) or 0.0
    stores = _m(k, GLOBAL_ST_INST) or 0.0
    peak_sol = max(sol(k).values(), default=0.0)
    if atomics <= 0 or atomics / (atomics + loads + stores) < ATOMIC_MIN_SHARE or peak_sol >= ATOMIC_MAX_SOL:
        return None
    l2 = sum(_m(k, n) or 0.0 for n in L2_ATOMIC_SECTORS)
    return Finding(
        bound="latency", mechanism="atomic_contention", kernel=k.name, roofline=r,
        bottleneck=(f"`{KernelName(k.name).display(60)}` is serialized on contended global atomics: {atomics:,.0f} atomic requests "
                    f"while no unit of the GPU is more than {peak_sol:.0f}% busy."),
        evidence=[
            Evidence(metric="+".join(ATOMIC_REQUESTS), value=atomics, unit="request", artifact=k.source, kernel=k.name,
                     meaning=f"global atomic requests ({atomics / (atomics + loads + stores):.0%} of global memory requests)"),
            Evidence(metric="+".join(L2_ATOMIC_SECTORS), value=l2, unit="sector", artifact=k.source, kernel=k.name,
                     meaning="L2 sectors processed by atomic units"),
            _ev(k, MEM_SOL, "%", "memory throughput: the hardware is idle, the updates wait on each other"),
        ],
        explanation=(f"Many threads update the same few addresses; the L2 atomic unit applies updates to one address "
                     f"one after another, so throughput collapses to the rate of a handful of addresses while every "
                     f"other unit waits; {_gap_text(r)}."),
        fix=Fix(change=CATALOG["atomic_contention"].fix_text(),
                metric="+".join(ATOMIC_REQUESTS), direction="decrease",
                expected="by about the block size (hundreds of times fewer global atomics); kernel time down by 10x or more",
                current_value=atomics),
        confidence=0.85,
    )


def detect_uncoalesced(k: KernelProfile, r: Optional[Roofline]) -> Optional[Finding]:
    ld = _m(k, LD_BYTES_PER_SECTOR)
    st = _m(k, ST_BYTES_PER_SECTOR)
    sectors, requests = _m(k, LD_SECTORS), _m(k, LD_REQUESTS)
    spr = sectors / requests if sectors and requests else None
    missing: list[str] = []
    if ld is None and st is None and spr:
        # Older ncu builds lack the bytes-per-sector metric: estimate it from sectors per request,
        # assuming 4-byte accesses (128 bytes per warp request).
        ld = min(32.0, 128.0 / spr)
        missing.append(f"{LD_BYTES_PER_SECTOR} (estimated from sectors per request assuming 4-byte loads)")
    worst = min((v for v in (ld, st) if v), default=None)
    if worst is None or worst >= COALESCED_MIN_BYTES_PER_SECTOR:
        return None
    metric = LD_BYTES_PER_SECTOR if worst == ld else ST_BYTES_PER_SECTOR
    ev = [Evidence(metric=f"{LD_SECTORS}/{LD_REQUESTS}" if missing else metric,
                   value=round(spr, 2) if missing else worst, unit="sector/request" if missing else "byte/sector",
                   artifact=k.source, kernel=k.name,
                   meaning=(f"{spr:.1f} sectors per warp load request (4 for coalesced 4-byte loads)" if missing
                            else f"only {worst:.0f} of every 32 bytes fetched are used"))]
    if spr is not None and not missing:
        ev.append(Evidence(metric=f"{LD_SECTORS}/{LD_REQUESTS}", value=round(spr, 2), unit="sector/request",
                           artifact=k.source, kernel=k.name,
                           meaning=f"{spr:.1f} sectors per warp load request (4 for coalesced 4-byte loads)"))
    ev.append(_ev(k, L1_SOL if k.get(L1_SOL) is not None else MEM_SOL, "%", "L1 busy serving the scattered sectors"))
    return Finding(
        bound="memory", mechanism="uncoalesced_global", kernel=k.name, roofline=r,
        bottleneck=(f"`{KernelName(k.name).display(60)}` is memory-bound on scattered global accesses: each 32-byte sector it fetches "
                    f"delivers {worst:.0f} useful bytes."),
        evidence=ev,
        explanation=(f"Neighbouring threads of a warp access addresses far apart, so one warp-wide access needs up to "
                     f"32 separate sectors instead of 4; the memory system moves and tracks {32 / worst:.0f}x the "
                     f"useful bytes and the warps stall waiting for them; {_gap_text(r)}."),
        fix=Fix(change=CATALOG["uncoalesced_global"].fix_text(),
                metric=f"{LD_SECTORS}/{LD_REQUESTS}" if missing else metric,
                direction="decrease" if missing else "increase",
                expected=(f"from {spr:.0f} to ~4 sectors per request" if missing else
                          f"from {worst:.0f} to 32 bytes per sector") + "; kernel time toward " + _floor_words(r),
                current_value=spr if missing else worst, target_value=4.0 if missing else 32.0),
        confidence=0.7 if missing else 0.85, missing=missing,
    )


def detect_bank_conflicts(k: KernelProfile, r: Optional[Roofline]) -> Optional[Finding]:
    # n-way = wavefronts / conflict-free wavefronts (wavefronts - conflicts) when ncu counts conflicts: a
    # conflict-free 128-bit access needs 4 wavefronts by design, so wavefronts per instruction alone (or
    # 1 + conflicts per instruction) would overstate it. Without the conflict count, wavefronts/inst is used.
    ways = []
    for wf, inst, conf, label in ((SHARED_LD_WAVEFRONTS, SHARED_LD_INST, BANK_CONFLICTS_LD, "loads"),
                                  (SHARED_ST_WAVEFRONTS, SHARED_ST_INST, BANK_CONFLICTS_ST, "stores")):
        w, i, c = _m(k, wf), _m(k, inst), _m(k, conf)
        if not i or not w:
            continue
        ideal = (w - c) / i if c is not None and w > c else 1.0
        ways.append(((w / i) / ideal, label, wf, inst, w / i, ideal))
    if not ways:
        return None
    nway, label, wf, inst, per_inst, ideal = max(ways)
    pipe_busy = (_m(k, L1_SOL) or 0.0) >= SHARED_PIPE_BUSY_PCT or (_m(k, STALL.format("mio_throttle")) or 0.0) >= MIO_STALL_MIN
    if nway < BANK_CONFLICT_MIN_WAYS or not pipe_busy:
        return None
    return Finding(
        bound="memory", mechanism="shared_bank_conflict", kernel=k.name, roofline=r,
        bottleneck=(f"`{KernelName(k.name).display(60)}` is limited by {nway:.0f}-way shared-memory bank conflicts on its shared "
                    f"{label}."),
        evidence=[
            Evidence(metric=f"{wf}/{inst}", value=round(per_inst, 2), unit="wavefronts/inst", artifact=k.source,
                     kernel=k.name, meaning=(f"each shared {label[:-1]} instruction needs {per_inst:.1f} wavefronts where "
                                             f"{ideal:.0f} would do without conflicts: {nway:.1f}-way")),
            _ev(k, BANK_CONFLICTS_LD, "conflict", "bank conflicts on shared loads"),
            _ev(k, STALL.format("mio_throttle"), "cycles/issue", "warps stalled on the shared-memory (MIO) queue"),
        ],
        explanation=(f"The 32 threads of a warp hit addresses in the same bank (e.g. a column of a [32][32] float "
                     f"tile, 128 bytes apart), so each access is serialized into {nway:.0f} times the conflict-free wavefronts; the "
                     f"shared-memory pipe saturates and warps queue behind it; {_gap_text(r)}."),
        fix=Fix(change=CATALOG["shared_bank_conflict"].fix_text(),
                metric=f"{wf}/{inst}", direction="decrease",
                expected=f"from {per_inst:.0f} to ~{ideal:.0f} wavefront(s) per instruction",
                current_value=per_inst, target_value=ideal),
        confidence=0.85,
    )


def detect_low_parallelism(k: KernelProfile, r: Optional[Roofline]) -> Optional[Finding]:
    grid, sms = _m(k, GRID), _m(k, SM_COUNT)
    if not grid or not sms or grid >= sms:
        return None
    return Finding(
        bound="latency", mechanism="low_parallelism", kernel=k.name, roofline=r,
        bottleneck=(f"`{KernelName(k.name).display(60)}` launches only {grid:.0f} blocks on a {sms:.0f}-SM GPU: "
                    f"{sms - grid:.0f} SMs have nothing to do."),
        evidence=[
            _ev(k, GRID, "block", "blocks in the grid"),
            _ev(k, SM_COUNT, "SM", "multiprocessors on the device"),
            _ev(k, DRAM_SOL if k.get(DRAM_SOL) is not None else MEM_SOL, "%", "memory throughput stays low"),
        ],
        explanation=(f"Each block runs on one SM, so at most {grid / sms:.0%} of the GPU works and the memory system "
                     f"sees too few requests in flight to approach its bandwidth; {_gap_text(r)}."),
        fix=Fix(change=CATALOG["low_parallelism"].fix_text(min_grid=2 * sms),
                metric=GRID, direction="increase", expected=f"from {grid:.0f} to >= {2 * sms:.0f} blocks; kernel time "
                f"down by up to ~{sms / grid:.0f}x, until the roofline is reached", current_value=grid,
                target_value=2 * sms),
        confidence=0.85,
    )


def detect_occupancy_limit(k: KernelProfile, r: Optional[Roofline]) -> Optional[Finding]:
    theo, achieved = _m(k, OCC_THEORETICAL), _m(k, OCC_ACHIEVED)
    peak_sol = max(sol(k).values(), default=0.0)
    if theo is None or theo > OCCUPANCY_MAX_PCT or peak_sol >= LATENCY_MAX_SOL:
        return None
    limits = {label: v for label, m in OCC_LIMITS.items() if (v := _m(k, m)) is not None}
    limiter = min(limits, key=limits.get) if limits else "unknown"
    detail = {
        "shared memory": f"{((_m(k, SMEM_DYNAMIC) or 0) + (_m(k, SMEM_STATIC) or 0)) / 1024:.0f} KB of shared memory per block",
        "registers": f"{_m(k, REGISTERS) or 0:.0f} registers per thread",
    }.get(limiter, limiter)
    return Finding(
        bound="latency", mechanism="occupancy_limit", kernel=k.name, roofline=r,
        bottleneck=(f"`{KernelName(k.name).display(60)}` is latency-bound: {detail} caps occupancy at {theo:.1f}% "
                    f"({limits.get(limiter, 0):.0f} block(s) per SM), too few warps to hide memory latency."),
        evidence=[
            _ev(k, OCC_THEORETICAL, "%", f"theoretical occupancy, limited by {limiter}"),
            _ev(k, OCC_LIMITS.get(limiter, OCC_THEORETICAL), "block", f"blocks per SM allowed by {limiter}"),
            _ev(k, STALL.format("long_scoreboard"), "cycles/issue", "warps waiting on memory loads"),
        ],
        explanation=(f"With {theo:.1f}% of the SM's warp slots usable, each SM has too few independent loads in flight "
                     f"to cover DRAM latency (Little's law), so neither compute nor memory is busy "
                     f"(peak unit {peak_sol:.0f}%); {_gap_text(r)}."),
        fix=Fix(change=CATALOG["occupancy_limit"].fix_text(limiter, limiter=limiter),
                metric=OCC_ACHIEVED, direction="increase",
                expected=f"achieved occupancy from {achieved or 0:.0f}% toward 50%+; DRAM throughput and kernel time improve several-fold",
                current_value=achieved),
        confidence=0.8,
    )


def detect_instruction_bound(k: KernelProfile, r: Optional[Roofline]) -> Optional[Finding]:
    sm = _m(k, SM_SOL)
    if sm is None or sm < COMPUTE_BOUND_SOL:
        return None
    return Finding(
        bound="compute", mechanism="instruction_bound", kernel=k.name, roofline=r,
        bottleneck=f"`{KernelName(k.name).display(60)}` is bound by instruction issue ({sm:.0f}% SM throughput) without reaching its roofline.",
        evidence=[_ev(k, SM_SOL, "%", "SM throughput"), _ev(k, INST, "inst", "warp instructions executed"),
                  _ev(k, FMA_ACTIVE, "%", "FMA pipe activity")],
        explanation=(f"The SMs are busy issuing instructions that are not the useful floating-point work counted by "
                     f"the roofline (index arithmetic, conversions, special functions, control flow); {_gap_text(r)}."
                     + stall_words(k)),
        fix=Fix(change=CATALOG["instruction_bound"].fix_text(),
                metric=INST, direction="decrease", expected="proportional drop in kernel time", current_value=_m(k, INST)),
        confidence=0.5, missing=next_look(k, "the instructions that dominate"),
    )


DETECTORS: list[Callable[[KernelProfile, Optional[Roofline]], Optional[Finding]]] = [
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


def fallback(k: KernelProfile, r: Optional[Roofline]) -> Finding:
    """No detector fired. A throughput the report does not hold is said to be missing, never printed as 0%."""
    s = sol(k)
    sm = s.get("sm")
    mem_metric = MEM_SOL if "memory" in s or "dram" not in s else DRAM_SOL
    mem = s.get("memory", s.get("dram"))
    missing = [m for m in (DURATION_METRIC, SM_SOL, MEM_SOL, LD_BYTES_PER_SECTOR, OCC_THEORETICAL) if k.get(m) is None]
    missing = missing or next_look(k, "the hot instructions")
    if sm is None and mem is None:
        held = [m for m in (DURATION_METRIC, "dram__bytes.sum", "dram__bytes_read.sum") if k.get(m) is not None]
        return Finding(
            bound="inconclusive", mechanism=None, kernel=k.name, roofline=r,
            bottleneck=(f"`{KernelName(k.name).display(60)}`: the report holds no SM or memory throughput (speed of light), so "
                        f"what limits it cannot be named."),
            evidence=[_ev(k, m, k.units.get(m, ""), "measured in the report") for m in held[:2]]
            or [_ev(k, SM_SOL, "%", "SM throughput (not in the report)")],
            explanation=f"None of the mechanism detectors fired; {_gap_text(r)}.",
            fix=None, confidence=0.2, missing=missing)
    if sm is not None and mem is not None:
        bound = "memory" if mem >= MEMORY_BOUND_SOL else ("compute" if sm >= COMPUTE_BOUND_SOL else "latency")
    elif (mem or 0.0) >= MEMORY_BOUND_SOL:
        bound = "memory"
    elif (sm or 0.0) >= COMPUTE_BOUND_SOL:
        bound = "compute"
    else:
        bound = "inconclusive"  # one throughput is low and the other was not measured
    pct = lambda v: f"{v:.0f}%" if v >= 10 else f"{v:.2g}%"  # noqa: E731  (0.14% is not "0%")
    sm_txt = f"SM {pct(sm)}" if sm is not None else "SM not measured"
    mem_txt = f"memory {pct(mem)}" if mem is not None else "memory not measured"
    label = f"{bound}-bound" if bound != "inconclusive" else "of unknown bound"
    return Finding(
        bound=bound if r else "inconclusive", mechanism=None, kernel=k.name, roofline=r,
        bottleneck=(f"`{KernelName(k.name).display(60)}` is {label} ({sm_txt}, {mem_txt} of peak) but no specific "
                    f"mechanism in the report explains its gap."),
        evidence=[_ev(k, SM_SOL, "%", "SM throughput"), _ev(k, mem_metric, "%", "memory throughput")] + _stall_evidence(k),
        explanation=f"None of the mechanism detectors fired; {_gap_text(r)}." + stall_words(k),
        fix=None, confidence=0.3, missing=missing,
    )


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
