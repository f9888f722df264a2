"""The offline expert: a deterministic model that investigates the way the method says.

It sees only what any model sees (the conversation: the user's question and
context, and tool results) and drives the same tools in the same order:
timeline -> kernel_profile on the dominant kernel(s) if the timeline is
kernel-bound (or the user insisted) -> sass if a SASS source exists -> the
answer, written from the engine's findings that the tools returned
(the Diagnosis's Answer). No network, no key, no randomness.

Before it submits, it critiques its own draft (`self_critique`): the deterministic critic runs on the draft
against the captures the environment already loaded for the critic (the orchestrator hands the expert
`Environment.captures`, so nothing is read twice); evidence lines the critic objects to are dropped, and if the
answer still does not pass, the expert says it is inconclusive instead of submitting a claim it cannot back.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Optional

from ...analysis.decide import TIMELINE_VERDICTS, decide_over_tools
from ...answer import Diagnosis, Finding, Fix
from ...kernel_name import KernelName
from ..protocol import ModelTurn, ToolCall, ToolSpec
from ..sandbox import MAX_LAUNCH_COUNT, MAX_REGEX_LEN
from ..tools.kernel_profile import KernelProfileOutput
from ..tools.timeline import TimelineOutput, plan_launches

NAME = "offline-expert"


def kernel_regex(names: list[str]) -> str:
    """A regex matching the given kernels by function name (escaped, capped)."""
    bases: list[str] = []
    for n in names:
        b = KernelName(n).base
        if b and b not in bases:
            bases.append(b)
    parts: list[str] = []
    for b in bases:
        cand = "|".join(parts + [re.escape(b)])
        if len(cand) > MAX_REGEX_LEN:
            break
        parts.append(re.escape(b))
    return "|".join(parts) or re.escape(KernelName(names[0]).base)[:MAX_REGEX_LEN]


class _State:
    def __init__(self, messages: list[dict]):
        self.context: dict = next((m.get("context") for m in messages if m.get("role") == "user" and m.get("context")),
                                  None) or {}
        self.results: dict[str, Any] = {}
        self.errors: dict[str, Any] = {}
        self.called: list[str] = []
        self.rejections: list[Any] = []
        for m in messages:
            if m.get("role") == "assistant":
                self.called += [c["name"] for c in m.get("tool_calls", [])]
            elif m.get("role") == "tool":
                if m.get("is_error"):
                    if m["name"] == "submit_answer":
                        self.rejections.append(m.get("content"))
                    else:
                        self.errors[m["name"]] = m.get("content")
                else:
                    self.results[m["name"]] = m.get("content")
        self.turn = sum(1 for m in messages if m.get("role") == "assistant")


class ExpertModel:
    """Deterministic backend implementing protocol.Model."""

    name = NAME
    offline = True  # nothing to lose: an error is raised, never fallen back from
    reviews = False  # no model review of answers (the deterministic critic still runs)
    last_self_critique: list[str] = []  # what the last self-critique changed (for tests and the turn's text)

    def __init__(self, captures: Optional[Callable[[], Optional[tuple]]] = None):
        # The environment's (artifacts, diagnosis) the critic checks answers against (`Environment.captures`, bound
        # by the orchestrator); None, or nothing loaded: the draft is submitted as it is.
        self.captures = captures

    def respond(self, system: str, messages: list[dict], tools: list[ToolSpec],
                force_tool: Optional[str] = None) -> ModelTurn:
        st = _State(messages)
        self.last_self_critique = []
        call = self._next(st, force_tool)
        call.id = f"expert-{st.turn + 1}"
        text = self._say(call) + "".join(f" Self-critique: {x}" for x in self.last_self_critique)
        return ModelTurn(text=text, tool_calls=[call], model=NAME)

    # ------------------------------------------------------------------ policy
    def _next(self, st: _State, force_tool: Optional[str]) -> ToolCall:
        if force_tool == "submit_answer":
            return self._submit(st)
        if force_tool and force_tool != "submit_answer":
            raise ValueError(f"the offline expert cannot be forced to call {force_tool!r}")
        if "timeline" not in st.called:
            return ToolCall(id="", name="timeline", input={"top": 5})
        tl = st.results.get("timeline")
        if tl is None:  # the timeline failed: nothing else can be grounded
            return self._submit(st)
        tlo = TimelineOutput.model_validate(tl)
        kernel_bound = tlo.verdict == "kernel" or (tlo.verdict in TIMELINE_VERDICTS and st.context.get("insist"))
        if kernel_bound and tlo.dominant_kernels and "kernel_profile" not in st.called:
            names = [k.name for k in tlo.dominant_kernels]
            count = max(1, min(MAX_LAUNCH_COUNT, len(names)))
            if tlo.launches:  # the launches the timeline counted: skip the warm-up, never past the last launch
                before = sum(tlo.launches.get(n, [0, 0])[0] for n in names)
                total = sum(tlo.launches.get(n, [0, 0])[1] for n in names)
                skip, count = plan_launches(before, total, count)
            else:
                skip = 3
            return ToolCall(id="", name="kernel_profile", input={
                "kernel_regex": kernel_regex(names), "launch_skip": skip, "launch_count": count, "sections": [],
                "section_set": "targeted"})
        if "kernel_profile" in st.called and "sass" not in st.called:
            kp = st.results.get("kernel_profile")
            if kp is not None:
                kpo = KernelProfileOutput.model_validate(kp)
                if kpo.sass_available and kpo.kernels:
                    return ToolCall(id="", name="sass", input={"kernel_regex": re.escape(KernelName(kpo.kernels[0].name).base)})
            elif tlo.dominant_kernels:  # no counters (e.g. ERR_NVGPUCTRPERM): SASS still says something
                return ToolCall(id="", name="sass", input={"kernel_regex": re.escape(KernelName(tlo.dominant_kernels[0].name).base)})
        return self._submit(st)

    def _submit(self, st: _State) -> ToolCall:
        d = self.diagnosis(st)
        answer, self.last_self_critique = self_critique(d.as_answer(), self._critic(),
                                                        [r for x in st.rejections for r in _reasons(x)])
        return ToolCall(id="", name="submit_answer", input=answer.model_dump(mode="json"))

    def _critic(self) -> Optional[Callable]:
        """The deterministic critic over the captures the environment holds, or None when it holds none."""
        from ...critic import critique
        from ...errors import KernelProfilerError

        try:
            loaded = self.captures() if self.captures is not None else None
        except (KernelProfilerError, OSError):
            loaded = None
        if loaded is None:
            return None
        arts, diag = loaded
        return lambda answer: critique(answer, arts, diagnosis=diag)

    @staticmethod
    def _say(call: ToolCall) -> str:
        return {
            "timeline": "Timeline first: is the GPU even busy, and which kernels dominate?",
            "kernel_profile": "Kernel-bound: one kernel deep on the dominant kernel(s).",
            "sass": "Confirm the mechanism in the SASS.",
            "submit_answer": "The evidence is in; submitting the four-part answer.",
        }.get(call.name, "")

    # ------------------------------------------------------------------ answer
    def diagnosis(self, st: _State) -> Diagnosis:
        """The one decision (`analysis.decide`, the same one `analyze` uses) over the tools' results."""
        tl = st.results.get("timeline")
        if tl is None:
            err = st.errors.get("timeline") or {}
            primary = Finding(bound="inconclusive", bottleneck="The timeline could not be captured or read, so nothing "
                                                               "about the GPU time can be established.",
                              explanation=str(err.get("message", "")), confidence=0.1,
                              missing=["an nsys timeline of the program (nsys profile, then export to sqlite)"])
            return Diagnosis.from_findings(primary, [])
        tlo = TimelineOutput.model_validate(tl)
        kp = st.results.get("kernel_profile")
        kpo = KernelProfileOutput.model_validate(kp) if kp is not None else None
        only = tlo.findings[-1] if tlo.verdict == "kernel" and tlo.findings else None
        if only is not None:  # the tool appends the timeline-only kernel finding last
            err = st.errors.get("kernel_profile")
            if err:
                only.missing = only.missing + [f"kernel profile: {err.get('message', '')}"]
                only.explanation += f" Kernel profiling failed, so the mechanism is open: {err.get('message', '')}"
        primary, secondary = decide_over_tools(
            tlo.verdict, tlo.findings, tlo.startup_note, kpo.program_finding if kpo is not None else None,
            [(k.key, k.share, k.findings) for k in (kpo.kernels if kpo is not None else []) if k.findings])
        if primary.bound == "inconclusive" and only is None and not (kpo and kpo.kernels):
            primary = Finding(bound="inconclusive", bottleneck="The timeline holds no GPU work to explain.",
                              confidence=0.1, missing=["a timeline of a run that launches GPU work"])
        arts = [tlo.source] + (kpo.reports if kpo else [])
        return Diagnosis.from_findings(primary, secondary, timeline=tlo.summary, artifacts=arts, device=tlo.device)


def diagnosis_of(messages: list[dict]) -> Diagnosis:
    """The expert's decision (`ExpertModel.diagnosis`) over a conversation's tool results, e.g. those a transcript
    recorded."""
    return ExpertModel().diagnosis(_State(messages))


# ---------------------------------------------------------------------- self-critique
def _reasons(content: Any) -> list[str]:
    return [str(r) for r in (content.get("reasons") or [])] if isinstance(content, dict) else []


def _names_line(reason: str, e) -> bool:
    """Does a critic reason object to this evidence line? It quotes the line's text or names its metric."""
    text = " ".join((e.meaning or "").split())
    return bool((e.metric and e.metric in reason) or (len(text) >= 12 and text[:40] in " ".join(reason.split())))


def self_critique(answer, check: Optional[Callable], earlier: list[str] = ()) -> tuple[Any, list[str]]:
    """(the answer to submit, what was changed). `check(answer)` is the deterministic critic's Verdict against the
    captures; evidence lines it objects to (or an earlier rejection named) are dropped, as long as one remains;
    an answer that still fails becomes an inconclusive one that says why. No capture to check against (a replay,
    files gone): the draft as it is."""
    from ...errors import KernelProfilerError

    if check is None:
        return answer, []
    try:
        verdict = check(answer)
    except (KernelProfilerError, OSError):
        return answer, []
    reasons = list(verdict.reasons) + [r for r in earlier if r not in verdict.reasons]
    if verdict.verdict == "accept" and not earlier:
        return answer, []
    bad = [i for i, e in enumerate(answer.evidence) if any(_names_line(r, e) for r in reasons)]
    keep = [e for i, e in enumerate(answer.evidence) if i not in bad]
    if bad and keep:
        repaired = answer.model_copy(update={"evidence": keep})
        if check(repaired).verdict == "accept":
            dropped = "; ".join(f"'{answer.evidence[i].meaning[:80]}'" for i in bad)
            return repaired, [f"dropped {len(bad)} evidence line(s) the critic could not match to the captures "
                              f"({dropped})."]
    if verdict.verdict == "accept":
        return answer, []
    why = reasons[0] if reasons else "it did not pass the critic"
    meant = answer.fix.metric if answer.fix is not None else None
    fallback = answer.model_copy(update={
        "bound": "inconclusive", "mechanism": None, "kernel": None, "evidence": keep,
        "bottleneck": "Inconclusive: my draft answer did not pass my own check against the captures, so it is not "
                      "claimed here.",
        "explanation": ("The draft's claim could not be backed by what the captures hold (the critic matched some of "
                        "its numbers or its mechanism to no measured value), so the evidence cannot decide it yet."),
        "fix": Fix(change="Settle it first: capture the evidence the claim needs (see what would settle it), then ask "
                          "again" + (f"; the draft's fix was meant to move `{meant}`." if meant else "."),
                   metric=meant or "gpu__time_duration.sum",
                   direction=(answer.fix.direction if answer.fix is not None else None) or "decrease")})
    return fallback, [f"the draft did not pass the critic ({why[:160]}); submitting it as inconclusive."]
