"""The investigation's tools, each declared once: a pydantic input model, a pydantic output model, a function.

The same declarations serve Claude tool use (`tool_specs()` gives each input model's JSON schema), the MCP server,
the offline expert and the tests. A tool is a thin serialiser: it runs programs through the environment
(`agent/environment.py`: nsys, ncu, cuobjdump, NVML in the sandbox), finds files (`agent/finders.py`, which read
them with the artifact readers) and returns what the analysis (`analysis/`) made of them: triage, roofline,
mechanism findings, opcode counts, never raw dumps. Every tool runs through a `ToolContext` (`agent/context.py`);
`call_tool` holds every client to the method's order (`agent/order.py`).

Files a model names must resolve inside the working tree (`Sandbox.resolve_path`), and so must every file found
under a folder it names. The one documented exception is `sass(source="triton-cache")`: the user's own Triton
cache ($TRITON_CACHE_DIR, else ~/.triton/cache), where every cubin must still resolve inside that cache folder
(no symlink out of it).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable, Literal, Optional

from pydantic import BaseModel, Field, ValidationError

from ...errors import KernelProfilerError, UsageError
from ..context import ToolContext
from ..protocol import ToolSpec
from ..sandbox import SandboxViolation
from .host import (FindTargetsInput, FindTargetsOutput, ReadSourceInput, ReadSourceOutput, TelemetryInput,
                   TelemetryOutput, run_find_targets, run_gpu_telemetry, run_read_source)
from .kernel_profile import KernelProfileInput, KernelProfileOutput, run_kernel_profile
from .sass import SassInput, SassOutput, run_sass
from .timeline import TimelineInput, TimelineOutput, run_timeline


def _answer_model():
    from ...answer import Answer  # the one answer model: submit_answer's input schema
    return Answer


class SubmitAnswerOutput(BaseModel):
    verdict: Literal["accept", "reject"]
    reasons: list[str] = Field(default_factory=list)


def run_submit_answer(ctx: ToolContext, inp: BaseModel) -> SubmitAnswerOutput:  # pragma: no cover - orchestrator owns it
    raise UsageError("submit_answer is handled by the orchestrator (it goes to the critic)")


# =============================================================== registry
@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_model: Any  # a pydantic model class (submit_answer's is resolved late)
    output_model: type[BaseModel]
    fn: Callable[[ToolContext, Any], BaseModel]

    @property
    def input(self) -> type[BaseModel]:
        return self.input_model() if not isinstance(self.input_model, type) else self.input_model


REGISTRY: dict[str, Tool] = {t.name: t for t in [
    Tool("timeline", "Run the user's program under Nsight Systems (or load the given captures) and triage the "
                     "timeline: GPU-busy fraction of the steady window, idle time by host cause, copies, start-up, "
                     "and kernels ranked by share of GPU time. Always the first step.",
         TimelineInput, TimelineOutput, run_timeline),
    Tool("kernel_profile", "Nsight Compute on the kernels matching a regex (only kernels that dominate GPU time per "
                           "the timeline), a few launches after warm-up, with the chosen sections; or read them from "
                           "the given .ncu-rep. Returns roofline (floor, gap, limiter) and mechanism findings per kernel.",
         KernelProfileInput, KernelProfileOutput, run_kernel_profile),
    Tool("sass", "SASS opcode counts of one kernel (from a SASS dump, the ncu report's source counters, the target "
                 "binary, a cubin, or Triton's cache) to confirm or refute a mechanism: load widths, MMA vs FFMA, "
                 "LDL/STL, ATOM/RED.",
         SassInput, SassOutput, run_sass),
    Tool("gpu_telemetry", "Sample NVML clocks, throttle reasons, temperature, power and utilization for a few seconds.",
         TelemetryInput, TelemetryOutput, run_gpu_telemetry),
    Tool("read_source", "Read a source file inside the working tree (size-capped).",
         ReadSourceInput, ReadSourceOutput, run_read_source),
    Tool("find_targets", "Find programs/benchmarks in the working tree matching the question's words.",
         FindTargetsInput, FindTargetsOutput, run_find_targets),
    Tool("submit_answer", "Submit the final four-part answer. A critic reviews it: every number cited must come from "
                          "a tool result.",
         _answer_model, SubmitAnswerOutput, run_submit_answer),
]}

INVESTIGATION_TOOLS = ("timeline", "kernel_profile", "sass", "gpu_telemetry", "read_source", "find_targets",
                       "submit_answer")


def input_schema(model: type[BaseModel], live: bool) -> dict:
    """The input model's JSON schema; without a program to run (`live` False), the LIVE_ONLY fields left out."""
    schema = copy.deepcopy(model.model_json_schema())
    props = schema.get("properties", {})
    for name in list(props):
        if props[name].pop("live_only", False) and not live:
            del props[name]
            if name in schema.get("required", []):
                schema["required"].remove(name)
    return schema


def tool_specs(names: Optional[tuple[str, ...]] = None, live: bool = True) -> list[ToolSpec]:
    """The tools' definitions for a model. `live`: a program is run (else only captures are read)."""
    return [ToolSpec(name=t.name, description=t.description, input_schema=input_schema(t.input, live))
            for t in (REGISTRY[n] for n in (names or INVESTIGATION_TOOLS))]


@dataclass
class ToolOutcome:
    content: Any  # JSON-able
    is_error: bool = False
    error_type: Optional[str] = None


def error_content(e: BaseException) -> dict:
    return {"error": type(e).__name__, "message": str(e)}


def call_tool(ctx: ToolContext, name: str, args: dict) -> ToolOutcome:
    """Validate the input, run the tool in the sandbox, and return JSON-able content or a typed error."""
    tool = REGISTRY.get(name)
    if tool is None:
        e = SandboxViolation(f"unknown tool {name!r}; tools: {', '.join(REGISTRY)}")
        return ToolOutcome(error_content(e), True, type(e).__name__)
    violation = ctx.order_violation(name, args or {}) if ctx.method_order else None
    if violation:
        return ToolOutcome({"error": "OrderViolation", "message": violation}, True, "OrderViolation")
    try:
        inp = tool.input.model_validate(args or {})
        out = tool.fn(ctx, inp)
        return ToolOutcome(out.model_dump(mode="json"))
    except ValidationError as e:
        msg = "; ".join(f"{'.'.join(str(x) for x in err['loc'])}: {err['msg']}" for err in e.errors()[:5])
        return ToolOutcome({"error": "InvalidInput", "message": msg}, True, "InvalidInput")
    except KernelProfilerError as e:
        return ToolOutcome(error_content(e), True, type(e).__name__)


__all__ = ["REGISTRY", "INVESTIGATION_TOOLS", "Tool", "ToolOutcome", "call_tool", "error_content",
           "input_schema", "tool_specs"]
