"""Rendering a Diagnosis for people: terminal text and Markdown (the four-part answer first)."""
from __future__ import annotations

from .diagnosis import Diagnosis, Evidence, Finding

UNIT_SCALES = {
    "ns": [(1e9, "s"), (1e6, "ms"), (1e3, "us"), (1, "ns")],
    "byte": [(2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"), (1, "B")],
    "byte/s": [(1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1, "B/s")],
    "flop/s": [(1e12, "TFLOP/s"), (1e9, "GFLOP/s"), (1, "FLOP/s")],
}


def fmt_value(value: float, unit: str) -> str:
    if value != value:  # NaN
        return "n/a"
    for scale, label in UNIT_SCALES.get(unit, []):
        if abs(value) >= scale:
            return f"{value / scale:,.3g} {label}"
    if unit == "ratio" and 0 <= value <= 1:
        return f"{value:.3f} ({value:.0%})"
    if unit == "%":
        return f"{value:.1f}%"
    if abs(value) >= 1000:
        return f"{value:,.0f} {unit}".strip()
    return f"{value:.4g} {unit}".strip()


def _evidence_line(e: Evidence) -> str:
    where = e.artifact + (f" [`{e.kernel}`]" if e.kernel else "")  # code span: its digits are not numbers
    meaning = f" — {e.meaning}" if e.meaning else ""
    return f"{fmt_value(e.value, e.unit)}  `{e.metric}`{meaning} ({where})"


def _fix_text(f: Finding | Diagnosis) -> str:
    if f.fix is None:
        return "No change can be named from this evidence; see what would settle it below."
    x = f.fix
    arrow = "up" if x.direction == "increase" else "down"
    return f"{x.change}\nExpect `{x.metric}` to go {arrow}: {x.expected}."


def markdown(d: Diagnosis) -> str:
    lines = ["## Bottleneck", "", d.bottleneck, "", f"`bound: {d.bound}`  `mechanism: {d.mechanism or 'none'}`  "
             f"`confidence: {d.confidence:.2f}`", "", "## Evidence", ""]
    lines += [f"- {_evidence_line(e)}" for e in d.evidence]
    lines += ["", "## Mechanism", "", d.explanation]
    if d.roofline:
        r = d.roofline
        lines += ["", f"Roofline ({r.math_path}, {r.limiter}-bound): {r.duration_ns / 1e3:.1f} us measured vs "
                      f"{r.floor_ns / 1e3:.1f} us floor, gap {r.gap:.2f}x; achieved "
                      f"{r.achieved_bandwidth / 1e12:.2f} TB/s and {r.achieved_flops / 1e12:.2f} TFLOP/s against "
                      f"{r.peak_bandwidth / 1e12:.2f} TB/s and {r.peak_flops / 1e12:.1f} TFLOP/s ({r.ceiling_source})."]
    lines += ["", "## Fix", "", _fix_text(d)]
    if d.missing:
        lines += ["", "What would settle it: " + "; ".join(d.missing)]
    if d.timeline:
        t = d.timeline
        lines += ["", "## Timeline", "",
                  f"Steady window {t.window_ns / 1e6:.2f} ms ({t.window_source}); GPU busy {t.busy_fraction:.0%}; "
                  f"kernels {t.kernel_ns / 1e6:.2f} ms, copies {t.copy_ns / 1e6:.2f} ms, idle {t.idle_ns / 1e6:.2f} ms; "
                  f"start-up before first GPU work {t.startup_ns / 1e9:.2f} s (reported apart)."]
        if t.top_kernels:
            lines += ["", "| kernel | launches | total | median | share |", "|---|---:|---:|---:|---:|"]
            lines += [f"| `{k.name[:70]}` | {k.count} | {k.total_ns / 1e6:.3f} ms | {k.median_ns / 1e3:.1f} us | "
                      f"{k.share:.1%} |" for k in t.top_kernels[:8]]
    if d.secondary:
        lines += ["", "## Also found", ""]
        for f in d.secondary[:6]:
            share = f" ({f.share:.0%} of time)" if f.share is not None else ""
            lines.append(f"- {f.mechanism or f.bound}{share}: {f.bottleneck}")
    if d.warnings:
        lines += ["", "## Inputs not used", ""] + [f"- {w}" for w in d.warnings]
    lines += ["", f"Device: {d.device or 'unknown'}. Artifacts: " + ", ".join(d.artifacts)]
    return "\n".join(lines) + "\n"


def text(d: Diagnosis) -> str:
    """Terminal rendering: the Markdown without the heading marks and table noise."""
    out = []
    for line in markdown(d).splitlines():
        if line.startswith("## "):
            out.append(line[3:].upper())
        elif line.startswith("|---"):
            continue
        else:
            out.append(line.replace("`", ""))
    return "\n".join(out) + "\n"
