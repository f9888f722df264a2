"""The one protocol every model backend implements, and the neutral message format.

Messages (a list of dicts, in order) are backend-neutral:
  {"role": "user", "content": str}
  {"role": "assistant", "text": str, "tool_calls": [{"id", "name", "input"}]}
  {"role": "tool", "tool_call_id": str, "name": str, "content": <JSON-able>, "is_error": bool}
Each backend translates them to its API (the Claude adapter to Messages API
content blocks). A turn with no tool calls ends the loop only through the
`submit_answer` tool: the final answer is always structured (`Answer`).
"""
from __future__ import annotations

from typing import Any, Optional, Protocol, runtime_checkable

from pydantic import BaseModel, Field


class ToolCall(BaseModel):
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


class Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


class ModelTurn(BaseModel):
    """What a model said in one turn."""

    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Optional[Usage] = None
    model: str = ""


class ToolSpec(BaseModel):
    """A tool as a model sees it: name, description, JSON schema of its input."""

    name: str
    description: str
    input_schema: dict[str, Any]


@runtime_checkable
class Model(Protocol):
    """A backend: Claude, the offline expert, or a transcript replay."""

    name: str

    def respond(self, system: str, messages: list[dict], tools: list[ToolSpec],
                force_tool: Optional[str] = None) -> ModelTurn:
        """One model turn given the conversation so far. `force_tool` names a tool the model must call."""
        ...


# --- Extensions (the agent layer) -------------------------------------------------
# The first user message may carry a "context" dict (ignored by API adapters) that
# holds what the user fixed: {"cmd": [...] | None, "artifacts": [...], "insist": bool}.
# The offline expert reads it; Claude sees the same facts in the message text.

from ..errors import KernelProfilerError  # noqa: E402


class ModelUnavailable(KernelProfilerError):
    """A model backend cannot answer: authentication failed, rate limit or overload persisted after the
    SDK's retries, the connection failed, or the package/key is missing. The orchestrator falls back to
    the offline expert with a notice."""


class ReplayDivergence(KernelProfilerError):
    """A replayed run asked for something other than what the transcript recorded (a different tool,
    different tool arguments, a different model request), or ran past the end of the transcript."""

    exit_code = 4
