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

Modules: `sides` loads and diagnoses one side, `compare` pairs the kernels (1) and compares the overall time
(3) with `noise` (2), `evaluate` reads a fix's metric on a side and `prediction` judges it (4); `result` holds
the records and the exit code, `text` the report.
"""
from __future__ import annotations

from pathlib import Path

from ..analysis.consistency import device_mismatch
from ..kernel_name import KernelName
from .compare import match_kernels, overall_change, side_rows
from .evaluate import findings
from .prediction import check_prediction
from .result import Verdict, VerifyResult
from .sides import load_side


def verify(before: list[str | Path], after: list[str | Path]) -> VerifyResult:
    """Compare captures of one program before and after a change (see the docstring above)."""
    b, a = load_side(before), load_side(after)
    overall = overall_change(b, a)
    kernels, removed, added = match_kernels(b.groups, a.groups)
    if not overall.beyond_noise:
        verdict: Verdict = "within_noise"
    else:
        verdict = "improved" if overall.speedup > 1.0 else "regressed"
    status, chk = check_prediction(b, a)
    bd, ad = b.diag, a.diag
    still = bd.mechanism is not None and any(f.mechanism == bd.mechanism for f in findings(ad))
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
        removed=side_rows(removed), added=side_rows(added), prediction=status, prediction_check=chk,
        before_bound=bd.bound, before_mechanism=bd.mechanism, before_bottleneck=bd.bottleneck,
        after_bound=ad.bound, after_mechanism=ad.mechanism, after_bottleneck=ad.bottleneck,
        bottleneck_moved=(bd.bound, bd.mechanism) != (ad.bound, ad.mechanism), before_mechanism_still_present=still,
        before_artifacts=list(b.arts.files), after_artifacts=list(a.arts.files), after_diagnosis=ad,
        shared_kernels=shared, warnings=warnings,
    )
