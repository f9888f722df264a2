"""`kernel-profiler verify BEFORE AFTER`: did the change do what the diagnosis said it would?

Both sides are loaded and diagnosed with the engine (`load_paths` + `diagnose`);
the timeline each side's diagnosis used (nsys preferred, as in the engine) is
triaged again to get the steady-state window, the per-step durations and the
per-launch kernel durations. Then:

1. **Kernels** are grouped per side by (normalized name, grid, block) over the
   launches that start inside the steady window, and paired in four tiers:
   exact name + launch configuration; function base name + launch
   configuration; exact name alone; base name alone. The name-only and
   base-name tiers pair only when the name is unique among the still-unpaired
   groups of both sides (so `vectorized_elementwise_kernel<Mul...>` is never
   paired with `vectorized_elementwise_kernel<Gelu...>`); a pair whose launch
   configuration differs is reported with `launch_changed`. What is left is
   `removed` (BEFORE only) and `added` (AFTER only). Names are normalized
   across formats (Kineto writes `<4,` where nsys writes `<(int)4,`, and
   `(anonymous namespace)` where nsys writes `<unnamed>`).

2. **Noise.** Each kernel launch, and each marked step, is one repeated
   measurement. A difference is *beyond noise* when both sides have at least
   `MIN_REPEATS` measurements, their interquartile ranges do not overlap, and
   the medians differ by at least `NOISE_MIN_RELATIVE_CHANGE` (clock and
   thermal drift between two separate runs of an unchanged program is of that
   order, so smaller differences are not claimed even when the IQRs separate).
   With fewer repeats (one window, one profiled launch) the medians must
   differ by `UNREPLICATED_MIN_CHANGE`.

3. **Overall**: the steady-state step time (medians of the marked steps, an
   outlier first step dropped as warm-up by the timeline's own rule) when both
   sides mark steps, else the GPU-busy time of the steady window (one
   measurement per side), else (no timeline on a side) the sum of the
   profiled kernels' ncu durations. `speedup` = before / after. The verdict is
   `improved` / `regressed` when the overall change is beyond noise, else
   `within_noise`.

4. **Prediction**: the BEFORE diagnosis' fix names a metric, a direction and
   (sometimes) a target. The metric is evaluated on the AFTER capture (and on
   the BEFORE capture when the fix carries no current value): ncu metric names
   (sums `a+b` and ratios `a/b` of them) from the AFTER ncu profile of the same
   kernel (median over its profiled launches; `gpu__time_duration.sum`,
   `launch__grid_size` and `launch__block_size` fall back to the timeline);
   `timeline.*` from the AFTER timeline summary and tables, computed as
   `timeline.py` defines them; `derived.*` and `sass.*` from the AFTER
   diagnosis' evidence, with `derived.streaming_*` and `derived.roofline_*`
   recomputed from the AFTER kernel profiles when the AFTER diagnosis no
   longer reports them. Outcome:

   - `confirmed`: moved in the stated direction by more than the metric's noise
     threshold, and - when the fix has a target value - by at least
     `PREDICTION_MIN_FRACTION` of the predicted move (target - before);
   - `partial`: moved the stated way but by less than that fraction, or did
     not move beyond noise;
   - `wrong_direction`: moved the other way beyond noise;
   - `not_evaluated`: no fix, or the metric could not be read (the detail
     names the missing metric).

   Noise for the metric: the launch-duration test above when it is read from
   timeline launches, else `METRIC_MIN_CHANGE` relative change.

5. **Bottleneck**: BEFORE primary (bound, mechanism) against AFTER's, whether
   the BEFORE mechanism still appears among the AFTER findings, and the AFTER
   diagnosis' bottleneck sentence.

Exit code for CI (`VerifyResult.exit_code()`): 0 improved (and the prediction
not `wrong_direction`); 1 regressed, or the prediction moved the wrong way; 5
within noise (the change could not be told apart from run-to-run variation).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Literal, Optional

import numpy as np
from pydantic import BaseModel, Field

from .artifacts import load_paths
from .analysis.consistency import device_mismatch, reconcile
from .artifacts.tables import Artifacts, KernelProfile, Timeline
from .answer import Diagnosis, Evidence, Finding
from .display import duration, fraction, quantity, times
from .analysis.engine import run
from .exitcodes import ExitCode
from . import metrics
from .kernel_name import KernelName
from .analysis.roofline import roofline
from .analysis.steady import WARMUP_OUTLIER_FACTOR
from .analysis.timeline import TimelineResult

# --- Thresholds (named; the module docstring gives the reasoning) ---
# Repeated measurements (launches, steps) a side needs before its interquartile range is trusted.
MIN_REPEATS = 4
# With enough repeats: medians must differ by at least this fraction (and the IQRs must not overlap).
NOISE_MIN_RELATIVE_CHANGE = 0.03
# With fewer repeats (one window, one profiled launch): the medians must differ by this fraction.
UNREPLICATED_MIN_CHANGE = 0.10
# A single-valued metric (an ncu counter, a timeline total) must move by this fraction to count as moved.
METRIC_MIN_CHANGE = 0.10
# A prediction with a target is confirmed when at least this fraction of the predicted move happened.
PREDICTION_MIN_FRACTION = 0.5

Verdict = Literal["improved", "regressed", "within_noise"]
PredictionStatus = Literal["confirmed", "wrong_direction", "not_evaluated", "partial"]

EXIT_IMPROVED = ExitCode.OK
EXIT_REGRESSED = ExitCode.REJECTED
EXIT_WITHIN_NOISE = ExitCode.WITHIN_NOISE


# ----------------------------------------------------------------- models
class Measurement(BaseModel):
    """One side of a comparison: the median of repeated measurements and their spread."""

    median: float
    q25: float
    q75: float
    n: int


class KernelSide(BaseModel):
    """A kernel present on one side only."""

    name: str
    launch: Optional[str] = Field(default=None, description="grid=(x,y,z) block=(x,y,z), if the timeline has it")
    count: int
    median_ns: float
    total_ns: float


class KernelChange(BaseModel):
    name: str = Field(description="the kernel's name on the AFTER side")
    before_name: str
    match: Literal["name+launch", "base+launch", "name", "base"]
    before_launch: Optional[str] = None
    after_launch: Optional[str] = None
    launch_changed: bool = False
    before: Measurement
    after: Measurement
    ratio: float = Field(description="after / before median duration")
    speedup: float = Field(description="before / after median duration")
    beyond_noise: bool


class OverallChange(BaseModel):
    metric: Literal["step_ns", "gpu_busy_ns", "profiled_kernel_ns"]
    before: Measurement
    after: Measurement
    ratio: float = Field(description="after / before")
    speedup: float = Field(description="before / after")
    beyond_noise: bool
    method: str = Field(description="how the noise was judged")


class PredictionCheck(BaseModel):
    metric: Optional[str] = None
    direction: Optional[Literal["increase", "decrease"]] = None
    expected: str = ""
    kernel: Optional[str] = None
    before_value: Optional[float] = None
    after_value: Optional[float] = None
    target_value: Optional[float] = None
    unit: str = Field(default="", description="base unit of the metric's values (ns, byte, %, byte/sector, ...)")
    progress: Optional[float] = Field(default=None, description="(after - before) / (target - before)")
    source: str = Field(default="", description="where the AFTER value was read")
    detail: str = ""


class VerifyResult(BaseModel):
    """What `kernel-profiler verify BEFORE AFTER` found."""

    verdict: Verdict
    speedup: float
    overall: OverallChange
    kernels: list[KernelChange] = Field(default_factory=list)
    removed: list[KernelSide] = Field(default_factory=list)
    added: list[KernelSide] = Field(default_factory=list)
    prediction: PredictionStatus
    prediction_check: PredictionCheck
    before_bound: str
    before_mechanism: Optional[str] = None
    before_bottleneck: str
    after_bound: str
    after_mechanism: Optional[str] = None
    after_bottleneck: str
    bottleneck_moved: bool = Field(description="the primary (bound, mechanism) differs between BEFORE and AFTER")
    before_mechanism_still_present: bool = Field(description="the BEFORE mechanism appears among AFTER's findings")
    before_artifacts: list[str] = Field(default_factory=list)
    after_artifacts: list[str] = Field(default_factory=list)
    after_diagnosis: Diagnosis
    shared_kernels: int = Field(default=0, description="kernels found on both sides (paired by name)")
    warnings: list[str] = Field(default_factory=list, description="what makes the comparison doubtful (no shared "
                                "kernel, another device) and inputs set apart on either side")

    def exit_code(self) -> int:
        """0 improved (prediction not wrong_direction); 1 regressed or prediction wrong_direction; 5 within noise (exitcodes.py)."""
        if self.verdict == "regressed" or self.prediction == "wrong_direction":
            return EXIT_REGRESSED
        if self.verdict == "within_noise":
            return EXIT_WITHIN_NOISE
        return EXIT_IMPROVED

    def render(self) -> str:
        return render(self)


# ----------------------------------------------------------------- one side
@dataclass
class _Group:
    name: str
    key: str
    base: str
    cfg: Optional[tuple]
    durations: np.ndarray


@dataclass
class _Side:
    arts: Artifacts
    diag: Diagnosis
    tl: Optional[Timeline]
    tres: Optional[TimelineResult]
    steps: list[float]
    groups: list[_Group] = field(default_factory=list)
    profiles: list[KernelProfile] = field(default_factory=list)


def _cfg(row) -> Optional[tuple]:
    try:
        vals = tuple(int(row[c]) for c in ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z"))
    except (TypeError, ValueError, KeyError):
        return None
    return vals


def _cfg_text(cfg: Optional[tuple]) -> Optional[str]:
    if cfg is None:
        return None
    return f"grid=({cfg[0]},{cfg[1]},{cfg[2]}) block=({cfg[3]},{cfg[4]},{cfg[5]})"


def _steady(step_ns: list[float]) -> list[float]:
    """Step durations without an outlier first step (the timeline's warm-up rule)."""
    if len(step_ns) > 1 and step_ns[0] > WARMUP_OUTLIER_FACTOR * float(np.median(step_ns[1:])):
        return list(step_ns[1:])
    return list(step_ns)


def _groups(tl: Optional[Timeline], tres: Optional[TimelineResult]) -> list[_Group]:
    if tl is None or tres is None or len(tl.kernels) == 0:
        return []
    lo, hi = tres.window
    k = tl.kernels
    k = k[(k["start_ns"] >= lo) & (k["start_ns"] <= hi)]
    if len(k) == 0:
        return []
    cols = ["grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z"]
    k = k.assign(_dur=(k["end_ns"] - k["start_ns"]).astype(np.float64), _name=k["name"].astype(str))
    key_of = {n: KernelName(n).key for n in k["_name"].unique()}  # the regex-heavy key once per distinct name
    k["_key"] = k["_name"].map(key_of)
    have_cfg = set(cols) <= set(k.columns)
    by_cols = ["_key"] + (cols if have_cfg else [])
    out = []
    for gkey, g in k.groupby(by_cols, sort=False, dropna=False):
        key = gkey[0] if isinstance(gkey, tuple) else gkey
        cfg = _cfg(g.iloc[0]) if have_cfg else None
        name = g["_name"].iloc[0]
        out.append(_Group(name=name, key=key, base=KernelName(name).base, cfg=cfg, durations=g["_dur"].to_numpy()))
    return sorted(out, key=lambda g: -float(g.durations.sum()))


def _load(paths: Iterable[str | Path]) -> _Side:
    arts = reconcile(load_paths(paths))
    an = run(arts)  # the engine's one pass: the same timeline and triage the diagnosis used
    tl, tres = an.timeline, an.triage
    steps = _steady(tres.step_ns) if tres is not None and tres.step_ns else []
    return _Side(arts=arts, diag=an.diagnosis, tl=tl, tres=tres, steps=steps, groups=_groups(tl, tres),
                 profiles=[a.profile for a in an.kernels])


# ----------------------------------------------------------------- noise
def _measure(values) -> Measurement:
    a = np.asarray(values, dtype=np.float64)
    q25, med, q75 = np.percentile(a, [25, 50, 75])
    return Measurement(median=float(med), q25=float(q25), q75=float(q75), n=int(len(a)))


def beyond_noise(before: Measurement, after: Measurement) -> tuple[bool, str]:
    """Whether two sets of repeated measurements differ beyond run-to-run noise (see module docstring)."""
    change = abs(after.median / before.median - 1.0) if before.median > 0 else float("inf")
    if before.n >= MIN_REPEATS and after.n >= MIN_REPEATS:
        separated = after.q75 < before.q25 or after.q25 > before.q75
        return (separated and change >= NOISE_MIN_RELATIVE_CHANGE,
                f"interquartile ranges {'do not overlap' if separated else 'overlap'} "
                f"({before.n} vs {after.n} repeats), medians differ by {change:.1%} "
                f"(threshold {NOISE_MIN_RELATIVE_CHANGE:.0%})")
    return (change >= UNREPLICATED_MIN_CHANGE,
            f"too few repeats ({before.n} vs {after.n}) for a spread: medians differ by {change:.1%} "
            f"(threshold {UNREPLICATED_MIN_CHANGE:.0%})")


# ----------------------------------------------------------------- matching
def match_kernels(before: list[_Group], after: list[_Group]) -> tuple[list[KernelChange], list[_Group], list[_Group]]:
    left, right = list(before), list(after)
    pairs: list[tuple[_Group, _Group, str]] = []

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
        mb, ma = _measure(a.durations), _measure(b.durations)
        sig, _ = beyond_noise(mb, ma)
        out.append(KernelChange(
            name=b.name, before_name=a.name, match=label, before_launch=_cfg_text(a.cfg), after_launch=_cfg_text(b.cfg),
            launch_changed=a.cfg != b.cfg, before=mb, after=ma, ratio=ma.median / mb.median if mb.median else float("inf"),
            speedup=mb.median / ma.median if ma.median else float("inf"), beyond_noise=sig))
    out.sort(key=lambda c: -(c.before.median * c.before.n))
    return out, left, right


def _side_rows(groups: list[_Group]) -> list[KernelSide]:
    return [KernelSide(name=g.name, launch=_cfg_text(g.cfg), count=len(g.durations),
                       median_ns=float(np.median(g.durations)), total_ns=float(g.durations.sum())) for g in groups]


# ----------------------------------------------------------------- overall
def _profiled_ns(side: _Side) -> float:
    by: dict[str, list[float]] = {}
    for p in side.profiles:
        d = p.get("gpu__time_duration.sum")
        if d is not None:
            by.setdefault(KernelName(p.name).key, []).append(d)
    return float(sum(np.median(v) for v in by.values()))


def _overall(b: _Side, a: _Side) -> OverallChange:
    if len(b.steps) >= 2 and len(a.steps) >= 2:
        metric, mb, ma = "step_ns", _measure(b.steps), _measure(a.steps)
    elif b.tres is not None and a.tres is not None:
        metric, mb, ma = "gpu_busy_ns", _measure([b.tres.summary.busy_ns]), _measure([a.tres.summary.busy_ns])
    else:  # no timeline on one side: the profiled kernels' durations (one value per kernel, summed)
        metric, mb, ma = "profiled_kernel_ns", _measure([_profiled_ns(b)]), _measure([_profiled_ns(a)])
    if mb.median <= 0 or ma.median <= 0:
        return OverallChange(metric=metric, before=mb, after=ma, ratio=1.0, speedup=1.0, beyond_noise=False,
                             method="no GPU time measured on one side: nothing to compare")
    sig, method = beyond_noise(mb, ma)
    return OverallChange(metric=metric, before=mb, after=ma, ratio=ma.median / mb.median if mb.median else float("inf"),
                         speedup=mb.median / ma.median if ma.median else float("inf"), beyond_noise=sig, method=method)


# ----------------------------------------------------------------- metric evaluation
@dataclass
class _Value:
    value: Optional[float]
    source: str
    repeats: Optional[np.ndarray] = None  # per-launch values, when the metric is a launch duration


def _findings(d: Diagnosis) -> list[Finding]:
    return [d.primary] + list(d.secondary)


def _same_kernel(a: Optional[str], b: Optional[str]) -> bool:
    if not a or not b:
        return False
    x, y = KernelName(a), KernelName(b)
    return x.key == y.key or x.base == y.base


def _evidence(side: _Side, metric: str, kernel: Optional[str]) -> Optional[Evidence]:
    hits = [e for f in _findings(side.diag) for e in f.evidence if e.metric == metric]
    if kernel:
        same = [e for e in hits if e.kernel is None or _same_kernel(e.kernel, kernel)]
        hits = same
    return hits[0] if hits else None


def _kernel_profiles(side: _Side, kernel: Optional[str]) -> list[KernelProfile]:
    if not kernel:
        return []
    exact = [p for p in side.profiles if KernelName(p.name).key == KernelName(kernel).key]
    if exact:
        return exact
    # Fall back on the base name only when it names one kernel (formats spell template arguments differently).
    same = [p for p in side.profiles if KernelName(p.name).base == KernelName(kernel).base]
    return same if len({KernelName(p.name).key for p in same}) == 1 else []


def _kernel_groups(side: _Side, kernel: Optional[str]) -> list[_Group]:
    if not kernel:
        return []
    exact = [g for g in side.groups if g.key == KernelName(kernel).key]
    if exact:
        return exact
    same = [g for g in side.groups if g.base == KernelName(kernel).base]
    return same if len({g.key for g in same}) == 1 else []


def _timeline_metric(side: _Side, name: str, kernel: Optional[str]) -> _Value:
    if side.tres is None or side.tl is None:
        return _Value(None, f"{name}: no timeline on this side")
    if name in ("timeline.kernel_share", "timeline.grid_blocks"):  # one kernel: the groups verify paired
        gs = _kernel_groups(side, kernel)
        if not gs:
            return _Value(None, f"{name}: kernel {kernel!r} not in the timeline")
        src = f"kernels ({side.tres.summary.source})"
        if name == "timeline.kernel_share":
            total = sum(float(g.durations.sum()) for g in side.groups) or 1.0
            return _Value(sum(float(g.durations.sum()) for g in gs) / total, src)
        cfg = gs[0].cfg
        return _Value(float(cfg[0] * cfg[1] * cfg[2]) if cfg else None, f"launch configuration ({src})")
    view = metrics.TimelineView(side.tres.summary, side.tl, side.tres.window, list(side.tres.step_ns or []))
    return _Value(*metrics.timeline_value(name, view))


def _derived_fallback(side: _Side, name: str, kernel: Optional[str]) -> _Value:
    """Recompute derived.* metrics the AFTER diagnosis no longer reports (e.g. the chain is fused)."""
    by_key: dict[str, list] = {}
    for p in side.profiles:
        r = roofline(p)
        if r is not None:
            by_key.setdefault(KernelName(p.name).key, []).append(r)
    if not by_key:
        return _Value(None, f"{name}: no kernel profile (ncu report) on this side")
    if name.startswith("derived.roofline_"):  # one kernel's
        by_key = {k: v for k, v in by_key.items() if kernel and (k == KernelName(kernel).key or KernelName(k).base == KernelName(kernel).base)}
        if not by_key:
            return _Value(None, f"{name}: kernel {kernel!r} has no roofline on this side")
    v = metrics.roofline_value(name, list(by_key.values()))
    src = "rooflines of the profiled kernels (ncu)" + (", all kernels" if name.startswith("derived.streaming_") else "")
    return _Value(v, src if v is not None else f"{name} not reported on this side")


def _ncu_metric(side: _Side, name: str, kernel: Optional[str]) -> _Value:
    profs = _kernel_profiles(side, kernel)
    vals = [p.get(name) for p in profs if p.get(name) is not None]
    if vals:
        return _Value(float(np.median(vals)), f"ncu profile of {KernelName(profs[0].name).base} ({profs[0].source})")
    groups = _kernel_groups(side, kernel)
    if name == "gpu__time_duration.sum" and groups:
        d = np.concatenate([g.durations for g in groups])
        return _Value(float(np.median(d)), "timeline launch durations (no ncu value)", repeats=d)
    if name in ("launch__grid_size", "launch__block_size") and groups and groups[0].cfg:
        c = groups[0].cfg
        v = c[0] * c[1] * c[2] if name == "launch__grid_size" else c[3] * c[4] * c[5]
        return _Value(float(v), "timeline launch configuration (no ncu value)")
    if not kernel:
        return _Value(None, f"{name}: the fix names no kernel to read it from")
    if not profs:
        return _Value(None, f"{name}: no ncu profile of {KernelName(kernel).base} on this side")
    return _Value(None, f"{name}: missing from the ncu profile of {KernelName(kernel).base}")


def _term(side: _Side, term: str, kernel: Optional[str]) -> _Value:
    term = term.strip()
    if term.startswith("timeline."):
        return _timeline_metric(side, term, kernel)
    ev = _evidence(side, term, kernel) if term.startswith(("derived.", "sass.")) else None
    if ev is not None:
        return _Value(float(ev.value), f"evidence of the diagnosis ({ev.artifact})")
    if term.startswith("derived."):
        return _derived_fallback(side, term, kernel)
    if term.startswith("sass."):
        return _Value(None, f"{term} not reported on this side")
    if not re.fullmatch(r"[A-Za-z0-9_.]+", term):
        return _Value(None, f"{term!r} is not a metric name")
    return _ncu_metric(side, term, kernel)


def evaluate_metric(side: _Side, metric: str, kernel: Optional[str]) -> _Value:
    """A metric expression (`a`, `a+b`, `a/b`, `a+b/c+d`, metrics.evaluate) on one side."""
    if not re.search(r"[+/]", metric):
        return _term(side, metric, kernel)  # keeps the per-launch repeats of a single duration
    return _Value(*metrics.evaluate(metric, lambda t: (lambda v: (v.value, v.source))(_term(side, t, kernel))))


def metric_unit(side: _Side, metric: str, kernel: Optional[str]) -> str:
    """The base unit of a fix metric: from the evidence that quotes it, else the ncu profile's units."""
    for f in _findings(side.diag):
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


def check_prediction(b: _Side, a: _Side) -> tuple[PredictionStatus, PredictionCheck]:
    fix = b.diag.fix
    if fix is None:
        return "not_evaluated", PredictionCheck(detail="the BEFORE diagnosis proposes no fix")
    kernel = b.diag.primary.kernel
    unit = metric_unit(b, fix.metric, kernel)
    chk = PredictionCheck(metric=fix.metric, direction=fix.direction, expected=fix.expected, kernel=kernel,
                          target_value=fix.target_value, unit=unit)

    def q(v: Optional[float]) -> str:
        return quantity(v, unit)

    after = evaluate_metric(a, fix.metric, kernel)
    before = evaluate_metric(b, fix.metric, kernel)
    before_value = fix.current_value if fix.current_value is not None else before.value
    chk.before_value, chk.after_value, chk.source = before_value, after.value, after.source
    if after.value is None:
        chk.detail = f"could not evaluate on AFTER: {after.source}"
        return "not_evaluated", chk
    if before_value is None:
        chk.detail = f"could not evaluate on BEFORE: {before.source}"
        return "not_evaluated", chk
    sign = 1.0 if fix.direction == "increase" else -1.0
    delta = after.value - before_value
    if before.repeats is not None and after.repeats is not None:
        moved, how = beyond_noise(_measure(before.repeats), _measure(after.repeats))
    else:
        rel = abs(delta) / abs(before_value) if before_value else (float("inf") if delta else 0.0)
        moved = rel >= METRIC_MIN_CHANGE
        how = f"changed {fraction(rel)} (threshold {fraction(METRIC_MIN_CHANGE)})"
    if not moved:
        chk.detail = f"did not move beyond noise: {how}"
        return "partial", chk
    if sign * delta < 0:
        chk.detail = f"moved the wrong way ({q(before_value)} -> {q(after.value)}; predicted {fix.direction}); {how}"
        return "wrong_direction", chk
    if fix.target_value is not None and fix.target_value != before_value:
        chk.progress = delta / (fix.target_value - before_value)
        if chk.progress < PREDICTION_MIN_FRACTION:
            chk.detail = (f"moved the stated way but only {fraction(chk.progress)} of the predicted move "
                          f"({q(before_value)} -> {q(after.value)}, target {q(fix.target_value)})")
            return "partial", chk
    chk.detail = (f"{fix.direction}d as predicted: {q(before_value)} -> {q(after.value)}"
                  + (f" (target {q(fix.target_value)}, {fraction(chk.progress)} of the predicted move)"
                     if chk.progress is not None else "") + f"; {how}")
    return "confirmed", chk


# ----------------------------------------------------------------- entry point
def verify(before: list[str | Path], after: list[str | Path]) -> VerifyResult:
    """Compare captures of one program before and after a change (see the module docstring)."""
    b, a = _load(before), _load(after)
    overall = _overall(b, a)
    kernels, removed, added = match_kernels(b.groups, a.groups)
    if not overall.beyond_noise:
        verdict: Verdict = "within_noise"
    else:
        verdict = "improved" if overall.speedup > 1.0 else "regressed"
    status, chk = check_prediction(b, a)
    bd, ad = b.diag, a.diag
    still = bd.mechanism is not None and any(f.mechanism == bd.mechanism for f in _findings(ad))
    warnings = []
    shared, only_b, only_a = len(kernels), len(removed), len(added)
    if not (b.groups and a.groups) and b.profiles and a.profiles:  # no timeline on a side: the profiled kernels
        nb, na = {KernelName(p.name).base for p in b.profiles}, {KernelName(p.name).base for p in a.profiles}
        shared, only_b, only_a = len(nb & na), len(nb - na), len(na - nb)
    if not shared and (b.groups or b.profiles) and (a.groups or a.profiles):
        warnings.append(f"BEFORE and AFTER share no kernel ({only_b} only before, {only_a} only after): "
                        "the times compare two different sets of kernels. That is expected of a rewrite such as a "
                        "fusion; if these are different programs, the comparison means nothing.")
    moved_device = device_mismatch(b.arts, a.arts)
    if moved_device:
        warnings.append(moved_device)
    warnings += [f"BEFORE: {w}" for w in b.arts.warnings] + [f"AFTER: {w}" for w in a.arts.warnings]
    return VerifyResult(
        verdict=verdict, speedup=overall.speedup, overall=overall, kernels=kernels,
        removed=_side_rows(removed), added=_side_rows(added), prediction=status, prediction_check=chk,
        before_bound=bd.bound, before_mechanism=bd.mechanism, before_bottleneck=bd.bottleneck,
        after_bound=ad.bound, after_mechanism=ad.mechanism, after_bottleneck=ad.bottleneck,
        bottleneck_moved=(bd.bound, bd.mechanism) != (ad.bound, ad.mechanism), before_mechanism_still_present=still,
        before_artifacts=list(b.arts.files), after_artifacts=list(a.arts.files), after_diagnosis=ad,
        shared_kernels=shared, warnings=warnings,
    )


# ----------------------------------------------------------------- text
def _ms(ns: float) -> str:
    return duration(ns)


def render(r: VerifyResult) -> str:
    o = r.overall
    what = {"step_ns": "steady-state step time (median)", "gpu_busy_ns": "GPU-busy time of the steady window",
            "profiled_kernel_ns": "profiled kernel time (ncu, no timeline)"}[o.metric]
    head = {"improved": f"IMPROVED: {times(r.speedup)} faster", "regressed": f"REGRESSED: {times(1 / r.speedup)} slower",
            "within_noise": f"WITHIN NOISE ({times(r.speedup)})"}[r.verdict]
    lines = [f"CAUTION: {w}" for w in r.warnings if not w.startswith(("BEFORE: ", "AFTER: "))]
    lines += [head, f"  {what}: {_ms(o.before.median)} -> {_ms(o.after.median)} ({o.method})", ""]
    p = r.prediction_check
    lines.append(f"Prediction: {r.prediction.upper().replace('_', ' ')}")
    if p.metric:
        lines.append(f"  {p.metric} should {p.direction} ({p.expected})")
    lines.append(f"  {p.detail}" + (f" [AFTER value from {p.source}]" if p.after_value is not None else ""))
    lines.append("")
    bm = f"{r.before_bound}/{r.before_mechanism or '-'}"
    am = f"{r.after_bound}/{r.after_mechanism or '-'}"
    lines.append(f"Bottleneck: {bm} -> {am}" + (" (moved)" if r.bottleneck_moved else " (unchanged)")
                 + (f"; {r.before_mechanism} still present" if r.before_mechanism_still_present else ""))
    lines.append(f"  Now: {r.after_bottleneck}")
    if r.kernels:
        lines += ["", "Matched kernels (median per launch):"]
        for k in r.kernels[:15]:
            flag = "" if k.beyond_noise else "  (within noise)"
            launch = f" [launch {k.before_launch} -> {k.after_launch}]" if k.launch_changed else ""
            lines.append(f"  {KernelName(k.name).display(60):60s} {_ms(k.before.median):>11s} -> {_ms(k.after.median):>11s} "
                         f"{times(k.speedup):>7s}{flag}{launch}")
    for label, rows in (("Removed kernels (BEFORE only)", r.removed), ("Added kernels (AFTER only)", r.added)):
        if rows:
            lines += ["", f"{label}:"]
            lines += [f"  {KernelName(k.name).display(60):60s} {k.count:6d} launches, median {_ms(k.median_ns)}" for k in rows[:15]]
    notes = [w for w in r.warnings if w.startswith(("BEFORE: ", "AFTER: "))]
    if notes:
        lines += ["", "Inputs not used:"] + [f"  {w}" for w in notes]
    lines += ["", f"exit code {r.exit_code()}"]
    return "\n".join(lines)
