"""The evidence engine: artifacts -> timeline triage -> kernel analysis -> Diagnosis.

`analyze(paths)` is what `kernel-profiler analyze` runs; the agents' tools call
the same functions. Order follows the method: the timeline decides first
(start-up, transfer- or host-bound ends the investigation; kernel profiles are
then secondary), and only a kernel-bound timeline hands over to the kernels
that dominate GPU time.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

from ..artifacts import load_paths
from ..artifacts.tables import Artifacts, Timeline
from .consistency import main_timeline, reconcile
from ..answer import Diagnosis, Evidence, Finding, Fix
from ..display import duration
from .kernels import (COMMS_KERNEL, FEW_US_NS, KernelAnalysis, analyze_kernels, confirm_with_telemetry,
                      excess_dram_traffic, kernel_key)
from .ranks import analyze_ranks
from .timeline import TimelineResult, triage

# Timeline-only: the dominant kernel's grid smaller than the SM count is low parallelism.
TIMELINE_ONLY_CONFIDENCE = 0.55
# Process start-up is noted (apart from the diagnosis) when longer than the steady window and this.
STARTUP_NOTE_MIN_NS = 0.5e9


def analyze(paths: Iterable[str | Path]) -> Diagnosis:
    return diagnose(load_paths(paths))


def _main_timeline(arts: Artifacts) -> Optional[Timeline]:
    return main_timeline(arts.timelines)


def _rank_timeline(tl: Timeline, pid: int) -> Timeline:
    """The part of a multi-process timeline that belongs to one process."""
    import dataclasses

    parts = {name: getattr(tl, name) for name in ("kernels", "copies", "sets", "api", "ranges")}
    return dataclasses.replace(tl, **{n: df[df["pid"] == pid] if len(df) else df for n, df in parts.items()})


@dataclass
class Analysis:
    """Everything one pass of the engine produced: the diagnosis and what it was made from."""

    diagnosis: Diagnosis
    timeline: Optional[Timeline]  # the timeline analyzed (one rank's part of a multi-process timeline)
    triage: Optional[TimelineResult]
    kernels: list[KernelAnalysis]

    @property
    def rooflines(self):
        return [a.roofline for a in self.kernels if a.roofline is not None]


def diagnose(arts: Artifacts) -> Diagnosis:
    return run(arts).diagnosis


def run(arts: Artifacts) -> Analysis:
    """One pass: ranks, timeline triage, kernel analysis, then the decision (see the module docstring)."""
    arts = reconcile(arts)  # inputs from another device, run or program are set apart, and said so
    ranks = analyze_ranks(arts)
    tl = _main_timeline(arts)
    if ranks is not None and tl is not None and len(tl.kernels) and tl.kernels["pid"].nunique() > 1:
        tl = _rank_timeline(tl, int(ranks[1][0].pid))  # per-rank analysis of the first rank
    tres: Optional[TimelineResult] = triage(tl) if tl is not None else None
    analyses = analyze_kernels(arts.kernel_profiles, tres.kernels if tres else None, arts.sass, arts.resources)
    program = excess_dram_traffic(analyses)
    timeline_answer = list(tres.findings) if tres is not None and tres.verdict in TIMELINE_ANSWERS else []
    notes: list[Finding] = []
    extra: dict = {}
    if ranks is not None:
        rank_finding, rows, straggler, cause = ranks
        extra = dict(ranks=rows, straggler_rank=straggler,
                     straggler_cause=None if cause == "sample_of_ranks" else cause,
                     straggler_verdict=None if cause == "sample_of_ranks"
                     else ("straggler" if straggler is not None else "no straggler"))
        if straggler is not None or rank_finding.mechanism == "comms_wait":
            timeline_answer = [rank_finding] + timeline_answer
        else:
            notes.append(rank_finding)
    timeline_only = (_timeline_only(tl, tres) if tres is not None and tres.verdict == "kernel" and len(tres.kernels)
                     else None)
    primary, secondary = decide(timeline_answer, program,
                                [(kernel_key(a.profile.name), a.share, a.findings) for a in analyses], timeline_only)
    secondary = notes + secondary
    secondary += also_found(tres, primary)
    if ranks is None:  # one GPU: NVML samples given with the captures speak to the kernel's clock
        confirm_with_telemetry(primary, arts.telemetry)
    device = None
    if tl is not None and tl.gpus:
        device = tl.gpus[0].name
    elif arts.kernel_profiles:
        device = arts.kernel_profiles[0].device
    d = Diagnosis.from_findings(primary, secondary, timeline=tres.summary if tres else None,
                                artifacts=list(arts.files), device=device, warnings=list(arts.warnings), **extra)
    return Analysis(diagnosis=d, timeline=tl, triage=tres, kernels=analyses)


def also_found(tres: Optional[TimelineResult], primary: Finding) -> list[Finding]:
    """What the timeline found apart from the steady state: the one-time work (JIT, library initialisation,
    module loading, allocation, one-time copies) or, when there is none to report, long process start-up."""
    if tres is None:
        return []
    if tres.onetime is not None:
        return [] if tres.onetime is primary else [tres.onetime]
    if tres.summary.startup_ns > max(tres.summary.window_ns, STARTUP_NOTE_MIN_NS) and primary.mechanism != "startup_dominated":
        return [_startup_note(tres)]
    return []


# Timeline verdicts that answer the question without kernel profiling.
TIMELINE_ANSWERS = ("startup", "transfer", "host")


def decide(timeline_answer: list[Finding], program: Optional[Finding],
           kernels: list[tuple[str, Optional[float], list[Finding]]],
           timeline_only: Optional[Finding]) -> tuple[Finding, list[Finding]]:
    """The decision, used by `run` and by the offline expert over its tools' results.

    In order: findings that answer the question on the timeline (a straggler, start-up, transfer- or
    host-bound); work split over many memory-streaming kernels; the first finding of the kernel with the
    largest share of GPU time (`kernels` ranked: display key, share, findings), pointing at the next kernel
    when it is near peak; the timeline-only kernel finding; else inconclusive.
    """
    kernel_findings = [f for _, _, fs in kernels for f in fs]
    if timeline_answer:
        primary, *rest = timeline_answer
        return primary, rest + kernel_findings
    if program is not None:
        return program, kernel_findings
    if kernels:
        (_, _, fs), *others = kernels
        primary = fs[0]
        if primary.mechanism == "near_peak" and others:
            key, share, nxt = others[0]
            primary.explanation += (f" The next-largest profiled cost is `{key}` ({(share or 0):.0%} of GPU "
                                    f"time): {nxt[0].bottleneck}")
        return primary, fs[1:] + [f for _, _, g in others for f in g]
    if timeline_only is not None:
        return timeline_only, []
    return Finding(bound="inconclusive", bottleneck="The artifacts hold no timeline and no profiled kernel.",
                   confidence=0.1, missing=["an nsys sqlite export or PyTorch trace", "an ncu report"]), []


def _timeline_only(tl: Timeline, tres: TimelineResult) -> Finding:
    s = tres.summary
    top = tres.kernels.iloc[0]
    src = tl.source
    ev = [
        Evidence(metric="timeline.gpu_busy_fraction", value=round(s.busy_fraction, 4), unit="ratio", artifact=src,
                 meaning=f"GPU busy {s.busy_fraction:.0%} of the steady window: kernel-bound"),
        Evidence(metric="timeline.kernel_share", value=round(float(top["share"]), 4), unit="ratio", artifact=src,
                 kernel=str(top["name"]), meaning=f"`{kernel_key(str(top['name']))}` takes {top['share']:.0%} of kernel time "
                                                  f"({int(top['count'])} launches, median {duration(top['median_ns'])})"),
    ]
    rows = tl.kernels[tl.kernels["name"] == top["name"]]
    sms = tl.gpus[0].sm_count if tl.gpus else None
    if len(rows) and sms and {"grid_x", "grid_y", "grid_z"} <= set(rows.columns):
        g = rows.iloc[0]
        try:
            blocks = int(g["grid_x"]) * int(g["grid_y"]) * int(g["grid_z"])
        except (TypeError, ValueError):
            blocks = None
        fits = not (COMMS_KERNEL.search(str(top["name"])) or float(top["median_ns"]) < FEW_US_NS)
        if blocks is not None and 0 < blocks < sms and fits:
            ev.append(Evidence(metric="timeline.grid_blocks", value=blocks, unit="block", artifact=src,
                               kernel=str(top["name"]), meaning=f"{blocks} blocks on a {sms}-SM GPU"))
            return Finding(
                bound="latency", mechanism="low_parallelism", kernel=str(top["name"]), share=float(top["share"]),
                bottleneck=(f"GPU time is dominated by `{kernel_key(str(top['name']))}`, which launches only {blocks} "
                            f"blocks on a {sms}-SM GPU."),
                evidence=ev,
                explanation=(f"Each block runs on one SM, so at most {blocks / sms:.0%} of the GPU can work on the "
                             f"dominant kernel. (Timeline only: an ncu report would confirm with its memory throughput.)"),
                fix=Fix(change=f"Launch at least {2 * sms} blocks (several per SM), e.g. one block per tile of data.",
                        metric="launch__grid_size", direction="increase", expected=f"from {blocks} to >= {2 * sms}",
                        current_value=blocks, target_value=2 * sms),
                confidence=TIMELINE_ONLY_CONFIDENCE, missing=[f"ncu report of {kernel_key(str(top['name']))}"],
            )
    name = kernel_key(str(top["name"]))
    return Finding(
        bound="inconclusive", mechanism=None, kernel=str(top["name"]), share=float(top["share"]),
        bottleneck=(f"The program is kernel-bound and `{name}` dominates GPU time ({top['share']:.0%}); the timeline "
                    f"alone cannot say what limits it."),
        evidence=ev,
        explanation="A timeline shows when kernels run, not which hardware resource limits them.",
        fix=Fix(change=(f"Profile that kernel one level deeper: `ncu --set full -k regex:{name[:40]} -s 3 -c 1 -o "
                        f"report CMD` (or `kernel-profiler ask ... -- CMD`) and analyze the report."),
                metric="gpu__time_duration.sum", direction="decrease", expected="unknown until the kernel is profiled"),
        confidence=0.3, missing=[f"ncu report of {name}"],
    )


def _startup_note(tres: TimelineResult) -> Finding:
    s = tres.summary
    return Finding(
        bound="host", mechanism="startup_dominated", share=s.startup_ns / max(s.capture_ns, 1.0),
        bottleneck=(f"Process start-up ({s.startup_ns / 1e9:.2f} s before the first GPU work) is longer than the "
                    f"steady-state window analyzed ({s.window_ns / 1e6:.1f} ms); it is reported apart."),
        evidence=[Evidence(metric="timeline.startup_ns", value=s.startup_ns, unit="ns", artifact=s.source,
                           meaning="capture start to first GPU operation (imports, CUDA context, allocation)")],
        explanation="Start-up is real wall time but not any kernel's fault; it matters only for short-lived runs.",
        confidence=0.6,
    )
