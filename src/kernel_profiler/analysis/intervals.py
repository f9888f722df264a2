"""Vectorised interval arithmetic on numpy arrays (ns). No per-interval Python loops."""
from __future__ import annotations

import numpy as np


def rows_in(df, lo: float, hi: float):
    """The rows of a table with start_ns/end_ns (kernels, copies, memsets) that overlap [lo, hi]."""
    return df[(df["start_ns"] < hi) & (df["end_ns"] > lo)] if len(df) else df


def union(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge possibly overlapping intervals into sorted disjoint ones."""
    if len(starts) == 0:
        return np.empty(0), np.empty(0)
    order = np.argsort(starts, kind="stable")
    s = np.asarray(starts, dtype=np.float64)[order]
    e = np.asarray(ends, dtype=np.float64)[order]
    run_end = np.maximum.accumulate(e)
    new = np.empty(len(s), dtype=bool)
    new[0] = True
    new[1:] = s[1:] > run_end[:-1]
    seg_id = np.cumsum(new) - 1
    seg_start = s[new]
    seg_end = np.zeros(seg_id[-1] + 1)
    np.maximum.at(seg_end, seg_id, run_end)
    return seg_start, seg_end


def clip(starts: np.ndarray, ends: np.ndarray, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    s = np.clip(starts, lo, hi)
    e = np.clip(ends, lo, hi)
    keep = e > s
    return s[keep], e[keep]


def total(starts: np.ndarray, ends: np.ndarray) -> float:
    return float(np.sum(ends - starts)) if len(starts) else 0.0


def gaps(seg_start: np.ndarray, seg_end: np.ndarray, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """The idle intervals between disjoint sorted segments inside [lo, hi]."""
    if len(seg_start) == 0:
        return np.array([lo]), np.array([hi])
    g0 = np.concatenate([[lo], seg_end])
    g1 = np.concatenate([seg_start, [hi]])
    keep = g1 > g0
    return g0[keep], g1[keep]


def in_progress(call_start: np.ndarray, call_end: np.ndarray, at: np.ndarray, tol: float = 0.0) -> np.ndarray:
    """For each time in `at`: was any call [start, end] in progress there (within tol)?"""
    if len(call_start) == 0:
        return np.zeros(len(at), dtype=bool)
    order = np.argsort(call_start, kind="stable")
    s = np.asarray(call_start, dtype=np.float64)[order]
    run_end = np.maximum.accumulate(np.asarray(call_end, dtype=np.float64)[order])
    idx = np.searchsorted(s, at + tol, side="right") - 1
    ok = idx >= 0
    out = np.zeros(len(at), dtype=bool)
    out[ok] = run_end[idx[ok]] >= at[ok] - tol
    return out


def count_in(points: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """How many sorted `points` fall in each [lo, hi)."""
    pts = np.sort(np.asarray(points, dtype=np.float64))
    return np.searchsorted(pts, hi, side="left") - np.searchsorted(pts, lo, side="left")


def overlap(seg_start: np.ndarray, seg_end: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """For each [lo, hi): how much of it the union of the (possibly overlapping) segments covers."""
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    if len(seg_start) == 0 or len(lo) == 0:
        return np.zeros(len(lo))
    s, e = union(np.asarray(seg_start, dtype=np.float64), np.asarray(seg_end, dtype=np.float64))
    cum = np.concatenate([[0.0], np.cumsum(e - s)])

    def covered(x: np.ndarray) -> np.ndarray:
        i = np.searchsorted(s, x, side="right") - 1
        ok = i >= 0
        out = np.zeros(len(x))
        j = i[ok]
        out[ok] = cum[j] + np.clip(x[ok] - s[j], 0.0, e[j] - s[j])
        return out

    return np.maximum(covered(hi) - covered(lo), 0.0)
