"""The timeline tool: capture (nsys, else the PyTorch profiler for a Python target) or load the timeline, and
return what the timeline stage of the analysis says (`analysis.decide.read_timeline`)."""
from __future__ import annotations

import re
from typing import Literal, Optional

from pydantic import BaseModel, Field

from ...analysis.decide import read_timeline
from ...artifacts import load_paths
from ...artifacts.tables import Timeline
from ...answer import Finding, KernelRow, RankRow, TimelineSummary
from ...errors import EmptyCapture, UsageError
from .. import environment
from ..context import ToolContext
from ..finders import python_script_target
from ..order import matches

# A kernel "dominates" GPU time (and may be profiled with ncu) with at least this
# share of steady-state kernel time; the top-ranked kernel always qualifies.
DOMINANT_SHARE = 0.05


class TimelineInput(BaseModel):
    """Capture (or load) the program's timeline and triage it. The program is fixed by the user."""

    top: int = Field(5, ge=1, le=10, description="how many kernels of the GPU-time ranking to return")


class TimelineOutput(BaseModel):
    source: str = Field(description="the timeline file the numbers come from")
    mode: Literal["captured", "artifacts"]
    verdict: Literal["ranks", "startup", "transfer", "host", "kernel", "empty"]
    summary: TimelineSummary
    findings: list[Finding] = Field(description="host/transfer/start-up findings, or the timeline-only kernel finding")
    dominant_kernels: list[KernelRow] = Field(description="kernels kernel_profile may be run on (by share of GPU time)")
    startup_note: Optional[Finding] = Field(None, description="one-time work reported apart from the steady state "
                                                                "(JIT, library init, module loading, allocation, one-time "
                                                                "copies), or long process start-up")
    launches: dict[str, list[int]] = Field(default_factory=dict, description="dominant kernel -> [launches before the "
                                                                             "steady window, launches in the capture]")
    device: Optional[str] = None
    next_step: str
    ranks: list[RankRow] = Field(default_factory=list, description="multi-process jobs: per-rank table")
    straggler_rank: Optional[int] = None
    straggler_verdict: Optional[str] = None


def _dominant(rows: list[KernelRow]) -> list[KernelRow]:
    return [r for i, r in enumerate(rows) if i == 0 or r.share >= DOMINANT_SHARE]


def _next_step(verdict: str, onetime: bool, insist: bool) -> str:
    if verdict == "ranks":
        return ("The ranks differ: the straggler (or the collectives) explain the step time. Submit the answer; "
                "profiling one rank's kernels would not find it" + (" (the user insisted: allowed)." if insist
                                                                    else "."))
    if verdict in ("host", "transfer", "startup"):
        return ("The timeline answers the question: the GPU is not the limit. Submit the answer now; profiling "
                "kernels would tell nothing" + (" (the user insisted on kernel profiling: it is allowed)." if insist
                                                else "."))
    if verdict == "kernel":
        return ("Kernel-bound: profile the dominant kernel(s) with kernel_profile (a regex matching them; launch_skip "
                "from `launches`: skip the launches before the steady window, never past the last), then confirm the "
                "mechanism with sass." + (" The one-time work (startup_note) is reported apart, under also found."
                                          if onetime else ""))
    return "The timeline holds no GPU work: nothing to profile."


def run_timeline(ctx: ToolContext, inp: TimelineInput) -> TimelineOutput:
    sb = ctx.sandbox
    if ctx.artifacts:
        arts = ctx.user_artifacts()
        mode = "artifacts"
    elif sb.target and sb.allowed_executables()["nsys"] is None and python_script_target(sb.target):
        arts = load_paths([environment.torch_trace(ctx)])
        mode = "captured"
    elif sb.target:
        arts = load_paths([environment.nsys_timeline(ctx)])
        mode = "captured"
    else:
        raise UsageError("no program to run and no artifacts: give the program after `--` or captures with --artifacts")
    stage = read_timeline(arts) if arts else None
    tl, tres = (stage.timeline, stage.triage) if stage is not None else (None, None)
    if tl is None or tres is None:
        raise EmptyCapture(", ".join(ctx.artifacts) or "capture", "no timeline (nsys sqlite or PyTorch trace) found; "
                                                                  "capture one with `nsys profile` and export it to sqlite")
    ctx.timeline_result = tres
    ctx.timeline = tl
    summary = tres.summary.model_copy(update={"top_kernels": tres.summary.top_kernels[:inp.top]})
    # the next step follows the rank comparison first, else the triage (a "ranks" note does not change it)
    nxt = _next_step("ranks" if stage.verdict == "ranks" else tres.verdict, tres.onetime is not None, ctx.insist)
    dominant = _dominant(tres.summary.top_kernels)
    out = TimelineOutput(source=tl.source, mode=mode, verdict=stage.verdict, summary=summary,
                         findings=stage.findings(), dominant_kernels=dominant, startup_note=stage.startup_note(),
                         launches={k.name: list(launch_counts(tl, tres.window[0], [k.name])) for k in dominant},
                         device=tl.gpus[0].name if tl.gpus else None, next_step=nxt,
                         **stage.rank_fields(with_cause=False))
    ctx.timeline_output = out
    return out


def launch_counts(tl: Timeline, lo: float, names: Optional[list[str]] = None,
                  rx: Optional[re.Pattern] = None) -> tuple[int, int]:
    """(launches before the steady window, launches in the capture) of the kernels named or matching rx."""
    k = tl.kernels
    if not len(k):
        return 0, 0
    kn = k["name"].astype(str)
    if names is not None:
        sel = kn.isin(names).to_numpy()
    else:
        sel = kn.map({n: matches(rx, n) for n in kn.unique()}).to_numpy(dtype=bool)
    starts = k["start_ns"].to_numpy()[sel]
    return int((starts < lo).sum()), int(sel.sum())


def plan_launches(before: int, total: int, count: int) -> tuple[int, int]:
    """ncu (launch_skip, launch_count) from the launches the timeline counted: skip the launches before the steady
    window and one more warm-up launch when later ones exist; never skip past the last launch (a kernel launched
    once is profiled at skip 0)."""
    if total <= 0:
        return 0, count
    count = max(1, min(count, total))
    skip = before + (1 if total - before > count else 0)
    return max(0, min(skip, total - count)), count
