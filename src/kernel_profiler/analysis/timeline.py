"""Timeline triage: is the GPU even busy, and if so, which kernels matter?

Input: one `Timeline` (from an nsys sqlite export or a Kineto trace).
Output: a `TimelineResult` with the summary numbers and the host/transfer/
startup findings (if any), plus the kernels ranked by share of GPU time.

The method, in order:
1. Choose the steady-state window (steady.py): the step ranges the program
   marks, minus an outlier first step (warm-up); without markers, the repeated
   part of the GPU work itself; with no repetition, first-to-last GPU operation.
   Everything between the capture start and the window is start-up, reported
   apart; GPU-side work outside the window is one-time work, classified by
   its evidence (onetime.py) and reported apart with its cost.
2. GPU-busy = union (not sum) of kernel, copy and memset intervals in the window.
3. Unified-memory pages migrated every step, or copies that dominate -> transfer-bound; GPU idle a large part of the window ->
   host-bound, with each idle gap attributed to its host cause (idle.py);
   otherwise kernel-bound, with kernels ranked by their share of busy time.
   The findings of each verdict are written in timeline_findings.py.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import pandas as pd

from . import intervals as iv
from ..artifacts.tables import Timeline
from ..answer import Evidence, Finding, KernelRow, TimelineSummary
from ..display import duration
from .idle import idle_causes
from .onetime import onetime_finding, onetime_work
from .steady import steady_window
from .timeline_findings import host_finding, startup_finding, transfer_finding
from .unified_memory import managed_finding, material, migrations

# --- Thresholds: each is named, and its reason is in the comment above it ---
# Transfer-bound when copies occupy at least this fraction of the steady window:
# then no kernel change can buy more than 2x; the copies come first.
TRANSFER_BOUND_FRACTION = 0.5
# Host-bound when the GPU idles at least this fraction of the steady window.
# At 40% idle, removing the idle time alone is a 1.67x speed-up, more than most
# single-kernel fixes give; below it, the kernels are usually the bigger lever.
HOST_BOUND_IDLE_FRACTION = 0.4
# Start-up dominated when one-time work (warm-up steps) takes more time than all
# steady-state steps together.
STARTUP_DOMINANCE = 1.0
# ...and the one-time work is itself material (shorter one-time costs are measurement noise).
STARTUP_MIN_NS = 50e6
# Kernels ranked in the summary.
TOP_KERNELS = 10
# One-time work shorter than this, and than ONETIME_REPORT_FRACTION of the steady window, is not reported.
ONETIME_REPORT_MIN_NS = 5e6
ONETIME_REPORT_FRACTION = 0.1


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
    w = steady_window(tl, op_s, op_e)
    lo, hi, wsrc, step_ns, warm, rep, marked = w.lo, w.hi, w.source, w.step_ns, w.warm, w.repeat, w.marked
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
    causes = idle_causes(tl, g0, g1)
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
        res.onetime = onetime_finding(src, summary, rep, only_onetime)
    if only_onetime:
        res.verdict = "startup"
        res.findings.append(res.onetime)
        return res

    ev_busy = Evidence(metric="timeline.gpu_busy_fraction", value=round(busy / window, 4), unit="ratio", artifact=src,
                       meaning=f"GPU busy {duration(busy)} of a {duration(window)} steady window ({wsrc})")
    # 1. Start-up / warm-up dominated.
    if step_ns and warm and step_ns[0] > STARTUP_DOMINANCE * sum(step_ns[1:]) and step_ns[0] >= STARTUP_MIN_NS:
        res.verdict = "startup"
        res.findings.append(startup_finding(src, step_ns, summary))
    # 2. Transfer-bound: unified-memory pages migrated every step (the host or kernel findings that follow are
    # what the migrations' faults look like from the host and the GPU), then copies that fill the window.
    mig = migrations(cp, lo, hi)
    if material(mig, len(step_ns) or (rep.reps if rep else None), busy):
        res.verdict = "transfer" if res.verdict == "kernel" else res.verdict
        res.findings.append(managed_finding(src, mig, len(step_ns) or (rep.reps if rep else None), busy, window, ev_busy))
    if copy_ns >= TRANSFER_BOUND_FRACTION * window:
        if res.verdict == "kernel":
            res.verdict = "transfer"
        res.findings.append(transfer_finding(src, cpw, copy_ns, window, ev_busy))
    # 3. Host-bound (one-time stalls inside the window, e.g. a kernel's lazy module load, do not count).
    elif idle - stall_ns >= HOST_BOUND_IDLE_FRACTION * window:
        if res.verdict == "kernel":
            res.verdict = "host"
        res.findings.append(host_finding(src, tl, causes, idle, window, ev_busy, summary))
    return res

