"""The critic: checks an agent's four-part answer against the captures it cites.

An `Answer` is what an agent (or kernel-profiler itself) says: the bottleneck,
the evidence numbers, the mechanism, and the fix with the metric it should
move. `critique` runs deterministic checks on it and returns a `Verdict`:

  parts        all four parts are present and non-empty
  numbers      every cited number exists in the artifacts or is derived from them by the engine
  mechanism    the mechanism is tied to the gap to the roofline (kernel-bound) or to idle/copy time (host/transfer)
  fix          the fix names a metric and a direction
  replay_time  no ncu (replayed, serialized) kernel duration is quoted as the program's / step's time
  ceilings     no achieved rate above its ceiling
  near_peak    a kernel the engine finds near its roofline is not given an invented problem
  not_a_dump   a list of counters without a mechanism is not an answer

Each check is a small pure function of (answer, facts) returning a list of
one-line reasons; `critique` composes them.
"""
from __future__ import annotations

import json
import math
import re
from bisect import bisect_left
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Literal, Optional

from pydantic import BaseModel, Field, ValidationError

from .artifacts import load_paths
from .artifacts.tables import Artifacts
from . import devices
from .diagnosis import Diagnosis, Finding, Roofline
from .roofline import ceilings as roofline_ceilings
from .errors import KernelProfilerError

REL_TOL = 0.02
from .roofline import NEAR_PEAK_GAP  # noqa: E402 (one threshold for the engine and the critic)
DUMP_METRICS = 6
# Architecture constants an answer may quote without a capture holding them:
# warp size, sector/line sizes, bank count, float sizes, powers of two.
CONSTANTS = [float(2**i) for i in range(0, 11)] + [3.0, 33.0]


class AnswerFormatError(KernelProfilerError):
    """The answer text is neither Diagnosis/Answer JSON nor a Markdown four-part answer."""


# ---------------------------------------------------------------- models
class EvidenceItem(BaseModel):
    metric: Optional[str] = None
    value: float
    unit: Optional[str] = None
    artifact: Optional[str] = None
    kernel: Optional[str] = None
    text: str = ""


class Answer(BaseModel):
    """The four-part answer an agent gives."""

    bottleneck: str
    evidence: list[EvidenceItem] = Field(default_factory=list)
    mechanism: str
    fix: str
    fix_metric: Optional[str] = None
    fix_direction: Optional[Literal["increase", "decrease"]] = None
    bound: Optional[str] = None
    mechanism_id: Optional[str] = None
    kernel: Optional[str] = None
    also_found: list[str] = Field(default_factory=list)  # one-time work etc., reported apart

    @classmethod
    def from_diagnosis(cls, d: Diagnosis) -> "Answer":
        fix = ""
        if d.fix is not None:
            fix = d.fix.change + (f" Expected: {d.fix.expected}." if d.fix.expected else "")
        return cls(
            bottleneck=d.bottleneck,
            evidence=[EvidenceItem(metric=e.metric, value=e.value, unit=e.unit, artifact=e.artifact,
                                   kernel=e.kernel, text=e.meaning) for e in d.evidence],
            mechanism=d.explanation,
            fix=fix,
            fix_metric=d.fix.metric if d.fix else None,
            fix_direction=d.fix.direction if d.fix else None,
            bound=d.bound,
            mechanism_id=d.mechanism,
            kernel=d.primary.kernel,
            also_found=[f.bottleneck + (f" Fix: {f.fix.change}" if f.fix else "") for f in d.secondary
                        if f.mechanism == "startup_dominated" and f is not d.primary],
        )


class Verdict(BaseModel):
    verdict: Literal["accept", "reject"]
    reasons: list[str] = Field(default_factory=list)
    checks: dict[str, bool] = Field(default_factory=dict)


# ---------------------------------------------------------------- numbers in text
_NUM = r"(?<![\w.])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?P<exp>[eE][-+]?\d+)?(?P<mult>[kKMG](?![A-Za-z]))?"
_TIME_UNITS = {"ns": 1.0, "nanoseconds": 1.0, "nsec": 1.0, "us": 1e3, "µs": 1e3, "μs": 1e3, "usec": 1e3,
               "microseconds": 1e3, "ms": 1e6, "msec": 1e6, "milliseconds": 1e6, "s": 1e9, "sec": 1e9,
               "second": 1e9, "seconds": 1e9}
_BYTE_PREFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
                "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}
_COUNT_NOUNS = (r"sectors?|wavefronts?|requests?|registers?|blocks?|threads?|warps?|launches|launch|kernels?|steps?|"
                r"SMs?|instructions?|inst|conflicts?|way|banks?|cycles?|lanes?|iterations?|transactions?|"
                r"elements?|rows?|columns?|flops?|FLOPs?|atomics?|copies")
_UNIT = (r"(?P<unit>"
         r"(?:[kKMGT]i?)?(?:B|bytes?)/s(?:ec)?|[kKMGTP]?FLOP/s|[kKMGTP]?FLOPS|TFLOPs|"
         r"(?:[kKMGT]i?)?(?:B|bytes?|byte)(?:/(?:sector|request|inst|thread|block|flop))?|"
         r"[kMG]?Hz|%|percent|x|×|"
         r"nanoseconds|microseconds|milliseconds|seconds?|nsec|usec|msec|sec|ns|us|µs|μs|ms|s|"
         rf"(?:{_COUNT_NOUNS})(?:/\w+)?"
         r")(?![A-Za-z0-9])")
_QTY = re.compile(_NUM + r"(?:\s?-?\s?)" + _UNIT)
_BARE = re.compile(_NUM + r"(?![\w])")
_BACKTICK = re.compile(r"`[^`]*`")
_METRIC_TOKEN = re.compile(r"\b[a-z0-9]+__[\w.]+(?:\s*[/+]\s*[a-z0-9]+__[\w.]+)*|\b(?:timeline|derived|sass)\.[\w.+/]+")
_ARTIFACT_TOKEN = re.compile(r"[\w./-]+\.(?:ncu-rep|sqlite|nsys-rep|csv|json(?:\.gz)?|txt|log)\b")


@dataclass(frozen=True)
class Quantity:
    """A number as written, converted to base units, with the tolerance its writing implies."""

    written: str
    value: float  # in base units (ns, byte, byte/s, flop/s, hz; % kept as percent; ratio/count raw)
    family: str  # time | bytes | byte_rate | flop_rate | hz | pct | ratio | count
    tol: float  # absolute tolerance from the precision as written, in base units
    alt: Optional[float] = None  # KB/MB/GB read as KiB/MiB/GiB (writers mix them)


def _family_and_factor(unit: Optional[str]) -> tuple[str, float]:
    u = (unit or "").strip()
    if not u:
        return "count", 1.0
    if u in ("%", "percent"):
        return "pct", 1.0
    if u in ("x", "×", "ratio"):
        return "ratio", 1.0
    if u in _TIME_UNITS:
        return "time", _TIME_UNITS[u]
    m = re.fullmatch(r"([kKMGT]i?)?(?:B|bytes?|byte)/s(?:ec)?", u)
    if m:
        return "byte_rate", _BYTE_PREFIX[m.group(1) or ""]
    m = re.fullmatch(r"([kKMGTP])?FLOP(?:/s|S|s)", u, flags=0) or re.fullmatch(r"([kKMGTP])?flop/s", u)
    if m:
        return "flop_rate", {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}[m.group(1) or ""]
    m = re.fullmatch(r"([kKMGT]i?)?(?:B|bytes?|byte)", u)
    if m:
        return "bytes", _BYTE_PREFIX[m.group(1) or ""]
    m = re.fullmatch(r"([kMG])?Hz|hz", u)
    if m:
        return "hz", {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9}[(m.group(1) if m.lastindex else "") or ""]
    return "count", 1.0


def _to_quantity(num: str, exp: Optional[str], mult: Optional[str], unit: Optional[str]) -> Quantity:
    digits = num.replace(",", "")
    frac = digits.partition(".")[2]
    step = 10.0 ** (-len(frac)) if frac else 1.0
    scale = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}.get(mult or "", 1.0) * (10.0 ** int(exp[1:]) if exp else 1.0)
    fam, factor = _family_and_factor(unit)
    v = float(digits) * scale * factor
    alt = None
    pm = re.match(r"([kKMGT])(?:B|byte)", unit or "")
    if pm:
        alt = v * 1.024 ** " KMGT".index(pm.group(1).upper())
    return Quantity(written=f"{num}{exp or ''}{mult or ''}{(' ' + unit) if unit else ''}", value=v, family=fam,
                    tol=0.5 * step * scale * factor, alt=alt)


def _scrub(text: str) -> str:
    """Text without code spans, metric names and file names (their digits are not quantities)."""
    text = _BACKTICK.sub(" ", text or "")
    text = _METRIC_TOKEN.sub(" ", text)
    return _ARTIFACT_TOKEN.sub(" ", text)


def quantities(text: str) -> list[Quantity]:
    """Every number that carries a unit in `text`."""
    return [_to_quantity(m["num"], m["exp"], m["mult"], m["unit"]) for m in _QTY.finditer(_scrub(text))]


def _evidence_quantity(e: EvidenceItem) -> Quantity:
    r = repr(float(e.value))
    frac = r.partition(".")[2].rstrip("0") if "e" not in r else ""
    fam, factor = _family_and_factor(e.unit)
    return Quantity(written=f"{e.value:g}{(' ' + e.unit) if e.unit else ''}", value=e.value * factor, family=fam,
                    tol=0.5 * 10.0 ** (-len(frac)) * factor if frac else 0.5 * factor)


# ---------------------------------------------------------------- facts from the capture
@dataclass
class Facts:
    """What the capture (and the engine's reading of it) says, as numbers to check against."""

    pool: dict[str, list[float]] = field(default_factory=dict)  # family -> sorted values
    named: dict[str, list[float]] = field(default_factory=dict)  # metric name -> values (any kernel)
    ncu_durations: list[float] = field(default_factory=list)  # ns, per profiled kernel
    program_times: list[float] = field(default_factory=list)  # ns: step/window/capture times from the timeline
    has_timeline: bool = False
    rooflines: list[Roofline] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    peak_bandwidth: Optional[float] = None
    peak_flops: Optional[float] = None
    ceilings_quoted: list[float] = field(default_factory=list)  # peaks an answer may quote as peaks

    def add(self, family: str, value) -> None:
        try:
            v = float(value)
        except (TypeError, ValueError):
            return
        if math.isfinite(v):
            self.pool.setdefault(family, []).append(abs(v))

    def add_named(self, name: str, value, unit: Optional[str]) -> None:
        try:
            v = float(value)
        except (TypeError, ValueError):
            return
        if not math.isfinite(v):
            return
        self.named.setdefault(name, []).append(v)
        fam, factor = _family_and_factor(unit)
        if unit == "byte/s":
            fam = "byte_rate"
        self.add(fam, v * factor)

    def finish(self) -> "Facts":
        for k in self.pool:
            self.pool[k] = sorted(set(self.pool[k]))
        return self


def _add_roofline(f: Facts, r: Roofline) -> None:
    f.rooflines.append(r)
    f.add("flop_rate", r.peak_flops); f.add("flop_rate", r.achieved_flops)
    f.add("byte_rate", r.peak_bandwidth); f.add("byte_rate", r.achieved_bandwidth)
    f.add("time", r.floor_ns); f.add("time", r.duration_ns); f.add("time", r.duration_ns - r.floor_ns)
    f.add("count", r.flops); f.add("bytes", r.dram_bytes)
    if r.arithmetic_intensity is not None:
        f.add("count", r.arithmetic_intensity)
    f.add("ratio", r.gap)
    if r.gap:
        for x in (1.0 / r.gap, r.gap - 1.0, 1.0 - 1.0 / r.gap):
            f.add("ratio", x)
    if r.needed_floor_ns and r.needed_gap:  # the floor for the bytes the work needs (schema 1.1)
        f.add("time", r.needed_floor_ns); f.add("time", r.duration_ns - r.needed_floor_ns)
        f.add("bytes", r.needed_bytes); f.add("ratio", r.needed_gap)
        for x in (1.0 / r.needed_gap, r.needed_gap - 1.0, 1.0 - 1.0 / r.needed_gap):
            f.add("ratio", x)
    if r.peak_flops:
        f.add("ratio", r.achieved_flops / r.peak_flops)
    if r.peak_bandwidth:
        f.add("ratio", r.achieved_bandwidth / r.peak_bandwidth)


def _all_findings(d: Diagnosis) -> list[Finding]:
    return [d.primary] + list(d.secondary)


def _add_ranks(f: "Facts", diagnosis: Diagnosis) -> None:
    """Multi-rank tables: every per-rank number, and ratios between ranks of the same quantity."""
    fields = ("step_p50_ns", "step_p90_ns", "step_p99_ns", "step_max_ns", "compute_ns_per_step",
              "collective_ns_per_step", "collective_enter_lag_ns")
    for name in fields:
        vals = [getattr(r, name) for r in diagnosis.ranks if getattr(r, name)]
        for v in vals:
            f.add("time", v)
        for a in vals:
            for b in vals:
                if a != b:
                    f.add("ratio", a / b)
    clocks = [r.sm_clock_mhz_median for r in diagnosis.ranks if r.sm_clock_mhz_median]
    for c in clocks:
        f.add("count", c)
        for d in clocks:
            if c != d:
                f.add("ratio", c / d)
    for r in diagnosis.ranks:
        f.add("count", r.rank); f.add("count", r.steps)


def gather_facts(arts: Artifacts, diagnosis: Diagnosis) -> Facts:
    """The pool of known numbers: raw metrics, timeline summary, rooflines, the engine's evidence."""
    f = Facts()
    for k in arts.kernel_profiles:
        for m, v in k.metrics.items():
            f.add_named(m, v, k.units.get(m))
        for rule in k.rules:  # ncu's guided-analysis estimates are numbers the report holds too
            try:
                sp = float(rule.get("speedup") or 0.0)
            except (TypeError, ValueError):
                continue
            if sp:
                f.add("ratio", sp / 100.0)
                f.add("count", sp)
        d = k.metrics.get("gpu__time_duration.sum")
        if d is not None:
            f.ncu_durations.append(float(d))
        for dims in (k.grid, k.block):
            if dims:
                for x in dims:
                    f.add("count", x)
                f.add("count", math.prod(dims))
        # every ceiling the report gives (per math path, DRAM): an answer may quote these as peaks
        try:
            ceil, _ = roofline_ceilings(k)
        except Exception:  # a profile without the peak metrics: no ceilings from it
            ceil = {}
        for path, v in ceil.items():
            f.add("byte_rate" if path == "dram" else "flop_rate", v)
            f.ceilings_quoted.append(v)
        if ceil.get("dram"):
            f.peak_bandwidth = max(f.peak_bandwidth or 0.0, ceil["dram"])
    for s in arts.sass:
        for op, n in s.opcode_counts.items():
            f.add("count", n)
    for r in arts.resources:
        for x in (r.registers, r.stack_bytes, r.spill_load_bytes, r.spill_store_bytes, r.shared_bytes, r.local_bytes):
            if x is not None:
                f.add("count", x); f.add("bytes", x)
    for tl in arts.timelines:
        f.has_timeline = f.has_timeline or len(tl.kernels) > 0
        for g in tl.gpus:
            for x in (g.sm_count, g.l2_bytes, g.memory_bytes):
                if x is not None:
                    f.add("count", x); f.add("bytes", x)
            if g.memory_bandwidth:
                f.add("byte_rate", g.memory_bandwidth)
            if g.sm_clock_hz:
                f.add("hz", g.sm_clock_hz)
        if len(tl.kernels):
            dur = tl.kernels["end_ns"] - tl.kernels["start_ns"]
            for _, grp in dur.groupby(tl.kernels["name"]):
                for x in (grp.median(), grp.mean(), grp.sum(), grp.min(), grp.max()):
                    f.add("time", x)
                f.add("count", len(grp))
        if len(tl.copies):
            cd = tl.copies["end_ns"] - tl.copies["start_ns"]
            f.add("time", cd.sum()); f.add("time", cd.median())
            f.add("bytes", tl.copies["bytes"].sum()); f.add("bytes", tl.copies["bytes"].median())
            f.add("count", len(tl.copies))
            if cd.sum() > 0:
                f.add("byte_rate", tl.copies["bytes"].sum() / cd.sum() * 1e9)
    s = diagnosis.timeline
    if s is not None:
        f.has_timeline = True
        win = max(s.window_ns, 1.0)
        for name in ("capture_ns", "startup_ns", "window_ns", "busy_ns", "kernel_ns", "copy_ns", "idle_ns"):
            v = getattr(s, name)
            f.add("time", v); f.add_named(f"timeline.{name}", v, "ns")
            f.add("ratio", v / win)
        f.add("ratio", s.busy_fraction); f.add("ratio", 1.0 - s.busy_fraction)
        f.add_named("timeline.gpu_busy_fraction", s.busy_fraction, "ratio")
        f.add_named("timeline.busy_fraction", s.busy_fraction, "ratio")
        f.add("count", s.kernel_count); f.add_named("timeline.kernel_count", s.kernel_count, None)
        for cause, ns in s.idle_by_cause.items():
            f.add("time", ns); f.add("ratio", ns / win); f.add_named(f"timeline.idle_{cause}_ns", ns, "ns")
            if s.idle_ns:
                f.add("ratio", ns / s.idle_ns)
        for kind, b in s.copy_bytes.items():
            f.add("bytes", b)
            if s.copy_ns:
                f.add("byte_rate", b / s.copy_ns * 1e9)
        if s.copy_bytes:
            f.add("bytes", sum(s.copy_bytes.values()))
        f.program_times += [s.window_ns, s.capture_ns, s.capture_ns - s.startup_ns]
        if s.steps:
            f.add("count", s.steps)
            for v in (s.busy_ns / s.steps, s.kernel_ns / s.steps):
                f.add("time", v)  # GPU time per step: real, but not the step's wall time
            f.add("time", s.window_ns / s.steps); f.program_times.append(s.window_ns / s.steps)
        if s.step_ns_median is not None:
            f.add("time", s.step_ns_median); f.add_named("timeline.step_ns_median", s.step_ns_median, "ns")
            f.program_times.append(s.step_ns_median)
        for row in s.top_kernels:
            f.add("time", row.total_ns); f.add("time", row.median_ns); f.add("count", row.count)
            f.add("ratio", row.share)
            if row.count:
                f.add("time", row.total_ns / row.count)
    _add_ranks(f, diagnosis)
    for fi in _all_findings(diagnosis):
        f.findings.append(fi)
        if fi.share is not None:
            f.add("ratio", fi.share)
        for e in fi.evidence:
            f.add_named(e.metric, e.value, e.unit)
            f.add("count", e.value)
        if fi.fix is not None:
            cur, tgt = fi.fix.current_value, fi.fix.target_value
            for x in (cur, tgt):
                if x is not None:
                    f.add("count", x)
            if cur and tgt:
                f.add("ratio", cur / tgt); f.add("ratio", tgt / cur)
        if fi.roofline is not None:
            _add_roofline(f, fi.roofline)
    if diagnosis.roofline is not None and diagnosis.roofline not in f.rooflines:
        _add_roofline(f, diagnosis.roofline)
    for r in f.rooflines:
        f.peak_bandwidth = max(f.peak_bandwidth or 0.0, r.peak_bandwidth)
        f.peak_flops = max(f.peak_flops or 0.0, r.peak_flops)
    spec = devices.lookup(diagnosis.device or (arts.kernel_profiles[0].device if arts.kernel_profiles else None))
    sms = {g.sm_count for tl in arts.timelines for g in tl.gpus if g.sm_count}
    if spec is not None:
        sms.add(spec.sm_count)
        f.add("count", spec.sm_count)
        f.add("byte_rate", spec.dram_bandwidth)
        for x in (spec.fp32, spec.fp64, spec.tf32_tensor, spec.bf16_tensor, spec.fp8_tensor):
            if x:
                f.add("flop_rate", x); f.ceilings_quoted.append(x)
        f.ceilings_quoted.append(spec.dram_bandwidth)
    for r in f.rooflines:
        f.ceilings_quoted += [r.peak_flops, r.peak_bandwidth]
    blocks = {math.prod(k.grid) for k in arts.kernel_profiles if k.grid}
    for fi in f.findings:
        blocks |= {e.value for e in fi.evidence if e.metric in ("launch__grid_size", "timeline.grid_blocks")}
    for sm in sms:
        for b in blocks:
            if 0 < b < sm:
                f.add("count", sm - b); f.add("ratio", b / sm)
    return f.finish()


# ---------------------------------------------------------------- matching
def _close(a: float, b: float, tol: float) -> bool:
    return abs(a - b) <= max(REL_TOL * max(abs(a), abs(b)), tol)


def _candidates(q: Quantity) -> list[tuple[str, float, float]]:
    """(pool family, value, tolerance) alternatives a quantity may match."""
    v, t = abs(q.value), q.tol
    if q.family == "pct":
        return [("pct", v, t), ("ratio", v / 100, t / 100), ("count", v / 100, t / 100), ("count", v, t)]
    if q.family == "ratio":
        return [("ratio", v, t), ("count", v, t), ("pct", v * 100, t * 100)]
    if q.family == "bytes":
        out = [("bytes", v, t), ("count", v, t)]
        if q.alt:
            out += [("bytes", q.alt, t * q.alt / max(v, 1e-30)), ("count", q.alt, t * q.alt / max(v, 1e-30))]
        return out
    if q.family == "count":
        return [(fam, v, t) for fam in ("count", "ratio", "bytes", "pct", "time")]
    return [(q.family, v, t)]


def _in_sorted(values: list[float], v: float, tol: float) -> bool:
    if not values:
        return False
    lo, hi = v - max(REL_TOL * v, tol), max(v / (1 - REL_TOL), v + tol)
    i = bisect_left(values, lo)
    return i < len(values) and values[i] <= hi * (1 + 1e-12)


def known(q: Quantity, facts: Facts) -> bool:
    if q.family in ("count", "bytes", "ratio", "pct") and any(_close(c, q.value, q.tol) for c in CONSTANTS):
        return True
    return any(_in_sorted(facts.pool.get(fam, []), v, t) for fam, v, t in _candidates(q))


def _named_values(metric: str, facts: Facts) -> Optional[list[float]]:
    """Values of a metric the capture holds: exact, or a ratio/sum of metrics it holds."""
    if metric in facts.named:
        return facts.named[metric]
    parts = re.split(r"\s*/\s*", metric)
    if len(parts) == 2 and all(p in facts.named for p in parts):
        return [a / b for a in facts.named[parts[0]] for b in facts.named[parts[1]] if b]
    return None


def _fmt(v: float) -> str:
    return f"{v:.4g}"


def _human(q: Quantity) -> str:
    return q.written


# ---------------------------------------------------------------- the checks (pure)
def check_parts(a: Answer, facts: Facts) -> list[str]:
    out = []
    for name, val in (("bottleneck", a.bottleneck), ("mechanism", a.mechanism), ("fix", a.fix)):
        if not (val or "").strip():
            out.append(f"The {name} part is missing: add a `## {name.capitalize()}` section.")
    if not a.evidence:
        out.append("The evidence part is missing: cite two or three measured numbers, each with its artifact.")
    return out


def _text_quantities(a: Answer) -> list[tuple[str, Quantity]]:
    out = [("bottleneck", q) for q in quantities(a.bottleneck)]
    out += [("mechanism", q) for q in quantities(a.mechanism)]
    for e in a.evidence:
        out += [("evidence", q) for q in quantities(e.text)]
    return out


def check_numbers(a: Answer, facts: Facts) -> list[str]:
    out: list[str] = []
    for e in a.evidence:
        q = _evidence_quantity(e)
        vals = _named_values(e.metric, facts) if e.metric else None
        if vals:
            alts = [q.value]
            if q.family == "pct":
                alts.append(q.value / 100)
            elif q.family in ("ratio", "count"):
                alts.append(q.value * 100)
            if not any(_close(v, x, q.tol) for v in vals for x in alts):
                nearest = min(vals, key=lambda v: abs(v - q.value))
                out.append(f"Evidence {e.metric} = {_fmt(e.value)}{' ' + e.unit if e.unit else ''} does not match the "
                           f"capture, which holds {_fmt(nearest)}: quote the number the artifact reports.")
        elif not known(q, facts):
            label = e.metric or (e.text[:60] if e.text else "evidence")
            out.append(f"Evidence number {_fmt(e.value)}{' ' + e.unit if e.unit else ''} ({label}) is in no artifact "
                       f"and not derivable from them: cite a measured value and where it was read.")
    for where, q in _text_quantities(a):
        if not known(q, facts):
            out.append(f"The number '{_human(q)}' in the {where} matches nothing in the capture or its roofline: "
                       f"correct it or cite where it comes from.")
    return out


_HOST_WORDS = re.compile(r"\b(host|cpu|launch(es|ing)? overhead|synchroni[sz]|\.item\(|idle|pageable|pinned|memcpy|"
                         r"copies|copy|transfer|start-?up|dispatch)\w*", re.I)
_ROOF_WORDS = re.compile(r"roofline|floor|\bgap\b|peak|bandwidth|ceiling|speed[- ]of[- ]light|\bSOL\b|"
                         r"TB/s|GB/s|FLOP/s|% of (the )?(peak|ceiling|hardware)|throughput", re.I)
_HOST_TIE = re.compile(r"idle|busy|wait|queue|gap|copy|copies|transfer|overlap|host time|stall|synchroni|"
                       r"start-?up|first step|done once|one-time", re.I)
_KERNEL_BOUNDS = {"memory", "compute", "latency", "near_peak"}
_HOST_BOUNDS = {"host", "transfer", "comms"}


def _answer_bound(a: Answer) -> str:
    if a.bound:
        return a.bound
    if _HOST_WORDS.search(a.bottleneck or ""):
        return "host"
    return "memory"


def check_mechanism_tied(a: Answer, facts: Facts) -> list[str]:
    if not (a.mechanism or "").strip():
        return []
    bound = _answer_bound(a)
    if bound in _KERNEL_BOUNDS and not _ROOF_WORDS.search(a.mechanism):
        return ["The mechanism does not say how far the kernel is from its roofline: tie it to the gap "
                "(duration vs floor, or achieved vs peak bandwidth/FLOP/s)."]
    if bound in _HOST_BOUNDS and not _HOST_TIE.search(a.mechanism):
        return ["The mechanism of a host/transfer-bound answer must be tied to the GPU's idle/busy time or the "
                "copy time it explains."]
    return []


_DIR_WORDS = {"increase": "increase", "raise": "increase", "rise": "increase", "grow": "increase", "up": "increase",
              "higher": "increase", "more": "increase", "improve": "increase",
              "decrease": "decrease", "lower": "decrease", "reduce": "decrease", "drop": "decrease",
              "down": "decrease", "fall": "decrease", "fewer": "decrease", "less": "decrease", "shrink": "decrease",
              "cut": "decrease", "eliminate": "decrease", "remove": "decrease"}
_DIR_RE = re.compile(r"\b(" + "|".join(_DIR_WORDS) + r")(s|es|ed|d|ing)?\b", re.I)


def check_fix(a: Answer, facts: Facts) -> list[str]:
    if not (a.fix or "").strip():
        return []  # reported by check_parts
    out = []
    if not (a.fix_metric or "").strip():
        out.append("The fix names no metric: say which measured metric should move (e.g. gpu__time_duration.sum).")
    if a.fix_direction not in ("increase", "decrease"):
        out.append("The fix gives no direction: say whether the metric should increase or decrease, and by about "
                   "how much.")
    return out


_PROGRAM_TIME = re.compile(r"\b(program|application|app|wall[- ]?(clock)?|step time|per step|each step|per iteration|"
                           r"iteration time|end[- ]to[- ]end|the run|whole run|total time|run time|runtime)\b", re.I)


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.;!?])\s+|\n", text or "") if s.strip()]


def check_replay_time(a: Answer, facts: Facts) -> list[str]:
    if not facts.ncu_durations:
        return []
    out = []
    texts = [a.bottleneck, a.mechanism] + [e.text for e in a.evidence]
    for text in texts:
        for sent in _sentences(text):
            if not _PROGRAM_TIME.search(sent):
                continue
            for q in quantities(sent):
                if q.family != "time":
                    continue
                is_ncu = any(_close(d, q.value, q.tol) for d in facts.ncu_durations)
                is_prog = any(_close(p, q.value, q.tol) for p in facts.program_times)
                if is_ncu and not is_prog:
                    ref = (f" (the timeline's step median is {_fmt(min(facts.program_times, key=lambda p: abs(p - q.value)) / 1e6)} ms)"
                           if facts.program_times else "")
                    out.append(f"'{q.written}' is an ncu kernel duration (replayed in isolation), quoted as program/"
                               f"step time{ref}: take program time from the timeline.")
    return out


def _path_ceiling(a: Answer, facts: Facts, attr: str) -> Optional[float]:
    ks = _answer_kernels(a, facts)
    mine = [getattr(r, attr) for r in facts.rooflines if _short(r.kernel) in ks]
    if mine:
        return max(mine)
    return facts.peak_bandwidth if attr == "peak_bandwidth" else facts.peak_flops


def check_ceilings(a: Answer, facts: Facts) -> list[str]:
    out = []
    qs = [q for _, q in _text_quantities(a)] + [_evidence_quantity(e) for e in a.evidence]
    bw, fl = _path_ceiling(a, facts, "peak_bandwidth"), _path_ceiling(a, facts, "peak_flops")
    for q in qs:
        if any(_close(c, q.value, q.tol) for c in facts.ceilings_quoted):
            continue  # the answer quotes a ceiling itself (e.g. the tensor-core peak it should move to)
        if q.family == "byte_rate" and bw and q.value > bw * (1 + REL_TOL) + q.tol:
            out.append(f"'{q.written}' exceeds the device-memory ceiling of {bw / 1e12:.2f} TB/s: "
                       f"an achieved rate cannot pass its peak; recheck bytes and time.")
        if q.family == "flop_rate" and fl and q.value > fl * (1 + REL_TOL) + q.tol:
            out.append(f"'{q.written}' exceeds the math path's ceiling of {fl / 1e12:.0f} TFLOP/s: "
                       f"recheck the FLOP count and the path.")
    for text in [a.bottleneck, a.mechanism] + [e.text for e in a.evidence]:
        for m in re.finditer(r"(\d+(?:\.\d+)?)\s?%\s+of\s+(the\s+)?(peak|ceiling|roofline|hardware|bandwidth|"
                             r"dram bandwidth|sol|speed[- ]of[- ]light)", _scrub(text), re.I):
            if float(m.group(1)) > 100.0:
                out.append(f"'{m.group(0)}' is above 100% of its ceiling: a bug in the numbers, not a measurement.")
    return out


_MECH_PATTERNS: list[tuple[str, re.Pattern]] = [
    ("near_peak", re.compile(r"near[- ]peak|is done|at (its|the) roofline|within \d+(\.\d+)?\s?% of (its|the)|"
                             r"close to (its|the) (roofline|peak|ceiling)|nothing (left )?to gain|leave (it|this kernel) alone",
                             re.I)),
    ("shared_bank_conflict", re.compile(r"bank[- ]conflict", re.I)),
    ("uncoalesced_global", re.compile(r"uncoalesced|coalesc|scattered|sectors? per request", re.I)),
    ("local_memory_spill", re.compile(r"spill|local[- ]memory", re.I)),
    ("occupancy_limit", re.compile(r"occupancy", re.I)),
    ("low_parallelism", re.compile(r"too few blocks|parallelism|grid (is )?smaller", re.I)),
    ("atomic_contention", re.compile(r"atomic", re.I)),
    ("warp_divergence", re.compile(r"diverg", re.I)),
    ("no_tensor_cores", re.compile(r"tensor cores?", re.I)),
    ("excess_dram_traffic", re.compile(r"fusion|fuse|extra pass", re.I)),
    ("instruction_bound", re.compile(r"instruction[- ](issue|bound)|issue[- ]bound", re.I)),
]


def _claimed_mechanism(a: Answer) -> Optional[str]:
    if a.mechanism_id:
        return a.mechanism_id
    for text in (a.bottleneck, a.mechanism):
        for mid, pat in _MECH_PATTERNS:
            if pat.search(text or ""):
                return mid
    return None


def _short(name: Optional[str]) -> str:
    return (name or "").split("(")[0].strip().strip("`")


def _answer_kernels(a: Answer, facts: Facts) -> set[str]:
    names = {_short(a.kernel)} | {_short(e.kernel) for e in a.evidence}
    text = f"{a.bottleneck} {a.mechanism}"
    for fi in facts.findings:
        k = _short(fi.kernel)
        if k and k in text:
            names.add(k)
    return {n for n in names if n}


def check_near_peak(a: Answer, facts: Facts) -> list[str]:
    claimed = _claimed_mechanism(a)
    if claimed in (None, "near_peak"):
        return []
    out = []
    for k in sorted(_answer_kernels(a, facts)):
        gaps = [r.gap for r in facts.rooflines if _short(r.kernel) == k]
        near = any(fi.mechanism == "near_peak" and _short(fi.kernel) == k for fi in facts.findings)
        if near or (gaps and min(gaps) <= NEAR_PEAK_GAP):
            g = f" (duration/floor = {min(gaps):.2f})" if gaps else ""
            out.append(f"`{k}` runs near its roofline{g}, so '{claimed}' cannot be what limits it: say it is done and "
                       f"point at the next-largest cost.")
    return out


_CAUSAL = re.compile(r"\b(because|so|since|causes?|caused|due to|therefore|thus|which|means|forc\w+|lead\w*|"
                     r"result\w*|split|serializ\w+|waits?|stall\w*|cannot|instead)\b", re.I)


def _has_mechanism_sentence(text: str) -> bool:
    words = re.findall(r"[A-Za-z]{2,}", _scrub(text))
    return len(words) >= 6 and bool(_CAUSAL.search(_scrub(text)))


def check_not_a_dump(a: Answer, facts: Facts) -> list[str]:
    metrics = {e.metric for e in a.evidence if e.metric} | set(_METRIC_TOKEN.findall(a.mechanism or ""))
    n = max(len(metrics), len(a.evidence))
    if n > DUMP_METRICS and not _has_mechanism_sentence(a.mechanism or ""):
        return [f"The answer lists {n} counters but no mechanism: keep the two or three numbers that establish the "
                f"bottleneck and explain why the code causes them."]
    return []


CHECKS: dict[str, Callable[[Answer, Facts], list[str]]] = {
    "parts": check_parts,
    "numbers": check_numbers,
    "mechanism": check_mechanism_tied,
    "fix": check_fix,
    "replay_time": check_replay_time,
    "ceilings": check_ceilings,
    "near_peak": check_near_peak,
    "not_a_dump": check_not_a_dump,
}


def critique(answer: Answer, artifacts: Artifacts, diagnosis: Optional[Diagnosis] = None) -> Verdict:
    """Check an answer against the capture; deterministic."""
    if diagnosis is None:
        from .engine import diagnose
        diagnosis = diagnose(artifacts)
    facts = gather_facts(artifacts, diagnosis)
    reasons: list[str] = []
    checks: dict[str, bool] = {}
    for name, fn in CHECKS.items():
        r = fn(answer, facts)
        checks[name] = not r
        reasons += [x for x in r if x not in reasons]
    return Verdict(verdict="accept" if all(checks.values()) else "reject", reasons=reasons, checks=checks)


def critique_text(text: str, paths: Iterable[str | Path]) -> Verdict:
    return critique(parse_answer(text), load_paths(list(paths)))


# ---------------------------------------------------------------- parsing
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s*(?:\d+[.)]\s*)?(bottleneck|evidence|mechanism|fix|the fix|change)\b.*$",
                      re.I | re.M)
_SECTION_KEY = {"bottleneck": "bottleneck", "evidence": "evidence", "mechanism": "mechanism", "fix": "fix",
                "the fix": "fix", "change": "fix"}


def parse_answer(text: str) -> Answer:
    """An Answer from Diagnosis JSON, Answer JSON, or a Markdown four-part answer."""
    if not isinstance(text, str) or not text.strip():
        raise AnswerFormatError("the answer is empty: give Diagnosis JSON or Markdown with ## Bottleneck, "
                                "## Evidence, ## Mechanism and ## Fix")
    body = text.strip()
    fence = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", body, re.S)
    if fence:
        body = fence.group(1)
    if body.startswith("{"):
        return _parse_json(body)
    return _parse_markdown(text)


def _parse_json(body: str) -> Answer:
    try:
        data = json.loads(body)
    except ValueError as e:
        raise AnswerFormatError(f"the answer looks like JSON but does not parse ({e})") from e
    if not isinstance(data, dict):
        raise AnswerFormatError("the answer JSON must be an object (a Diagnosis or an Answer)")
    errors = []
    if "primary" in data:
        try:
            return Answer.from_diagnosis(Diagnosis.model_validate(data))
        except ValidationError as e:
            errors.append(f"not a Diagnosis ({e.error_count()} errors)")
    try:
        return Answer.model_validate(data)
    except ValidationError as e:
        errors.append(f"not an Answer ({e.error_count()} errors, first: {e.errors()[0]['loc']} {e.errors()[0]['msg']})")
    raise AnswerFormatError("the answer JSON is " + "; ".join(errors))


def _parse_markdown(text: str) -> Answer:
    heads = list(_HEADING.finditer(text))
    if not heads:
        raise AnswerFormatError("the answer has none of the headings ## Bottleneck, ## Evidence, ## Mechanism, "
                                "## Fix and is not JSON")
    sections: dict[str, str] = {}
    for i, h in enumerate(heads):
        key = _SECTION_KEY[h.group(2).lower()]
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        sections.setdefault(key, text[h.end():end].strip())
    fix = sections.get("fix", "")
    metric, direction = _fix_metric_direction(fix)
    kern = re.search(r"`([A-Za-z_][\w:<>]*)", sections.get("bottleneck", ""))
    return Answer(
        kernel=kern.group(1) if kern else None,
        bottleneck=sections.get("bottleneck", ""),
        evidence=_parse_evidence(sections.get("evidence", "")),
        mechanism=sections.get("mechanism", ""),
        fix=fix,
        fix_metric=metric,
        fix_direction=direction,
    )


_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+(.*)$")


def _parse_evidence(section: str) -> list[EvidenceItem]:
    lines = [m.group(1) for m in (_BULLET.match(l) for l in section.splitlines()) if m]
    if not lines and section.strip():
        lines = [l for l in section.splitlines() if l.strip()]
    out = []
    for line in lines:
        metric_m = _METRIC_TOKEN.search(line.replace("`", " "))
        art_m = _ARTIFACT_TOKEN.search(line)
        scrubbed = _scrub(line)
        label, sep, rest = scrubbed.partition(":")
        if not sep:
            label, rest = "", scrubbed
        q = _QTY.search(rest)
        b = _BARE.search(rest)
        if q and (not b or q.start() <= b.start()):
            value_q = _to_quantity(q["num"], q["exp"], q["mult"], None)
            unit = q["unit"]
        elif b:
            value_q = _to_quantity(b["num"], b["exp"], b["mult"], None)
            unit = label.strip().strip("*_ ") if "/" in label or label.strip().lower() in ("sectors", "wavefronts") else None
        else:
            continue
        kern = re.search(r"`([A-Za-z_]\w*)(?:\(|`)", line)
        out.append(EvidenceItem(
            metric=metric_m.group(0).replace(" ", "") if metric_m else None,
            value=value_q.value, unit=unit, artifact=art_m.group(0) if art_m else None,
            kernel=kern.group(1) if kern else None, text=line.strip(),
        ))
    return out


def _fix_metric_direction(fix: str) -> tuple[Optional[str], Optional[str]]:
    if not fix.strip():
        return None, None
    plain = fix.replace("`", " ")
    m = _METRIC_TOKEN.search(plain)
    metric = m.group(0).replace(" ", "") if m else None
    if metric is None:
        named = re.search(r"\b(kernel (?:time|duration)|step time|busy fraction|idle time|copy time|occupancy|"
                          r"sectors per request|bank conflicts|wavefronts per instruction)\b", plain, re.I)
        metric = named.group(1) if named else None
    direction = None
    sents = _sentences(plain)
    focus = [s for s in sents if metric and metric.split("/")[0][:20] in s.replace(" ", "")] + sents
    for s in focus:
        ft = re.search(r"\bfrom\s+~?(\d+(?:\.\d+)?)\s*\S*\s+to\s+(?:~|about\s+)?(\d+(?:\.\d+)?)", s, re.I)
        if ft and float(ft.group(1)) != float(ft.group(2)):
            direction = "increase" if float(ft.group(2)) > float(ft.group(1)) else "decrease"
            break
        after = s[m.end():] if m and m.group(0) in s else s
        d = _DIR_RE.search(after) or _DIR_RE.search(s)
        if d:
            direction = _DIR_WORDS[d.group(1).lower()]
            break
    return metric, direction


__all__ = ["Answer", "EvidenceItem", "Verdict", "AnswerFormatError", "parse_answer", "critique", "critique_text",
           "quantities", "gather_facts", "CHECKS"]
