"""Steady-state window: which part of a timeline is the program's repeated work.

The step ranges (NVTX "step"-like ranges or PyTorch `ProfilerStep#N`) if the program marks them, minus an
outlier first step (warm-up). Without markers, the repeated part of the GPU work itself (the longest run of a
repeating kernel/copy sequence), minus an outlier first repetition; with no repetition, first-to-last GPU
operation. Everything outside the window is start-up or one-time work (see onetime.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import pandas as pd

from ..artifacts.tables import Timeline
from .ranks import COLLECTIVE

# A first step (or repetition) this many times slower than the median of the others is warm-up.
WARMUP_OUTLIER_FACTOR = 3.0
# The repeated part of the GPU work is the steady state when it holds at least this share of all kernel time
# (else it is a detail of a program whose work does not repeat).
REPEATED_KERNEL_SHARE = 0.5
# Candidate periods tried: the most frequent spacings between two launches of the same kernel.
MAX_PERIOD_CANDIDATES = 64

STEP_NAME = re.compile(r"^(ProfilerStep#\d+|step|train_step|iteration|iter)(\b|_|#|\d|$)", re.IGNORECASE)


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



@dataclass
class Window:
    """The steady-state window [lo, hi] and how it was found."""

    lo: float
    hi: float
    source: str  # how it was chosen, for people
    step_ns: list[float] = field(default_factory=list)  # marked steps: critical-path time each step added
    warm: int = 0  # leading steps dropped as warm-up
    repeat: Optional["Repeat"] = None  # the repeated part, when found without step markers
    marked: bool = False  # the program marks its steps


def steady_window(tl: Timeline, op_s: np.ndarray, op_e: np.ndarray) -> Window:
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
        return Window(lo, hi, src, [float(d) for d in durations], warm, None, True)
    rep = repeated_part(tl)
    if rep is not None:
        return Window(rep.lo, rep.hi, rep.describe(), [], 0, rep, False)
    return Window(float(op_s.min()), float(op_e.max()),
                  "first to last GPU operation (no step ranges, no repeated GPU work)")



def gpu_ops(tl: Timeline) -> pd.DataFrame:
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

    None when nothing repeats or the repeated run holds under REPEATED_KERNEL_SHARE of the kernel time. A
    longest run made only of collectives (NCCL) is not the steady state when the program runs other kernels:
    then the repeating run before or after it with the most other kernel time is (the collectives are one-time
    communication, e.g. a data-parallel start-up's parameter sync). The first repetition is left out when it takes WARMUP_OUTLIER_FACTOR times the median of the others (it paid
    one-time work: module loading, allocation, library initialisation)."""
    ops = gpu_ops(tl)
    codes = pd.factorize(ops["token"])[0]
    found = _longest_repeat(codes) if len(ops) else None
    if found is None:
        return None
    n_ops, p, i0 = found
    dur = (ops["end_ns"] - ops["start_ns"]).to_numpy()
    is_k = (ops["kind"] == "kernel").to_numpy()
    comm = is_k & ops["token"].isin([t for t in pd.unique(ops["token"]) if COLLECTIVE.search(str(t))]).to_numpy()
    counted = is_k
    if comm[i0:i0 + n_ops].all() and (is_k & ~comm).any():
        # A stretch of collectives with no compute among them (an initial parameter sync, a final gather) is
        # one-time communication when the program computes elsewhere: the repeated part is then the longest
        # repeating run before or after it that holds the most (non-collective) kernel time.
        best = None
        for a, b in ((0, i0), (i0 + n_ops, len(ops))):
            found = _longest_repeat(codes[a:b]) if b - a >= 2 else None
            if found is None:
                continue
            n, per, j = found
            k_ns = float(dur[a + j:a + j + n][is_k[a + j:a + j + n] & ~comm[a + j:a + j + n]].sum())
            if best is None or k_ns > best[0]:
                best = (k_ns, n, per, a + j)
        if best is None or comm[best[3]:best[3] + best[1]].any():
            return None
        _, n_ops, p, i0 = best
        counted = is_k & ~comm
    part = ops.iloc[i0:i0 + n_ops]
    k_all = float(dur[counted].sum())
    k_part = float(dur[i0:i0 + n_ops][counted[i0:i0 + n_ops]].sum())
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

