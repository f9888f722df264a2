"""Claude through the `anthropic` SDK, behind protocol.Model.

* Tool use: neutral messages -> Messages API content blocks (tool_use / tool_result).
* Prompt caching: cache_control ephemeral on the system block and on the last tool
  definition (which caches every tool before it).
* Retries: the SDK's own (`max_retries`, honouring retry-after); no loop of our own.
* Failures that persist after the SDK's retries (auth, rate limit, overload,
  connection) raise ModelUnavailable; the orchestrator falls back to the expert.
* Token usage of each turn goes into ModelTurn.usage.
"""
from __future__ import annotations

import json
import os
from typing import Any, Optional

from ..protocol import ModelTurn, ModelUnavailable, ToolCall, ToolSpec, Usage

DEFAULT_MODEL = "claude-sonnet-5-5"
DEFAULT_MAX_TOKENS = 4096
DEFAULT_MAX_RETRIES = 3
DEFAULT_TIMEOUT_S = 300.0
TOOL_RESULT_CHARS = 60_000  # a tool result sent to the model is capped (they are summaries already)


def _content_text(content: Any) -> str:
    text = content if isinstance(content, str) else json.dumps(content, default=str)
    return text if len(text) <= TOOL_RESULT_CHARS else text[:TOOL_RESULT_CHARS] + "... [truncated]"


def to_api_messages(messages: list[dict]) -> list[dict]:
    """Neutral messages (protocol.py) -> Messages API messages. Consecutive tool results share one user turn."""
    out: list[dict] = []
    for m in messages:
        role = m.get("role")
        if role == "user":
            block = {"type": "text", "text": str(m.get("content", ""))}
            if out and out[-1]["role"] == "user":
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        elif role == "assistant":
            blocks: list[dict] = []
            if m.get("text"):
                blocks.append({"type": "text", "text": m["text"]})
            for c in m.get("tool_calls", []):
                blocks.append({"type": "tool_use", "id": c["id"], "name": c["name"], "input": c.get("input", {})})
            out.append({"role": "assistant", "content": blocks or [{"type": "text", "text": "(no content)"}]})
        elif role == "tool":
            block = {"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": _content_text(m.get("content")),
                     "is_error": bool(m.get("is_error"))}
            if out and out[-1]["role"] == "user" and all(b.get("type") == "tool_result" for b in out[-1]["content"]):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
    return out


def to_api_tools(tools: list[ToolSpec]) -> list[dict]:
    api = [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools]
    if api:
        api[-1]["cache_control"] = {"type": "ephemeral"}
    return api


class ClaudeModel:
    """protocol.Model backed by the Anthropic Messages API."""

    reviews = True  # answers also get a model review through the forced `verdict` tool

    def __init__(self, model: Optional[str] = None, *, api_key: Optional[str] = None, base_url: Optional[str] = None,
                 max_retries: int = DEFAULT_MAX_RETRIES, timeout_s: float = DEFAULT_TIMEOUT_S,
                 max_tokens: int = DEFAULT_MAX_TOKENS, client: Any = None):
        self.model = model or os.environ.get("KERNEL_PROFILER_CLAUDE_MODEL") or DEFAULT_MODEL
        self.name = f"claude:{self.model}"
        self.max_tokens = max_tokens
        self._client = client
        self._client_args = dict(api_key=api_key, base_url=base_url, max_retries=max_retries, timeout=timeout_s)

    def _get_client(self):
        if self._client is None:
            try:
                import anthropic
            except ImportError as e:  # pragma: no cover - a core dependency
                raise ModelUnavailable(f"the anthropic package is missing ({e}): pip install anthropic") from None
            args = {k: v for k, v in self._client_args.items() if v is not None}
            if not (args.get("api_key") or os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
                raise ModelUnavailable("no ANTHROPIC_API_KEY is set: export it, or use --model expert")
            try:
                self._client = anthropic.Anthropic(**args)
            except anthropic.AnthropicError as e:
                raise ModelUnavailable(f"cannot create the Anthropic client: {e}") from None
        return self._client

    def respond(self, system: str, messages: list[dict], tools: list[ToolSpec],
                force_tool: Optional[str] = None) -> ModelTurn:
        import anthropic

        client = self._get_client()
        kwargs: dict[str, Any] = dict(
            model=self.model, max_tokens=self.max_tokens,
            system=[{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
            tools=to_api_tools(tools), messages=to_api_messages(messages),
        )
        if force_tool:
            kwargs["tool_choice"] = {"type": "tool", "name": force_tool}
        elif tools:
            kwargs["tool_choice"] = {"type": "auto"}
        try:
            msg = client.messages.create(**kwargs)
        except anthropic.AuthenticationError as e:
            raise ModelUnavailable(f"Claude rejected the API key (401): {_msg(e)}; check ANTHROPIC_API_KEY") from None
        except anthropic.PermissionDeniedError as e:
            raise ModelUnavailable(f"Claude refused access (403): {_msg(e)}") from None
        except anthropic.RateLimitError as e:
            raise ModelUnavailable(f"Claude rate limit (429) persisted after the SDK's retries: {_msg(e)}") from None
        except anthropic.APIStatusError as e:
            what = "overloaded" if e.status_code == 529 else f"HTTP {e.status_code}"
            raise ModelUnavailable(f"Claude API error ({what}) after the SDK's retries: {_msg(e)}") from None
        except anthropic.APIConnectionError as e:
            raise ModelUnavailable(f"cannot reach the Claude API ({type(e).__name__}): {e}") from None
        except anthropic.AnthropicError as e:
            raise ModelUnavailable(f"Claude API failure ({type(e).__name__}): {e}") from None
        return self._turn(msg)

    def _turn(self, msg: Any) -> ModelTurn:
        text = "".join(getattr(b, "text", "") for b in msg.content if getattr(b, "type", "") == "text")
        calls = [ToolCall(id=b.id, name=b.name, input=dict(b.input or {}))
                 for b in msg.content if getattr(b, "type", "") == "tool_use"]
        u = msg.usage
        usage = Usage(input_tokens=u.input_tokens or 0, output_tokens=u.output_tokens or 0,
                      cache_creation_input_tokens=getattr(u, "cache_creation_input_tokens", None) or 0,
                      cache_read_input_tokens=getattr(u, "cache_read_input_tokens", None) or 0)
        return ModelTurn(text=text, tool_calls=calls, usage=usage, model=getattr(msg, "model", self.model))


def _msg(e: Any) -> str:
    body = getattr(e, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return str(body["error"].get("message", ""))
    return str(getattr(e, "message", e))
