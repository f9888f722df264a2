"""Rendering an answer for people: Markdown and terminal text (the four-part answer first).

One renderer for every Answer: a Diagnosis (`analyze`, `report`) adds the roofline, timeline, secondary
findings and inputs set apart; an AskResult (`ask`, `replay`) adds what the user should know about the run
(inconclusive, notices, which model answered). Every number goes through display.py (units, 4 significant
digits), every kernel name through KernelName.display (an ellipsis, never a silent cut).
"""
from __future__ import annotations

from typing import Optional

from ..answer import Answer, AskResult, Diagnosis, Evidence, Finding, Roofline
from ..display import bandwidth, duration, flop_rate, fraction, quantity, size, times
from ..kernel_name import KernelName


def fmt_value(value: float, unit: str) -> str:
    """A value in its base unit, for people (kept for callers of the report module)."""
    return quantity(value, unit)


def _evidence_line(e: Evidence) -> str:
    # the kernel as a code span: its digits are not numbers
    where = (e.artifact or "no artifact") + (f" [`{KernelName(e.kernel).display(70)}`]" if e.kernel else "")
    meaning = f" — {e.meaning}" if e.meaning else ""
    metric = f" `{e.metric}`" if e.metric else ""
    return f"{fmt_value(e.value, e.unit or '')}{metric}{meaning} ({where})"


def fix_numbers(d: Answer | Finding) -> str:
    """' (now 4 bytes/sector, target 32 bytes/sector)' with the unit of the evidence that holds the fix's metric."""
    x = d.fix
    if x is None or x.current_value is None:
        return ""
    unit = next((e.unit or "" for e in d.evidence if e.metric == x.metric), "")
    if not unit and (x.metric or "").endswith("duration.sum"):
        unit = "ns"
    now = f"now {quantity(x.current_value, unit)}"
    return f" ({now}, target {quantity(x.target_value, unit)})" if x.target_value is not None else f" ({now})"


def _fix_text(f: Finding | Answer) -> str:
    if f.fix is None:
        return "No change can be named from this evidence; see what would settle it below."
    x = f.fix
    if not x.metric:
        return x.text
    move = f"to go {'up' if x.direction == 'increase' else 'down'}" if x.direction else "to move"
    return f"{x.change}\nExpect `{x.metric}` {move}" + (f": {x.expected}" if x.expected else "") + f"{fix_numbers(f)}."


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


def four_parts(a: Answer) -> list[str]:
    """Bottleneck, Evidence, Mechanism, Fix: the same four parts for every answer."""
    tags = [f"`bound: {a.bound}`" if a.bound else "", f"`mechanism: {a.mechanism or 'none'}`" if a.bound else "",
            f"`confidence: {a.confidence:.2f}`" if a.confidence is not None else ""]
    lines = ["## Bottleneck", "", a.bottleneck or "(none)"]
    if any(tags):
        lines += ["", "  ".join(t for t in tags if t)]
    lines += ["", "## Evidence", ""]
    lines += [f"- {_evidence_line(e)}" for e in a.evidence] or ["(none)"]
    lines += ["", "## Mechanism", "", a.explanation or "(none)"]
    if isinstance(a, Diagnosis) and a.roofline:
        lines += ["", roofline_sentence(a.roofline)]
    lines += ["", "## Fix", "", _fix_text(a)]
    if a.missing:
        lines += ["", "What would settle it: " + "; ".join(a.missing)]
    return lines


def _diagnosis_context(d: Diagnosis) -> list[str]:
    lines: list[str] = []
    if d.timeline:
        t = d.timeline
        lines += ["", "## Timeline", "",
                  f"Steady window {duration(t.window_ns)} ({t.window_source}); GPU busy {fraction(t.busy_fraction)}; "
                  f"kernels {duration(t.kernel_ns)}, copies {duration(t.copy_ns)}, idle {duration(t.idle_ns)}; "
                  f"start-up before first GPU work {duration(t.startup_ns)} (reported apart)."]
        if t.top_kernels:
            lines += ["", "| kernel | launches | total | median | share |", "|---|---:|---:|---:|---:|"]
            lines += [f"| `{KernelName(k.name).display(70)}` | {k.count:,} | {duration(k.total_ns)} | {duration(k.median_ns)} | "
                      f"{fraction(k.share)} |" for k in t.top_kernels[:8]]
    extra = also_found(d)
    if extra:
        lines += ["", "## Also found", ""]
        lines += [f"- {f.mechanism or f.bound}{share_text(f.share)}: {f.bottleneck}" for f in extra]
    elif d.also_found:
        lines += ["", "## Also found", ""] + [f"- {x}" for x in d.also_found]
    if d.warnings:
        lines += ["", "## Inputs not used", ""] + [f"- {w}" for w in d.warnings]
    lines += ["", f"Device: {d.device or 'unknown'}. Artifacts: " + ", ".join(d.artifacts)]
    return lines


def _ask_markdown(r: AskResult) -> str:
    """An AskResult: the answer, then what the user should know about the run."""
    head = (f"> {r.source_note}\n\n" if r.source_note else "") + ("# Inconclusive\n\n" if r.inconclusive else "")
    body = ""
    if r.answered:
        lines = four_parts(r)
        if r.also_found:
            lines += ["", "## Also found", ""] + [f"- {x}" for x in r.also_found]
        body = "\n".join(lines) + "\n"
    tail = ""
    if r.inconclusive:
        why = list(dict.fromkeys(x for v in r.verdicts if v.get("verdict") == "reject"
                                 for x in v.get("reasons", [])))  # each reason once
        tail = ("\n## Why inconclusive\n\n" + ("\n".join(f"- {x}" for x in why[-5:]) or "- the run hit its limits")
                + f"\n\n## What would settle it\n\n{r.settle or '(unknown)'}\n")
    notes = "".join(f"\n> {n}" for n in r.notices)
    u = r.usage
    tokens = (f"; {u.total_input_tokens} input tokens ({u.cache_read_input_tokens} read from the prompt cache), "
              f"{u.output_tokens} output" if u.total_input_tokens or u.output_tokens else "")
    notes += f"\n> Answer by {r.model}{' (replayed)' if r.replayed else ''}{tokens}."
    return head + body + tail + "\n" + notes.strip() + "\n"


def markdown(a: Answer) -> str:
    """The answer as Markdown: the four parts, then what is behind them (a Diagnosis's measurements, an ask run's
    notes)."""
    if isinstance(a, AskResult):
        return _ask_markdown(a)
    lines = four_parts(a)
    if isinstance(a, Diagnosis):
        lines += _diagnosis_context(a)
    elif a.also_found:
        lines += ["", "## Also found", ""] + [f"- {x}" for x in a.also_found]
    return "\n".join(lines) + "\n"


def text(d: Answer) -> str:
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


# an acceptance whose cause the checks did not recognise: its numbers, bound and fix were checked, its mechanism was
# not (on the never-read answer sets, 26% of such acceptances were of wrong answers, against 14% of the others)
UNCHECKED_CAUSE = " (no mechanism recognised: its numbers, bound and fix were checked, its cause was not)"


def verdict_text(v) -> str:
    """`critique`'s verdict for a reader (critic.Verdict): the verdict, how the answer was read, what a rejection rests
    on, the checks' reasons, and the model reviewer's verdict and reasons where one reviewed it."""
    from ..critic import SAID

    checks = "REJECT" if v.failed else "ACCEPT"
    head = (v.verdict.upper() + (f" (the model review by {v.review.model}; the checks said {checks})"
                                 if v.review else "") +
            (" (read by the role of each sentence: the layout's reading missed a part)" if v.reading == "role" else "") +
            SAID.get(v.grounds, "") + (UNCHECKED_CAUSE if v.verdict == "accept" and not v.mechanism else ""))
    lines = [head] + [f"- {r}" for r in v.reasons]
    if v.review:
        lines += [f"model review: {v.review.verdict.upper()}"] + [f"- {r}" for r in v.review.reasons]
    return "\n".join(lines)
