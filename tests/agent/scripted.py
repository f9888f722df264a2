"""A scripted test model (protocol.Model): returns hand-written turns in order. Used to drive the
orchestrator with adversarial or out-of-order tool calls without any network."""
from __future__ import annotations

from typing import Callable, Optional, Union

from kernel_profiler.agent.protocol import ModelTurn, ToolCall, ToolSpec

Step = Union[ModelTurn, Callable[[list[dict]], ModelTurn]]


def call(name: str, i: int = 0, **inp) -> ModelTurn:
    return ModelTurn(tool_calls=[ToolCall(id=f"s{i}-{name}", name=name, input=inp)], model="scripted")


class ScriptedModel:
    name = "scripted"
    reviews = False

    def __init__(self, steps: list[Step]):
        self.steps = list(steps)
        self.requests: list[dict] = []

    def respond(self, system: str, messages: list[dict], tools: list[ToolSpec],
                force_tool: Optional[str] = None) -> ModelTurn:
        self.requests.append({"n": len(messages), "force_tool": force_tool, "last": messages[-1], "tools": tools})
        if not self.steps:
            raise AssertionError("the scripted model ran out of turns")
        s = self.steps.pop(0)
        return s(messages) if callable(s) else s
