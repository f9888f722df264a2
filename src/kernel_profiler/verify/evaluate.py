"""A fix's metric read on one side (package docstring, point 4): ncu metric names and their sums and ratios,
`timeline.*` (metrics.py), `derived.*` and `sass.*` from the diagnosis' evidence or recomputed."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .. import metrics
from ..analysis.roofline import roofline
from ..answer import Diagnosis, Evidence, Finding
from ..artifacts.tables import KernelProfile
from ..kernel_name import KernelName
from .sides import Group, Side


@dataclass
class Value:
    value: Optional[float]
    source: str
    repeats: Optional[np.ndarray] = None  # per-launch values, when the metric is a launch duration


def findings(d: Diagnosis) -> list[Finding]:
    return [d.primary] + list(d.secondary)


def _same_kernel(a: Optional[str], b: Optional[str]) -> bool:
    if not a or not b:
        return False
    x, y = KernelName(a), KernelName(b)
    return x.key == y.key or x.base == y.base


def _evidence(side: Side, metric: str, kernel: Optional[str]) -> Optional[Evidence]:
    hits = [e for f in findings(side.diag) for e in f.evidence if e.metric == metric]
    if kernel:
        same = [e for e in hits if e.kernel is None or _same_kernel(e.kernel, kernel)]
        hits = same
    return hits[0] if hits else None


def _kernel_profiles(side: Side, kernel: Optional[str]) -> list[KernelProfile]:
    if not kernel:
        return []
    exact = [p for p in side.profiles if KernelName(p.name).key == KernelName(kernel).key]
    if exact:
        return exact
    # Fall back on the base name only when it names one kernel (formats spell template arguments differently).
    same = [p for p in side.profiles if KernelName(p.name).base == KernelName(kernel).base]
    return same if len({KernelName(p.name).key for p in same}) == 1 else []


def _kernel_groups(side: Side, kernel: Optional[str]) -> list[Group]:
    if not kernel:
        return []
    exact = [g for g in side.groups if g.key == KernelName(kernel).key]
    if exact:
        return exact
    same = [g for g in side.groups if g.base == KernelName(kernel).base]
    return same if len({g.key for g in same}) == 1 else []


def _timeline_metric(side: Side, name: str, kernel: Optional[str]) -> Value:
    if side.tres is None or side.tl is None:
        return Value(None, f"{name}: no timeline on this side")
    if name in ("timeline.kernel_share", "timeline.grid_blocks"):  # one kernel: the groups verify paired
        gs = _kernel_groups(side, kernel)
        if not gs:
            return Value(None, f"{name}: kernel {kernel!r} not in the timeline")
        src = f"kernels ({side.tres.summary.source})"
        if name == "timeline.kernel_share":
            total = sum(float(g.durations.sum()) for g in side.groups) or 1.0
            return Value(sum(float(g.durations.sum()) for g in gs) / total, src)
        cfg = gs[0].cfg
        return Value(float(cfg[0] * cfg[1] * cfg[2]) if cfg else None, f"launch configuration ({src})")
    view = metrics.TimelineView(side.tres.summary, side.tl, side.tres.window, list(side.tres.step_ns or []))
    return Value(*metrics.timeline_value(name, view))


def _derived_fallback(side: Side, name: str, kernel: Optional[str]) -> Value:
    """Recompute derived.* metrics the AFTER diagnosis no longer reports (e.g. the chain is fused)."""
    by_key: dict[str, list] = {}
    for p in side.profiles:
        r = roofline(p)
        if r is not None:
            by_key.setdefault(KernelName(p.name).key, []).append(r)
    if not by_key:
        return Value(None, f"{name}: no kernel profile (ncu report) on this side")
    if name.startswith("derived.roofline_"):  # one kernel's
        by_key = {k: v for k, v in by_key.items() if kernel and (k == KernelName(kernel).key or KernelName(k).base == KernelName(kernel).base)}
        if not by_key:
            return Value(None, f"{name}: kernel {kernel!r} has no roofline on this side")
    v = metrics.roofline_value(name, list(by_key.values()))
    src = "rooflines of the profiled kernels (ncu)" + (", all kernels" if name.startswith("derived.streaming_") else "")
    return Value(v, src if v is not None else f"{name} not reported on this side")


def _ncu_metric(side: Side, name: str, kernel: Optional[str]) -> Value:
    profs = _kernel_profiles(side, kernel)
    vals = [p.get(name) for p in profs if p.get(name) is not None]
    if vals:
        return Value(float(np.median(vals)), f"ncu profile of {KernelName(profs[0].name).base} ({profs[0].source})")
    groups = _kernel_groups(side, kernel)
    if name == "gpu__time_duration.sum" and groups:
        d = np.concatenate([g.durations for g in groups])
        return Value(float(np.median(d)), "timeline launch durations (no ncu value)", repeats=d)
    if name in ("launch__grid_size", "launch__block_size") and groups and groups[0].cfg:
        c = groups[0].cfg
        v = c[0] * c[1] * c[2] if name == "launch__grid_size" else c[3] * c[4] * c[5]
        return Value(float(v), "timeline launch configuration (no ncu value)")
    if not kernel:
        return Value(None, f"{name}: the fix names no kernel to read it from")
    if not profs:
        return Value(None, f"{name}: no ncu profile of {KernelName(kernel).base} on this side")
    return Value(None, f"{name}: missing from the ncu profile of {KernelName(kernel).base}")


def _term(side: Side, term: str, kernel: Optional[str]) -> Value:
    term = term.strip()
    if term.startswith("timeline."):
        return _timeline_metric(side, term, kernel)
    ev = _evidence(side, term, kernel) if term.startswith(("derived.", "sass.")) else None
    if ev is not None:
        return Value(float(ev.value), f"evidence of the diagnosis ({ev.artifact})")
    if term.startswith("derived."):
        return _derived_fallback(side, term, kernel)
    if term.startswith("sass."):
        return Value(None, f"{term} not reported on this side")
    if not re.fullmatch(r"[A-Za-z0-9_.]+", term):
        return Value(None, f"{term!r} is not a metric name")
    return _ncu_metric(side, term, kernel)


def evaluate_metric(side: Side, metric: str, kernel: Optional[str]) -> Value:
    """A metric expression (`a`, `a+b`, `a/b`, `a+b/c+d`, metrics.evaluate) on one side."""
    if not re.search(r"[+/]", metric):
        return _term(side, metric, kernel)  # keeps the per-launch repeats of a single duration
    return Value(*metrics.evaluate(metric, lambda t: (lambda v: (v.value, v.source))(_term(side, t, kernel))))


def metric_unit(side: Side, metric: str, kernel: Optional[str]) -> str:
    """The base unit of a fix metric: from the evidence that quotes it, else the ncu profile's units."""
    for f in findings(side.diag):
        for e in f.evidence:
            if e.metric == metric and e.unit:
                return e.unit
    if metrics.unit(metric):
        return metrics.unit(metric)
    if metric.endswith("_ns") or metric.endswith("duration.sum"):
        return "ns"
    for p in _kernel_profiles(side, kernel):
        u = p.units.get(metric)
        if u:
            return u
    return ""
