"""The timing comparison: kernels paired across the two sides (four tiers, package docstring point 1) and the
overall time (point 3)."""
from __future__ import annotations

import numpy as np

from ..kernel_name import KernelName
from .noise import beyond_noise, measure
from .result import KernelChange, KernelSide, OverallChange
from .sides import Group, Side, launch_text


def match_kernels(before: list[Group], after: list[Group]) -> tuple[list[KernelChange], list[Group], list[Group]]:
    left, right = list(before), list(after)
    pairs: list[tuple[Group, Group, str]] = []

    def tier(label: str, key_fn, unique: bool) -> None:
        lk: dict = {}
        rk: dict = {}
        for g in left:
            lk.setdefault(key_fn(g), []).append(g)
        for g in right:
            rk.setdefault(key_fn(g), []).append(g)
        for k, ls in lk.items():
            rs = rk.get(k)
            if not rs:
                continue
            if unique and (len(ls) != 1 or len(rs) != 1):
                continue
            for a, b in zip(ls, rs):
                pairs.append((a, b, label))
                left.remove(a)
                right.remove(b)

    tier("name+launch", lambda g: (g.key, g.cfg), unique=False)
    tier("base+launch", lambda g: (g.base, g.cfg), unique=True)
    tier("name", lambda g: g.key, unique=True)
    tier("base", lambda g: g.base, unique=True)
    out = []
    for a, b, label in pairs:
        mb, ma = measure(a.durations), measure(b.durations)
        sig, _ = beyond_noise(mb, ma)
        out.append(KernelChange(
            name=b.name, before_name=a.name, match=label, before_launch=launch_text(a.cfg), after_launch=launch_text(b.cfg),
            launch_changed=a.cfg != b.cfg, before=mb, after=ma, ratio=ma.median / mb.median if mb.median else float("inf"),
            speedup=mb.median / ma.median if ma.median else float("inf"), beyond_noise=sig))
    out.sort(key=lambda c: -(c.before.median * c.before.n))
    return out, left, right


def side_rows(groups: list[Group]) -> list[KernelSide]:
    return [KernelSide(name=g.name, launch=launch_text(g.cfg), count=len(g.durations),
                       median_ns=float(np.median(g.durations)), total_ns=float(g.durations.sum())) for g in groups]


# ----------------------------------------------------------------- overall
def profiled_ns(side: Side) -> float:
    by: dict[str, list[float]] = {}
    for p in side.profiles:
        d = p.get("gpu__time_duration.sum")
        if d is not None:
            by.setdefault(KernelName(p.name).key, []).append(d)
    return float(sum(np.median(v) for v in by.values()))


def overall_change(b: Side, a: Side) -> OverallChange:
    if len(b.steps) >= 2 and len(a.steps) >= 2:
        metric, mb, ma = "step_ns", measure(b.steps), measure(a.steps)
    elif b.tres is not None and a.tres is not None:
        metric, mb, ma = "gpu_busy_ns", measure([b.tres.summary.busy_ns]), measure([a.tres.summary.busy_ns])
    else:  # no timeline on one side: the profiled kernels' durations (one value per kernel, summed)
        metric, mb, ma = "profiled_kernel_ns", measure([profiled_ns(b)]), measure([profiled_ns(a)])
    if mb.median <= 0 or ma.median <= 0:
        return OverallChange(metric=metric, before=mb, after=ma, ratio=1.0, speedup=1.0, beyond_noise=False,
                             method="no GPU time measured on one side: nothing to compare")
    sig, method = beyond_noise(mb, ma)
    return OverallChange(metric=metric, before=mb, after=ma, ratio=ma.median / mb.median if mb.median else float("inf"),
                         speedup=mb.median / ma.median if ma.median else float("inf"), beyond_noise=sig, method=method)
