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
from ..answer import Diagnosis
from .consistency import reconcile
from .decide import apart, decide, read_timeline
from ..kernel_name import KernelName
from .streams import serialization_finding
from .kernels import KernelAnalysis, analyze_kernels, confirm_with_telemetry, excess_dram_traffic
from .timeline import TimelineResult


def analyze(paths: Iterable[str | Path]) -> Diagnosis:
    return diagnose(load_paths(paths))


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
    """One pass: ranks and timeline (`decide.read_timeline`), kernel analysis, then the decision (`decide.decide`)."""
    arts = reconcile(arts)  # inputs from another device, run or program are set apart, and said so
    stage = read_timeline(arts)
    tl, tres = stage.timeline, stage.triage
    analyses = analyze_kernels(arts.kernel_profiles, tres.kernels if tres else None, arts.sass, arts.resources)
    program = excess_dram_traffic(analyses)
    if tl is not None and tres is not None and tres.verdict == "kernel":  # streams a default-stream barrier serializes
        top = str(tres.kernels.iloc[0]["name"]) if len(tres.kernels) else None
        program = serialization_finding(tl, *tres.window, tres.summary.steps or tres.summary.repeats, top) or program
    primary, secondary = decide(stage.answer, program,
                                [(KernelName(a.profile.name).qualified, a.share, a.findings) for a in analyses],
                                stage.timeline_only)
    secondary = stage.notes + secondary + apart(stage.startup_note(), primary)
    if stage.ranks is None:  # one GPU: NVML samples given with the captures speak to the kernel's clock
        confirm_with_telemetry(primary, arts.telemetry)
    device = None
    if tl is not None and tl.gpus:
        device = tl.gpus[0].name
    elif arts.kernel_profiles:
        device = arts.kernel_profiles[0].device
    d = Diagnosis.from_findings(primary, secondary, timeline=tres.summary if tres else None,
                                artifacts=list(arts.files), device=device, warnings=list(arts.warnings),
                                **stage.rank_fields())
    return Analysis(diagnosis=d, timeline=tl, triage=tres, kernels=analyses)
