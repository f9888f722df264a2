"""The one protocol every model backend implements, and the neutral message format.

Messages (a list of dicts, in order) are backend-neutral:
  {"role": "user", "content": str}
  {"role": "assistant", "text": str, "tool_calls": [{"id", "name", "input"}], "raw": [block, ...] | absent}
  {"role": "tool", "tool_call_id": str, "name": str, "content": <JSON-able>, "is_error": bool}
Each backend translates them to its API (the Claude adapter to Messages API
content blocks). `raw` holds an API backend's own content blocks of that turn exactly as
the API returned them (Claude: thinking blocks with signatures, text, tool_use), so they
can be sent back verbatim; other backends ignore it. A turn with no tool calls ends the loop only through the
`submit_answer` tool: the final answer is always structured (`Answer`).
"""
from __future__ import annotations

from typing import Any, Optional, Protocol, runtime_checkable

from pydantic import BaseModel, Field, computed_field


class ToolCall(BaseModel):
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


class Usage(BaseModel):
    """Tokens as the API bills them: `input_tokens` are the uncached ones; every input token of a request is
    input_tokens + cache_creation_input_tokens + cache_read_input_tokens (`total_input_tokens`)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def total_input_tokens(self) -> int:
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens


class ModelTurn(BaseModel):
    """What a model said in one turn."""

    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Optional[Usage] = None
    model: str = ""
    raw: Optional[list[dict[str, Any]]] = Field(None, description="the API's content blocks, to send back verbatim")
    stop_reason: Optional[str] = Field(None, description="end_turn | tool_use | max_tokens | refusal | pause_turn ...")
    stop_detail: Optional[str] = Field(None, description="why the model stopped (a refusal's category/explanation)")
    structured: Optional[dict[str, Any]] = Field(None, description="a structured-output reply, parsed (reviews)")


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
from ..exitcodes import ExitCode  # noqa: E402


class ModelUnavailable(KernelProfilerError):
    """A model backend cannot answer: authentication failed, rate limit or overload persisted after the
    SDK's retries, the connection failed, or the package/key is missing. The orchestrator falls back to
    the offline expert with a notice."""


class ModelRequestError(KernelProfilerError):
    """The model API refused the request itself (400/404/413/422): a wrong model name or a request the model does
    not accept. Not an outage: it fails loudly (exit 2) instead of falling back."""


class ModelStopped(KernelProfilerError):
    """The model ended the investigation without an answer it can give (a refusal, or a reply cut off at
    max_tokens even after a retry with more room). The orchestrator stops with the reason."""


class ReplayDivergence(KernelProfilerError):
    """A replayed run asked for something other than what the transcript recorded (a different tool,
    different tool arguments, a different model request), or ran past the end of the transcript."""

    exit_code = ExitCode.DIVERGED


@runtime_checkable
class Environment(Protocol):
    """Where an investigation's tool results and critic verdicts come from: the tools run now and the critic
    checks the captures (`live.LiveEnvironment`), or both are read back from a transcript
    (`models.replay.RecordedEnvironment`). The orchestrator's loop is the same for both."""

    replayed: bool

    def tool(self, name: str, args: dict, refusal: Optional[str]) -> tuple[Any, bool]:
        """(content, is_error) of a tool call; `refusal` is the method's reason to refuse it, if any."""
        ...

    def submitted(self, args: dict) -> None:
        """An answer was submitted with these arguments."""
        ...

    def schema_verdict(self, verdict: dict) -> dict:
        """The verdict on an answer that failed its schema."""
        ...

    def check(self, answer: Any) -> dict:
        """The deterministic critic's verdict on an answer: {stage, verdict, reasons}."""
        ...

    def captures(self) -> Optional[tuple[Any, Any]]:
        """(the artifacts, the engine's diagnosis of them) the critic checks answers against, loaded once per set of
        captures; None when nothing is read now (a replay) or nothing could be loaded."""
        ...

    def review_context(self) -> tuple[Any, Any]:
        """(the engine's diagnosis of the captures, the critic's last check) for the model reviewer, or Nones."""
        ...

    def model_verdict(self, review: dict) -> dict:
        """The model reviewer's verdict, as it stands."""
        ...

    def describe(self, name: str, args: dict) -> Optional[str]:
        """What a tool call does here, for the progress line (None: the default description)."""
        ...

    def finish(self) -> None:
        """The run ended: raise if it left something of the environment unused."""
        ...

