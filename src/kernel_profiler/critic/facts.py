"""Every value the captures hold, with provenance: (artifact, kernel, metric, unit).

`gather_facts` indexes what the artifacts say (every ncu metric of every profiled kernel, the
timeline's per-kernel statistics, SASS opcode counts, compiler resources, the device) plus the
measured summaries the engine's analysis stages compute from them (the timeline's steady-state
summary, each kernel's roofline). Values derived from read values carry the name of the declared
derivation that produced them (`Fact.derivation`); nothing is taken from the engine's answer text
(findings' evidence, explanations, fixes), so an answer is never accepted by construction.
"""
from __future__ import annotations

import math
import re
from bisect import bisect_left
from dataclasses import dataclass, field
from itertools import combinations
from typing import Iterable, Optional

from .. import devices
from ..artifacts.tables import Artifacts, KernelProfile, Timeline
from ..catalog import TENSOR_OPS
from ..answer import Diagnosis, Roofline, TimelineSummary
from ..analysis.intervals import rows_in
from ..analysis.kernels import dedupe
from ..analysis.mechanisms.host_memory import host_reads
from ..kernel_name import KernelName
from ..analysis.roofline import ceilings as roofline_ceilings
from ..analysis.roofline import roofline as compute_roofline
from ..metrics import TimelineView
from .concepts import metric_concepts, text_concepts
from .registry_facts import registry_facts
from .numbers import family_and_factor

REL_TOL = 0.02
MAX_COPY_GROUPS = 16  # (kind, size) groups of copies indexed as facts
MAX_SUBSET_KERNELS = 9  # sums over subsets of profiled kernels are enumerated up to this many kernels


@dataclass(frozen=True)
class Fact:
    """One value: where it was read (or how it was derived), for which kernel, in base units."""

    metric: str
    value: float
    family: str  # time | bytes | byte_rate | flop_rate | hz | pct | ratio | count
    artifact: str
    kernel: Optional[str] = None  # KernelName.key of the kernel; None for timeline/device/program facts
    derivation: Optional[str] = None  # None: read as is; else the declared derivation
    concepts: frozenset = frozenset()

    def describe(self) -> str:
        k = f" [{self.kernel}]" if self.kernel else ""
        how = f" via {self.derivation}" if self.derivation else ""
        return f"{self.metric}{k} = {self.value:.6g} ({self.artifact}){how}"


@dataclass
class Facts:
    items: list[Fact] = field(default_factory=list)
    by_family: dict[str, list[Fact]] = field(default_factory=dict)
    keys: dict[str, list[float]] = field(default_factory=dict)  # family -> sorted values (parallel to by_family)
    by_metric: dict[str, list[Fact]] = field(default_factory=dict)
    launches: list[tuple[str, Roofline, Optional[float]]] = field(default_factory=list)  # (key, roofline, share) per launch
    kernels: dict[str, str] = field(default_factory=dict)  # KernelName.key -> base name
    profiles: dict[str, KernelProfile] = field(default_factory=dict)  # KernelName.key -> richest ncu profile
    rooflines: dict[str, Roofline] = field(default_factory=dict)
    sass_ops: dict[str, dict[str, int]] = field(default_factory=dict)
    spills: dict[str, tuple[int, int]] = field(default_factory=dict)  # KernelName.key -> (stack, spill bytes)
    ncu_durations: list[float] = field(default_factory=list)
    program_times: list[float] = field(default_factory=list)
    timeline: Optional[TimelineSummary] = None
    diagnosis: Optional[Diagnosis] = None
    sm_count: Optional[int] = None

    def add(self, metric: str, value, family: str, artifact: str, kernel: Optional[str] = None,
            derivation: Optional[str] = None, concepts: Optional[frozenset] = None) -> None:
        try:
            v = float(value)
        except (TypeError, ValueError):
            return
        if not math.isfinite(v):
            return
        self.items.append(Fact(metric, abs(v), family, artifact, kernel, derivation,
                               metric_concepts(metric) if concepts is None else concepts))

    def add_unit(self, metric: str, value, unit: Optional[str], artifact: str, kernel: Optional[str] = None,
                 derivation: Optional[str] = None) -> None:
        fam, factor = family_and_factor(unit)
        if unit in ("byte/s",):
            fam = "byte_rate"
        elif unit in ("hz",):
            fam = "hz"
        try:
            self.add(metric, float(value) * factor, fam, artifact, kernel, derivation)
        except (TypeError, ValueError):
            return

    def finish(self) -> "Facts":
        seen = set()
        uniq = []
        for f in self.items:
            key = (f.metric, f.kernel, round(f.value, 9), f.family)
            if key not in seen:
                seen.add(key)
                uniq.append(f)
        self.items = uniq
        for f in uniq:
            self.by_family.setdefault(f.family, []).append(f)
            self.by_metric.setdefault(f.metric, []).append(f)
        for fam, lst in self.by_family.items():
            lst.sort(key=lambda f: f.value)
            self.keys[fam] = [f.value for f in lst]
        return self

    def near(self, family: str, value: float, tol: float) -> Iterable[Fact]:
        """Facts of a family within rounding of `value`."""
        vals = self.keys.get(family, [])
        lo = value - max(REL_TOL * abs(value), tol)
        hi = value + max(REL_TOL * abs(value) / (1 - REL_TOL), tol)
        i = bisect_left(vals, lo)
        lst = self.by_family.get(family, [])
        while i < len(vals) and vals[i] <= hi * (1 + 1e-12):
            yield lst[i]
            i += 1

    def named(self, metric: str, kernel: Optional[str] = None) -> list[Fact]:
        return [f for f in self.by_metric.get(metric, []) if kernel is None or f.kernel in (kernel, None)]


# ----------------------------------------------------------------------------- kernels (ncu)
def _kernel(f: Facts, key: str, name: str) -> None:
    base = KernelName(name).base
    if key and base:
        f.kernels.setdefault(key, base)


_PAIRS = {  # declared ratio derivations: metric name as the engine spells it -> (numerator, denominator)
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum/l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum":
        ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum/l1tex__t_requests_pipe_lsu_mem_global_op_st.sum":
        ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum/smsp__sass_inst_executed_op_shared_ld.sum":
        ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "smsp__sass_inst_executed_op_shared_ld.sum"),
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum/smsp__sass_inst_executed_op_shared_st.sum":
        ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "smsp__sass_inst_executed_op_shared_st.sum"),
}
ATOMIC = ("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum")
L2_ATOMIC = ("lts__t_sectors_srcunit_tex_op_atom.sum", "lts__t_sectors_srcunit_tex_op_red.sum")


_TENSOR_OPS_RATE = re.compile(r"sm__ops_path_tensor_\w+\.(?:sum|avg|max|min)\.(?:peak_sustained_elapsed\.)?per_second$")


def _kernel_facts(f: Facts, k: KernelProfile, key: str) -> None:
    m, src = k.metrics, k.source
    samples = m.get("smsp__pcsamp_sample_count")
    for name, v in m.items():
        f.add_unit(name, v, k.units.get(name), src, key)
        if _TENSOR_OPS_RATE.match(name) and not k.units.get(name):  # ncu gives no unit: one op is one FLOP
            f.add(name, v, "flop_rate", src, key, "tensor-path operations per second (an op is a FLOP)")
        if samples and name.startswith("smsp__pcsamp_warps_issue_stalled_") and v is not None:  # a stall reason's
            # share of the PC samples ("long_scoreboard 58% of samples")
            f.add(f"{name}.share_of_samples", v / samples, "ratio", src, key, "stall samples / smsp__pcsamp_sample_count")
    inst, sms, clock = m.get("smsp__inst_executed.sum"), m.get("launch__sm_count"), m.get("sm__cycles_elapsed.avg.per_second")
    if inst and sms and clock:  # one warp instruction per scheduler per cycle, four schedulers per SM
        f.add("derived.issue_floor_ns", inst / (4 * sms * clock) * 1e9, "time", src, key,
              "warp instructions / (4 schedulers x SMs x SM clock)")
    for name, (a, b) in _PAIRS.items():
        if m.get(a) is not None and m.get(b):
            f.add(name, m[a] / m[b], "count", src, key, "ratio of two ncu metrics")
    for op, label in (("ld", "ld"), ("st", "st")):
        c, i = m.get(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"), m.get(f"smsp__sass_inst_executed_op_shared_{op}.sum")
        if c is not None and i:
            f.add(f"derived.shared_{label}_ways", 1 + c / i, "count", src, key, "1 + bank conflicts per shared instruction")
    if any(m.get(a) is not None for a in ATOMIC):
        f.add("+".join(ATOMIC), sum(m.get(a) or 0 for a in ATOMIC), "count", src, key, "sum of ncu metrics")
        f.add("+".join(L2_ATOMIC), sum(m.get(a) or 0 for a in L2_ATOMIC), "count", src, key, "sum of ncu metrics")
    atom = sum(m.get(a) or 0 for a in ATOMIC)
    req = atom + (m.get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum") or 0) + (m.get("smsp__sass_inst_executed_op_global_st.sum") or 0)
    if atom and req:
        f.add("derived.atomic_request_share", atom / req, "ratio", src, key, "atomic / (atomic + load + store) requests")
    loc = (m.get("l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum") or 0) + (m.get("l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum") or 0)
    glob = (m.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") or 0) + (m.get("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum") or 0)
    for op, what in (("ld", "read"), ("st", "written")):  # global bytes requested: a store's are the kernel's output
        if m.get(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum") is not None:
            f.add(f"derived.global_{op}_bytes", m[f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum"] * 32, "bytes", src,
                  key, f"global {op} sectors x 32 bytes (bytes {what} by global {'loads' if op == 'ld' else 'stores'})")
    if loc + glob:
        f.add("derived.local_sector_share", loc / (loc + glob), "ratio", src, key, "local / (local + global) sectors")
    h = host_reads(m.get)  # zero-copy: what the kernel read from host memory over PCIe (one definition, the detector's)
    if h is not None:
        f.add("derived.host_read_bytes", h.bytes, "bytes", src, key, f"host-memory bytes read by the kernel ({h.metric})")
        if m.get("gpu__time_duration.sum"):
            f.add("derived.host_read_bandwidth", h.bytes / m["gpu__time_duration.sum"] * 1e9, "byte_rate", src, key,
                  "host-memory bytes read / kernel duration")
        if h.share is not None:
            f.add("derived.host_read_share", h.share, "ratio", src, key, "host-memory / (host + device) L2 read misses")
    grid, sms = m.get("launch__grid_size"), m.get("launch__sm_count")
    if grid and sms:
        f.add("derived.grid_per_sm", grid / sms, "ratio", src, key, "grid / SM count")
        f.add("derived.sm_per_grid", sms / grid, "ratio", src, key, "SM count / grid")
        f.add("derived.idle_sms", max(sms - grid, 0), "count", src, key, "SM count - grid")
        f.add("derived.busy_sms", min(sms, grid), "count", src, key, "SMs given a block: min(grid, SM count)")
    for path, v in _safe_ceilings(k).items():
        f.add(f"ceiling.{path}", v, "byte_rate" if path == "dram" else "flop_rate", src, key,
              "ncu peak-sustained x measured clock")
    for r in k.rules:
        try:
            sp = float(r.get("speedup") or 0.0)
        except (TypeError, ValueError):
            continue
        if sp:
            f.add(f"rule.{r.get('id')}", sp, "pct", src, key, "ncu guided-analysis estimate")


def _safe_ceilings(k: KernelProfile) -> dict[str, float]:
    try:
        return roofline_ceilings(k)[0]
    except Exception:  # a profile without peak metrics has no ceilings
        return {}


def _roofline_facts(f: Facts, r: Roofline, src: str, key: str) -> None:
    how = "roofline (duration, DRAM bytes, FLOPs on the math path, ceilings)"
    f.add("derived.roofline_floor_ns", r.floor_ns, "time", src, key, how)
    f.add("derived.roofline_duration_ns", r.duration_ns, "time", src, key, how)
    f.add("derived.roofline_excess_ns", r.duration_ns - r.floor_ns, "time", src, key, "duration - floor")
    f.add("derived.roofline_gap", r.gap, "ratio", src, key, "duration / floor")
    f.add("derived.roofline_pct_of_peak", 1 / r.gap, "ratio", src, key, "floor / duration")
    f.add("derived.roofline_slack", r.gap - 1, "ratio", src, key, "duration / floor - 1")
    f.add("derived.roofline_slack", 1 - 1 / r.gap, "ratio", src, key, "1 - floor / duration")
    f.add("derived.roofline_dram_bytes", r.dram_bytes, "bytes", src, key, "DRAM read + write bytes")
    if getattr(r, "needed_floor_ns", None) and getattr(r, "needed_gap", None):  # the floor for the bytes the work needs
        need = "roofline at the bytes the work needs"
        f.add("derived.roofline_floor_ns", r.needed_floor_ns, "time", src, key, need)
        f.add("derived.roofline_excess_ns", r.duration_ns - r.needed_floor_ns, "time", src, key, "duration - needed floor")
        f.add("derived.roofline_needed_bytes", r.needed_bytes, "bytes", src, key, r.needed_source or need)
        f.add("derived.roofline_gap", r.needed_gap, "ratio", src, key, "duration / needed floor")
        f.add("derived.roofline_pct_of_peak", 1 / r.needed_gap, "ratio", src, key, "needed floor / duration")
        f.add("derived.roofline_slack", r.needed_gap - 1, "ratio", src, key, "duration / needed floor - 1")
        f.add("derived.roofline_slack", 1 - 1 / r.needed_gap, "ratio", src, key, "1 - needed floor / duration")
    f.add("derived.achieved_bandwidth", r.achieved_bandwidth, "byte_rate", src, key, "DRAM bytes / duration")
    f.add("derived.fraction_of_peak_bandwidth", r.achieved_bandwidth / r.peak_bandwidth, "ratio", src, key,
          "achieved / peak bandwidth")
    name = "derived.fp32_flops_per_second" if r.math_path == "fp32" else "derived.achieved_flops_per_second"
    f.add(name, r.achieved_flops, "flop_rate", src, key, f"FLOPs on the {r.math_path} path / duration")
    if r.flops:
        f.add("derived.roofline_flops", r.flops, "count", src, key, f"FLOPs on the {r.math_path} path")
        f.add("derived.fraction_of_peak_flops", r.achieved_flops / r.peak_flops, "ratio", src, key,
              "achieved / peak FLOP/s of the path")
        if r.arithmetic_intensity is not None:
            f.add("derived.arithmetic_intensity", r.arithmetic_intensity, "count", src, key, "FLOPs / DRAM bytes")
    f.add("ceiling.roofline_dram", r.peak_bandwidth, "byte_rate", src, key, r.ceiling_source)
    f.add(f"ceiling.roofline_{r.math_path.split()[0]}", r.peak_flops, "flop_rate", src, key, r.ceiling_source)


def _subset_sums(f: Facts) -> None:
    """Program-level sums over groups of profiled memory-bound launches (e.g. several passes over the same data)."""
    rs = sorted([x for x in f.launches if x[1].limiter == "memory"], key=lambda x: -x[1].dram_bytes)[:MAX_SUBSET_KERNELS]
    for n in range(2, len(rs) + 1):
        for group in combinations(rs, n):
            src = "ncu reports"
            total = sum(r.dram_bytes for _, r, _ in group)
            biggest = max(r.dram_bytes for _, r, _ in group)
            shares = {key: s for key, _, s in group if s is not None}
            if shares:
                f.add("derived.streaming_share", sum(shares.values()), "ratio", src, None,
                      f"timeline share of {len(shares)} profiled kernels")
            f.add("derived.streaming_dram_bytes", total, "bytes", src, None, f"sum over {n} profiled kernels")
            f.add("derived.streaming_duration_ns", sum(r.duration_ns for _, r, _ in group), "time", src, None,
                  f"sum over {n} profiled kernels")
            f.add("derived.streaming_passes", total / biggest if biggest else n, "ratio", src, None,
                  "bytes of the group / bytes of its largest kernel")
            f.add("derived.streaming_one_pass_bytes", biggest, "bytes", src, None, "largest kernel of the group")
        f.add("derived.streaming_kernels", n, "count", "ncu reports", None, "number of profiled kernels")


# ----------------------------------------------------------------------------- timeline
def _timeline_facts(f: Facts, arts: Artifacts, s: Optional[TimelineSummary]) -> Optional[Timeline]:
    """The timeline facts of the engine's main timeline, which it returns."""
    from ..analysis.consistency import main_timeline  # the engine's choice of timeline (nsys first)
    from ..analysis.idle import blocking_calls
    from ..analysis.timeline import triage

    tl = main_timeline(arts.timelines)
    try:
        tres = triage(tl) if tl is not None and len(tl.kernels) else None
    except Exception:  # a timeline the triage cannot window: no step facts
        tres = None
    step_ns = (tres.step_ns if tres is not None else None) or []
    # what the metrics registry defines is computed there (metrics.TIMELINE); the rest here
    registry = registry_facts(f, TimelineView(s, tl, tres.window, list(step_ns))) \
        if tres is not None and tres.window and s is not None else set()

    def add(name: str, *args) -> None:
        if name not in registry:
            f.add(name, *args)

    if s is not None:
        src, w = s.source, max(s.window_ns, 1.0)
        for name in ("capture_ns", "startup_ns", "window_ns", "busy_ns", "kernel_ns", "copy_ns", "idle_ns"):
            add(f"timeline.{name}", getattr(s, name), "time", src, None, "timeline summary (steady window)")
            if name not in ("window_ns",):
                add(f"timeline.{name[:-3]}_fraction", getattr(s, name) / w, "ratio", src, None, f"{name} / window")
        add("timeline.gpu_busy_fraction", s.busy_fraction, "ratio", src, None, "busy / window")
        f.add("timeline.idle_fraction", 1 - s.busy_fraction, "ratio", src, None, "1 - busy fraction")
        add("timeline.kernel_count", s.kernel_count, "count", src, None, "kernels in the window")
        add("timeline.kernel_ns_per_idle_ns", s.kernel_ns / max(s.idle_ns, 1.0), "ratio", src, None, "kernel / idle time")
        for cause, ns in s.idle_by_cause.items():
            f.add(f"timeline.idle_{cause}_ns", ns, "time", src, None, "idle gaps attributed to a host cause")
            f.add(f"timeline.idle_{cause}_fraction", ns / w, "ratio", src, None, "cause / window")
            if s.idle_ns:
                f.add(f"timeline.idle_{cause}_share", ns / s.idle_ns, "ratio", src, None, "cause / idle time")
        for kind, b in s.copy_bytes.items():
            f.add(f"timeline.copy_bytes_{kind}", b, "bytes", src, None, "bytes copied in the window")
        if s.copy_bytes:
            f.add("timeline.copy_bytes", sum(s.copy_bytes.values()), "bytes", src, None, "bytes copied in the window")
        if s.steps:
            f.add("timeline.steps", s.steps, "count", src, None, "step ranges")
            for name, v in (("window_ns", s.window_ns), ("busy_ns", s.busy_ns), ("kernel_ns", s.kernel_ns),
                            ("idle_ns", s.idle_ns), ("copy_ns", s.copy_ns)):
                f.add(f"timeline.{name}_per_step", v / s.steps, "time", src, None, f"{name} / steps")
            f.add("timeline.kernels_per_step", s.kernel_count / s.steps, "count", src, None, "kernels / steps")
        if s.step_ns_median is not None:
            f.add("timeline.step_ns_median", s.step_ns_median, "time", src, None, "median steady step")
        per = s.steps or s.repeats  # the window's steps: marked ranges, or the repeats of its GPU sequence
        if s.repeats:
            f.add("timeline.repeats", s.repeats, "count", src, None, "repeats of the steady GPU sequence")
            f.add("timeline.steady_repeats", s.repeats - 1, "count", src, None, "repeats after the first (warm-up)")
        if s.onetime_ns:  # one-time work (JIT, lazy loading, autotuning, first uploads) apart from the window
            f.add("timeline.onetime_ns", s.onetime_ns, "time", src, None, "one-time work outside the steady window")
            for cls, ns in s.onetime_by_class.items():
                if ns:
                    f.add(f"timeline.onetime_{cls}_ns", ns, "time", src, None, f"one-time {cls.replace('_', ' ')}")
        for row in s.top_kernels:
            key = KernelName(row.name).key
            _kernel(f, key, row.name)
            f.add("timeline.kernel_total_ns", row.total_ns, "time", src, key, "sum of launches in the window")
            f.add("timeline.kernel_median_ns", row.median_ns, "time", src, key, "median launch in the window")
            f.add("timeline.launches", row.count, "count", src, key, "launches in the window")
            f.add("timeline.kernel_share", row.share, "ratio", src, key, "kernel time / all kernel time in the window")
            if per:
                f.add("timeline.launches_per_step", row.count / per, "count", src, key, "launches in the window / steps")
                f.add("timeline.kernel_ns_per_step", row.total_ns / per, "time", src, key,
                      "the kernel's time in the window / steps")
        f.program_times += [s.window_ns, s.capture_ns, s.capture_ns - s.startup_ns]
        if s.steps:
            f.program_times.append(s.window_ns / s.steps)
        if s.step_ns_median is not None:
            f.program_times.append(s.step_ns_median)
    if tl is None or not len(tl.kernels):
        return tl
    src, k = tl.source, tl.kernels
    for g in tl.gpus:
        for name, v in (("sm_count", g.sm_count), ("l2_bytes", g.l2_bytes), ("memory_bytes", g.memory_bytes)):
            if v:
                f.add(f"device.{name}", v, "bytes" if "bytes" in name else "count", src)
        if g.memory_bandwidth:
            f.add("device.dram_bandwidth", g.memory_bandwidth, "byte_rate", src)
        if g.sm_clock_hz:
            f.add("device.sm_clock", g.sm_clock_hz, "hz", src)
        f.sm_count = f.sm_count or g.sm_count
    dur = k["end_ns"] - k["start_ns"]
    per = (s.steps or s.repeats) if s is not None else None
    once = {KernelName(r.name).key: abs(r.count / per - 1) <= 0.1 for r in s.top_kernels} if per else {}
    starts = k["start_ns"].sort_values()
    if tres is not None and tres.window:
        starts = starts[(starts >= tres.window[0]) & (starts < tres.window[1])]
    if len(starts) > 2:  # one kernel per iteration: its period (the wall time of an iteration, as the GPU sees it)
        f.add("timeline.kernel_period_median_ns", float(starts.diff().dropna().median()), "time", src, None,
              "median start-to-start interval of consecutive kernels in the window")
    add("timeline.kernel_median_ns", float(dur.median()), "time", src, None, "median of all kernels")
    grids: dict[str, int] = {}
    for name, grp in dur.groupby(k["name"]):
        key = KernelName(str(name)).key
        _kernel(f, key, str(name))
        for stat, v in (("median", grp.median()), ("mean", grp.mean()), ("total", grp.sum()), ("min", grp.min()),
                        ("max", grp.max())):
            f.add(f"timeline.kernel_{stat}_ns", v, "time", src, key, f"{stat} over the capture")
        f.add("timeline.launches", len(grp), "count", src, key, "launches in the capture")
        own = k.loc[grp.index, "start_ns"].sort_values()
        if len(own) > 2 and once.get(key, not per):  # "the launch-to-launch period of the pointwise kernel is 2.61 ms": the
            # wall time of an iteration, for a kernel launched once per step (where the window's steps are known)
            f.add("timeline.kernel_period_median_ns", float(own.diff().dropna().median()), "time", src, key,
                  "median start-to-start interval of its launches")
        row = k[k["name"] == name].iloc[0]
        try:
            blocks = int(row["grid_x"]) * int(row["grid_y"]) * int(row["grid_z"])
            threads = int(row["block_x"]) * int(row["block_y"]) * int(row["block_z"])
            f.add("timeline.grid_blocks", blocks, "count", src, key, "grid x*y*z")
            grids[key] = blocks
            f.add("timeline.block_threads", threads, "count", src, key, "block x*y*z")
            if f.sm_count:
                f.add("derived.grid_per_sm", blocks / f.sm_count, "ratio", src, key, "grid / SM count")
                f.add("derived.idle_sms", max(f.sm_count - blocks, 0), "count", src, key, "SM count - grid")
                f.add("derived.busy_sms", min(f.sm_count, blocks), "count", src, key, "min(grid, SM count)")
        except (TypeError, ValueError):
            pass
        for col, metric in (("registers", "timeline.registers"), ("static_smem", "timeline.static_shared_bytes"),
                            ("dynamic_smem", "timeline.dynamic_shared_bytes")):
            try:
                f.add(metric, float(row[col]), "count", src, key)
            except (TypeError, ValueError, KeyError):
                pass
    f.add("timeline.kernel_count_capture", len(k), "count", src, None, "kernels in the capture")
    if per and grids:  # "eight 16-block kernels, 128 blocks in total": the blocks a step launches, over its kernels
        launched = sum(grids.get(KernelName(r.name).key, 0) * r.count / per for r in s.top_kernels)
        if all(abs(launched - g) > 0.5 for g in grids.values()):
            f.add("timeline.grid_blocks_per_step", launched, "count", src, None, "sum over kernels of grid x launches "
                  "per step")
    if len(tl.api):
        add("timeline.sync_calls", int(blocking_calls(tl.api).sum()), "count", src, None, "blocking API calls")
        f.add("timeline.launch_calls", int((tl.api["category"] == "launch").sum()), "count", src, None, "launch API calls")
        allocs = tl.api[tl.api["category"] == "malloc"]
        if len(allocs):
            add("timeline.allocator_calls", len(allocs), "count", src, None, "cudaMalloc/cudaFree-type calls")
            f.add("timeline.allocator_ns", float((allocs["end_ns"] - allocs["start_ns"]).sum()), "time", src, None,
                  "host time in allocator calls")
    _api_facts(f, tl)
    _launch_lag_facts(f, tl)
    ms = tl.sets
    if len(ms):  # memsets: GPU operations of their own (cudaMemset*)
        md = ms["end_ns"] - ms["start_ns"]
        f.add("timeline.memset_count", len(ms), "count", src, None, "memsets in the capture")
        f.add("timeline.memset_median_ns", float(md.median()), "time", src, None, "median memset")
        f.add("timeline.memset_mean_ns", float(md.mean()), "time", src, None, "mean memset")
        f.add("timeline.memset_total_ns", float(md.sum()), "time", src, None, "sum of memset durations")
        f.add("timeline.memset_median_bytes", float(ms["bytes"].median()), "bytes", src, None, "median memset size")
    cp = tl.copies
    if len(cp):
        cd = cp["end_ns"] - cp["start_ns"]
        f.add("timeline.copy_count", len(cp), "count", src, None, "copies in the capture")
        f.add("timeline.copy_total_ns", float(cd.sum()), "time", src, None, "sum of copy durations")
        f.add("timeline.copy_median_ns", float(cd.median()), "time", src, None, "median copy")
        f.add("timeline.copy_mean_ns", float(cd.mean()), "time", src, None, "mean copy")
        kinds = cp.groupby("kind")
        for kind, grp in list(kinds)[:MAX_COPY_GROUPS] if kinds.ngroups > 1 else ():  # "the DtoD copies average 503 us"
            gd = grp["end_ns"] - grp["start_ns"]
            f.add(f"timeline.copy_{kind.lower()}_median_ns", float(gd.median()), "time", src, None, f"median {kind} copy")
            f.add(f"timeline.copy_{kind.lower()}_mean_ns", float(gd.mean()), "time", src, None, f"mean {kind} copy")
            f.add(f"timeline.copy_{kind.lower()}_count_capture", len(grp), "count", src, None,
                  f"{kind} copies over the capture")
            f.add(f"timeline.copy_{kind.lower()}_bytes_capture", float(grp["bytes"].sum()), "bytes", src, None,
                  f"{kind} bytes over the capture")
            f.add(f"timeline.copy_{kind.lower()}_total_ns", float(gd.sum()), "time", src, None,
                  f"sum of {kind} copy durations over the capture")
        f.add("timeline.copy_bytes_capture", float(cp["bytes"].sum()), "bytes", src, None, "bytes over the capture")
        f.add("timeline.copy_median_bytes", float(cp["bytes"].median()), "bytes", src, None, "median copy size")
        host = cp[cp["kind"].isin(["HtoD", "DtoH"])]
        for sel, label in ((cp, "all"), (host, "host")):
            d = float((sel["end_ns"] - sel["start_ns"]).sum()) if len(sel) else 0
            if d > 0:  # over the capture (the registry's timeline.host_copy_bandwidth is the steady window's)
                f.add(f"timeline.{label}_copy_bandwidth_capture", float(sel["bytes"].sum()) / d * 1e9, "byte_rate", src,
                      None, "copied bytes / copy time over the capture")
        pg = host[(host["src"] == "pageable") | (host["dst"] == "pageable")]
        if len(pg):
            f.add("timeline.pageable_copy_bytes_capture", float(pg["bytes"].sum()), "bytes", src, None,
                  "pageable host copies over the capture")
        for (kind, size), grp in list(cp.groupby(["kind", "bytes"]))[:MAX_COPY_GROUPS]:  # "8 HtoD copies of 32 MiB"
            f.add("timeline.copy_group_count", len(grp), "count", src, None, f"{kind} copies of {size:.0f} bytes")
            f.add("timeline.copy_group_bytes", float(size), "bytes", src, None, f"size of {len(grp)} {kind} copies")
    if tres is not None and tres.window and len(cp):
        lo, hi = tres.window
        cpw = rows_in(cp, lo, hi)
        host = cpw[cpw["kind"].isin(["HtoD", "DtoH"])]
        for sel, label in ((cpw, "window"), (host, "host")):
            d = float((sel["end_ns"] - sel["start_ns"]).sum()) if len(sel) else 0
            if d > 0:
                f.add(f"timeline.{label}_copy_bytes", float(sel["bytes"].sum()), "bytes", src, None, "bytes copied in the window")
                add(f"timeline.{label}_copy_bandwidth", float(sel["bytes"].sum()) / d * 1e9, "byte_rate", src, None,
                    "copied bytes / copy time in the window")
        pg = host[(host["src"] == "pageable") | (host["dst"] == "pageable")]
        if len(pg):
            add("timeline.pageable_copy_bytes", float(pg["bytes"].sum()), "bytes", src, None, "pageable host copies")
            if float(host["bytes"].sum()):
                f.add("timeline.pageable_share", float(pg["bytes"].sum()) / float(host["bytes"].sum()), "ratio", src,
                      None, "pageable / host copy bytes")
    if len(step_ns) > 1 and s is not None and s.steps and len(step_ns) != s.steps:
        f.add("timeline.steps_capture", len(step_ns), "count", src, None, "marked step ranges over the capture")
    if len(step_ns) > 1:
        import numpy as np

        add("timeline.first_step_ns", step_ns[0], "time", src, None, "first marked step")
        f.add("timeline.steady_steps", len(step_ns) - 1, "count", src, None, "steps after the first")
        add("timeline.steady_step_median_ns", float(np.median(step_ns[1:])), "time", src, None, "median of later steps")
        f.add("timeline.first_step_ratio", step_ns[0] / float(np.median(step_ns[1:])), "ratio", src, None,
              "first step / median of later steps")
        f.program_times += [step_ns[0], float(np.median(step_ns[1:]))]
    return tl


def _telemetry_facts(f: Facts, t: dict, throttled: Optional[str]) -> None:
    """One telemetry file's SM clock (median and lowest while busy), memory clock and GPU utilisation."""
    from ..telemetry import clock_summary

    c = clock_summary(t)
    if c is None:
        return
    src = c["source"]
    if src != throttled:  # (the throttled file's median is given with its throttling)
        f.add("telemetry.sm_clock_mhz_median", c["sm_clock_median_mhz"] * 1e6, "hz", src, None, "median busy SM clock")
    f.add("telemetry.sm_clock_mhz_min", c["sm_clock_min_mhz"] * 1e6, "hz", src, None, "lowest busy SM clock")
    if c["mem_clock_median_mhz"] is not None:
        f.add("telemetry.mem_clock_mhz_median", c["mem_clock_median_mhz"] * 1e6, "hz", src, None,
              "median busy memory clock")
    f.add("telemetry.gpu_util_pct_median", c["util_median_pct"], "pct", src, None, "median NVML GPU utilisation")
    f.add("telemetry.gpu_util_pct_max", c["util_max_pct"], "pct", src, None, "highest NVML GPU utilisation")


def api_base(name: str) -> str:
    """`cudaLaunchKernel_v7000` -> `cudaLaunchKernel` (nsys suffixes runtime API names with their version)."""
    return re.sub(r"_v\d+$", "", name or "").strip()


def _call_facts(f: Facts, name: str, calls: int, stats: dict[str, float], src: str, via: str) -> None:
    """One host function's statistics: `api.<name>.calls` and `api.<name>.<stat>_ns` (mean, median, total, min,
    max); such a fact matches only a sentence that names the function (concept api:<name>)."""
    f.add(f"api.{name}.calls", int(calls), "count", src, None, f"calls in the capture ({via})")
    for stat, v in stats.items():
        how = "total host time in all calls" if stat == "total" else f"{stat} host time per call"
        f.add(f"api.{name}.{stat}_ns", float(v), "time", src, None, f"{how} ({via})")


def _api_facts(f: Facts, tl) -> None:
    """Statistics of each CUDA runtime/driver API function over the capture (CUPTI runtime/driver activity)."""
    api = tl.api
    if not len(api) or "name" not in api:
        return
    dur = (api["end_ns"] - api["start_ns"]).astype(float)
    for name, grp in dur.groupby(api["name"].fillna("").map(api_base)):
        if name:
            _call_facts(f, name, len(grp), {"mean": grp.mean(), "median": grp.median(), "total": grp.sum(),
                                            "min": grp.min(), "max": grp.max()}, tl.source, "CUPTI API activity")


def _op_facts(f: Facts, tl) -> None:
    """The same statistics for each framework op of a PyTorch profiler trace (Kineto cpu_op, `aten::item`), from
    the reader's per-op table: `api.aten::item.calls`, `api.aten::item.median_ns`, ..."""
    for name, calls, total, med, lo, hi in tl.ops[["name", "calls", "total_ns", "median_ns", "min_ns",
                                                   "max_ns"]].itertuples(index=False):
        if name and calls:
            _call_facts(f, name, calls, {"mean": total / calls, "median": med, "total": total, "min": lo, "max": hi},
                        tl.source, "Kineto cpu_op")


def _rank_kernel_facts(f: Facts, arts: Artifacts) -> None:
    """Each rank's own launches of each kernel over the capture ("rank 0's all-reduce averages 10.26 ms, rank 1's
    1.23 ms"; "rank 1 launches 396 GEMMs, rank 0 198"): the timeline's kernel statistics mix the ranks."""
    from ..analysis.ranks import rank_views

    views = rank_views(arts)
    if len(views) < 2:
        return
    for v in views:
        if not len(v.kernels):
            continue
        ns = v.kernels["end_ns"] - v.kernels["start_ns"]
        for name, d in ns.groupby(v.kernels["name"]):
            key = KernelName(name).key
            _kernel(f, key, name)
            say = f"rank {v.rank}, whole capture"  # (named without "rank.": a kernel's statistic on one rank does
            # not pin every number of a sentence about ranks to that kernel)
            f.add("timeline.rank_launches", len(d), "count", v.source, key, say)
            for stat, x in (("mean", d.mean()), ("median", d.median()), ("max", d.max())):
                f.add(f"timeline.rank_kernel_{stat}_ns", float(x), "time", v.source, key, say)


def _rank_facts(f: Facts, d: Diagnosis) -> None:
    for r in d.ranks:
        src = r.source or "ranks"
        for name in ("step_p50_ns", "step_p90_ns", "step_p99_ns", "step_max_ns", "compute_ns_per_step",
                     "collective_ns_per_step", "collective_enter_lag_ns"):
            v = getattr(r, name)
            if v:
                f.add(f"rank.{name}", v, "time", src, None, f"rank {r.rank}")
        if r.sm_clock_mhz_median:
            f.add("rank.sm_clock", r.sm_clock_mhz_median * 1e6, "hz", src, None, f"rank {r.rank}")
        f.add("rank.steps", r.steps, "count", src, None, f"rank {r.rank}")
    for name in ("step_p50_ns", "compute_ns_per_step", "collective_ns_per_step", "sm_clock_mhz_median"):
        vals = [getattr(r, name) for r in d.ranks if getattr(r, name)]
        for a in vals:
            for b in vals:
                if a != b:
                    f.add(f"rank.{name}_ratio", a / b, "ratio", "ranks", None, "ratio between ranks")
                    f.add(f"rank.{name}_difference", abs(a - b), "time", "ranks", None, "difference between ranks")


def _report_sass(arts: Artifacts) -> list:
    """SASS held inside .ncu-rep files (what the agent's sass tool shows) when no SASS dump was given."""
    from ..artifacts import ncu_report
    from ..errors import KernelProfilerError

    out = []
    for p in arts.files:
        if str(p).endswith(".ncu-rep"):
            try:
                out += list(ncu_report.load_sass(p))
            except (KernelProfilerError, OSError, ImportError):
                continue
    return out


# ----------------------------------------------------------------------------- all
_SUMMED = ("gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum", "dram__bytes.sum")


def _report_sums(f: Facts, profiles: list[KernelProfile]) -> None:
    """'1,610.7 MB read per step' over five unfused kernels: a metric summed over every profiled kernel."""
    if len(profiles) < 2:
        return
    for name in _SUMMED:
        vals = [k.get(name) for k in profiles if k.get(name) is not None]
        if len(vals) >= 2:
            f.add_unit(name, sum(float(v) for v in vals), profiles[0].units.get(name), "ncu reports", None,
                       f"sum over the {len(vals)} profiled kernels")
    rw = [(k.get("dram__bytes_read.sum"), k.get("dram__bytes_write.sum")) for k in profiles]
    if len(rw) >= 2 and all(r is not None and w is not None for r, w in rw):
        f.add_unit("dram__bytes_read.sum+dram__bytes_write.sum", sum(float(r) + float(w) for r, w in rw),
                   profiles[0].units.get("dram__bytes_read.sum"), "ncu reports", None,
                   f"sum over the {len(rw)} profiled kernels")


def _launch_lag_facts(f: Facts, tl) -> None:
    """Per process: the median time from the start of a marked step to its first kernel launch call, the host work
    each step does before the GPU gets anything (a rank's data loading shows here)."""
    import numpy as np

    from ..analysis.steady import steps

    st, api = steps(tl), tl.api
    if len(st) < 2 or not len(api) or "category" not in api:
        return
    launches = api[api["category"] == "launch"]
    for pid, ranges in st.groupby(st["pid"].fillna(-1)):
        calls = np.sort(launches[launches["pid"].fillna(-1) == pid]["start_ns"].to_numpy(np.float64))
        if not len(calls):
            continue
        lo, hi = ranges["start_ns"].to_numpy(np.float64), ranges["end_ns"].to_numpy(np.float64)
        first = calls[np.minimum(np.searchsorted(calls, lo), len(calls) - 1)]
        lag = (first - lo)[(first >= lo) & (first < hi)]
        if len(lag) >= 2:
            f.add("timeline.first_launch_lag_ns", float(np.median(lag)), "time", tl.source, None,
                  f"median time from a step's start to its first launch call (pid {pid:.0f})")


def gather_facts(arts: Artifacts, diagnosis: Diagnosis) -> Facts:
    f = Facts(timeline=diagnosis.timeline, diagnosis=diagnosis)
    for k in arts.kernel_profiles:  # every source (rep, CSV pages): an answer may cite any of them
        key = KernelName(k.name).key
        _kernel(f, key, k.name)
        _kernel_facts(f, k, key)
        if k.get("gpu__time_duration.sum") is not None:
            f.ncu_durations.append(float(k.get("gpu__time_duration.sum")))
        if k.grid:
            f.add("launch.grid", math.prod(k.grid), "count", k.source, key)
        if k.block:
            f.add("launch.block", math.prod(k.block), "count", k.source, key)
        f.sm_count = f.sm_count or (int(k.get("launch__sm_count")) if k.get("launch__sm_count") else None)
    for k in dedupe(arts.kernel_profiles):
        key = KernelName(k.name).key
        if key not in f.profiles or len(k.metrics) > len(f.profiles[key].metrics):
            f.profiles[key] = k
    shares = {KernelName(r.name).key: r.share for r in (diagnosis.timeline.top_kernels if diagnosis.timeline else [])}
    for k in dedupe(arts.kernel_profiles):
        r = compute_roofline(k)
        key = KernelName(k.name).key
        if r is not None:
            f.rooflines.setdefault(key, r)
            f.launches.append((key, r, shares.get(key)))
            _roofline_facts(f, r, k.source, key)
    _subset_sums(f)
    _report_sums(f, dedupe(arts.kernel_profiles))
    for s in list(arts.sass) or _report_sass(arts):
        key = KernelName(s.name).key
        _kernel(f, key, s.name)
        f.sass_ops[key] = dict(s.opcode_counts)
        for op, n in s.opcode_counts.items():
            f.add(f"sass.{op}", n, "count", s.source, key)
        for combo in (("LDS", "STS"), ("LDL", "STL"), ("RED", "ATOM"), TENSOR_OPS, ("LDG", "STG")):
            n = sum(v for op, v in s.opcode_counts.items() if op.startswith(combo))
            f.add(f"sass.{'+'.join(combo)}", n, "count", s.source, key, "sum of SASS opcode counts")
    for r in arts.resources:
        key = KernelName(r.name).key
        for name in ("registers", "stack_bytes", "spill_load_bytes", "spill_store_bytes", "shared_bytes", "local_bytes"):
            v = getattr(r, name)
            if v is not None:
                f.add(f"resource.{name}", v, "count", r.source, key)
                if name != "registers":
                    f.add(f"resource.{name}", v, "bytes", r.source, key)
        had = f.spills.get(key, (0, 0))  # a ptxas log and a resource-usage dump of one kernel: keep what either says
        f.spills[key] = (max(had[0], r.stack_bytes or 0),
                         max(had[1], (r.spill_store_bytes or 0) + (r.spill_load_bytes or 0)))
    main = _timeline_facts(f, arts, diagnosis.timeline)
    for tl in arts.timelines:  # a PyTorch profiler trace beside an nsys capture (another run of the program): its
        _op_facts(f, tl)  # op and API statistics are facts of that artifact too
        if tl is not main:
            _api_facts(f, tl)
    from ..telemetry import POWER_REASONS, THERMAL_REASONS, clock_throttling  # NVML samples given with the captures

    th = clock_throttling(arts.telemetry) if arts.telemetry else None
    if th is not None:
        src = th.get("source") or "telemetry"
        f.add("telemetry.throttled_sample_fraction", th["share"], "ratio", src, None, "throttled / busy samples")
        f.add("telemetry.sm_clock_mhz_median", th["clock_median_mhz"] * 1e6, "hz", src, None, "median busy SM clock")
        f.add("telemetry.sm_clock_mhz_max", th["clock_max_mhz"] * 1e6, "hz", src, None, "maximum SM clock")
        f.add("telemetry.clock_ratio", th["clock_max_mhz"] / th["clock_median_mhz"], "ratio", src, None, "max / median clock")
        f.add("telemetry.busy_samples", th["busy"], "count", src, None, "busy samples")
        f.add("telemetry.throttled_samples", th["throttled"], "count", src, None, "throttled samples")
        f.add("telemetry.thermal_reasons", len(set(th["reasons"]) & THERMAL_REASONS), "count", src, None,
              "thermal clock-event reasons while busy")
        f.add("telemetry.power_reasons", len(set(th["reasons"]) & POWER_REASONS), "count", src, None,
              "power clock-event reasons while busy")
    for t in arts.telemetry:  # every file's clocks and utilisation (a rank's telemetry beside another's)
        _telemetry_facts(f, t, (th.get("source") or "telemetry") if th is not None else None)
    _rank_facts(f, diagnosis)
    _rank_kernel_facts(f, arts)
    for log in arts.logs:  # what the program printed about itself: described by the words of its line
        for v in log.values:
            family, factor = family_and_factor(v.unit)
            f.add(f"log.line{v.line}", v.value * factor, family, f"{log.source}:{v.line}", None, None,
                  text_concepts(v.text) | {"log"})
    spec = devices.lookup(diagnosis.device or (arts.kernel_profiles[0].device if arts.kernel_profiles else None))
    if spec is not None:
        f.add("device.sm_count", spec.sm_count, "count", "datasheet")
        f.sm_count = f.sm_count or spec.sm_count
        f.add("device.dram_bandwidth", spec.dram_bandwidth, "byte_rate", "datasheet")
        if spec.link_bandwidth:
            f.add("device.link_bandwidth", spec.link_bandwidth, "byte_rate", "datasheet")
        for name in ("fp32", "fp64", "tf32_tensor", "bf16_tensor", "fp8_tensor"):
            if getattr(spec, name):
                f.add(f"device.{name}", getattr(spec, name), "flop_rate", "datasheet")
    return f.finish()
