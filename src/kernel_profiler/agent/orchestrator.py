"""The investigation loop: model turns, sandboxed tools, the order of the method, the critic.

A plain while loop. The end of a run and its limits are exceptions:
`Submitted` (an answer accepted, or given up on as inconclusive) and
`LimitsExceeded` (too many turns). The orchestrator enforces the order:
  * no kernel_profile or sass before the timeline;
  * a host-, transfer- or start-up-bound timeline ends the investigation
    without kernel profiling (the next turn must submit) unless the user insisted;
  * kernel_profile only with a regex matching a kernel that dominates GPU time
    per the timeline's ranking.
Every submitted answer goes through critic.critique (and, for backends that
review, a model review through a forced `verdict` tool). A rejected answer goes
back to the model with the reasons, at most MAX_REJECTIONS times; then the user
gets the answer marked inconclusive with the experiment that would settle it.

The loop is the same for a live run and a replay: tool results and critic verdicts come from an
`Environment` (protocol.py): `live.LiveEnvironment` runs the tools now, `models.replay.RecordedEnvironment`
reads them back from a transcript. The entry points (`run_ask`, `replay`) are in session.py.
"""
from __future__ import annotations

from typing import Any, Callable, Literal, Optional

from pydantic import BaseModel, Field, ValidationError

from ..analysis.decide import TIMELINE_VERDICTS
from ..answer import BOUNDS, MECHANISMS, Answer, AskResult
from ..errors import KernelProfilerError
from . import transcript as tx
from .compact import STEERING_KEYS, Compactor
from .prompts import describe, intro, render, settle
from .models.expert import ExpertModel
from .order import order_violation
from .protocol import Environment, Model, ModelStopped, ModelTurn, ModelUnavailable, ToolSpec, Usage
from .tools import INVESTIGATION_TOOLS, tool_specs

MAX_REJECTIONS = 2
MAX_TURNS = 16
# Tools that need the user's program: gpu_telemetry samples the GPU while it runs, find_targets looks for one.
# With captures and no program they cannot help, so they are not offered (each definition costs tokens in every
# request of the conversation).
PROGRAM_TOOLS = ("gpu_telemetry", "find_targets")


def offered_tools(cmd: Optional[list[str]]) -> tuple[str, ...]:
    """The tools offered to the model in this run: all of them with a program to run, else those that read
    captures and files."""
    return INVESTIGATION_TOOLS if cmd else tuple(t for t in INVESTIGATION_TOOLS if t not in PROGRAM_TOOLS)


# ----------------------------------------------------------------- results
class Submitted(Exception):
    def __init__(self, answer: Optional[dict], accepted: bool):
        self.answer, self.accepted = answer, accepted


class LimitsExceeded(KernelProfilerError):
    """The model used more turns than the investigation allows without submitting an answer."""


REVIEW_SYSTEM = "You review GPU performance diagnoses."
JSON_REVIEW_SYSTEM = REVIEW_SYSTEM + " Answer with the JSON verdict only."  # the structured-output review request


class ReviewVerdict(BaseModel):
    """The model reviewer's verdict on an answer."""

    verdict: Literal["accept", "reject"]
    reasons: list[str] = Field(default_factory=list)


# ----------------------------------------------------------------- orchestrator
class Orchestrator:
    def __init__(self, model: Model, *, question: str, cmd: Optional[list[str]] = None,
                 artifacts: Optional[list[str]] = None, insist: bool = False, env: Environment,
                 writer: Optional[tx.TranscriptWriter] = None, progress: Optional[Callable[[str], None]] = None,
                 max_rejections: int = MAX_REJECTIONS, max_turns: int = MAX_TURNS):
        self.question, self.cmd, self.artifacts, self.insist = question, cmd, list(artifacts or []), insist
        self.env, self.writer = env, writer
        self.model = self._bound(model)
        self.progress = progress or (lambda s: None)
        self.max_rejections, self.max_turns = max_rejections, max_turns
        self.messages: list[dict] = []
        self.timeline: Optional[dict] = None  # the timeline tool's (successful) result
        self.results: list[dict] = []  # {name, content, is_error} for the reviewer
        self.verdicts: list[dict] = []
        self.notices: list[str] = []
        self.calls: list[str] = []
        self.call_args: list[dict] = []  # {name, input} of every tool call, for the model reviewer
        self.refused: list[str] = []
        self.rejections = 0
        self._last_rejection: Optional[str] = None
        self.usage = Usage()
        self.last_answer: Optional[dict] = None
        self.specs = tool_specs(offered_tools(cmd), live=bool(cmd))

    # ------------------------------------------------------------ plumbing
    def _bound(self, model: Model) -> Model:
        """The offline expert checks its own draft against the captures the environment loaded for the critic."""
        if isinstance(model, ExpertModel):
            model.captures = self.env.captures
        return model

    def _event(self, kind: str, **data: Any) -> None:
        if self.writer is not None:
            self.writer.event(kind, **data)

    def _notice(self, msg: str) -> None:
        self.notices.append(msg)
        self.progress(msg)
        self._event("notice", message=msg)

    def _respond(self, system: str, messages: list[dict], tools: list[ToolSpec], force: Optional[str],
                 purpose: str) -> Optional[ModelTurn]:
        while True:
            self._event("model_request", purpose=purpose, model=self.model.name, n_messages=len(messages),
                        force_tool=force, tools=[t.name for t in tools], forced_tool_choice=self._forces())
            try:
                turn = self.model.respond(system, messages, tools, force_tool=force)
            except ModelUnavailable as e:
                if getattr(self.model, "offline", False):
                    raise
                if purpose == "review":
                    self._notice(f"{self.model.name} unavailable for the answer review ({e}); the deterministic "
                                 f"critic's verdict stands.")
                    self.model = self._bound(ExpertModel())
                    return None
                self._notice(f"{self.model.name} unavailable ({e}); falling back to the offline expert.")
                self.model = self._bound(ExpertModel())
                continue
            self._record_turn(purpose, turn)
            return turn

    def _record_turn(self, purpose: str, turn: ModelTurn) -> None:
        self._event("model_response", purpose=purpose, turn=turn.model_dump(mode="json"))
        if turn.usage:
            for k in Usage.model_fields:
                setattr(self.usage, k, getattr(self.usage, k) + getattr(turn.usage, k))

    def _forces(self) -> bool:
        """Whether the backend accepts a forced tool choice; if not, the tool is asked for in the conversation."""
        return bool(getattr(self.model, "forced_tool_choice", True))

    def _ask_for(self, tool: str, why: str) -> None:
        """Ask for `tool` in the conversation (models that reject a forced tool choice)."""
        self.messages.append({"role": "user", "content": f"{why} Call `{tool}` now."})

    # ------------------------------------------------------------ the loop
    def run(self) -> AskResult:
        system = render("system.md.j2", question=self.question, cmd=self.cmd, artifacts=self.artifacts,
                        insist=self.insist, max_rejections=self.max_rejections, max_turns=self.max_turns,
                        bounds=BOUNDS, mechanisms=MECHANISMS)
        self.messages = [{"role": "user", "content": intro(self.question, self.cmd, self.artifacts, self.insist),
                          "context": {"cmd": self.cmd, "artifacts": self.artifacts, "insist": self.insist}}]
        force: Optional[str] = None
        turns = nudges = 0
        told_submit = False
        try:
            while True:
                if turns >= self.max_turns:
                    raise LimitsExceeded(f"the model took {turns} turns without an accepted answer")
                turns += 1
                turn = self._respond(system, self.messages, self.specs, force, "investigate")
                force = None
                if turn.stop_reason == "refusal":
                    raise ModelStopped(f"{self.model.name} refused to continue: {turn.stop_detail or 'no reason given'}")
                if turn.stop_reason == "max_tokens":  # a backend that did not retry: never run a cut-off tool call
                    raise ModelStopped(f"{self.model.name}'s reply was cut off at max_tokens; its tool calls were "
                                       f"not run")
                msg: dict[str, Any] = {"role": "assistant", "text": turn.text,
                                       "tool_calls": [c.model_dump() for c in turn.tool_calls]}
                if turn.raw is not None:
                    msg["raw"] = turn.raw  # sent back verbatim (thinking blocks and signatures included)
                self.messages.append(msg)
                if turn.stop_reason == "pause_turn":
                    continue  # the paused turn goes back as is and the model continues it
                if not turn.tool_calls:
                    nudges += 1
                    self.messages.append({"role": "user", "content": "Use the tools; the investigation ends only "
                                                                     "with submit_answer."})
                    if nudges >= 2:
                        want = "submit_answer" if self.timeline is not None else "timeline"
                        if self._forces():
                            force = want
                        else:
                            self._ask_for(want, "No tool was called.")
                    continue
                for call in turn.tool_calls:
                    if call.name == "submit_answer":
                        self._submit(call.id, call.input)
                        continue
                    self._tool(call.id, call.name, call.input)
                if self.timeline is not None and self.timeline.get("verdict") in TIMELINE_VERDICTS and not self.insist:
                    if self._forces():
                        force = "submit_answer"
                    elif not told_submit:
                        told_submit = True
                        self._ask_for("submit_answer", f"The timeline is {self.timeline.get('verdict')}-bound: it is "
                                                       f"the answer, and kernel profiling is refused.")
        except Submitted as s:
            return self._result(s.answer, accepted=s.accepted)
        except LimitsExceeded as e:
            self._notice(str(e))
            return self._result(self.last_answer, accepted=False)
        except ModelStopped as e:
            self._notice(str(e))
            return self._result(self.last_answer, accepted=False)

    def _result(self, answer: Optional[dict], accepted: bool) -> AskResult:
        self.env.finish()
        # Inconclusive: no answer passed the critic, or the accepted answer itself says the evidence cannot decide.
        inconclusive = not accepted or (answer or {}).get("bound") == "inconclusive"
        res = AskResult.of(answer, question=self.question, model=self.model.name, accepted=accepted,
                           inconclusive=inconclusive, settle=settle(self.cmd, self.timeline, self.verdicts) if inconclusive else None,
                        verdicts=self.verdicts, notices=self.notices, tool_calls=self.calls,
                        stopped_after_timeline=(self.timeline is not None
                                                and self.calls.count("kernel_profile") == self.refused.count("kernel_profile")
                                                and self.timeline.get("verdict") in TIMELINE_VERDICTS),
                        usage=self.usage, transcript=str(self.writer.path) if self.writer else None,
                        replayed=self.env.replayed)
        self._event("answer", final=True, model=self.model.name, accepted=accepted, inconclusive=inconclusive,
                    settle=res.settle,
                    answer=answer)
        self.progress("answer: " + ("accepted by the critic" if accepted else "inconclusive"))
        return res

    # ------------------------------------------------------------ order
    def _order_violation(self, name: str, args: dict) -> Optional[str]:
        if name not in {t.name for t in self.specs} and name in INVESTIGATION_TOOLS:
            return f"{name} is not offered in this run: it needs a program to run, and only captures were given."
        return order_violation(self.timeline, name, args, self.insist)

    # ------------------------------------------------------------ tools
    def _tool(self, call_id: str, name: str, args: dict) -> None:
        self.calls.append(name)
        self.call_args.append({"name": name, "input": args})
        violation = self._order_violation(name, args)
        self._event("tool_call", id=call_id, name=name, input=args)
        self.progress(f"{name}: " + (f"refused ({violation})" if violation else describe(name, args, self.cmd, self.artifacts, self.env)))
        content, is_error = self.env.tool(name, args, violation)
        if violation:
            self.refused.append(name)
        self._event("tool_result", id=call_id, name=name, content=content, is_error=is_error)
        if name == "timeline" and not is_error:
            self.timeline = content
            s = content.get("summary", {})
            if content.get("ranks"):
                sr = content.get("straggler_rank")
                self.progress(f"ranks: {len(content['ranks'])} ranks compared, "
                              + (f"rank {sr} is the straggler" if sr is not None else "no straggler"))
            if content.get("verdict") != "ranks":
                self.progress(f"timeline: {content.get('verdict')}-bound, GPU busy {s.get('busy_fraction', 0):.0%} of "
                              f"the steady window")
            if content.get("verdict") in TIMELINE_VERDICTS and not self.insist:
                self.progress("timeline: the answer is on the timeline; stopping before kernel profiling")
        elif is_error:
            self.progress(f"{name}: error: {content.get('message', content) if isinstance(content, dict) else content}")
        self.results.append({"name": name, "content": content, "is_error": is_error})
        self.messages.append({"role": "tool", "tool_call_id": call_id, "name": name, "content": content,
                              "is_error": is_error})

    # ------------------------------------------------------------ answers
    def _submit(self, call_id: str, args: dict) -> None:
        self.calls.append("submit_answer")
        self._event("tool_call", id=call_id, name="submit_answer", input=args)
        self.env.submitted(args)
        try:
            answer = Answer.model_validate(args)
        except ValidationError as e:
            verdict = {"stage": "schema", "verdict": "reject",
                       "reasons": [f"{'.'.join(str(x) for x in err['loc'])}: {err['msg']}" for err in e.errors()[:5]]}
            verdict = self.env.schema_verdict(verdict)
            self._event("critic_verdict", **verdict)
            return self._rejected(call_id, verdict, None)
        adict = answer.model_dump(mode="json")
        self.last_answer = adict
        self._event("answer", final=False, attempt=self.rejections + 1, answer=adict)
        self.progress("critic: checking the answer against the captures")
        verdict = self.env.check(answer)
        self.verdicts.append(verdict)
        self._event("critic_verdict", **verdict)
        unconfirmed = verdict["verdict"] == "reject" and verdict.get("grounds") == "unconfirmed"
        if (verdict["verdict"] == "accept" or unconfirmed) and getattr(self.model, "reviews", False):
            # the model reviews every answer the checks accept, and settles a rejection that rests only on what the
            # checks could not confirm (no measurement contradicts the answer): its verdict stands
            review = self._model_review(adict, verdict["reasons"] if unconfirmed else [])
            if review is not None:
                review = self.env.model_verdict(review)
                self.verdicts.append(review)
                self._event("critic_verdict", **review)
                verdict = review
        if verdict["verdict"] == "accept":
            self.progress("critic: accepted")
            self._event("tool_result", id=call_id, name="submit_answer", content={"verdict": "accept", "reasons": []},
                        is_error=False)
            raise Submitted(adict, accepted=True)
        self._rejected(call_id, verdict, adict)

    def _rejected(self, call_id: str, verdict: dict, adict: Optional[dict]) -> None:
        if verdict not in self.verdicts:
            self.verdicts.append(verdict)
        self.rejections += 1
        said = f"critic: rejected ({'; '.join(verdict['reasons'])[:300]})"
        self.progress("critic: rejected again, for the same reasons" if said == self._last_rejection else said)
        self._last_rejection = said
        content = {"verdict": "reject", "reasons": verdict["reasons"],
                   "attempts_left": max(self.max_rejections - self.rejections + 1, 0)}
        self._event("tool_result", id=call_id, name="submit_answer", content=content, is_error=True)
        if self.rejections > self.max_rejections:
            raise Submitted(adict or self.last_answer, accepted=False)
        self.messages.append({"role": "tool", "tool_call_id": call_id, "name": "submit_answer", "content": content,
                              "is_error": True})

    def _model_review(self, adict: dict, unconfirmed: list[str]) -> Optional[dict]:
        from ..critic.review import review_input

        # The reviewer reads the tool results compacted as the investigator did, without the steering keys.
        compact = Compactor(drop=STEERING_KEYS)
        results = [{"name": r["name"], "is_error": r["is_error"], "content": compact(r["name"], r["content"])}
                   for r in self.results]
        diagnosis, last_check = self.env.review_context()
        prompt = render("critic.md.j2", **review_input(self.question, adict, self.call_args, results, diagnosis,
                                                       last_check, unconfirmed))
        self.progress("critic: model review")
        if getattr(self.model, "structured_review", False):
            turn = self._review(JSON_REVIEW_SYSTEM, prompt)
            data = turn.structured if turn is not None else None
        else:
            spec = ToolSpec(name="verdict", description="Your verdict on the answer.",
                            input_schema=ReviewVerdict.model_json_schema())
            turn = self._respond(REVIEW_SYSTEM + " Answer only through the verdict tool.",
                                 [{"role": "user", "content": prompt}], [spec], "verdict", "review")
            call = next((c for c in turn.tool_calls if c.name == "verdict"), None) if turn is not None else None
            data = call.input if call else None
        if turn is None:
            return None
        try:
            v = ReviewVerdict.model_validate(data or {})
        except ValidationError:
            self._notice("the model review returned no valid verdict; the deterministic critic's verdict stands.")
            return None
        return {"stage": "model", "verdict": v.verdict, "reasons": v.reasons}

    def _review(self, system: str, prompt: str) -> Optional[ModelTurn]:
        """The model review as one structured-output request (`model.review(system, prompt, schema)`). An outage or
        a refusal leaves the deterministic critic's verdict standing."""
        self._event("model_request", purpose="review", model=self.model.name, n_messages=1, force_tool=None,
                    tools=[], forced_tool_choice=self._forces(), structured=True)
        try:
            turn = self.model.review(system, prompt, ReviewVerdict.model_json_schema())
        except (ModelUnavailable, ModelStopped) as e:
            if getattr(self.model, "offline", False):
                raise
            self._notice(f"{self.model.name} could not review the answer ({e}); the deterministic critic's verdict "
                         f"stands.")
            return None
        self._record_turn("review", turn)
        if turn.stop_reason == "refusal":
            self._notice(f"{self.model.name} refused to review the answer ({turn.stop_detail}); the deterministic "
                         f"critic's verdict stands.")
            return None
        return turn
