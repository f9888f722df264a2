"""`verify`'s text report."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..display import duration, times
from ..kernel_name import KernelName

if TYPE_CHECKING:
    from .result import VerifyResult


def render(r: VerifyResult) -> str:
    o = r.overall
    what = {"step_ns": "steady-state step time (median)", "gpu_busy_ns": "GPU-busy time of the steady window",
            "profiled_kernel_ns": "profiled kernel time (ncu, no timeline)"}[o.metric]
    head = {"improved": f"IMPROVED: {times(r.speedup)} faster", "regressed": f"REGRESSED: {times(1 / r.speedup)} slower",
            "within_noise": f"WITHIN NOISE ({times(r.speedup)})"}[r.verdict]
    lines = [f"CAUTION: {w}" for w in r.warnings if not w.startswith(("BEFORE: ", "AFTER: "))]
    lines += [head, f"  {what}: {duration(o.before.median)} -> {duration(o.after.median)} ({o.method})", ""]
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
            lines.append(f"  {KernelName(k.name).display(60):60s} {duration(k.before.median):>11s} -> "
                         f"{duration(k.after.median):>11s} {times(k.speedup):>7s}{flag}{launch}")
    for label, rows in (("Removed kernels (BEFORE only)", r.removed), ("Added kernels (AFTER only)", r.added)):
        if rows:
            lines += ["", f"{label}:"]
            lines += [f"  {KernelName(k.name).display(60):60s} {k.count:6d} launches, median {duration(k.median_ns)}"
                      for k in rows[:15]]
    notes = [w for w in r.warnings if w.startswith(("BEFORE: ", "AFTER: "))]
    if notes:
        lines += ["", "Inputs not used:"] + [f"  {w}" for w in notes]
    lines += ["", f"exit code {r.exit_code()}"]
    return "\n".join(lines)
