"""The metrics registry: every number kernel-profiler derives, with its unit and its definition, in one place.

ncu metrics keep the names ncu gives them. What kernel-profiler computes itself is named here:

  timeline.*   from the timeline (nsys, Kineto, per-kernel durations) and the steady window its triage chose
  derived.*    from one kernel's (or several kernels') ncu metrics: the roofline, the streaming chain
  sass.*       counts of SASS opcodes, `sass.A+B` the sum of several
  multirank.*  from the ranks of a multi-process job
  telemetry.*  from NVML samples recorded with the captures

The engine quotes these names in its evidence and fixes (with the unit given here), `verify` evaluates a fix's
metric with `evaluate` (the program-level timeline metrics through `timeline_value`), and the critic's facts use
the same computations. A name with `{...}` stands for a family (`timeline.idle_{cause}_ns`).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Optional

import numpy as np

from .analysis.idle import blocking_calls
from .analysis.intervals import rows_in
from .analysis.streams import StreamUse, stream_use
from .analysis.unified_memory import Migrations, migrations

if TYPE_CHECKING:
    import pandas as pd

    from .artifacts.tables import Timeline
    from .answer import Roofline, TimelineSummary


@dataclass
class TimelineView:
    """A timeline with the steady window and the step durations its triage chose."""

    summary: "TimelineSummary"
    timeline: "Timeline"
    window: tuple[float, float]
    step_ns: list[float] = field(default_factory=list)

    def window_copies(self) -> "pd.DataFrame":
        cp, (lo, hi) = self.timeline.copies, self.window
        return rows_in(cp, lo, hi)

    def host_copies(self) -> "pd.DataFrame":
        """Host<->device copies in the steady window."""
        cp = self.window_copies()
        return cp[cp["kind"].isin(["HtoD", "DtoH"])] if len(cp) else cp


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    definition: str
    compute: Optional[Callable[[TimelineView], Optional[float]]] = None  # program-level timeline metrics

    @property
    def pattern(self) -> re.Pattern:
        return re.compile("".join(r"[\w+]+?" if re.fullmatch(r"\{\w+\}", p) else re.escape(p)
                                  for p in re.split(r"(\{\w+\})", self.name)) + "$")


# --------------------------------------------------------------------------- timeline computations
def copy_bandwidth(copies: "pd.DataFrame") -> tuple[float, float]:
    """(bytes, byte/s) of a set of copies: their bytes over their own summed durations (0 when empty)."""
    if len(copies) == 0:
        return 0.0, 0.0
    dur = float((copies["end_ns"] - copies["start_ns"]).sum())
    total = float(copies["bytes"].sum())
    return total, (total / (dur / 1e9) if dur > 0 else 0.0)


def pageable(copies: "pd.DataFrame") -> "pd.DataFrame":
    """The copies from or to pageable host memory."""
    return copies[(copies["src"] == "pageable") | (copies["dst"] == "pageable")] if len(copies) else copies


def _host_copy_bandwidth(v: TimelineView) -> Optional[float]:
    host = v.host_copies()
    return copy_bandwidth(host)[1] if len(host) else None


def _sync_calls(v: TimelineView) -> Optional[float]:
    api = v.timeline.api
    return float(blocking_calls(api).sum()) if len(api) else None


def _kernel_median(v: TimelineView) -> Optional[float]:
    k = v.timeline.kernels
    return float((k["end_ns"] - k["start_ns"]).median()) if len(k) else None


def _allocator_calls(v: TimelineView) -> Optional[float]:
    api = v.timeline.api
    return float((api["category"] == "malloc").sum()) if len(api) else None


def _kernel_gap_median(v: TimelineView) -> Optional[float]:
    """Median GPU-idle gap between one kernel's end (the latest end so far) and the next kernel's start, in the window."""
    k, (lo, hi) = v.timeline.kernels, v.window
    w = k[(k["start_ns"] >= lo) & (k["end_ns"] <= hi)].sort_values("start_ns") if len(k) else k
    if len(w) < 2:
        return None
    gaps = w["start_ns"].to_numpy()[1:] - np.maximum.accumulate(w["end_ns"].to_numpy())[:-1]
    return float(np.median(np.clip(gaps, 0, None)))


def _migrations(v: TimelineView) -> Optional[Migrations]:
    """Unified-memory migrations in the window; None for a format that does not record them (only nsys does)."""
    return migrations(v.timeline.copies, *v.window) if v.timeline.format == "nsys-sqlite" else None


def _streams(v: TimelineView) -> Optional[StreamUse]:
    return stream_use(v.timeline, *v.window)


def _whole_streams(v: TimelineView) -> Optional[StreamUse]:
    return stream_use(v.timeline, -math.inf, math.inf)


def _per_step(v: TimelineView, x: Optional[float]) -> Optional[float]:
    steps = v.summary.steps or v.summary.repeats
    return x / steps if x is not None and steps else None


def _steady_median(v: TimelineView) -> Optional[float]:
    return v.summary.step_ns_median


_S = "the timeline summary of the steady window"

TIMELINE: list[Metric] = [
    Metric("timeline.gpu_busy_fraction", "ratio", "GPU-busy time (union of kernel, copy and set intervals) / steady "
           "window", lambda v: v.summary.busy_fraction),
    Metric("timeline.copy_fraction", "ratio", "copy time / steady window",
           lambda v: v.summary.copy_ns / v.summary.window_ns if v.summary.window_ns else None),
    Metric("timeline.startup_ns", "ns", "capture start to the first GPU work", lambda v: v.summary.startup_ns),
    Metric("timeline.steady_window_ns", "ns", "the steady window analyzed", lambda v: v.summary.window_ns),
    Metric("timeline.busy_ns", "ns", "GPU-busy time in the steady window", lambda v: v.summary.busy_ns),
    Metric("timeline.idle_ns", "ns", "GPU-idle time in the steady window", lambda v: v.summary.idle_ns),
    Metric("timeline.kernel_count", "count", "kernels in the steady window", lambda v: float(v.summary.kernel_count)),
    Metric("timeline.kernel_ns_per_idle_ns", "ratio", "kernel time / idle time in the steady window",
           lambda v: v.summary.kernel_ns / max(v.summary.idle_ns, 1.0)),
    Metric("timeline.steady_step_median_ns", "ns", "median step of the steady window (an outlier first step "
           "dropped as warm-up)", _steady_median),
    Metric("timeline.first_step_ns", "ns", "duration of the first marked step",
           lambda v: v.step_ns[0] if v.step_ns else None),
    Metric("timeline.host_copy_bandwidth", "byte/s", "bytes of the host<->device copies in the steady window / "
           "their summed durations", _host_copy_bandwidth),
    Metric("timeline.pageable_copy_bytes", "byte", "bytes of the host<->device copies in the steady window from "
           "or to pageable memory", lambda v: float(pageable(v.host_copies())["bytes"].sum())),
    Metric("timeline.sync_calls", "count", "API calls that block the host until the GPU is done (synchronize, "
           "blocking copies) in the capture", _sync_calls),
    Metric("timeline.allocator_calls", "count", "cudaMalloc/cudaFree-type calls in the capture", _allocator_calls),
    Metric("timeline.kernel_median_ns", "ns", "median kernel duration over the capture", _kernel_median),
    Metric("timeline.kernel_gap_median_ns", "ns", "median idle gap between consecutive kernels in the steady window",
           _kernel_gap_median),
    Metric("timeline.idle_{cause}_ns", "ns", "idle GPU time in the steady window attributed to a host cause "
           "(launch_overhead, host_sync, host_work, allocator, module_loading)"),
    Metric("timeline.onetime_ns", "ns", "one-time work apart from the steady window (after start-up)",
           lambda v: v.summary.onetime_ns),
    Metric("timeline.onetime_{kind}_ns", "ns", "one-time work of one class (jit, library_init, module_loading, "
           "allocator, upload, download, sync, warm_up, host)"),
    Metric("timeline.migration_bytes", "byte", "unified-memory (managed) bytes migrated between host and device in "
           "the steady window, both directions", lambda v: m.bytes if (m := _migrations(v)) else None),
    Metric("timeline.migration_htod_bytes", "byte", "unified-memory bytes migrated host-to-device in the steady window",
           lambda v: m.htod_bytes if (m := _migrations(v)) else None),
    Metric("timeline.migration_dtoh_bytes", "byte", "unified-memory bytes migrated device-to-host in the steady window",
           lambda v: m.dtoh_bytes if (m := _migrations(v)) else None),
    Metric("timeline.migration_bytes_per_step", "byte", "unified-memory bytes migrated per step of the steady window",
           lambda v: _per_step(v, m.bytes) if (m := _migrations(v)) else None),
    Metric("timeline.migration_ns", "ns", "time of the unified-memory migrations in the steady window (union of "
           "their intervals)", lambda v: m.ns if (m := _migrations(v)) else None),
    Metric("timeline.migration_count", "count", "unified-memory migrations in the steady window",
           lambda v: float(m.count) if (m := _migrations(v)) else None),
    Metric("timeline.migration_busy_share", "ratio", "migration time / GPU-busy time in the steady window",
           lambda v: m.ns / v.summary.busy_ns if (m := _migrations(v)) and v.summary.busy_ns else None),
    Metric("timeline.kernel_streams", "count", "streams (other than the legacy default stream) that run kernels in "
           "the steady window", lambda v: float(u.streams) if (u := _streams(v)) else None),
    Metric("timeline.overlapping_kernel_pairs", "count", "pairs of kernels in the steady window that run at the same "
           "time", lambda v: float(u.overlaps) if (u := _streams(v)) else None),
    Metric("timeline.whole_run_overlap_pairs", "count", "pairs of kernels in the whole capture (warm-up "
           "included) that run at the same time", lambda v: float(u.overlaps) if (u := _whole_streams(v)) else None),
    Metric("timeline.null_stream_ops", "count", "kernels, copies and memsets on the legacy default (NULL) stream in the "
           "steady window", lambda v: float(u.null_ops) if (u := _streams(v)) and u.null_ops is not None else None),
    Metric("timeline.kernel_share", "ratio", "one kernel's time / all kernel time in the steady window"),
    Metric("timeline.grid_blocks", "block", "blocks in one kernel's grid (x*y*z)"),
]

DERIVED: list[Metric] = [
    Metric("derived.roofline_floor_ns", "ns", "the floor answers state: max(FLOPs / peak FLOP/s, bytes the work "
           "needs / peak bandwidth), else at the DRAM bytes moved"),
    Metric("derived.roofline_gap", "ratio", "kernel duration / derived.roofline_floor_ns (1.0 is the roofline)"),
    Metric("derived.fp32_flops_per_second", "flop/s", "FP32 FLOPs / kernel duration"),
    Metric("derived.issue_floor_ns", "ns", "the issue floor: warp instructions / (4 schedulers x SMs x SM clock)"),
    Metric("derived.streaming_dram_bytes", "byte", "DRAM bytes of a chain of memory-bound kernels (one value per "
           "kernel, the median over its profiled launches, summed)"),
    Metric("derived.streaming_duration_ns", "ns", "duration of that chain, summed the same way"),
    Metric("derived.streaming_kernels", "count", "kernels in that chain"),
]

SASS: list[Metric] = [Metric("sass.{ops}", "instructions", "SASS instructions with these opcodes (A+B: the sum)")]

MULTIRANK: list[Metric] = [
    Metric("multirank.step_p50_ns", "ns", "median step, per rank"),
    Metric("multirank.collective_enter_lag_ns", "ns", "median delay entering a collective after the first rank"),
    Metric("multirank.collective_enter_spread_ns", "ns", "spread of the ranks' entry into each collective"),
    Metric("multirank.collective_ns_per_step", "ns", "time inside collectives per step"),
    Metric("multirank.compute_ns_per_step", "ns", "GPU compute time per step"),
]

TELEMETRY: list[Metric] = [
    Metric("telemetry.sm_clock_mhz_median", "MHz", "median SM clock over the busy NVML samples"),
    Metric("telemetry.throttled_sample_fraction", "ratio", "busy NVML samples that report a throttle reason"),
]

REGISTRY: dict[str, Metric] = {m.name: m for m in TIMELINE + DERIVED + SASS + MULTIRANK + TELEMETRY}
PREFIXES = ("timeline.", "derived.", "sass.", "multirank.", "telemetry.")


def lookup(name: str) -> Optional[Metric]:
    """The registry entry of a derived metric name (a family's entry for a member of it), else None."""
    if name in REGISTRY:
        return REGISTRY[name]
    return next((m for m in REGISTRY.values() if "{" in m.name and m.pattern.match(name)), None)


def timeline_value(name: str, view: TimelineView) -> tuple[Optional[float], str]:
    """A program-level timeline metric on one timeline: (value, source) or (None, why)."""
    src = f"timeline ({view.summary.source})"
    if name.startswith("timeline.idle_") and name.endswith("_ns") and name != "timeline.idle_ns":
        s = view.summary
        if not s.idle_by_cause:
            return (0.0, src) if s.idle_ns <= 0 else (None, f"{name}: no idle time attributed to a cause")
        return float(s.idle_by_cause.get(name[len("timeline.idle_"):-len("_ns")], 0.0)), src
    m = lookup(name)
    if m is None or m.compute is None:
        return None, f"{name} is not a metric verify knows"
    v = m.compute(view)
    return (None, f"{name}: not measured in this timeline ({view.summary.source})") if v is None else (float(v), src)


def unit(name: str) -> str:
    m = lookup(name)
    return m.unit if m is not None else ""


def roofline_value(name: str, rooflines: list[list["Roofline"]]) -> Optional[float]:
    """derived.* recomputed from kernels' rooflines (one list per kernel, one roofline per profiled launch)."""
    if not rooflines:
        return None
    if name == "derived.streaming_kernels":
        return float(len(rooflines))
    attr = {"derived.streaming_dram_bytes": "dram_bytes", "derived.streaming_duration_ns": "duration_ns",
            "derived.roofline_gap": "stated_gap", "derived.roofline_floor_ns": "stated_floor_ns"}.get(name)
    if attr is None:
        return None
    if name.startswith("derived.streaming_"):
        return float(sum(np.median([getattr(r, attr) for r in rs]) for rs in rooflines))
    return float(np.median([getattr(r, attr) for rs in rooflines for r in rs]))


def evaluate(expr: str, term: Callable[[str], tuple[Optional[float], str]]) -> tuple[Optional[float], str]:
    """A metric expression (`a`, `a+b`, `a/b`, `a+b/c+d`) from `term(name) -> (value, source or why None)`:
    (value, the first term's source) or (None, why)."""
    parts = expr.split("/")
    if len(parts) > 2:
        return None, f"{expr!r}: cannot read a metric with more than one '/'"
    vals, source = [], ""
    for part in parts:
        total = 0.0
        for t in part.split("+"):
            v, text = term(t.strip())
            if v is None:
                return None, text
            total, source = total + v, source or text
        vals.append(total)
    if len(vals) == 1:
        return vals[0], source
    if not vals[1]:
        return None, f"{expr}: denominator is zero on this side"
    return vals[0] / vals[1], source
