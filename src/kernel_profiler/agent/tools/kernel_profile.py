"""The kernel_profile tool: Nsight Compute on the kernels matching a regex (or the user's reports), analyzed by
the engine's kernel stage (roofline, mechanism findings, excess traffic over several kernels)."""
from __future__ import annotations

import re
from typing import Literal, Optional

from pydantic import BaseModel, Field

from ...analysis.kernels import analyze_kernels, excess_dram_traffic
from ...kernel_name import KernelName
from ...artifacts import ncu_report
from ...answer import Finding, Roofline
from ...errors import EmptyCapture, KernelProfilerError, UsageError
from .. import environment
from ..context import ToolContext
from ..finders import sass_available
from ..order import matches
from ..sandbox import (MAX_LAUNCH_COUNT, MAX_LAUNCH_SKIP, MAX_REGEX_LEN, check_int, check_regex, check_sections,
                       check_set)
from .timeline import launch_counts

# Marks an input field that only applies when a program is run (ncu's launch selection and sections): with
# captures only, `tool_specs(live=False)` leaves it out of the schema the model reads (the tool ignores it).
LIVE_ONLY = {"live_only": True}


class KernelProfileInput(BaseModel):
    """Profile the kernels matching a regex with Nsight Compute (or read them from the given .ncu-rep)."""

    kernel_regex: str = Field(max_length=MAX_REGEX_LEN, description="regular expression over kernel names "
                                                                     "(must match a kernel that dominates GPU time)")
    launch_skip: int = Field(3, ge=0, le=MAX_LAUNCH_SKIP, description="matching launches to skip (warm-up)",
                             json_schema_extra=LIVE_ONLY)
    launch_count: int = Field(1, ge=1, le=MAX_LAUNCH_COUNT, description="matching launches to profile",
                              json_schema_extra=LIVE_ONLY)
    sections: list[str] = Field(default_factory=list, description="ncu section ids; empty = the section set",
                                json_schema_extra=LIVE_ONLY)
    section_set: Optional[Literal["targeted", "basic", "detailed", "full", "roofline"]] = Field(
        "targeted", description="ncu section set used when `sections` is empty: 'targeted' = the metrics the engine "
                                "reads (few replay passes), falling back to 'full' when they name no mechanism",
        json_schema_extra=LIVE_ONLY)


class KernelResult(BaseModel):
    name: str
    key: str
    launch_id: int
    share: Optional[float] = Field(description="share of steady-state GPU time (timeline), else of profiled time")
    duration_ns: float = Field(description="duration of the profiled launch under ncu (replayed: not program time)")
    roofline: Optional[Roofline]
    findings: list[Finding]


class KernelProfileOutput(BaseModel):
    reports: list[str]
    mode: Literal["captured", "artifacts"]
    kernels: list[KernelResult]
    program_finding: Optional[Finding] = Field(description="excess DRAM traffic over several streaming kernels, if any")
    sass_available: bool
    note: str = ""
    replay_passes: list[int] = Field(default_factory=list, description="ncu replay passes per profiled launch")


def _names_mechanism(analyses) -> bool:
    return any(f.mechanism for a in analyses for f in a.findings) or excess_dram_traffic(analyses) is not None


def _from_artifacts(ctx: ToolContext, rx: re.Pattern):
    """(profiles matching rx, SASS, resources, reports, note) from the user's artifacts."""
    arts = ctx.user_artifacts()
    if not arts.kernel_profiles:
        raise EmptyCapture(", ".join(ctx.artifacts), "the artifacts hold no Nsight Compute report: capture one "
                                                     "with `ncu --set full -k regex:NAME -s 3 -c 1 -o report CMD`")
    profiles = [k for k in arts.kernel_profiles if matches(rx, k.name)]
    note = "Read from the given Nsight Compute report(s); launch_skip/launch_count were applied when they were captured."
    return profiles, arts.sass, arts.resources, sorted({k.source for k in profiles}), note


def _captured(ctx: ToolContext, inp: KernelProfileInput, pattern: str, rx: re.Pattern, sections: list[str],
              sset: Optional[str], ranked):
    """(profiles, SASS, report, note, replay passes) from ncu run on the target: the launches clamped to what the
    timeline counted, one retry at the first launch with the full set, the full set again when the targeted
    metrics name no mechanism."""
    ncu = environment.Ncu(ctx, pattern, sections)
    note = ""
    skip, count = inp.launch_skip, inp.launch_count
    if ctx.timeline is not None and ctx.timeline_result is not None:  # what the timeline counted
        before, total = launch_counts(ctx.timeline, ctx.timeline_result.window[0], rx=rx)
        if total:
            skip, count = min(skip, max(total - 1, 0)), min(count, total)
            if skip + count > total:
                skip = total - count
            if (skip, count) != (inp.launch_skip, inp.launch_count):
                note = (f"launch_skip/count {inp.launch_skip}/{inp.launch_count} -> {skip}/{count}: the timeline "
                        f"counted {total} matching launches ({before} before the steady window). ")
    rep, said = ncu.profile(skip, count, sset)
    targeted = not sections and (sset or "targeted") == "targeted"
    if not rep.exists() and (skip > 0 or targeted):  # retry once: the first launch, the full set
        note += (f"ncu wrote no report at launch_skip {skip}" + (" with the targeted metrics" if targeted else "")
                 + f" ({said[-160:]}); retried once at launch_skip 0" + (" with --set full" if targeted else "")
                 + ". ")
        skip, count = 0, 1
        if targeted:
            sset, targeted = "full", False
        rep, said = ncu.profile(skip, count, sset)
    if not rep.exists():
        raise EmptyCapture(rep, f"ncu wrote no report: no kernel matched regex {pattern!r} (tried launch_skip "
                                f"{inp.launch_skip}" + (f" and {skip}" if skip != inp.launch_skip else "")
                                + f"). ncu said: {said}")
    profiles = ncu_report.load(rep)
    if targeted and profiles and not _names_mechanism(analyze_kernels(profiles, ranked, [], [])):
        note += "The targeted metrics named no mechanism; profiled again with --set full. "
        rep, said = ncu.profile(skip, count, "full")
        if rep.exists():
            profiles = ncu_report.load(rep)
    ctx.produced.append(str(rep))
    try:
        sass_fns = environment.sass_dump(ctx, rep, list(ncu_report.load_sass(rep)))
    except KernelProfilerError:
        sass_fns = []
    return profiles, sass_fns, rep, note, ncu.passes


def run_kernel_profile(ctx: ToolContext, inp: KernelProfileInput) -> KernelProfileOutput:
    sb = ctx.sandbox
    pattern = check_regex(inp.kernel_regex)
    check_int("launch_skip", inp.launch_skip, 0, MAX_LAUNCH_SKIP)
    check_int("launch_count", inp.launch_count, 1, MAX_LAUNCH_COUNT)
    sections = check_sections(inp.sections)
    sset = check_set(inp.section_set)
    rx = re.compile(pattern)
    ranked = ctx.timeline_result.kernels if ctx.timeline_result is not None else None
    passes: list[int] = []
    if ctx.artifacts:
        profiles, sass_fns, resources, reports, note = _from_artifacts(ctx, rx)
        mode = "artifacts"
    elif sb.target:
        profiles, sass_fns, rep, note, passes = _captured(ctx, inp, pattern, rx, sections, sset, ranked)
        resources, reports, mode = [], [str(rep)], "captured"
    else:
        raise UsageError("no program to run and no artifacts")
    if not profiles:
        names = sorted({KernelName(k.name).qualified for k in ctx.user_artifacts().kernel_profiles}) if ctx.artifacts else []
        raise EmptyCapture(", ".join(reports) or "ncu report", f"no profiled kernel matches {pattern!r}"
                           + (f"; profiled kernels: {', '.join(names[:10])}" if names else ""))
    analyses = analyze_kernels(profiles, ranked, sass_fns, resources)
    kernels = [KernelResult(name=a.profile.name, key=KernelName(a.profile.name).qualified, launch_id=a.profile.launch_id,
                            share=a.share, duration_ns=a.duration_ns, roofline=a.roofline, findings=a.findings)
               for a in analyses]
    return KernelProfileOutput(reports=reports, mode=mode, kernels=kernels, program_finding=excess_dram_traffic(analyses),
                               sass_available=sass_available(ctx, reports), note=note.strip(),
                               replay_passes=passes if mode == "captured" else [])
