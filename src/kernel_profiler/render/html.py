"""Self-contained HTML report of a Diagnosis: the four-part answer, then pictures.

`render_html(diagnosis, rooflines)` returns one HTML page (Jinja2 template
templates/report.html.j2) with no network fetches: CSS is inline, charts are
hand-built inline SVG, there is no script, font or image from elsewhere.
Artifact links are file:// URIs (or paths relative to `link_base`).

Charts, each carrying its numbers as data-* attributes so tests can check them
against the JSON:

- Roofline (log-log): x = arithmetic intensity (FLOP per DRAM byte), y = FLOP/s.
  The memory roof (peak_bandwidth x AI) and the math-path roof (peak_flops) of
  the primary kernel, its ridge point, other math paths' ceilings dashed; each
  dominant kernel at (AI, achieved FLOP/s); a vertical segment from the primary
  kernel up to its roof marks the gap and the floor time.
- Kernels with no FLOPs (math path 'none', AI 0 or unknown) have no place on a
  log axis. They, and every other charted kernel, appear on a second chart of
  achieved DRAM bandwidth against the DRAM ceiling (the memory roof read at any
  AI): for a zero-FLOP kernel that ratio *is* its distance to the roofline.
- Timeline bar: the steady-state window split into kernels, copies and idle
  time by host cause; process start-up is drawn apart on a second bar of the
  whole capture.
- Multi-rank: per-rank step p50 as compute + collective wait per step, and the
  median SM clock per rank.
"""
from __future__ import annotations

import math
import os
from html import escape
from pathlib import Path
from typing import Iterable, Optional, Sequence

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from ..catalog import BY_IDLE_CAUSE
from ..answer import Diagnosis, Roofline
from ..display import fraction, number, times
from ..kernel_name import KernelName
from .markdown import also_found, fix_numbers, fmt_value, roofline_sentence, share_text

MAX_CHART_KERNELS = 10  # dominant kernels placed on the roofline


# ---------------------------------------------------------------- data

def rooflines_for(paths: Iterable[str | Path]) -> list[Roofline]:
    """Per-kernel rooflines of every profiled kernel under `paths`, largest share of GPU time first.

    Uses the engine's own loading, timeline selection and kernel analysis, so the
    rooflines are those the diagnosis was made from.
    """
    from ..artifacts import load_paths
    from ..analysis.engine import run

    return run(load_paths(paths)).rooflines


def _same(a: Roofline, b: Roofline) -> bool:
    return (a.kernel == b.kernel and a.duration_ns == b.duration_ns and a.flops == b.flops
            and a.dram_bytes == b.dram_bytes)


def _collect(d: Diagnosis, rooflines: Optional[Sequence[Roofline]]) -> tuple[list[Roofline], Optional[Roofline]]:
    """Kernels to chart (primary first when known) and the one whose gap is marked."""
    if rooflines is None:
        rooflines = [f.roofline for f in [d.primary, *d.secondary] if f is not None and f.roofline is not None]
    out: list[Roofline] = []
    for r in rooflines:
        if not any(_same(r, o) for o in out):
            out.append(r)
    primary = d.roofline
    if primary is not None:
        out = [r for r in out if not _same(r, primary)]
        out.insert(0, primary)
    elif out:
        primary = out[0]  # the largest profiled kernel
    return out[:MAX_CHART_KERNELS], primary


_CODE = __import__("re").compile(r"`([^`]+)`")


def code_spans(text: Optional[str]) -> Markup:
    """Text with Markdown code spans (`name`) as <code> elements: no literal backticks on the page."""
    return Markup(_CODE.sub(lambda m: f"<code>{m.group(1)}</code>", str(escape(text or "", quote=False))))


def _link(path: str, base: Optional[Path]) -> str:
    p = Path(path)
    if base is not None and p.is_absolute():
        try:
            return Path(os.path.relpath(p, base)).as_posix()
        except ValueError:
            pass
    if p.is_absolute():
        return p.as_uri()
    return p.as_posix()


# ---------------------------------------------------------------- svg helpers

def _num(v: float) -> str:
    return repr(float(v))


def _a(**attrs) -> str:
    out = []
    for k, v in attrs.items():
        if v is None:
            continue
        k = k.rstrip("_").replace("_", "-")
        out.append(f'{k}="{escape(str(v), quote=True)}"')
    return " ".join(out)


def _t(x: float, y: float, text: str, cls: str = "", anchor: str = "start", **attrs) -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" class="{cls}" {_a(**attrs)}>'
            f"{escape(text)}</text>")


def _decades(lo: float, hi: float) -> tuple[float, float]:
    return 10 ** math.floor(math.log10(lo)), 10 ** math.ceil(math.log10(hi))


def _si(v: float) -> str:
    for s, p in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1, "")):
        if v >= s:
            return f"{v / s:g}{p}"
    return f"{v:g}"


def _gap(g: float) -> str:
    return times(g)


def _needed_ai(r: Roofline) -> Optional[float]:
    """Arithmetic intensity of the bytes the work needs, when it differs from the measured one."""
    if not (r.needed_bytes and r.flops and r.arithmetic_intensity):
        return None
    ai = r.flops / r.needed_bytes
    return ai if ai > r.arithmetic_intensity * 1.02 else None


def roofline_svg(kernels: list[Roofline], primary: Optional[Roofline], labels: dict[int, str],
                 primary_is_diagnosis: bool = True) -> str:
    """Log-log roofline; empty string when no kernel has FLOPs to place."""
    if primary is None:
        return ""
    pts = [(i, r) for i, r in enumerate(kernels)
           if r.arithmetic_intensity and r.arithmetic_intensity > 0 and r.achieved_flops > 0]
    pf, bw = primary.peak_flops, primary.peak_bandwidth
    if pf <= 0 or bw <= 0:
        return ""
    ridge = pf / bw
    ais = [r.arithmetic_intensity for _, r in pts] + [ridge]
    need_ai = _needed_ai(primary)
    if need_ai:
        ais.append(need_ai)
    ys = [r.achieved_flops for _, r in pts] + [pf]
    xmin, xmax = _decades(min(ais) / 3, max(ais) * 3)
    peaks = [pf] + [r.peak_flops for _, r in pts if r.peak_flops > 0]
    ymin, ymax = _decades(min(ys) / 3, max(peaks) * 1.5)
    ymin = min(ymin, ymax / 1e4)  # at least four decades, so the memory roof has room to show
    W, H = 760, 440
    L, R, T, B = 78, 20, 20, 52
    pw, ph = W - L - R, H - T - B

    def X(v: float) -> float:
        return L + pw * (math.log10(v) - math.log10(xmin)) / (math.log10(xmax) - math.log10(xmin))

    def Y(v: float) -> float:
        return T + ph * (1 - (math.log10(v) - math.log10(ymin)) / (math.log10(ymax) - math.log10(ymin)))

    s = [f'<svg class="chart roofline" id="roofline" role="img" viewBox="0 0 {W} {H}" '
         f'xmlns="http://www.w3.org/2000/svg" aria-label="Roofline chart">',
         f'<title>Roofline: arithmetic intensity vs achieved FLOP/s</title>',
         f'<rect class="plot-bg" x="{L}" y="{T}" width="{pw}" height="{ph}"/>']
    # grid and ticks per decade
    e = math.floor(math.log10(xmin))
    while 10 ** e <= xmax * 1.0001:
        x = X(10 ** e)
        s.append(f'<line class="grid" x1="{x:.1f}" y1="{T}" x2="{x:.1f}" y2="{T + ph}"/>')
        s.append(_t(x, T + ph + 16, _si(10 ** e), "tick", "middle"))
        e += 1
    e = math.floor(math.log10(ymin))
    while 10 ** e <= ymax * 1.0001:
        y = Y(10 ** e)
        s.append(f'<line class="grid" x1="{L}" y1="{y:.1f}" x2="{L + pw}" y2="{y:.1f}"/>')
        s.append(_t(L - 6, y + 4, _si(10 ** e), "tick", "end"))
        e += 1
    s.append(_t(L + pw / 2, H - 12, "arithmetic intensity (FLOP / DRAM byte)", "axis", "middle"))
    s.append(f'<text class="axis" text-anchor="middle" transform="translate(16 {T + ph / 2:.1f}) rotate(-90)">'
             f"achieved FLOP/s</text>")
    # other math paths' ceilings (dashed)
    seen = {primary.math_path}
    for _, r in pts:
        if r.math_path in seen or r.peak_flops <= 0:
            continue
        seen.add(r.math_path)
        y = Y(r.peak_flops)
        xr = max(X(r.peak_flops / bw), L)
        s.append(f'<line class="ceiling-extra" x1="{xr:.1f}" y1="{y:.1f}" x2="{L + pw}" y2="{y:.1f}" '
                 f'{_a(data_math_path=r.math_path, data_peak_flops=_num(r.peak_flops))}/>')
        s.append(_t(L + pw - 4, y - 5, f"{r.math_path}: {fmt_value(r.peak_flops, 'flop/s')}", "ceil-label", "end"))
    # primary roofs: memory slope, then flat math path
    x0 = max(xmin, ymin / bw)
    s.append(f'<g class="roof" id="roof-primary" {_a(data_peak_flops=_num(pf), data_peak_bw=_num(bw), data_ridge_ai=_num(ridge), data_math_path=primary.math_path)}>')
    s.append(f'<line class="ceiling mem" x1="{X(x0):.1f}" y1="{Y(bw * x0):.1f}" x2="{X(ridge):.1f}" y2="{Y(pf):.1f}" '
             f'{_a(data_peak_bw=_num(bw))}/>')
    s.append(f'<line class="ceiling math" x1="{X(ridge):.1f}" y1="{Y(pf):.1f}" x2="{L + pw}" y2="{Y(pf):.1f}" '
             f'{_a(data_peak_flops=_num(pf))}/>')
    s.append(f'<circle class="ridge" cx="{X(ridge):.1f}" cy="{Y(pf):.1f}" r="4" {_a(data_ai=_num(ridge))}/>')
    s.append("</g>")
    # labels of the roofs
    lx = X(x0) + 0.18 * (X(ridge) - X(x0))
    ly = Y(bw * 10 ** (math.log10(x0) + 0.18 * (math.log10(ridge) - math.log10(x0))))
    ang = math.degrees(math.atan2(Y(pf) - Y(bw * x0), X(ridge) - X(x0)))
    s.append(f'<text class="ceil-label" transform="translate({lx:.1f} {ly - 8:.1f}) rotate({ang:.1f})">'
             f"DRAM {escape(fmt_value(bw, 'byte/s'))} × AI</text>")
    s.append(_t(L + pw - 4, Y(pf) - 6, f"{primary.math_path}: {fmt_value(pf, 'flop/s')}", "ceil-label", "end"))
    s.append(_t(X(ridge), Y(pf) - 10, f"ridge {number(ridge, 3)} FLOP/B", "ceil-label", "middle"))
    # gap of the primary kernel
    pr = primary
    mark_gap = primary_is_diagnosis or pr.gap >= 1.5  # a fallback kernel's gap only when it is visible
    if mark_gap and pr.arithmetic_intensity and pr.arithmetic_intensity > 0 and pr.achieved_flops > 0:
        # The gap is drawn at the intensity of the bytes the work needs; when the kernel moved more, a dotted
        # line runs from its measured point (moved bytes) to that intensity.
        ai = need_ai or pr.arithmetic_intensity
        roof = min(pf, bw * ai)
        x = X(ai)
        s.append(f'<g class="gap" {_a(data_gap=_num(pr.stated_gap), data_floor_ns=_num(pr.stated_floor_ns), data_measured_gap=_num(pr.gap), data_measured_floor_ns=_num(pr.floor_ns), data_needed_bytes=_num(pr.needed_bytes) if pr.needed_bytes else None, data_ai=_num(ai), data_roof_flops=_num(roof))}>')
        if need_ai:
            y0 = Y(pr.achieved_flops)
            s.append(f'<line class="excess-line" x1="{X(pr.arithmetic_intensity):.1f}" y1="{y0:.1f}" x2="{x:.1f}" '
                     f'y2="{y0:.1f}" {_a(data_moved_bytes=_num(pr.dram_bytes), data_needed_bytes=_num(pr.needed_bytes))}/>')
            s.append(f'<circle class="pt needed" cx="{x:.1f}" cy="{y0:.1f}" r="4" {_a(data_ai=_num(ai))}>'
                     f"<title>at the {escape(fmt_value(pr.needed_bytes, 'byte'))} the work needs "
                     f"({escape(fmt_value(pr.dram_bytes, 'byte'))} moved)</title></circle>")
        s.append(f'<line class="gap-line" x1="{x:.1f}" y1="{Y(pr.achieved_flops):.1f}" x2="{x:.1f}" y2="{Y(roof):.1f}"/>')
        s.append(f'<line class="gap-line" x1="{x - 5:.1f}" y1="{Y(roof):.1f}" x2="{x + 5:.1f}" y2="{Y(roof):.1f}"/>')
        ym = (Y(pr.achieved_flops) + Y(roof)) / 2
        if Y(pr.achieved_flops) - Y(roof) < 40:  # short segment: the words go below the point
            ym = Y(pr.achieved_flops) + 24
        anchor, dx = ("end", -14) if x > L + pw * 0.75 else ("start", 14)
        s.append(_t(x + dx, ym, f"gap {_gap(pr.stated_gap)}", "gap-label", anchor))
        s.append(_t(x + dx, ym + 15, f"floor {fmt_value(pr.stated_floor_ns, 'ns')} vs {fmt_value(pr.duration_ns, 'ns')}",
                    "ceil-label", anchor))
        if need_ai:
            s.append(_t(x + dx, ym + 30, f"(moved {fmt_value(pr.dram_bytes, 'byte')}, needs "
                                         f"{fmt_value(pr.needed_bytes, 'byte')})", "ceil-label", anchor))
        s.append("</g>")
    # kernel points
    for i, r in pts:
        cls = "pt primary" if r is primary else "pt"
        cx, cy = X(r.arithmetic_intensity), Y(r.achieved_flops)
        s.append(f'<circle class="{cls}" cx="{cx:.1f}" cy="{cy:.1f}" r="{6 if r is primary else 5}" '
                 f'{_a(data_kernel=r.kernel, data_label=labels[i], data_ai=_num(r.arithmetic_intensity), data_flops=_num(r.achieved_flops), data_bw=_num(r.achieved_bandwidth), data_gap=_num(r.stated_gap), data_primary="true" if r is primary else None)}>'
                 f"<title>{escape(KernelName(r.kernel).display(120))}: {number(r.arithmetic_intensity, 3)} FLOP/B, "
                 f"{escape(fmt_value(r.achieved_flops, 'flop/s'))}</title></circle>")
    # labels: points closer than a few pixels share one label ("K1, K2"); others stagger downwards
    groups: list[tuple[float, float, list[str], bool]] = []
    for i, r in pts:
        cx, cy = X(r.arithmetic_intensity), Y(r.achieved_flops)
        for g in groups:
            if abs(g[0] - cx) < 9 and abs(g[1] - cy) < 9:
                g[2].append(labels[i])
                break
        else:
            groups.append((cx, cy, [labels[i]], r is primary))
    placed: list[tuple[float, float, float]] = []  # (left x, baseline y, width) of labels drawn

    def free(x0: float, y: float, w: float) -> bool:
        return not any(abs(y - py) < 12 and x0 < px + pw_ and px < x0 + w for px, py, pw_ in placed)

    for cx, cy, names, is_primary in groups:
        text = ", ".join(names)
        width = 7.0 * len(text)
        # right of the point, left of it, below it (the primary's gap segment is above and its label right)
        cands = [(cx - width / 2, cy + 20, "middle", cx)] if is_primary else []
        cands += [(cx + 9, cy + 4, "start", cx + 9), (cx - 9 - width, cy + 4, "end", cx - 9),
                  (cx - width / 2, cy + 18, "middle", cx)]
        for x0, ty, anchor, tx in cands:
            if free(x0, ty, width):
                break
        else:
            x0, ty, anchor, tx = cands[0]
            while not free(x0, ty, width):
                ty += 12
        placed.append((x0, ty, width))
        s.append(_t(tx, ty, text, "pt-label", anchor))
    s.append("</svg>")
    return "\n".join(s)


def bandwidth_svg(kernels: list[Roofline], labels: dict[int, str]) -> str:
    """Achieved DRAM bandwidth of each kernel against the DRAM ceiling (the only roof for zero-FLOP kernels)."""
    if not kernels:
        return ""
    W, L, R, T, row = 760, 200, 150, 14, 24
    H = T + row * len(kernels) + 30
    pw = W - L - R
    s = [f'<svg class="chart bandwidth" id="bandwidth" role="img" viewBox="0 0 {W} {H}" '
         f'xmlns="http://www.w3.org/2000/svg" aria-label="Achieved DRAM bandwidth per kernel">',
         "<title>Achieved DRAM bandwidth vs the DRAM ceiling</title>"]
    for i, r in enumerate(kernels):
        y = T + i * row
        frac = r.achieved_bandwidth / r.peak_bandwidth if r.peak_bandwidth else 0.0
        nof = not (r.arithmetic_intensity and r.arithmetic_intensity > 0 and r.achieved_flops > 0)
        tag = labels[i] + ("  (no FLOPs)" if nof else "")
        s.append(_t(L - 8, y + 15, tag, "tick", "end"))
        s.append(f'<rect class="bw-track" x="{L}" y="{y + 3}" width="{pw}" height="{row - 8}"/>')
        s.append(f'<rect class="bw-bar{" noflops" if nof else ""}" x="{L}" y="{y + 3}" '
                 f'width="{pw * min(frac, 1.0):.1f}" height="{row - 8}" '
                 f'{_a(data_kernel=r.kernel, data_label=labels[i], data_bw=_num(r.achieved_bandwidth), data_peak_bw=_num(r.peak_bandwidth), data_no_flops="true" if nof else None)}>'
                 f"<title>{escape(KernelName(r.kernel).display(120))}</title></rect>")
        s.append(_t(L + pw + 6, y + 15, f"{fmt_value(r.achieved_bandwidth, 'byte/s')} ({fraction(frac)})", "tick"))
    peak = kernels[0].peak_bandwidth
    s.append(f'<line class="ceiling mem bw-ceiling" x1="{L + pw}" y1="{T - 4}" x2="{L + pw}" y2="{H - 24}" '
             f'{_a(data_peak_bw=_num(peak))}/>')
    s.append(_t(L + pw, H - 8, f"DRAM ceiling {fmt_value(peak, 'byte/s')}", "ceil-label", "end"))
    s.append("</svg>")
    return "\n".join(s)


def timeline_svg(d: Diagnosis) -> tuple[str, list[dict]]:
    t = d.timeline
    if t is None:
        return "", []
    segs = [("kernels", "Kernels", t.kernel_ns), ("copies", "Copies", t.copy_ns)]
    named = 0.0
    for cause, ns in sorted(t.idle_by_cause.items(), key=lambda kv: -kv[1]):
        segs.append((f"idle-{cause}", f"idle: {BY_IDLE_CAUSE[cause].label if cause in BY_IDLE_CAUSE else cause.replace('_', ' ')}", ns))
        named += ns
    segs.append(("idle-other", "idle: other", max(t.idle_ns - named, 0.0)))
    total = max(t.window_ns, sum(ns for *_, ns in segs), 1.0)
    W, L, R = 760, 10, 10
    pw = W - L - R
    s = [f'<svg class="chart timeline" id="timeline" role="img" viewBox="0 0 {W} 124" '
         f'xmlns="http://www.w3.org/2000/svg" aria-label="Timeline of the capture">',
         "<title>Capture and steady-state window</title>"]
    # whole capture: start-up apart
    cap = max(t.capture_ns, t.startup_ns + t.window_ns, 1.0)
    su = pw * t.startup_ns / cap
    win = pw * t.window_ns / cap
    s.append(_t(L, 14, f"Whole capture {fmt_value(t.capture_ns, 'ns')}", "axis"))
    s.append(f'<rect class="seg startup" x="{L}" y="20" width="{su:.1f}" height="16" '
             f'{_a(data_segment="startup", data_ns=_num(t.startup_ns))}><title>start-up</title></rect>')
    s.append(f'<rect class="seg rest" x="{L + su:.1f}" y="20" width="{pw - su:.1f}" height="16"/>')
    s.append(f'<rect class="seg window-mark" x="{L + su:.1f}" y="20" width="{max(win, 2):.1f}" height="16" '
             f'{_a(data_segment="window", data_ns=_num(t.window_ns))}><title>steady window</title></rect>')
    s.append(_t(L + 4, 50, f"start-up {fmt_value(t.startup_ns, 'ns')} (before first GPU work, reported apart)",
                "tick"))
    s.append(_t(L + pw, 50, f"steady window {fmt_value(t.window_ns, 'ns')}", "tick", "end"))
    # steady window split
    s.append(_t(L, 76, f"Steady window ({t.window_source}): GPU busy {fraction(t.busy_fraction)}", "axis"))
    x = float(L)
    legend = []
    for key, label, ns in segs:
        w = pw * ns / total
        s.append(f'<rect class="seg {key}" x="{x:.2f}" y="82" width="{w:.2f}" height="28" '
                 f'{_a(data_segment=key, data_ns=_num(ns))}><title>{escape(label)}: '
                 f'{escape(fmt_value(ns, "ns"))}</title></rect>')
        x += w
        legend.append({"cls": key, "label": label, "value": fmt_value(ns, "ns"), "share": ns / total,
                       "pct": fraction(ns / total)})
    s.append("</svg>")
    return "\n".join(s), legend


def ranks_svg(d: Diagnosis) -> str:
    ranks = sorted(d.ranks, key=lambda r: r.rank)
    if not ranks:
        return ""
    W, L, R, T, row = 760, 70, 20, 30, 30
    H1 = T + row * len(ranks) + 34
    pw = W - L - R
    top = max([(r.compute_ns_per_step or 0) + (r.collective_ns_per_step or 0) for r in ranks]
              + [r.step_p50_ns or 0 for r in ranks] + [1.0])
    s = [f'<svg class="chart ranks" id="ranks-step" role="img" viewBox="0 0 {W} {H1}" '
         f'xmlns="http://www.w3.org/2000/svg" aria-label="Per-rank step time">',
         "<title>Per-rank step time: compute and collective wait per step</title>",
         _t(L, 16, "Step p50 per rank: GPU compute + collective wait per step", "axis")]
    for i, r in enumerate(ranks):
        y = T + i * row
        c, w = r.compute_ns_per_step or 0.0, r.collective_ns_per_step or 0.0
        strag = d.straggler_rank == r.rank
        s.append(_t(L - 8, y + 17, f"rank {r.rank}" + (" ⚑" if strag else ""), "tick" + (" strag" if strag else ""), "end"))
        s.append(f'<rect class="seg kernels" x="{L}" y="{y + 4}" width="{pw * c / top:.1f}" height="{row - 10}" '
                 f'{_a(data_rank=r.rank, data_compute_ns=_num(c))}><title>compute {escape(fmt_value(c, "ns"))}</title></rect>')
        s.append(f'<rect class="seg collective" x="{L + pw * c / top:.1f}" y="{y + 4}" width="{pw * w / top:.1f}" '
                 f'height="{row - 10}" {_a(data_rank=r.rank, data_collective_ns=_num(w))}>'
                 f'<title>collective {escape(fmt_value(w, "ns"))}</title></rect>')
        if r.step_p50_ns:
            xp = L + pw * r.step_p50_ns / top
            s.append(f'<line class="p50" x1="{xp:.1f}" y1="{y + 1}" x2="{xp:.1f}" y2="{y + row - 3}" '
                     f'{_a(data_rank=r.rank, data_step_p50_ns=_num(r.step_p50_ns))}/>')
        txt = (f"compute {fmt_value(c, 'ns')} + wait {fmt_value(w, 'ns')}; p50 "
               f"{fmt_value(r.step_p50_ns, 'ns') if r.step_p50_ns else 'n/a'}")
        s.append(_t(L + 6, y + 17, txt, "bar-text"))
    s.append(f'<text x="{L}" y="{H1 - 8}" class="tick"><tspan class="sw-k">■</tspan> GPU compute per step  '
             f'<tspan class="sw-c">■</tspan> collective wait per step  <tspan class="sw-p">┃</tspan> step p50</text>')
    s.append("</svg>")
    # clocks
    clocks = [r.sm_clock_mhz_median or 0.0 for r in ranks]
    cmax = max(clocks + [1.0]) * 1.1
    H2 = T + row * len(ranks) + 14
    s.append(f'<svg class="chart ranks" id="ranks-clock" role="img" viewBox="0 0 {W} {H2}" '
             f'xmlns="http://www.w3.org/2000/svg" aria-label="Per-rank SM clock">')
    s.append("<title>Median SM clock per rank</title>")
    s.append(_t(L, 16, "Median SM clock per rank", "axis"))
    for i, r in enumerate(ranks):
        y = T + i * row
        mhz = r.sm_clock_mhz_median
        s.append(_t(L - 8, y + 17, f"rank {r.rank}", "tick", "end"))
        if mhz:
            s.append(f'<rect class="seg clock{" throttled" if r.throttle_reasons else ""}" x="{L}" y="{y + 4}" '
                     f'width="{pw * mhz / cmax:.1f}" height="{row - 10}" '
                     f'{_a(data_rank=r.rank, data_sm_clock_mhz=_num(mhz))}/>')
        why = f" — throttle: {', '.join(r.throttle_reasons)}" if r.throttle_reasons else ""
        s.append(_t(L + 6, y + 17, (f"{mhz:.0f} MHz" if mhz else "no telemetry") + why, "bar-text"))
    s.append("</svg>")
    return "\n".join(s)


# ---------------------------------------------------------------- page

_ENV: Optional[Environment] = None


def _env() -> Environment:
    global _ENV
    if _ENV is None:
        _ENV = Environment(loader=PackageLoader("kernel_profiler", "templates"),
                           autoescape=select_autoescape(["html", "j2"]), trim_blocks=True, lstrip_blocks=True)
        _ENV.filters["fmt"] = fmt_value
    return _ENV


def _fix_view(d: Diagnosis) -> Optional[dict]:
    fix = d.fix
    if fix is None:
        return None
    arrow = "up" if fix.direction == "increase" else "down" if fix.direction else "move"
    return {"change": code_spans(fix.change), "metric": fix.metric, "arrow": arrow,
            "expected": code_spans(fix.expected), "nums": fix_numbers(d)}


def render_html(diagnosis: Diagnosis, rooflines: list[Roofline] | None = None, *,
                link_base: str | Path | None = None, title: str | None = None) -> str:
    """One self-contained HTML page for `diagnosis`.

    rooflines: per-kernel rooflines to place on the chart (e.g. `rooflines_for(paths)`);
    by default those carried by the diagnosis's findings. link_base: make artifact
    links relative to this folder (where the HTML file will be written) instead of file:// URIs.
    """
    d = diagnosis
    base = Path(link_base).resolve() if link_base is not None else None
    kernels, primary = _collect(d, rooflines)
    labels = {i: f"K{i + 1}" for i in range(len(kernels))}
    roof = roofline_svg(kernels, primary, labels, d.roofline is not None)
    bw = bandwidth_svg(kernels, labels)
    tl, tl_legend = timeline_svg(d)
    kernel_rows = []
    if d.timeline and d.timeline.top_kernels:
        kernel_rows = [{"name": KernelName(k.name).display(90), "full": k.name, "count": k.count,
                        "total": fmt_value(k.total_ns, "ns"), "median": fmt_value(k.median_ns, "ns"),
                        "share": k.share, "pct": fraction(k.share)} for k in sorted(d.timeline.top_kernels, key=lambda k: -k.share)]
    legend = [{"label": labels[i], "name": KernelName(r.kernel).display(90), "full": r.kernel, "path": r.math_path,
               "ai": number(r.arithmetic_intensity, 3) if r.arithmetic_intensity else "— (no FLOPs)",
               "flops": fmt_value(r.achieved_flops, "flop/s"), "bw": fmt_value(r.achieved_bandwidth, "byte/s"),
               "dur": fmt_value(r.duration_ns, "ns"), "floor": fmt_value(r.stated_floor_ns, "ns"),
               "gap": _gap(r.stated_gap), "limiter": r.stated_limiter, "primary": r is primary,
               "moved_floor": fmt_value(r.floor_ns, "ns"), "moved_gap": _gap(r.gap),
               "needed": fmt_value(r.needed_bytes, "byte") if r.needed_bytes else "n/a",
               "moved": fmt_value(r.dram_bytes, "byte")} for i, r in enumerate(kernels)]
    evidence = [{"value": fmt_value(e.value, e.unit or ""), "metric": e.metric or "", "meaning": code_spans(e.meaning),
                 "kernel": KernelName(e.kernel).display(90) if e.kernel else None, "artifact": e.artifact or "no artifact",
                 "href": _link(e.artifact, base) if e.artifact else "", "name": Path(e.artifact).name if e.artifact
                 else "no artifact"} for e in d.evidence]
    artifacts = [{"href": _link(a, base), "path": a, "name": Path(a).name} for a in d.artifacts]
    secondary = [{"what": f.mechanism or f.bound, "share": share_text(f.share), "bottleneck": code_spans(f.bottleneck)}
                 for f in also_found(d, 8)]
    page_title = title or f"kernel-profiler: {d.mechanism or d.bound}"
    return _env().get_template("report.html.j2").render(
        d=d, title=page_title, evidence=evidence, fix=_fix_view(d), bottleneck=code_spans(d.bottleneck),
        explanation=code_spans(d.explanation), missing=code_spans("; ".join(d.missing)), roofline_text=roofline_sentence(primary) if primary else "", roofline_svg=Markup(roof),
        bandwidth_svg=Markup(bw), timeline_svg=Markup(tl), timeline_legend=tl_legend,
        ranks_svg=Markup(ranks_svg(d)), kernel_rows=kernel_rows, legend=legend, primary=primary,
        artifacts=artifacts, secondary=secondary, fmt=fmt_value,
        primary_is_diagnosis=d.roofline is not None,
        gap_marked=primary is not None and (d.roofline is not None or primary.gap >= 1.5),
    )
