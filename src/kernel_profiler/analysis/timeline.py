"""Timeline triage: is the GPU even busy, and if so, which kernels matter?

Input: one `Timeline` (from an nsys sqlite export or a Kineto trace).
Output: a `TimelineResult` with the summary numbers and the host/transfer/
startup findings (if any), plus the kernels ranked by share of GPU time.

The method, in order:
1. Choose the steady-state window: the step ranges (NVTX "step"-like ranges
   or PyTorch `ProfilerStep#N`) if the program marks them, minus an outlier
   first step (warm-up). Without markers, the repeated part of the GPU work
   itself (the longest run of a repeating kernel/copy sequence), minus an
   outlier first repetition; with no repetition, first-to-last GPU operation.
   Everything between the capture start and the window is start-up, reported
   apart; GPU-side work outside the window is one-time work, classified by
   its evidence (JIT, library initialisation, module loading, allocator
   calls, one-time copies) and reported apart with its cost.
2. GPU-busy = union (not sum) of kernel, copy and memset intervals in the window.
3. Copies dominate -> transfer-bound; GPU idle a large part of the window ->
   host-bound, with each idle gap attributed to its host cause; otherwise
   kernel-bound, with kernels ranked by their share of busy time.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional


import numpy as np
import pandas as pd

from . import intervals as iv
from ..artifacts.api_names import is_blocking_memcpy
from ..artifacts.tables import Timeline
from ..answer import Evidence, Finding, Fix, KernelRow, TimelineSummary
from ..display import bandwidth, duration, size

# --- Thresholds: each is named, and its reason is in the comment above it ---
# Transfer-bound when copies occupy at least this fraction of the steady window:
# then no kernel change can buy more than 2x; the copies come first.
TRANSFER_BOUND_FRACTION = 0.5
# Host-bound when the GPU idles at least this fraction of the steady window.
# At 40% idle, removing the idle time alone is a 1.67x speed-up, more than most
# single-kernel fixes give; below it, the kernels are usually the bigger lever.
HOST_BOUND_IDLE_FRACTION = 0.4
# An idle gap at least this long with few launches in it is host work, not launch
# overhead: ~10x the host cost of one eager PyTorch op (5-10 us) and ~30x one
# CUDA C++ launch (2-4 us), so launch cost alone cannot fill it.
HOST_WORK_GAP_NS = 100_000.0
# ...unless the host issued launches through it at least this densely (one per 20 us).
DISPATCH_LAUNCHES_PER_NS = 1 / 20_000.0
# A sync call counts as draining the queue if it was in progress when the GPU went
# idle; tolerance for host/GPU clock alignment.
SYNC_TOLERANCE_NS = 2_000.0
# A first step this many times slower than the median of the others is warm-up.
WARMUP_OUTLIER_FACTOR = 3.0
# Start-up dominated when one-time work (warm-up steps) takes more time than all
# steady-state steps together.
STARTUP_DOMINANCE = 1.0
# ...and the one-time work is itself material (shorter one-time costs are measurement noise).
STARTUP_MIN_NS = 50e6
# Pageable copies count as the mechanism when they carry at least this share of bytes.
PAGEABLE_BYTES_FRACTION = 0.5
# Kernels ranked in the summary.
TOP_KERNELS = 10

# --- Steady state without step markers ---
# The repeated part of the GPU work is the steady state when it holds at least this share of all kernel time
# (else it is a detail of a program whose work does not repeat).
REPEATED_KERNEL_SHARE = 0.5
# Candidate periods tried: the most frequent spacings between two launches of the same kernel.
MAX_PERIOD_CANDIDATES = 64
# One-time work shorter than this, and than ONETIME_REPORT_FRACTION of the steady window, is not reported.
ONETIME_REPORT_MIN_NS = 5e6
ONETIME_REPORT_FRACTION = 0.1
# Host time before a kernel's first launch spent in no CUDA call, from this long: compilation (JIT) when the
# kernel was generated at run time (a name without a C++ signature, or a module loaded from memory).
JIT_MIN_NS = 50e6
# A launch call this long is a first launch paying lazy module loading (the load runs inside the call).
LAZY_LOAD_LAUNCH_NS = 1e6
# An idle gap at least this much covered by one kind of call is attributed to that call.
GAP_COVERED_FRACTION = 0.5
MODULE_LOAD = re.compile(r"^cu(ModuleLoad|LibraryLoad)")
# Kernels that come from a vendor library (their first launch follows the library's initialisation).
LIBRARY_KERNEL = re.compile(r"nvjet|xmma|cutlass|cublas|cudnn|gemv|gemmk|gemm_|_gemm|sm\d\d_|nccl|cusparse|cufft",
                            re.IGNORECASE)
ONETIME_CLASSES = ("jit", "library_init", "module_loading", "allocator", "upload", "download", "sync", "warm_up", "host")

STEP_NAME = re.compile(r"^(ProfilerStep#\d+|step|train_step|iteration|iter)(\b|_|#|\d|$)", re.IGNORECASE)


@dataclass
class TimelineResult:
    summary: TimelineSummary
    verdict: str  # startup | transfer | host | kernel | empty
    findings: list[Finding] = field(default_factory=list)
    kernels: pd.DataFrame = field(default_factory=pd.DataFrame)  # per-name ranking
    step_ns: list[float] = field(default_factory=list)
    window: tuple[float, float] = (0.0, 0.0)
    onetime: Optional[Finding] = None  # one-time work reported apart (also found), None when negligible


def _gpu_ops(tl: Timeline) -> tuple[np.ndarray, np.ndarray]:
    parts = [df[["start_ns", "end_ns"]].to_numpy(dtype=np.float64) for df in (tl.kernels, tl.copies, tl.sets) if len(df)]
    if not parts:
        return np.empty(0), np.empty(0)
    a = np.concatenate(parts)
    return a[:, 0], a[:, 1]


def steps(tl: Timeline) -> pd.DataFrame:
    """The step ranges the program marked, if any (largest group of step-like names, >= 2)."""
    r = tl.ranges
    if len(r) == 0:
        return r
    names = r["name"].fillna("").astype(str)
    is_step = {n: bool(STEP_NAME.match(n)) for n in names.unique()}
    match = names.map(is_step)
    cand = r[match.to_numpy(dtype=bool)].copy()
    if len(cand) < 2:
        return cand.iloc[0:0]
    cand["group"] = cand["name"].astype(str).str.replace(r"#\d+$", "#", regex=True).str.lower()
    group = cand["group"].value_counts().index[0]
    out = cand[cand["group"] == group].sort_values("start_ns")
    # Nested duplicates (e.g. NVTX and annotation both present) -> keep outermost per start.
    return out.drop_duplicates("start_ns")


def _op_step(tl: Timeline, st: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start, end, step index) of every GPU op, the step being the range holding its launch call.

    Joins GPU ops to the API call that issued them on (pid, correlation); ops
    whose call is in no step get -1. Empty arrays when the format has no API calls.
    """
    api = tl.api
    if len(api) == 0:
        return np.empty(0), np.empty(0), np.empty(0, dtype=np.int64)
    ops = pd.concat([df[["start_ns", "end_ns", "pid", "correlation"]] for df in (tl.kernels, tl.copies, tl.sets)
                     if len(df)], ignore_index=True)
    calls = api[api["category"].isin(["launch", "memcpy", "memset"])][["pid", "correlation", "start_ns"]]
    calls = calls.dropna(subset=["correlation"]).drop_duplicates(["pid", "correlation"])
    ops = ops.dropna(subset=["correlation"])
    m = ops.merge(calls.rename(columns={"start_ns": "call_ns"}), on=["pid", "correlation"], how="inner")
    s0 = st["start_ns"].to_numpy(np.float64)
    s1 = st["end_ns"].to_numpy(np.float64)
    call = m["call_ns"].to_numpy(np.float64)
    idx = np.searchsorted(s0, call, side="right") - 1
    ok = (idx >= 0) & (call <= s1[np.clip(idx, 0, None)])
    idx = np.where(ok, idx, -1)
    return m["start_ns"].to_numpy(np.float64), m["end_ns"].to_numpy(np.float64), idx


def _window(tl: Timeline, op_s: np.ndarray, op_e: np.ndarray
            ) -> tuple[float, float, str, list[float], int, Optional["Repeat"], bool]:
    """Steady-state window, step durations (critical-path time each step added), warm-up steps dropped."""
    st = steps(tl)
    if len(st) >= 2:
        h0 = st["start_ns"].to_numpy(np.float64)
        h1 = st["end_ns"].to_numpy(np.float64)
        s, e, idx = _op_step(tl, st)
        gpu_end = h1.copy()
        if len(idx) and (idx >= 0).any():
            ends = pd.Series(e[idx >= 0]).groupby(idx[idx >= 0]).max()
            gpu_end[ends.index.to_numpy()] = np.maximum(gpu_end[ends.index.to_numpy()], ends.to_numpy())
        else:  # no API join possible: GPU ops that started before the step's host range ended
            for i in range(len(h1)):
                sel = (op_s >= h0[i]) & (op_s <= h1[i])
                if sel.any():
                    gpu_end[i] = max(gpu_end[i], float(op_e[sel].max()))
        done = np.maximum.accumulate(gpu_end)
        prev = np.concatenate([[h0[0]], done[:-1]])
        durations = done - np.maximum(h0, prev)
        warm = 0
        rest = durations[1:]
        if len(rest) and durations[0] > WARMUP_OUTLIER_FACTOR * float(np.median(rest)):
            warm = 1
        lo = float(h0[warm])
        hi = float(done[-1])
        src = f"{len(st)} step ranges ({st['name'].iloc[0]}...)" + (", first step excluded as warm-up" if warm else "")
        return lo, hi, src, [float(d) for d in durations], warm, None, True
    rep = repeated_part(tl)
    if rep is not None:
        return rep.lo, rep.hi, rep.describe(), [], 0, rep, False
    return (float(op_s.min()), float(op_e.max()), "first to last GPU operation (no step ranges, no repeated GPU work)",
            [], 0, None, False)


def _ops(tl: Timeline) -> pd.DataFrame:
    """Every GPU operation in start order: start_ns, end_ns, kind (kernel|copy|set), token (what repeats)."""
    parts = []
    if len(tl.kernels):
        k = tl.kernels
        parts.append(pd.DataFrame({"start_ns": k["start_ns"].to_numpy(np.float64), "end_ns": k["end_ns"].to_numpy(np.float64),
                                   "kind": "kernel", "token": k["name"].astype(str).to_numpy()}))
    if len(tl.copies):
        c = tl.copies
        parts.append(pd.DataFrame({"start_ns": c["start_ns"].to_numpy(np.float64), "end_ns": c["end_ns"].to_numpy(np.float64),
                                   "kind": "copy", "token": ("copy:" + c["kind"].astype(str)).to_numpy()}))
    if len(tl.sets):
        m = tl.sets
        parts.append(pd.DataFrame({"start_ns": m["start_ns"].to_numpy(np.float64), "end_ns": m["end_ns"].to_numpy(np.float64),
                                   "kind": "set", "token": "memset"}))
    if not parts:
        return pd.DataFrame(columns=["start_ns", "end_ns", "kind", "token"])
    return pd.concat(parts, ignore_index=True).sort_values("start_ns", kind="stable", ignore_index=True)


@dataclass
class Repeat:
    """The repeated part of a program's GPU work, found without step markers."""

    period: int  # GPU operations per repetition
    reps: int  # full repetitions in the stretch
    first_op: int  # index (in start order) of the stretch's first operation
    n_ops: int  # operations in the stretch
    warm: bool  # the first repetition was an outlier (one-time work) and is left out
    lo: float
    hi: float
    rep_ns_median: float

    def describe(self) -> str:
        what = (f"{self.reps} repetitions of a {self.period}-operation GPU sequence" if self.period > 1
                else f"{self.reps} back-to-back repetitions of one GPU operation")
        return (f"the repeated part of the GPU work, found without step markers: {what}"
                + (", the first left out as warm-up" if self.warm else ""))


def _longest_repeat(codes: np.ndarray) -> Optional[tuple[int, int, int]]:
    """(ops covered, period, first index) of the longest run where codes[i] == codes[i + period], >= 2 repeats."""
    n = len(codes)
    if n < 2:
        return None
    idx = np.arange(n)
    order = np.lexsort((idx, codes))
    sc, si = codes[order], idx[order]
    same = sc[1:] == sc[:-1]
    spacing = (si[1:] - si[:-1])[same]
    if not len(spacing):
        return None
    vals, cnt = np.unique(spacing, return_counts=True)
    cands = vals[np.argsort(-cnt, kind="stable")][:MAX_PERIOD_CANDIDATES]
    best: Optional[tuple[int, int, int]] = None
    for p in sorted(int(c) for c in cands if 0 < c <= n // 2):
        eq = np.concatenate([[0], (codes[:-p] == codes[p:]).astype(np.int8), [0]])
        d = np.diff(eq)
        starts, ends = np.flatnonzero(d == 1), np.flatnonzero(d == -1)
        if not len(starts):
            continue
        j = int(np.argmax(ends - starts))
        run = int(ends[j] - starts[j])
        if run < p:  # fewer than two repetitions
            continue
        if best is None or run + p > best[0]:
            best = (run + p, p, int(starts[j]))
    return best


def repeated_part(tl: Timeline) -> Optional[Repeat]:
    """The steady state of a program that marks no steps: the longest repeating run of its GPU operations.

    None when nothing repeats or the repeated run holds under REPEATED_KERNEL_SHARE of the kernel time. The
    first repetition is left out when it takes WARMUP_OUTLIER_FACTOR times the median of the others (it paid
    one-time work: module loading, allocation, library initialisation)."""
    ops = _ops(tl)
    found = _longest_repeat(pd.factorize(ops["token"])[0]) if len(ops) else None
    if found is None:
        return None
    n_ops, p, i0 = found
    part = ops.iloc[i0:i0 + n_ops]
    dur = (ops["end_ns"] - ops["start_ns"]).to_numpy()
    is_k = (ops["kind"] == "kernel").to_numpy()
    k_all = float(dur[is_k].sum())
    k_part = float(dur[i0:i0 + n_ops][is_k[i0:i0 + n_ops]].sum())
    if k_all <= 0 or k_part < REPEATED_KERNEL_SHARE * k_all:
        return None
    reps = n_ops // p
    starts = part["start_ns"].to_numpy()[::p][:reps]
    end = float(part["end_ns"].max())
    rep_ns = np.diff(np.concatenate([starts, [end]]))
    warm = bool(reps >= 2 and rep_ns[0] > WARMUP_OUTLIER_FACTOR * float(np.median(rep_ns[1:])))
    kept = rep_ns[1:] if warm else rep_ns
    return Repeat(period=p, reps=reps, first_op=i0, n_ops=n_ops, warm=warm,
                  lo=float(starts[1] if warm else starts[0]), hi=end, rep_ns_median=float(np.median(kept)))


def _calls(api: pd.DataFrame, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return api["start_ns"].to_numpy(np.float64)[mask], api["end_ns"].to_numpy(np.float64)[mask]


def module_load_calls(api: pd.DataFrame) -> np.ndarray:
    """Calls that load kernel modules: cuModuleLoad*/cuLibraryLoad*, and launch calls long enough to hold a lazy
    load (a kernel's first launch under CUDA_MODULE_LOADING=LAZY; the PyTorch profiler shows only the launch)."""
    if len(api) == 0:
        return np.zeros(0, dtype=bool)
    names = api["name"].fillna("").astype(str)
    is_load = names.map({n: bool(MODULE_LOAD.match(n)) for n in names.unique()}).to_numpy(dtype=bool)
    long_launch = (api["category"].to_numpy() == "launch") & \
        ((api["end_ns"] - api["start_ns"]).to_numpy(np.float64) >= LAZY_LOAD_LAUNCH_NS)
    return is_load | long_launch


def _generated(name: str) -> bool:
    """A kernel compiled at run time (Triton, torch.compile, NVRTC): no C++ signature in its name."""
    return "(" not in name and not name.startswith("void ") and "<" not in name


def onetime_work(tl: Timeline, lo: float, hi: float) -> dict[str, float]:
    """ns of one-time work outside the steady window [lo, hi] (from the first to the last GPU operation), by class.

    GPU busy time there: copies (upload/download) and kernels (warm_up). Idle time there, gap by gap: module
    loading, allocator and synchronizing calls by how much of the gap they cover; the rest is host time spent in
    no CUDA call: JIT when the next kernel is generated at run time and the rest is long, library_init when the
    next kernel is a library's, else host (the program's own set-up)."""
    ops = _ops(tl)
    if not len(ops):
        return {}
    first, last = float(ops["start_ns"].min()), float(ops["end_ns"].max())
    out = {c: 0.0 for c in ONETIME_CLASSES}
    regions = [(first, lo), (hi, last)]
    api = tl.api
    mods = _calls(api, module_load_calls(api)) if len(api) else (np.empty(0), np.empty(0))
    allocs = _calls(api, (api["category"] == "malloc").to_numpy()) if len(api) else (np.empty(0), np.empty(0))
    syncs = _calls(api, blocking_calls(api)) if len(api) else (np.empty(0), np.empty(0))
    # Traces without driver calls (the PyTorch profiler) cannot show module loads: there a gap before a
    # kernel's first launch that no other call explains is taken for its lazy load.
    sees_loads = bool(len(api)) and bool(api["name"].fillna("").astype(str).str.match(r"^cu[A-Z]").any() and
                                         api["name"].fillna("").astype(str).str.match(MODULE_LOAD).any())
    for a, b in regions:
        if b <= a:
            continue
        inside = ops[(ops["end_ns"] > a) & (ops["start_ns"] < b)]
        for kind, grp in inside.groupby("kind"):
            s_, e_ = iv.union(*iv.clip(grp["start_ns"].to_numpy(np.float64), grp["end_ns"].to_numpy(np.float64), a, b))
            t = iv.total(s_, e_)
            if kind == "copy":
                up = grp[grp["token"] == "copy:HtoD"]
                down = grp[grp["token"] == "copy:DtoH"]
                tu = iv.total(*iv.union(*iv.clip(up["start_ns"].to_numpy(np.float64), up["end_ns"].to_numpy(np.float64), a, b)))
                td = iv.total(*iv.union(*iv.clip(down["start_ns"].to_numpy(np.float64), down["end_ns"].to_numpy(np.float64), a, b)))
                out["upload"] += tu
                out["download"] += td
                out["warm_up"] += max(t - tu - td, 0.0)
            else:
                out["warm_up"] += t
        seg_s, seg_e = iv.union(*iv.clip(inside["start_ns"].to_numpy(np.float64), inside["end_ns"].to_numpy(np.float64), a, b))
        g0, g1 = iv.gaps(seg_s, seg_e, a, b)
        if not len(g0):
            continue
        length = g1 - g0
        mod = np.minimum(iv.overlap(*mods, g0, g1), length)
        alloc = np.minimum(iv.overlap(*allocs, g0, g1), length - mod)
        sync = np.minimum(iv.overlap(*syncs, g0, g1), length - mod - alloc)
        rest = length - mod - alloc - sync
        out["module_loading"] += float(mod.sum())
        out["allocator"] += float(alloc.sum())
        out["sync"] += float(sync.sum())
        kern = ops[ops["kind"] == "kernel"]
        kstart = kern["start_ns"].to_numpy(np.float64)
        knames = kern["token"].to_numpy()
        for g, r in zip(range(len(g0)), rest):
            if r <= 0:
                continue
            j = np.searchsorted(kstart, g1[g], side="left")  # the next kernel after the gap
            name = str(knames[j]) if j < len(knames) else ""
            first_launch = bool(name) and not (knames[:j] == name).any()
            if first_launch and LIBRARY_KERNEL.search(name):
                out["library_init"] += float(r)
            elif first_launch and r >= JIT_MIN_NS and _generated(name):
                out["jit"] += float(r)
            elif first_launch and not sees_loads:  # no driver calls in the trace: a first launch's lazy load
                out["module_loading"] += float(r)
            else:
                out["host"] += float(r)
    return {k: v for k, v in out.items() if v > 0}


def _idle_causes(tl: Timeline, g0: np.ndarray, g1: np.ndarray) -> dict[str, float]:
    """ns of idle GPU time per cause. A gap mostly covered by module loading or by allocator calls is theirs; else
    a gap that began while a synchronizing call was in progress is host_sync; a long gap with few launches is
    host_work (the host's own computation); the rest is launch overhead."""
    api = tl.api
    length = g1 - g0
    if len(api) == 0 or len(g0) == 0:
        return {"unattributed": float(length.sum())} if len(g0) else {}
    cat = api["category"].to_numpy()
    blocking = blocking_calls(api)
    s = api["start_ns"].to_numpy(dtype=np.float64)
    e = api["end_ns"].to_numpy(dtype=np.float64)
    mod = iv.overlap(*_calls(api, module_load_calls(api)), g0, g1) >= GAP_COVERED_FRACTION * length
    alloc = ~mod & (iv.overlap(*_calls(api, cat == "malloc"), g0, g1) >= GAP_COVERED_FRACTION * length)
    other = ~mod & ~alloc
    drained = iv.in_progress(s[blocking], e[blocking], g0, SYNC_TOLERANCE_NS)
    launches = iv.count_in(s[cat == "launch"], g0, g1)
    long_quiet = (length >= HOST_WORK_GAP_NS) & (launches < length * DISPATCH_LAUNCHES_PER_NS)
    out = {
        "host_sync": float(length[other & drained].sum()),
        "host_work": float(length[other & ~drained & long_quiet].sum()),
        "launch_overhead": float(length[other & ~drained & ~long_quiet].sum()),
    }
    if mod.any():
        out["module_loading"] = float(length[mod].sum())
    if alloc.any():
        out["allocator"] = float(length[alloc].sum())
    return out


def rank_kernels(tl: Timeline, lo: float, hi: float) -> pd.DataFrame:
    k = tl.kernels
    if len(k) == 0:
        return pd.DataFrame(columns=["name", "count", "total_ns", "median_ns", "share"])
    st, en = k["start_ns"].to_numpy(np.float64), k["end_ns"].to_numpy(np.float64)
    inside = (en > lo) & (st < hi)  # zero-length kernels (Kineto `dur: 0`) inside count, with 0 ns
    kk = k[inside].assign(dur=np.clip(en[inside], lo, hi) - np.clip(st[inside], lo, hi))
    g = kk.groupby("name", sort=False)["dur"].agg(["count", "sum", "median"]).reset_index()
    g.columns = ["name", "count", "total_ns", "median_ns"]
    total = g["total_ns"].sum()
    g["share"] = g["total_ns"] / total if total > 0 else 0.0
    return g.sort_values("total_ns", ascending=False, ignore_index=True)


def triage(tl: Timeline) -> TimelineResult:
    op_s, op_e = _gpu_ops(tl)
    src = tl.source
    if len(op_s) == 0:
        summary = TimelineSummary(source=src, capture_ns=0, startup_ns=0, window_ns=0, window_source="empty",
                                  busy_ns=0, busy_fraction=0, kernel_ns=0, copy_ns=0, idle_ns=0, kernel_count=0)
        return TimelineResult(summary=summary, verdict="empty")
    lo, hi, wsrc, step_ns, warm, rep, marked = _window(tl, op_s, op_e)
    window = max(hi - lo, 1.0)
    seg_s, seg_e = iv.union(*iv.clip(op_s, op_e, lo, hi))
    busy = iv.total(seg_s, seg_e)
    kern = tl.kernels
    k_s, k_e = iv.union(*iv.clip(kern["start_ns"].to_numpy(np.float64), kern["end_ns"].to_numpy(np.float64), lo, hi)) \
        if len(kern) else (np.empty(0), np.empty(0))
    cp = tl.copies
    c_s, c_e = iv.union(*iv.clip(cp["start_ns"].to_numpy(np.float64), cp["end_ns"].to_numpy(np.float64), lo, hi)) \
        if len(cp) else (np.empty(0), np.empty(0))
    kernel_ns, copy_ns = iv.total(k_s, k_e), iv.total(c_s, c_e)
    g0, g1 = iv.gaps(seg_s, seg_e, lo, hi)
    idle = window - busy
    causes = _idle_causes(tl, g0, g1)
    # One-time work (programs without step markers): outside the repeated part, and module loading inside it.
    onetime: dict[str, float] = {}
    only_onetime = False
    if not marked:
        kn = kern["name"].astype(str) if len(kern) else pd.Series(dtype=str)
        only_onetime = (rep is None and len(kn) > 0 and kn.nunique() == len(kn)
                        and idle >= HOST_BOUND_IDLE_FRACTION * window)
        onetime = onetime_work(tl, float(op_e.max()), float(op_e.max())) if only_onetime else onetime_work(tl, lo, hi)
        only_onetime = only_onetime and bool(onetime)
        if causes.get("module_loading") and not only_onetime:
            onetime["module_loading"] = onetime.get("module_loading", 0.0) + causes["module_loading"]
    stall_ns = 0.0 if only_onetime else causes.get("module_loading", 0.0)  # one-time stalls inside the window
    start = tl.capture_start_ns if tl.capture_start_ns is not None else float(op_s.min())
    startup = max(float(op_s.min()) - start, 0.0)
    capture = (tl.capture_end_ns if tl.capture_end_ns is not None else float(op_e.max())) - start

    in_win = (cp["start_ns"] < hi) & (cp["end_ns"] > lo) if len(cp) else pd.Series(dtype=bool)
    cpw = cp[in_win] if len(cp) else cp
    copy_bytes = {str(k): float(v) for k, v in cpw.groupby("kind")["bytes"].sum().items()} if len(cpw) else {}
    ranked = rank_kernels(tl, lo, hi)
    steady_steps = step_ns[warm:] if step_ns else []
    summary = TimelineSummary(
        source=src, capture_ns=capture, startup_ns=startup, window_ns=window, window_source=wsrc, busy_ns=busy,
        busy_fraction=busy / window, kernel_ns=kernel_ns, copy_ns=copy_ns, idle_ns=idle, idle_by_cause=causes,
        kernel_count=int(((kern["start_ns"] < hi) & (kern["end_ns"] > lo)).sum()) if len(kern) else 0,
        copy_bytes=copy_bytes, steps=len(step_ns) or None,
        step_ns_median=float(np.median(steady_steps)) if steady_steps else None,
        top_kernels=[KernelRow(name=str(r.name), count=int(r.count), total_ns=float(r.total_ns),
                               median_ns=float(r.median_ns), share=float(r.share))
                     for r in ranked.head(TOP_KERNELS).itertuples()],
        onetime_ns=float(sum(onetime.values())), onetime_by_class=onetime, repeats=rep.reps if rep else None,
    )
    res = TimelineResult(summary=summary, verdict="kernel", kernels=ranked, step_ns=step_ns, window=(lo, hi))
    if onetime and (only_onetime or summary.onetime_ns >= max(ONETIME_REPORT_MIN_NS, ONETIME_REPORT_FRACTION * window)):
        res.onetime = _onetime_finding(src, summary, rep, only_onetime)
    if only_onetime:
        res.verdict = "startup"
        res.findings.append(res.onetime)
        return res

    ev_busy = Evidence(metric="timeline.gpu_busy_fraction", value=round(busy / window, 4), unit="ratio", artifact=src,
                       meaning=f"GPU busy {duration(busy)} of a {duration(window)} steady window ({wsrc})")
    # 1. Start-up / warm-up dominated.
    if step_ns and warm and step_ns[0] > STARTUP_DOMINANCE * sum(step_ns[1:]) and step_ns[0] >= STARTUP_MIN_NS:
        res.verdict = "startup"
        res.findings.append(_startup_finding(src, step_ns, summary))
    # 2. Transfer-bound.
    if copy_ns >= TRANSFER_BOUND_FRACTION * window:
        if res.verdict == "kernel":
            res.verdict = "transfer"
        res.findings.append(_transfer_finding(src, cpw, copy_ns, window, ev_busy))
    # 3. Host-bound (one-time stalls inside the window, e.g. a kernel's lazy module load, do not count).
    elif idle - stall_ns >= HOST_BOUND_IDLE_FRACTION * window:
        if res.verdict == "kernel":
            res.verdict = "host"
        res.findings.append(_host_finding(src, tl, causes, idle, window, ev_busy, summary))
    return res


ONETIME_LABEL = {
    "jit": "JIT compilation before a kernel's first launch",
    "library_init": "library initialisation (handles, workspaces, kernel modules) before its first kernel",
    "module_loading": "module loading (cuModuleLoad/cuLibraryLoad, lazy loading at a kernel's first launch)",
    "allocator": "allocator calls (cudaMalloc/cudaFree)",
    "upload": "one-time host-to-device copies",
    "download": "one-time device-to-host copies",
    "sync": "waiting in synchronizing calls",
    "warm_up": "GPU work that runs once (initialisation kernels, the first repetition)",
    "host": "host set-up between GPU operations (no CUDA call)",
}
ONETIME_ADVICE = {
    "jit": ("cache the compiled kernels across runs (keep TRITON_CACHE_DIR / the torch.compile cache on persistent "
            "storage, or compile ahead of time) and make one warm-up call before timing"),
    "library_init": ("initialise the library once per process (create the handle and run one call as warm-up before "
                     "timing); a long-lived process pays it once"),
    "module_loading": ("run one warm-up iteration before timing (CUDA_MODULE_LOADING=EAGER moves the loading to "
                       "start-up instead); it is paid once per process"),
    "allocator": "allocate once and reuse the buffers (or a caching/stream-ordered allocator such as cudaMallocAsync)",
    "upload": ("exclude the one-time upload from timing; if it recurs (per request or epoch), pin the host buffer "
               "(cudaMallocHost / pin_memory) and overlap it with compute"),
    "download": "exclude it from timing; if it recurs, copy into pinned memory asynchronously",
    "sync": "exclude the set-up from timing",
    "warm_up": "time only the repeated part, after a warm-up",
    "host": "time only the repeated part, after the set-up",
}


def _onetime_finding(src: str, summary: TimelineSummary, rep: Optional["Repeat"], only: bool) -> Finding:
    by = summary.onetime_by_class
    total = summary.onetime_ns
    ranked = sorted(by.items(), key=lambda kv: -kv[1])
    top, top_ns = ranked[0]
    parts = ", ".join(f"{k.replace('_', ' ')} {v / 1e6:.1f} ms" for k, v in ranked[:4])
    ev = [Evidence(metric="timeline.onetime_ns", value=total, unit="ns", artifact=src,
                   meaning=f"one-time work outside the steady state: {parts}"),
          Evidence(metric=f"timeline.onetime_{top}_ns", value=top_ns, unit="ns", artifact=src,
                   meaning=f"the largest part: {ONETIME_LABEL[top]}")]
    if only:
        bottleneck = (f"The program is only one-time work: no GPU work repeats, and {total / 1e6:.1f} ms of its GPU "
                      f"span goes to {ONETIME_LABEL[top]} and other one-time costs, not to a steady state.")
    else:
        ev.append(Evidence(metric="timeline.steady_window_ns", value=summary.window_ns, unit="ns", artifact=src,
                           meaning=f"the steady state analyzed apart: {summary.window_source}"))
        bottleneck = (f"One-time work takes {total / 1e6:.1f} ms outside the steady state "
                      f"({summary.window_ns / 1e6:.1f} ms), most of it {ONETIME_LABEL[top]}.")
    if summary.startup_ns:
        ev.append(Evidence(metric="timeline.startup_ns", value=summary.startup_ns, unit="ns", artifact=src,
                           meaning="process start to first GPU work (imports, CUDA context), not counted above"))
    return Finding(
        bound="host", mechanism="startup_dominated", share=total / max(total + summary.window_ns, 1.0),
        bottleneck=bottleneck, evidence=ev,
        explanation=("This is paid once per process, while the GPU idles or does set-up work; it is real wall time "
                     "but says nothing about the speed of the repeated work, which is judged on its own window."),
        fix=Fix(change=f"Keep it out of measurements and pay it once: {ONETIME_ADVICE[top]}.",
                metric=f"timeline.onetime_{top}_ns", direction="decrease",
                expected=f"up to {top_ns / 1e6:.1f} ms less wall time per process run", current_value=top_ns),
        confidence=0.8 if rep is not None or only else 0.6,
    )


def _startup_finding(src: str, step_ns: list[float], summary: TimelineSummary) -> Finding:
    first, rest = step_ns[0], step_ns[1:]
    med = float(np.median(rest))
    return Finding(
        bound="host", mechanism="startup_dominated", share=first / (first + sum(rest)),
        bottleneck=(f"The measured run is dominated by one-time start-up work: the first step takes "
                    f"{duration(first)} against a {duration(med)} median for the other {len(rest)} steps."),
        evidence=[
            Evidence(metric="timeline.first_step_ns", value=first, unit="ns", artifact=src,
                     meaning="duration of the first marked step (lazy initialisation, allocation, uploads)"),
            Evidence(metric="timeline.steady_step_median_ns", value=med, unit="ns", artifact=src,
                     meaning=f"median of the remaining {len(rest)} steps"),
            Evidence(metric="timeline.startup_ns", value=summary.startup_ns, unit="ns", artifact=src,
                     meaning="process start to first GPU work (imports, CUDA context), reported apart"),
        ],
        explanation=("The first step pays for work done once (building and uploading weights, library handles, "
                     "allocator growth, compilation); with so few steady steps it outweighs everything the "
                     "kernels do, so the number measures start-up, not the model."),
        fix=Fix(change="Build, upload and warm up before timing; time many steady-state steps and report their median.",
                metric="timeline.first_step_ns / steady step median", direction="decrease",
                expected=f"the measured time drops toward {duration(med)} per step once warm-up is excluded",
                current_value=first, target_value=med),
        confidence=0.85,
    )


def copy_bandwidth(copies: pd.DataFrame) -> tuple[float, float]:
    """(bytes, byte/s) of a set of copies: their bytes over their own summed durations (0 when empty)."""
    if len(copies) == 0:
        return 0.0, 0.0
    dur = float((copies["end_ns"] - copies["start_ns"]).sum())
    total = float(copies["bytes"].sum())
    return total, (total / (dur / 1e9) if dur > 0 else 0.0)


def blocking_calls(api: pd.DataFrame) -> np.ndarray:
    """Which API calls block the host until the GPU is done: synchronizations and blocking copies."""
    if len(api) == 0:
        return np.zeros(0, dtype=bool)
    names = api["name"].fillna("").astype(str)
    blocking_name = {n: is_blocking_memcpy(n) for n in names.unique()}  # once per distinct name
    cat = api["category"].to_numpy()
    return (cat == "sync") | ((cat == "memcpy") & names.map(blocking_name).to_numpy(dtype=bool))


def _transfer_finding(src: str, cpw: pd.DataFrame, copy_ns: float, window: float, ev_busy: Evidence) -> Finding:
    host_side = cpw[cpw["kind"].isin(["HtoD", "DtoH"])]
    rows = host_side if len(host_side) else cpw  # bytes and time from the same copies
    total_bytes, bw = copy_bandwidth(rows)
    pageable = host_side[(host_side["src"] == "pageable") | (host_side["dst"] == "pageable")]
    pageable_bytes = float(pageable["bytes"].sum())
    ev_copy = Evidence(metric="timeline.copy_fraction", value=round(copy_ns / window, 4), unit="ratio", artifact=src,
                       meaning=f"copies occupy {copy_ns / 1e6:.2f} ms of the {window / 1e6:.2f} ms window")
    ev_bw = Evidence(metric="timeline.host_copy_bandwidth", value=bw, unit="byte/s", artifact=src,
                     meaning=f"{size(total_bytes)} host<->device at {bandwidth(bw)}")
    if total_bytes and pageable_bytes >= PAGEABLE_BYTES_FRACTION * total_bytes:
        ev_pg = Evidence(metric="timeline.pageable_copy_bytes", value=pageable_bytes, unit="byte", artifact=src,
                         meaning=f"{pageable_bytes / total_bytes:.0%} of host<->device bytes come from pageable memory")
        return Finding(
            bound="transfer", mechanism="pageable_transfer", share=copy_ns / window,
            bottleneck=(f"Host-to-device copies from pageable memory take {copy_ns / window:.0%} of the run and "
                        f"move only {bw / 1e9:.1f} GB/s."),
            evidence=[ev_copy, ev_bw, ev_pg],
            explanation=("Pageable host memory cannot be read by the copy engines directly: the driver stages every "
                         "copy through a small pinned bounce buffer with the CPU doing a memcpy, so the transfer "
                         "runs at CPU-copy speed, is synchronous with the host, and cannot overlap kernels."),
            fix=Fix(change=("Allocate the host buffers pinned (cudaMallocHost / cudaHostAlloc, or "
                            "tensor.pin_memory() and .to(device, non_blocking=True); DataLoader(pin_memory=True)), "
                            "and keep data resident on the GPU where possible."),
                    metric="timeline.host_copy_bandwidth", direction="increase",
                    expected="several-fold: pinned copies run near link bandwidth (tens of GB/s)", current_value=bw),
            confidence=0.9,
        )
    return Finding(
        bound="transfer", mechanism="transfer_volume", share=copy_ns / window,
        bottleneck=(f"Host<->device copies take {copy_ns / window:.0%} of the run: {size(total_bytes)} "
                    f"at {bw / 1e9:.1f} GB/s, already from pinned memory."),
        evidence=[ev_copy, ev_bw, ev_busy],
        explanation=("The copies already run from pinned memory near link bandwidth; the cost is the volume itself "
                     "and that the copies do not overlap computation."),
        fix=Fix(change=("Move less: keep tensors resident on the GPU across steps, send compact dtypes, and overlap "
                        "the remaining copies with compute on a separate stream (double buffering)."),
                metric="timeline.copy_fraction", direction="decrease",
                expected="proportional to the bytes no longer moved, or hidden behind kernels when overlapped",
                current_value=copy_ns / window),
        confidence=0.75,
    )


def _host_finding(src, tl, causes, idle, window, ev_busy, summary) -> Finding:
    cause = max(causes, key=causes.get) if causes else "launch_overhead"
    if cause == "unattributed":
        cause = "launch_overhead"
    cause_ns = causes.get(cause, 0.0)
    ev_cause = Evidence(metric=f"timeline.idle_{cause}_ns", value=cause_ns, unit="ns", artifact=src,
                        meaning=f"{cause_ns / idle:.0%} of the {idle / 1e6:.2f} ms of GPU idle time is {cause.replace('_', ' ')}")
    k = tl.kernels
    med_kernel = float((k["end_ns"] - k["start_ns"]).median()) if len(k) else 0.0
    if cause == "launch_overhead":
        launches = int((tl.api["category"] == "launch").sum()) if len(tl.api) else summary.kernel_count
        ev_k = Evidence(metric="timeline.kernel_median_ns", value=med_kernel, unit="ns", artifact=src,
                        meaning=f"median kernel lasts {duration(med_kernel)}; {summary.kernel_count} kernels in the window")
        return Finding(
            bound="host", mechanism="launch_overhead", share=idle / window,
            bottleneck=(f"The GPU is idle {idle / window:.0%} of the time between {summary.kernel_count} tiny kernels: "
                        f"the host cannot launch them as fast as the GPU finishes them."),
            evidence=[ev_busy, ev_k, ev_cause],
            explanation=("Each launch costs several microseconds of host time (framework dispatch plus the CUDA "
                         "launch call) while the kernel itself runs for about as long or less, so the queue runs dry "
                         "and the GPU waits between kernels. Kernel speed is irrelevant here."),
            fix=Fix(change=("Launch fewer, larger kernels: fuse the small ops (torch.compile, a fused/foreach op, or "
                            "one hand-written kernel), batch small tensors together, or capture the sequence in a "
                            "CUDA graph."),
                    metric="timeline.gpu_busy_fraction", direction="increase",
                    expected=f"from {idle and (1 - idle / window):.0%} toward 90%+, with far fewer kernels per step",
                    current_value=1 - idle / window, target_value=0.9),
            confidence=0.85, missing=[] if launches else ["CUDA API trace (launch calls)"],
        )
    if cause == "allocator":
        allocs = tl.api[tl.api["category"] == "malloc"] if len(tl.api) else tl.api
        n_alloc = int(len(allocs))
        alloc_ns = float((allocs["end_ns"] - allocs["start_ns"]).sum()) if n_alloc else 0.0
        ev_n = Evidence(metric="timeline.allocator_calls", value=n_alloc, unit="count", artifact=src,
                        meaning=f"{n_alloc} cudaMalloc/cudaFree-type calls, {alloc_ns / 1e6:.2f} ms of host time in them")
        return Finding(
            bound="host", mechanism="allocator_churn", share=idle / window,
            bottleneck=(f"The GPU is idle {idle / window:.0%} of the time while the host is inside allocator calls "
                        f"(cudaMalloc/cudaFree) between launches."),
            evidence=[ev_busy, ev_cause, ev_n],
            explanation=("Device allocation is slow host work (page mapping), and cudaFree waits for the GPU to finish "
                         "before releasing memory: allocating and freeing around every launch drains the queue and "
                         "leaves the GPU waiting for the host's allocator, not for any computation."),
            fix=Fix(change=("Allocate the buffers once outside the loop and reuse them (or use a caching or "
                            "stream-ordered allocator: cudaMallocAsync/cudaFreeAsync with a memory pool, PyTorch's "
                            "caching allocator)."),
                    metric="timeline.idle_allocator_ns", direction="decrease",
                    expected=f"most of the {cause_ns / 1e6:.2f} ms of allocator-bound idle time disappears; GPU busy rises",
                    current_value=cause_ns),
            confidence=0.8,
        )
    if cause == "host_sync":
        n_sync = int(blocking_calls(tl.api).sum())
        ev_n = Evidence(metric="timeline.sync_calls", value=n_sync, unit="count", artifact=src,
                        meaning=f"{n_sync} synchronizing calls (synchronize, blocking copies) in the capture")
        return Finding(
            bound="host", mechanism="host_sync", share=idle / window,
            bottleneck=(f"The GPU is idle {idle / window:.0%} of the time because the host synchronizes with it "
                        f"every iteration and then does its own work with an empty GPU queue."),
            evidence=[ev_busy, ev_cause, ev_n],
            explanation=("A synchronizing call (cudaDeviceSynchronize, a blocking cudaMemcpy to the host, "
                         "tensor.item()/.cpu()/print of a GPU value) drains the queue: the host waits for the GPU, "
                         "then the GPU waits while the host runs its bookkeeping and issues the next work. Host and "
                         "GPU time add up instead of overlapping."),
            fix=Fix(change=("Take the synchronization out of the loop: keep values on the GPU (accumulate losses/flags "
                            "in a device tensor), read them back every N steps or asynchronously (non_blocking copy "
                            "into pinned memory plus an event), and only synchronize where the host truly needs the value."),
                    metric="timeline.idle_host_sync_ns", direction="decrease",
                    expected=f"most of the {cause_ns / 1e6:.2f} ms of sync-drained idle time disappears; GPU busy rises",
                    current_value=cause_ns),
            confidence=0.85,
        )
    # host_work
    ev_gap = Evidence(metric="timeline.kernel_ns_per_idle_ns", value=round(summary.kernel_ns / max(idle, 1.0), 4),
                      unit="ratio", artifact=src,
                      meaning=f"{summary.kernel_ns / 1e6:.2f} ms of kernels against {idle / 1e6:.2f} ms of idle GPU")
    return Finding(
        bound="host", mechanism="host_work", share=idle / window,
        bottleneck=(f"The GPU is idle {idle / window:.0%} of the time waiting for the host's own computation between "
                    f"launches (long gaps with few launches and no synchronization)."),
        evidence=[ev_busy, ev_cause, ev_gap],
        explanation=("Between GPU steps the host runs its own code (data preparation, Python logic, CPU math) "
                     "for longer than the GPU work it feeds; nothing is queued meanwhile, so the GPU waits."),
        fix=Fix(change=("Overlap or remove the host work: prepare the next batch ahead of time on another thread or "
                        "process (DataLoader workers, a prefetch queue), move the preprocessing to the GPU, or cache "
                        "its results."),
                metric="timeline.gpu_busy_fraction", direction="increase",
                expected="toward the ratio of GPU work to step time once host work overlaps", current_value=1 - idle / window),
        confidence=0.8,
    )
