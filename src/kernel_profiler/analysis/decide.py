"""The one decision: what limits the program, from the timeline first, then the kernels.

`read_timeline(arts)` is the timeline stage of the method: the main timeline, one rank's part of a multi-process
job, the triage, the rank comparison, the timeline-only kernel finding and the note on start-up. `decide(...)`
picks the primary finding. The engine (`engine.run`), the agent's timeline tool and the offline expert (which
sees only the tools' results, through `decide_over_tools`) all call these functions: the decision is made here
and nowhere else.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

from ..artifacts.tables import Artifacts, Timeline
from ..answer import Evidence, Finding, Fix
from ..catalog import CATALOG
from ..display import duration
from .consistency import main_timeline
from ..kernel_name import KernelName
from .kernels import COMMS_KERNEL, FEW_US_NS
from .ranks import RankAnalysis, analyze_ranks
from .timeline import TimelineResult, triage

# Timeline verdicts that answer the question without kernel profiling: kernel_profile and sass are refused after
# them (unless the user insisted), the expert submits, and their findings lead the decision.
TIMELINE_VERDICTS = ("ranks", "startup", "transfer", "host")
# Timeline-only: the dominant kernel's grid smaller than the SM count is low parallelism.
TIMELINE_ONLY_CONFIDENCE = 0.55
# Process start-up is noted (apart from the diagnosis) when longer than the steady window and this.
STARTUP_NOTE_MIN_NS = 0.5e9


def rank_timeline(tl: Timeline, pid: int) -> Timeline:
    """The part of a multi-process timeline that belongs to one process."""
    parts = {name: getattr(tl, name) for name in ("kernels", "copies", "sets", "api", "ranges")}
    return dataclasses.replace(tl, **{n: df[df["pid"] == pid] if len(df) else df for n, df in parts.items()})


@dataclass
class TimelineStage:
    """What the timeline says: the timeline analyzed, its triage, the rank comparison and the findings they give."""

    timeline: Optional[Timeline]  # the main timeline (one rank's part of a multi-process timeline), None if none
    triage: Optional[TimelineResult]
    ranks: Optional[RankAnalysis]  # the rank comparison; None for one process
    answer: list[Finding]  # findings that answer the question on the timeline: a straggler first, then the host's
    notes: list[Finding]  # the rank comparison when it found no straggler (kept secondary)
    timeline_only: Optional[Finding]  # kernel-bound: what the timeline alone says about the dominant kernel

    @property
    def verdict(self) -> Optional[str]:
        """ranks | startup | transfer | host | kernel | empty; None without a timeline."""
        if self.ranks is not None and self.answer and self.answer[0] is self.ranks.finding:
            return "ranks"
        return self.triage.verdict if self.triage is not None else None

    def findings(self) -> list[Finding]:
        """The timeline's findings in the order they are answered: a straggler, the host findings, the rank note
        when there is no straggler, the timeline-only kernel finding last (the timeline tool's `findings`)."""
        host = list(self.triage.findings) if self.triage is not None else []
        lead = [self.ranks.finding] if self.verdict == "ranks" else []
        return lead + host + self.notes + ([self.timeline_only] if self.timeline_only is not None else [])

    def startup_note(self) -> Optional[Finding]:
        """What the timeline found apart from the steady state: the one-time work (JIT, library initialisation,
        module loading, allocation, one-time copies) or, when there is none to report, long process start-up.
        None when the timeline's answer is itself start-up."""
        tres = self.triage
        if tres is None:
            return None
        if tres.onetime is not None:
            return tres.onetime if tres.verdict != "startup" else None
        return startup_note(tres) if long_startup(tres) else None

    def rank_fields(self, with_cause: bool = True) -> dict:
        """The Diagnosis / timeline tool fields of the rank comparison (none for one process)."""
        if self.ranks is None:
            return {}
        r = self.ranks
        if not with_cause:
            return dict(ranks=r.rows, straggler_rank=r.straggler,
                        straggler_verdict="straggler" if r.straggler is not None else "no straggler")
        return dict(ranks=r.rows, straggler_rank=r.straggler, straggler_cause=r.cause, straggler_verdict=r.verdict)


def read_timeline(arts: Artifacts) -> TimelineStage:
    """The timeline stage: ranks compared first, then the first rank's timeline (or the only one) triaged."""
    ranks = analyze_ranks(arts)
    tl = main_timeline(arts.timelines)
    if ranks is not None and tl is not None and len(tl.kernels) and tl.kernels["pid"].nunique() > 1:
        tl = rank_timeline(tl, int(ranks.rows[0].pid))  # per-rank analysis of the first rank
    tres: Optional[TimelineResult] = triage(tl) if tl is not None else None
    answer = list(tres.findings) if tres is not None and tres.verdict in TIMELINE_VERDICTS else []
    notes: list[Finding] = []
    if ranks is not None:
        if ranks.answers:
            answer = [ranks.finding] + answer
        else:
            notes.append(ranks.finding)
    only = timeline_only(tl, tres) if tl is not None and tres is not None and tres.verdict == "kernel" \
        and len(tres.kernels) else None
    return TimelineStage(timeline=tl, triage=tres, ranks=ranks, answer=answer, notes=notes, timeline_only=only)


KernelFindings = tuple[str, Optional[float], list[Finding]]  # (display key, share of GPU time, findings)


def decide(timeline_answer: list[Finding], program: Optional[Finding], kernels: list[KernelFindings],
           timeline_only: Optional[Finding]) -> tuple[Finding, list[Finding]]:
    """The primary finding and the secondary ones.

    In order: findings that answer the question on the timeline (a straggler, start-up, transfer- or
    host-bound); work split over many memory-streaming kernels; the first finding of the kernel with the
    largest share of GPU time (`kernels` ranked), pointing at the next kernel when it is near peak; the
    timeline-only kernel finding; else inconclusive.
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


def apart(note: Optional[Finding], primary: Finding) -> list[Finding]:
    """The start-up note (`TimelineStage.startup_note`) reported next to `primary`, unless start-up is the answer."""
    return [note] if note is not None and primary.mechanism != "startup_dominated" else []


def decide_over_tools(verdict: str, findings: list[Finding], startup: Optional[Finding], program: Optional[Finding],
                      kernels: list[KernelFindings]) -> tuple[Finding, list[Finding]]:
    """`decide` over what the timeline tool returned (`TimelineStage.verdict`, `.findings()`, `.startup_note()`)
    and the kernel findings: what a model that sees only tool results decides."""
    only = findings[-1] if verdict == "kernel" and findings else None  # the timeline-only finding comes last
    primary, secondary = decide(list(findings) if verdict in TIMELINE_VERDICTS else [], program, kernels, only)
    return primary, secondary + apart(startup, primary)


def long_startup(tres: TimelineResult) -> bool:
    """Process start-up longer than the steady window and than STARTUP_NOTE_MIN_NS."""
    return tres.summary.startup_ns > max(tres.summary.window_ns, STARTUP_NOTE_MIN_NS)


def timeline_only(tl: Timeline, tres: TimelineResult) -> Finding:
    """What a kernel-bound timeline alone says about the dominant kernel: a grid smaller than the SM count, or
    that it must be profiled one level deeper."""
    s = tres.summary
    top = tres.kernels.iloc[0]
    src = tl.source
    ev = [
        Evidence(metric="timeline.gpu_busy_fraction", value=round(s.busy_fraction, 4), unit="ratio", artifact=src,
                 meaning=f"GPU busy {s.busy_fraction:.0%} of the steady window: kernel-bound"),
        Evidence(metric="timeline.kernel_share", value=round(float(top["share"]), 4), unit="ratio", artifact=src,
                 kernel=str(top["name"]), meaning=f"`{KernelName(str(top['name'])).qualified}` takes {top['share']:.0%} of kernel time "
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
                bottleneck=(f"GPU time is dominated by `{KernelName(str(top['name'])).qualified}`, which launches only {blocks} "
                            f"blocks on a {sms}-SM GPU."),
                evidence=ev,
                explanation=(f"Each block runs on one SM, so at most {blocks / sms:.0%} of the GPU can work on the "
                             f"dominant kernel. (Timeline only: an ncu report would confirm with its memory throughput.)"),
                fix=Fix(change=CATALOG["low_parallelism"].fix_text("timeline", min_grid=2 * sms),
                        metric="launch__grid_size", direction="increase", expected=f"from {blocks} to >= {2 * sms}",
                        current_value=blocks, target_value=2 * sms),
                confidence=TIMELINE_ONLY_CONFIDENCE, missing=[f"ncu report of {KernelName(str(top['name'])).qualified}"],
            )
    name = KernelName(str(top["name"])).qualified
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


def startup_note(tres: TimelineResult) -> Finding:
    """Process start-up, reported apart from the steady state."""
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
