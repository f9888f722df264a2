"""Rendering a Diagnosis for people: terminal text and Markdown (the four-part answer first).

Every number goes through display.py (units, 4 significant digits), every kernel
name through display.short_name (an ellipsis, never a silent cut).
"""
from __future__ import annotations

from typing import Optional

from ..answer import Diagnosis, Evidence, Finding, Roofline
from ..display import bandwidth, duration, flop_rate, fraction, quantity, short_name, size, times


def fmt_value(value: float, unit: str) -> str:
    """A value in its base unit, for people (kept for callers of the report module)."""
    return quantity(value, unit)


def _evidence_line(e: Evidence) -> str:
    where = e.artifact + (f" [`{short_name(e.kernel, 70)}`]" if e.kernel else "")  # code span: its digits are not numbers
    meaning = f" — {e.meaning}" if e.meaning else ""
    return f"{fmt_value(e.value, e.unit)}  `{e.metric}`{meaning} ({where})"


def fix_numbers(d: Diagnosis | Finding) -> str:
    """' (now 4 bytes/sector, target 32 bytes/sector)' with the unit of the evidence that holds the fix's metric."""
    x = d.fix
    if x is None or x.current_value is None:
        return ""
    unit = next((e.unit for e in d.evidence if e.metric == x.metric), "")
    if not unit and x.metric.endswith("duration.sum"):
        unit = "ns"
    now = f"now {quantity(x.current_value, unit)}"
    return f" ({now}, target {quantity(x.target_value, unit)})" if x.target_value is not None else f" ({now})"


def _fix_text(f: Finding | Diagnosis) -> str:
    if f.fix is None:
        return "No change can be named from this evidence; see what would settle it below."
    x = f.fix
    arrow = "up" if x.direction == "increase" else "down"
    return f"{x.change}\nExpect `{x.metric}` to go {arrow}: {x.expected}{fix_numbers(f)}."


def roofline_sentence(r: Roofline) -> str:
    """The roofline in words: the floor for what the work needs (and the gap against it), the floor at the
    traffic it measured when that differs, achieved rates against the ceilings."""
    if r.math_path == "none" or not r.flops:
        head = "Roofline (no floating-point work: memory only)"
        rates = f"Achieved {bandwidth(r.achieved_bandwidth)} against {bandwidth(r.peak_bandwidth)} ({r.ceiling_source})."
    else:
        head = f"Roofline ({r.math_path} path)"
        rates = (f"Achieved {bandwidth(r.achieved_bandwidth)} and {flop_rate(r.achieved_flops)} against "
                 f"{bandwidth(r.peak_bandwidth)} and {flop_rate(r.peak_flops)} ({r.ceiling_source}).")
    if r.needed_floor_ns is None:  # schema 1.0 JSON
        return (f"{head}: {duration(r.duration_ns)} measured vs {duration(r.floor_ns)} floor ({r.limiter}), gap "
                f"{times(r.gap)}. {rates}")
    if r.stated_limiter == "compute":
        why = f"compute floor: {quantity(r.flops, 'flop')} at {flop_rate(r.peak_flops)}"
    else:
        why = f"memory floor: the {size(r.needed_bytes)} it needs at {bandwidth(r.peak_bandwidth)}; {r.needed_source}"
    out = (f"{head}: the work needs {duration(r.needed_floor_ns)} ({why}); measured {duration(r.duration_ns)}, "
           f"gap {times(r.needed_gap)}.")
    if r.moved_floor_differs:
        out += (f" At the {size(r.dram_bytes)} it moved from DRAM the floor is {duration(r.floor_ns)} "
                f"(gap {times(r.gap)}).")
    return f"{out} {rates}"


def also_found(d: Diagnosis, limit: int = 6) -> list[Finding]:
    """Secondary findings worth a line: no inconclusive ones, none with nothing to say or no share of time."""
    out = []
    for f in d.secondary:
        if f.bound == "inconclusive" or not (f.bottleneck or "").strip():
            continue
        if f.share is not None and f.share <= 0.0:
            continue
        out.append(f)
    return out[:limit]


def share_text(share: Optional[float]) -> str:
    return f" ({fraction(share)} of time)" if share is not None else ""


def markdown(d: Diagnosis) -> str:
    lines = ["## Bottleneck", "", d.bottleneck, "", f"`bound: {d.bound}`  `mechanism: {d.mechanism or 'none'}`  "
             f"`confidence: {d.confidence:.2f}`", "", "## Evidence", ""]
    lines += [f"- {_evidence_line(e)}" for e in d.evidence]
    lines += ["", "## Mechanism", "", d.explanation]
    if d.roofline:
        lines += ["", roofline_sentence(d.roofline)]
    lines += ["", "## Fix", "", _fix_text(d)]
    if d.missing:
        lines += ["", "What would settle it: " + "; ".join(d.missing)]
    if d.timeline:
        t = d.timeline
        lines += ["", "## Timeline", "",
                  f"Steady window {duration(t.window_ns)} ({t.window_source}); GPU busy {fraction(t.busy_fraction)}; "
                  f"kernels {duration(t.kernel_ns)}, copies {duration(t.copy_ns)}, idle {duration(t.idle_ns)}; "
                  f"start-up before first GPU work {duration(t.startup_ns)} (reported apart)."]
        if t.top_kernels:
            lines += ["", "| kernel | launches | total | median | share |", "|---|---:|---:|---:|---:|"]
            lines += [f"| `{short_name(k.name, 70)}` | {k.count:,} | {duration(k.total_ns)} | {duration(k.median_ns)} | "
                      f"{fraction(k.share)} |" for k in t.top_kernels[:8]]
    extra = also_found(d)
    if extra:
        lines += ["", "## Also found", ""]
        lines += [f"- {f.mechanism or f.bound}{share_text(f.share)}: {f.bottleneck}" for f in extra]
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
