"""The answer of a recorded run, for reports: a capture folder/file, or an `ask --record` transcript.

Captures are analyzed (the engine's Diagnosis). A transcript's report shows the answer that run gave -- the
final answer it recorded (accepted, or marked inconclusive) -- with the measurements behind it read from the
tool results it recorded (timeline summary, per-kernel rooflines, ranks, device, files): no profiler, no GPU, no
network, and no new decision, so the report never disagrees with the answer the user was given.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from pydantic import ValidationError

from .answer import Answer, AskResult, Diagnosis, Roofline
from .errors import ArtifactError


def is_transcript(path: Path) -> bool:
    if not path.is_file():
        return False
    try:
        with open(path, "rb") as f:
            head = f.readline(65536)
        return b'"format_version"' in head and b'"question"' in head
    except OSError:
        return False


def _read(path: Path) -> tuple[dict, list[dict]]:
    from .agent import transcript as tx

    try:
        return tx.read(path)  # the one reader: header and format version checked
    except tx.TranscriptError as e:
        raise ArtifactError(path, f"not a readable kernel-profiler transcript ({e})") from e


def _results(path: Path, events: list[dict]) -> dict[str, dict]:
    """The last successful result of each tool the run called."""
    out: dict[str, dict] = {}
    for ev in events:
        if ev["event"] != "tool_result":
            continue
        if not isinstance(ev.get("name"), str):
            raise ArtifactError(path, f"not a readable kernel-profiler transcript (tool_result event "
                                      f"{ev.get('seq', '?')} names no tool)")
        if not ev.get("is_error") and isinstance(ev.get("content"), dict):
            out[ev["name"]] = ev["content"]
    return out


def report_of(answer: Answer, results: dict[str, dict]) -> tuple[Diagnosis, list[Roofline]]:
    """`answer` with the measurements the run's tool results hold (timeline, ranks, device, files, the roofline of
    its kernel) as a Diagnosis for the renderers, and the rooflines of every kernel the run profiled. `primary`
    stays empty: the answer is the run's, not the engine's."""
    from .agent.tools.kernel_profile import KernelProfileOutput
    from .agent.tools.timeline import TimelineOutput

    tlo = TimelineOutput.model_validate(results["timeline"]) if "timeline" in results else None
    kpo = KernelProfileOutput.model_validate(results["kernel_profile"]) if "kernel_profile" in results else None
    rooflines = [k.roofline for k in (kpo.kernels if kpo else []) if k.roofline is not None]
    roofline: Optional[Roofline] = None
    if answer.kernel and rooflines:
        from .kernel_name import KernelName

        want = KernelName(answer.kernel).qualified.split("(")[0]
        roofline = next((r for r in rooflines if KernelName(r.kernel).qualified.split("(")[0] == want), None)
    a = answer.as_answer().model_dump()
    a["bound"] = a["bound"] or "inconclusive"  # an answer that names no bound decided none
    return Diagnosis(**a, roofline=roofline, primary=None, secondary=[],
                     timeline=tlo.summary if tlo else None,
                     artifacts=([tlo.source] if tlo else []) + (kpo.reports if kpo else []),
                     device=tlo.device if tlo else None, ranks=tlo.ranks if tlo else [],
                     straggler_rank=tlo.straggler_rank if tlo else None,
                     straggler_verdict=tlo.straggler_verdict if tlo and tlo.straggler_verdict in
                     ("straggler", "no straggler") else None), rooflines


def accepted_answer(path: Path) -> tuple[AskResult, dict[str, dict]]:
    """The final answer a transcript recorded (as the AskResult `ask` returned, without the run's notices) and the
    last successful result of each tool the run called."""
    header, events = _read(path)
    final = next((e for e in reversed(events) if e["event"] == "answer" and e.get("final")), None)
    if final is None:
        raise ArtifactError(path, "the transcript records no final answer (the run was interrupted): replay it or "
                                  "ask again")
    try:
        res = AskResult.of(final.get("answer"), question=str(header.get("question", "")),
                           model=str(final.get("model") or header.get("model") or "model not recorded"),
                           accepted=bool(final.get("accepted")), inconclusive=bool(final.get("inconclusive")),
                           settle=final.get("settle"), transcript=str(path), source="transcript")
    except ValidationError as e:
        raise ArtifactError(path, f"the transcript's final answer is not an answer this version reads "
                                  f"({e.errors()[0]['msg'] if e.errors() else e})") from None
    return res, _results(path, events)


def diagnosis_from_transcript(path: Path) -> Diagnosis:
    """The report of a transcript: its final answer with the measurements its tool results recorded."""
    return report_for(path)[0]


def report_for(path: Path) -> tuple[Diagnosis, Optional[list[Roofline]]]:
    """What a report of `path` shows: the answer, and the rooflines to chart (None: those the answer carries)."""
    if not is_transcript(path):
        from .analysis.engine import analyze

        return analyze([path]), None
    res, results = accepted_answer(path)
    answer: Answer = res
    if not res.answered:
        answer = Answer(bound="inconclusive", bottleneck="The run ended without an answer.", explanation="", fix=None,
                        missing=[res.settle] if res.settle else [])
    try:
        return report_of(answer, results)
    except ValidationError as e:
        raise ArtifactError(path, f"the transcript's recorded tool results do not match this version's tools "
                                  f"({e.errors()[0]['msg'] if e.errors() else e})") from None


def diagnosis_for(path: Path) -> Diagnosis:
    """Captures are analyzed; a transcript's report is its final answer."""
    return report_for(path)[0]
