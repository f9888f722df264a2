"""Timeline triage: is the GPU even busy, and if so, which kernels matter?

Input: one `Timeline` (from an nsys sqlite export or a Kineto trace).
Output: a `TimelineResult` with the summary numbers and the host/transfer/
startup findings (if any), plus the kernels ranked by share of GPU time.

The method, in order:
1. Choose the steady-state window: the step ranges (NVTX "step"-like ranges
   or PyTorch `ProfilerStep#N`) if the program marks them, minus an outlier
   first step (warm-up); otherwise first-to-last GPU operation. Everything
   between the capture start and the window is start-up, reported apart.
2. GPU-busy = union (not sum) of kernel, copy and memset intervals in the window.
3. Copies dominate -> transfer-bound; GPU idle a large part of the window ->
   host-bound, with each idle gap attributed to its host cause; otherwise
   kernel-bound, with kernels ranked by their share of busy time.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field


import numpy as np
import pandas as pd

from . import intervals as iv
from .artifacts.api_names import is_blocking_memcpy
from .artifacts.tables import Timeline
from .diagnosis import Evidence, Finding, Fix, KernelRow, TimelineSummary

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

STEP_NAME = re.compile(r"^(ProfilerStep#\d+|step|train_step|iteration|iter)(\b|_|#|\d|$)", re.IGNORECASE)


@dataclass
class TimelineResult:
    summary: TimelineSummary
    verdict: str  # startup | transfer | host | kernel | empty
    findings: list[Finding] = field(default_factory=list)
    kernels: pd.DataFrame = field(default_factory=pd.DataFrame)  # per-name ranking
    step_ns: list[float] = field(default_factory=list)
    window: tuple[float, float] = (0.0, 0.0)


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


def _window(tl: Timeline, op_s: np.ndarray, op_e: np.ndarray) -> tuple[float, float, str, list[float], int]:
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
        return lo, hi, src, [float(d) for d in durations], warm
    return float(op_s.min()), float(op_e.max()), "first to last GPU operation (no step ranges)", [], 0


def _idle_causes(tl: Timeline, g0: np.ndarray, g1: np.ndarray) -> dict[str, float]:
    api = tl.api
    length = g1 - g0
    if len(api) == 0 or len(g0) == 0:
        return {"unattributed": float(length.sum())} if len(g0) else {}
    cat = api["category"].to_numpy()
    blocking = blocking_calls(api)
    s = api["start_ns"].to_numpy(dtype=np.float64)
    e = api["end_ns"].to_numpy(dtype=np.float64)
    drained = iv.in_progress(s[blocking], e[blocking], g0, SYNC_TOLERANCE_NS)
    launches = iv.count_in(s[cat == "launch"], g0, g1)
    long_quiet = (length >= HOST_WORK_GAP_NS) & (launches < length * DISPATCH_LAUNCHES_PER_NS)
    out = {
        "host_sync": float(length[drained].sum()),
        "host_work": float(length[~drained & long_quiet].sum()),
        "launch_overhead": float(length[~drained & ~long_quiet].sum()),
    }
    return out


def rank_kernels(tl: Timeline, lo: float, hi: float) -> pd.DataFrame:
    k = tl.kernels
    if len(k) == 0:
        return pd.DataFrame(columns=["name", "count", "total_ns", "median_ns", "share"])
    s, e = iv.clip(k["start_ns"].to_numpy(np.float64), k["end_ns"].to_numpy(np.float64), lo, hi)
    inside = (k["end_ns"].to_numpy(np.float64) > lo) & (k["start_ns"].to_numpy(np.float64) < hi)
    kk = k[inside].assign(dur=(e - s))
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
    lo, hi, wsrc, step_ns, warm = _window(tl, op_s, op_e)
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
    )
    res = TimelineResult(summary=summary, verdict="kernel", kernels=ranked, step_ns=step_ns, window=(lo, hi))

    ev_busy = Evidence(metric="timeline.gpu_busy_fraction", value=round(busy / window, 4), unit="ratio", artifact=src,
                       meaning=f"GPU busy {busy / 1e6:.3f} ms of a {window / 1e6:.3f} ms steady window ({wsrc})")
    # 1. Start-up / warm-up dominated.
    if step_ns and warm and step_ns[0] > STARTUP_DOMINANCE * sum(step_ns[1:]) and step_ns[0] >= STARTUP_MIN_NS:
        res.verdict = "startup"
        res.findings.append(_startup_finding(src, step_ns, summary))
    # 2. Transfer-bound.
    if copy_ns >= TRANSFER_BOUND_FRACTION * window:
        if res.verdict == "kernel":
            res.verdict = "transfer"
        res.findings.append(_transfer_finding(src, cpw, copy_ns, window, ev_busy))
    # 3. Host-bound.
    elif idle >= HOST_BOUND_IDLE_FRACTION * window:
        if res.verdict == "kernel":
            res.verdict = "host"
        res.findings.append(_host_finding(src, tl, causes, idle, window, ev_busy, summary))
    return res


def _startup_finding(src: str, step_ns: list[float], summary: TimelineSummary) -> Finding:
    first, rest = step_ns[0], step_ns[1:]
    med = float(np.median(rest))
    return Finding(
        bound="host", mechanism="startup_dominated", share=first / (first + sum(rest)),
        bottleneck=(f"The measured run is dominated by one-time start-up work: the first step takes "
                    f"{first / 1e6:.1f} ms against a {med / 1e6:.3f} ms median for the other {len(rest)} steps."),
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
                expected=f"the measured time drops toward {med / 1e6:.3f} ms per step once warm-up is excluded",
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
                     meaning=f"{total_bytes / 2**20:.0f} MiB host<->device at {bw / 1e9:.1f} GB/s")
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
        bottleneck=(f"Host<->device copies take {copy_ns / window:.0%} of the run: {total_bytes / 2**20:.0f} MiB "
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
                        meaning=f"median kernel lasts {med_kernel / 1e3:.1f} us; {summary.kernel_count} kernels in the window")
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
