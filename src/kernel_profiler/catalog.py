"""The mechanism catalog: one entry per mechanism id, with what the critic checks about a claim of it.

Each entry gives the bound the mechanism implies, the words that claim it in prose, its measurable
signature (a pure function of one kernel's measurements or of the timeline summary: present, absent
or unknown, with the measurement that says so), and the metrics a fix of it should move with their
direction toward the roofline. Detectors (mechanisms.py, timeline.py) decide what limits a program;
the catalog says what must be true of the captures for a claim to stand.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Optional

from .artifacts.tables import KernelProfile
from .answer import Roofline, TimelineSummary
from .analysis.roofline import NEAR_PEAK_GAP

PRESENT, ABSENT, UNKNOWN = "present", "absent", "unknown"


@dataclass
class Measured:
    """What the captures say about the kernel (or program) a claim is about."""

    profile: Optional[KernelProfile] = None
    roofline: Optional[Roofline] = None
    sass_ops: dict[str, int] = field(default_factory=dict)
    spill: tuple[int, int] = (0, 0)  # (stack bytes, spill bytes) from the compiler
    timeline: Optional[TimelineSummary] = None
    name: str = ""
    program: dict[str, float] = field(default_factory=dict)  # program-level values by metric (timeline.pageable_share, ...)

    def m(self, metric: str) -> Optional[float]:
        return self.profile.get(metric) if self.profile is not None else None

    def ops(self, *prefixes: str) -> Optional[int]:
        if not self.sass_ops:
            return None
        return sum(v for op, v in self.sass_ops.items() if op.startswith(prefixes))


Signature = Callable[[Measured], tuple[str, str]]


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
        return (PRESENT if worst < 20.0 else ABSENT), txt
    if spr is not None:
        return (PRESENT if spr > 8.0 else ABSENT), f"{spr:.1f} sectors per global load request"
    return UNKNOWN, "no coalescing counters"


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


GEMM_NAME = re.compile(r"gemm|matmul|xmma|mma|conv|sgemm|dgemm|_mm_|bmm|dot|nvjet|cutlass", re.I)


def sig_no_tensor_cores(x: Measured) -> tuple[str, str]:
    tensor = x.m("sm__pipe_tensor_cycles_active.sum.pct_of_peak_sustained_elapsed")
    mma = x.ops("HMMA", "HGMMA", "IMMA", "QGMMA", "UTCHMMA", "UTCQMMA")
    fma = x.m("sm__pipe_fma_cycles_active.sum.pct_of_peak_sustained_active")
    ffma = x.ops("FFMA")
    if (tensor is not None and tensor >= 5.0) or mma:
        return ABSENT, (f"tensor pipes active {tensor:.1f}% of peak" if tensor is not None else f"{mma} MMA instructions in the SASS")
    r = x.roofline
    gemm_like = bool(GEMM_NAME.search(x.name)) or (r is not None and (r.arithmetic_intensity or 0) >= 8
                                                     and (x.m("smsp__sass_inst_executed_op_shared_ld.sum") or 0) > 0)
    fma_busy = (fma is not None and fma >= 10.0) or bool(ffma)
    if tensor is None and mma is None:
        return UNKNOWN, "no tensor-pipe counter or SASS"
    if gemm_like and fma_busy and (r is None or r.math_path == "fp32"):
        return PRESENT, (f"tensor pipes {tensor or 0:.2f}% active, FMA pipe {fma or 0:.0f}% busy"
                         + (f", {ffma} FFMA in the SASS" if ffma else ""))
    why = "not matrix-like (no GEMM name, no shared-memory tiling at high intensity)" if not gemm_like else \
        f"the FMA pipe is idle ({fma or 0:.0f}%)"
    return ABSENT, f"the kernel is {why}"


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
    return (PRESENT if low and (theo is None or theo <= 50.0) else ABSENT), txt


def sig_low_parallelism(x: Measured) -> tuple[str, str]:
    grid, sms = x.m("launch__grid_size"), x.m("launch__sm_count")
    if not grid or not sms:
        return UNKNOWN, "no launch statistics"
    return (PRESENT if grid < sms else ABSENT), f"grid of {grid:,.0f} blocks on {sms:.0f} SMs"


def sig_atomic(x: Measured) -> tuple[str, str]:
    n = sum(x.m(m) or 0 for m in ("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
                                  "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"))
    have = x.m("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum") is not None
    sass = x.ops("ATOM", "RED")
    if have:
        req = n + (x.m("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum") or 0) + \
            (x.m("smsp__sass_inst_executed_op_global_st.sum") or 0)
        share = n / req if req else 0.0
        return (PRESENT if share >= 0.05 else ABSENT), f"{n:,.0f} global atomic requests ({share:.1%} of global requests)"
    if sass is not None:
        return (PRESENT if sass else ABSENT), f"{sass} ATOM/RED instructions in the SASS"
    return UNKNOWN, "no atomic counters"


def sig_divergence(x: Measured) -> tuple[str, str]:
    a = x.m("smsp__thread_inst_executed_per_inst_executed.ratio")
    if a is None:
        return UNKNOWN, "no divergence counter"
    return (PRESENT if a < 24.0 else ABSENT), f"{a:.1f} of 32 threads active per warp instruction"


def sig_instruction(x: Measured) -> tuple[str, str]:
    sm = x.m("sm__throughput.avg.pct_of_peak_sustained_elapsed")
    if sm is None:
        return UNKNOWN, "no SM throughput"
    return (PRESENT if sm >= 40.0 else ABSENT), f"SM throughput {sm:.0f}% of peak"


def sig_near_peak(x: Measured) -> tuple[str, str]:
    r = x.roofline
    if r is None:
        return UNKNOWN, "no roofline"
    g = r.stated_gap
    return (PRESENT if g <= NEAR_PEAK_GAP * 1.2 else ABSENT), f"duration / roofline floor = {g:.2f}"


def _busy(x: Measured) -> Optional[float]:
    return x.timeline.busy_fraction if x.timeline is not None and x.timeline.window_ns else None


def sig_host_idle(x: Measured) -> tuple[str, str]:
    b = _busy(x)
    if b is None:
        return UNKNOWN, "no timeline"
    return (PRESENT if b <= 0.75 else ABSENT), f"GPU busy {b:.0%} of the steady window"


def _cause(cause: str) -> Signature:
    def sig(x: Measured) -> tuple[str, str]:
        st, txt = sig_host_idle(x)
        if st != PRESENT:
            return st, txt
        s = x.timeline
        ns = s.idle_by_cause.get(cause, 0.0)
        share = ns / s.idle_ns if s.idle_ns else 0.0
        return (PRESENT if share >= 0.25 else ABSENT), f"{txt}; {share:.0%} of the idle time is {cause.replace('_', ' ')}"
    return sig


def sig_transfer(x: Measured) -> tuple[str, str]:
    s = x.timeline
    if s is None or not s.window_ns:
        return UNKNOWN, "no timeline"
    frac = s.copy_ns / s.window_ns
    return (PRESENT if frac >= 0.3 else ABSENT), f"copies take {frac:.0%} of the steady window"


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


def sig_unknown(x: Measured) -> tuple[str, str]:
    return UNKNOWN, ""


@dataclass(frozen=True)
class Entry:
    id: str
    bounds: tuple[str, ...]
    words: re.Pattern
    signature: Signature
    scope: str  # kernel | program
    fix_metrics: tuple[tuple[str, str], ...]  # (regex over the fix's metric or words, direction toward the roofline)


_TIME = (r"gpu__time_duration|kernel (time|duration)|duration|runtime|\btime\b", "decrease")


def _e(id, bounds, words, sig, scope, *fix) -> Entry:
    return Entry(id, tuple(bounds.split()), re.compile(words, re.I), sig, scope, tuple(fix) + (_TIME,))


CATALOG: dict[str, Entry] = {e.id: e for e in [
    _e("near_peak", "near_peak", r"near[- ]peak|\bis done\b|at (its|the) roofline|close to (its|the) (roofline|peak|ceiling)|"
       r"nothing (left )?to gain|leave (it|this kernel) alone|within \d+(\.\d+)?\s?% of (its|the) (roofline|floor|peak)",
       sig_near_peak, "kernel"),
    _e("shared_bank_conflict", "memory latency", r"bank[- ]conflict", sig_bank_conflict, "kernel",
       (r"wavefront|bank_conflict|conflict", "decrease"), (r"mio_throttle|shared.*stall", "decrease")),
    _e("uncoalesced_global", "memory", r"uncoalesced|coalesc|scattered|strided (global )?access|sectors? per request",
       sig_uncoalesced, "kernel", (r"bytes_per_sector|bytes per sector|useful bytes", "increase"),
       (r"sectors?.*requests?|sectors per request|l1tex__t_sectors", "decrease"), (r"dram__bytes", "decrease")),
    _e("local_memory_spill", "memory", r"spill|local[- ]memory", sig_local, "kernel",
       (r"local|spill|LDL|STL", "decrease"), (r"dram__bytes", "decrease")),
    _e("occupancy_limit", "latency", r"occupancy", sig_occupancy, "kernel",
       (r"warps_active|occupancy", "increase"), (r"dram__throughput|dram__bytes.*per_second|bandwidth", "increase"),
       (r"long_scoreboard", "decrease")),
    _e("low_parallelism", "latency", r"too few blocks|parallelism|grid (is )?(too )?small|idle SMs|fewer blocks than|launches only|only \d+ blocks|"
       r"blocks? on an? \d+-SM|SMs (have nothing|sit idle|are idle)|partial wave|less than one wave",
       sig_low_parallelism, "kernel", (r"grid|blocks|waves", "increase"), (r"throughput|bandwidth", "increase")),
    _e("atomic_contention", "latency", r"atomic", sig_atomic, "kernel", (r"atom|_red|atomic", "decrease")),
    _e("warp_divergence", "compute", r"diverg", sig_divergence, "kernel",
       (r"thread_inst_executed_per_inst|active threads|threads per", "increase"), (r"inst_executed|instructions", "decrease")),
    _e("no_tensor_cores", "compute", r"tensor[- ]cores?|FMA pipe instead|\bTF32\b|HMMA|WGMMA|\bMMA\b", sig_no_tensor_cores,
       "kernel", (r"tensor", "increase"), (r"flops?|FLOP/s|throughput", "increase"), (r"fma", "decrease")),
    _e("excess_dram_traffic", "memory", r"fusion|\bfuse|extra pass|round trips? through DRAM|intermediate", sig_unknown,
       "program", (r"dram__bytes|bytes|traffic|passes", "decrease"), (r"kernel_count|launches", "decrease")),
    _e("instruction_bound", "compute", r"instruction[- ](issue|bound)|issue[- ]bound", sig_instruction, "kernel",
       (r"inst_executed|instructions", "decrease")),
    _e("launch_overhead", "host", r"launch(es)? overhead|tiny (kernels|launches)|launch[- ]bound|too many (small )?(kernels|launches)|"
       r"kernel launches", _cause("launch_overhead"), "program",
       (r"busy|utili", "increase"), (r"idle", "decrease"), (r"kernel_count|launches|kernels", "decrease"), (r"step", "decrease")),
    _e("host_sync", "host", r"synchroni[sz]|\.item\(|\bsync\b|blocking cop", _cause("host_sync"), "program",
       (r"idle|sync", "decrease"), (r"busy|utili", "increase"), (r"step", "decrease")),
    _e("host_work", "host", r"host work|CPU[- ](bound|work|side)|python (overhead|work|loop)|host[- ]side (work|computation)|"
       r"host computation|host's own|own computation|host code|data preparation|preprocessing", _cause("host_work"), "program",
       (r"busy|utili", "increase"), (r"idle", "decrease"), (r"step", "decrease")),
    _e("allocator_churn", "host", r"allocat(or|ion)|cudaMalloc|cudaFree", _cause("allocator"), "program",
       (r"idle|alloc", "decrease"), (r"busy|utili", "increase"), (r"step", "decrease")),
    _e("startup_dominated", "host", r"start-?up|one-time|warm-?up|initiali[sz]ation", sig_startup, "program",
       (r"first_step|startup|step", "decrease")),
    _e("pageable_transfer", "transfer", r"pageable", sig_pageable, "program",
       (r"bandwidth|copy_bandwidth", "increase"), (r"copy|transfer|pageable", "decrease")),
    _e("transfer_volume", "transfer", r"transfer volume|copy volume|volume of (the )?(copies|transfers)|already (run )?from pinned|"
       r"transfer[- ]bound|copies dominate", sig_transfer, "program",
       (r"bandwidth", "increase"), (r"copy|transfer|bytes", "decrease"), (r"busy", "increase")),
    _e("rank_imbalance", "comms", r"straggler|imbalance|slow rank", sig_unknown, "program", (r"step|collective|wait", "decrease")),
    _e("comms_wait", "comms", r"collective|all-?reduce|NCCL", sig_unknown, "program", (r"collective|wait|step", "decrease")),
    _e("thermal_throttle", "comms", r"thermal|throttl|clocks? (drop|fell|reduced|lower)", sig_unknown, "program", (r"clock", "increase")),
]}
HOST_MECHANISMS = {i for i, e in CATALOG.items() if set(e.bounds) & {"host", "transfer"}}
KERNEL_BOUNDS = {"memory", "compute", "latency", "near_peak"}


def claimed(text: str) -> list[str]:
    """Mechanism ids a prose bottleneck/mechanism claims, in catalog order."""
    return [i for i, e in CATALOG.items() if e.words.search(text or "")]


def check(mechanism: str, x: Measured) -> tuple[str, str]:
    e = CATALOG.get(mechanism)
    return e.signature(x) if e is not None else (UNKNOWN, "")
