"""Did the metric the BEFORE fix named move the way, and as far as, it said (package docstring, point 4)?"""
from __future__ import annotations

from typing import Optional

from ..display import fraction, quantity
from .evaluate import evaluate_metric, metric_unit
from .noise import beyond_noise, measure
from .result import PredictionCheck, PredictionStatus
from .sides import Side

# A single-valued metric (an ncu counter, a timeline total) must move by this fraction to count as moved.
METRIC_MIN_CHANGE = 0.10
# A prediction with a target is confirmed when at least this fraction of the predicted move happened.
PREDICTION_MIN_FRACTION = 0.5


def check_prediction(b: Side, a: Side) -> tuple[PredictionStatus, PredictionCheck]:
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
        moved, how = beyond_noise(measure(before.repeats), measure(after.repeats))
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
