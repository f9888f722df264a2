"""Run-to-run noise: when two sets of repeated measurements (launches, steps) differ beyond it (the package
docstring, point 2, gives the reasoning)."""
from __future__ import annotations

import numpy as np

from .result import Measurement

# Repeated measurements (launches, steps) a side needs before its interquartile range is trusted.
MIN_REPEATS = 4
# With enough repeats: medians must differ by at least this fraction (and the IQRs must not overlap).
NOISE_MIN_RELATIVE_CHANGE = 0.03
# With fewer repeats (one window, one profiled launch): the medians must differ by this fraction.
UNREPLICATED_MIN_CHANGE = 0.10


def measure(values) -> Measurement:
    a = np.asarray(values, dtype=np.float64)
    q25, med, q75 = np.percentile(a, [25, 50, 75])
    return Measurement(median=float(med), q25=float(q25), q75=float(q75), n=int(len(a)))


def beyond_noise(before: Measurement, after: Measurement) -> tuple[bool, str]:
    """Whether two sets of repeated measurements differ beyond run-to-run noise (package docstring, point 2)."""
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
