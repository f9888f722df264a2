"""Claude through the `anthropic` SDK, behind protocol.Model, keeping the Messages API contract.

* Assistant turns go back verbatim: the raw content blocks of each response (thinking blocks with their
  signatures, text, tool_use) are kept in the neutral history (`raw`) and sent back unchanged.
* No forced tool choice on models that reject it (Claude Sonnet 5.5's migration guide: forced tool choice,
  thinking budgets, `thinking: {"type": "disabled"}`, sampling parameters and assistant prefill return 400):
  `tool_choice` stays `auto` and the orchestrator asks for the tool in the conversation; the answer review
  uses structured output (`output_config.format`) instead of a forced `verdict` tool. No sampling parameters,
  no thinking budget, no prefill are ever sent; adaptive thinking is the model's default.
* `output_config.effort` is set on models that document it.
* stop_reason: `max_tokens` -> the truncated reply is discarded (a cut-off tool call never runs) and the request
  is retried once with more room; still cut off -> ModelStopped. `refusal` -> the turn carries it
  (stop_reason/stop_detail) and the orchestrator stops with its message. `pause_turn` -> handed back to the
  orchestrator, which sends the paused turn back as is so the model continues.
* Prompt caching: cache_control on the system prompt, the tool definitions (last tool) and the conversation's
  last block: 3 breakpoints (the API allows 4).
* Tool results are compacted for the model (agent/compact.py); the transcript keeps them whole.
* Failures: outages (401/403/429/5xx/529, connection, timeout) raise ModelUnavailable after the SDK's own
  retries, and the orchestrator falls back to the offline expert, printing why. A request the API refuses
  (400/404/413/422) raises ModelRequestError: a bug or a wrong model name, never hidden by a fallback.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Optional

from ..compact import Compactor
from ..protocol import ModelRequestError, ModelStopped, ModelTurn, ModelUnavailable, ToolCall, ToolSpec, Usage

DEFAULT_MODEL = "claude-sonnet-5-5"
DEFAULT_MAX_TOKENS = 8192
RETRY_MAX_TOKENS = 32768  # the one retry after a reply cut off at max_tokens
DEFAULT_MAX_RETRIES = 3
DEFAULT_TIMEOUT_S = 300.0
DEFAULT_EFFORT = "medium"


@dataclass(frozen=True)
class Caps:
    """What a model accepts. forced_tool_choice: tool_choice of type tool/any; effort: output_config.effort."""

    forced_tool_choice: bool
    effort: bool


# Models with `effort` and adaptive thinking (Claude Sonnet 5.5 overview: "Default effort" column, and the
# migration guide's example request with output_config={"effort": ...}); forced tool use returns 400 on them.
_CURRENT = Caps(forced_tool_choice=False, effort=True)
CAPS: dict[str, Caps] = {"claude-sonnet-5-5": _CURRENT, "claude-opus-5-5": _CURRENT, "claude-fable-5-1": _CURRENT}
# Any other model: never force a tool (auto + the instruction works everywhere), no effort parameter.
UNKNOWN_CAPS = Caps(forced_tool_choice=False, effort=False)


def caps_for(model: str) -> Caps:
    return CAPS.get(model, UNKNOWN_CAPS)


def _user_blocks(content: Any) -> list[dict]:
    return [{"type": "text", "text": str(content)}]


def to_api_messages(messages: list[dict]) -> list[dict]:
    """Neutral messages (protocol.py) -> Messages API messages.

    Assistant turns with `raw` blocks are sent back exactly as the API returned them; tool results are compacted
    (agent/compact.py) and share one user turn, first in it; user text after tool results joins that turn."""
    compact = Compactor()
    out: list[dict] = []
    for m in messages:
        role = m.get("role")
        if role == "user":
            blocks = _user_blocks(m.get("content", ""))
            if out and out[-1]["role"] == "user":
                out[-1]["content"].extend(blocks)
            else:
                out.append({"role": "user", "content": blocks})
        elif role == "assistant":
            if m.get("raw") is not None:
                blocks = [dict(b) for b in m["raw"]]
            else:  # a turn some other backend wrote (after a fallback, or a hand-built history)
                blocks = ([{"type": "text", "text": m["text"]}] if m.get("text") else []) + [
                    {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c.get("input", {})}
                    for c in m.get("tool_calls", [])]
            if not blocks:
                continue
            if out and out[-1]["role"] == "assistant":  # a paused turn and its continuation
                out[-1]["content"].extend(blocks)
            else:
                out.append({"role": "assistant", "content": blocks})
        elif role == "tool":
            block = {"type": "tool_result", "tool_use_id": m["tool_call_id"],
                     "content": compact(m.get("name") or "", m.get("content")), "is_error": bool(m.get("is_error"))}
            last = out[-1] if out else None
            if last and last["role"] == "user" and all(b.get("type") == "tool_result" for b in last["content"]):
                last["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
    return out


def _mark_tail(messages: list[dict]) -> None:
    """cache_control on the conversation's last block: the whole conversation is cached for the next turn."""
    if messages and messages[-1]["content"]:
        last = messages[-1]["content"][-1]
        if last.get("type") in ("text", "tool_result"):
            messages[-1]["content"][-1] = {**last, "cache_control": {"type": "ephemeral"}}


def slim_schema(schema: Any) -> Any:
    """The same JSON schema in fewer tokens: no `title`s, `anyOf [X, null]` with a null default written as X (the
    field stays optional: it is not in `required`)."""
    if isinstance(schema, list):
        return [slim_schema(x) for x in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: slim_schema(v) for k, v in schema.items() if k != "title"}
    alts = out.get("anyOf")
    if isinstance(alts, list) and len(alts) == 2 and {"type": "null"} in alts and out.get("default", None) is None:
        other = next(a for a in alts if a != {"type": "null"})
        out.pop("anyOf")
        out.pop("default", None)
        out = {**other, **out}
    return out


def to_api_tools(tools: list[ToolSpec]) -> list[dict]:
    api = []
    for t in tools:
        schema = slim_schema(t.input_schema)
        schema.pop("description", None)  # repeats the tool's description
        api.append({"name": t.name, "description": t.description, "input_schema": schema})
    if api:
        api[-1]["cache_control"] = {"type": "ephemeral"}
    return api


class ClaudeModel:
    """protocol.Model backed by the Anthropic Messages API."""

    reviews = True  # answers also get a model review
    structured_review = True  # ... through `review` (structured output), not a forced tool

    def __init__(self, model: Optional[str] = None, *, api_key: Optional[str] = None, base_url: Optional[str] = None,
                 max_retries: int = DEFAULT_MAX_RETRIES, timeout_s: float = DEFAULT_TIMEOUT_S,
                 max_tokens: int = DEFAULT_MAX_TOKENS, effort: str = DEFAULT_EFFORT, client: Any = None,
                 label: Optional[str] = None):
        self.model = model or os.environ.get("KERNEL_PROFILER_CLAUDE_MODEL") or DEFAULT_MODEL
        # `label` names a non-Claude endpoint honestly (e.g. the tests' fake server); it replaces "claude".
        self.label = label
        self.name = f"{label or 'claude'}:{self.model}"
        self.caps = caps_for(self.model)
        self.forced_tool_choice = self.caps.forced_tool_choice
        self.max_tokens = max_tokens
        self.effort = effort
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

    def _base_kwargs(self, system: str) -> dict[str, Any]:
        kw: dict[str, Any] = dict(model=self.model, max_tokens=self.max_tokens,
                                  system=[{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}])
        if self.caps.effort and self.effort:
            kw["output_config"] = {"effort": self.effort}
        return kw

    # ------------------------------------------------------------ the investigation
    def respond(self, system: str, messages: list[dict], tools: list[ToolSpec],
                force_tool: Optional[str] = None) -> ModelTurn:
        kw = self._base_kwargs(system)
        api_messages = to_api_messages(messages)
        _mark_tail(api_messages)
        kw["messages"] = api_messages
        if tools:
            kw["tools"] = to_api_tools(tools)
            if force_tool and self.caps.forced_tool_choice:
                kw["tool_choice"] = {"type": "tool", "name": force_tool}
            else:  # the orchestrator asks for `force_tool` in the conversation instead
                kw["tool_choice"] = {"type": "auto"}
        return self._turn(self._create(kw))

    # ------------------------------------------------------------ the answer review
    def review(self, system: str, prompt: str, schema: dict) -> ModelTurn:
        """One structured-output request: the reply is JSON matching `schema`, returned parsed in `turn.structured`
        (None when the reply does not parse)."""
        kw = self._base_kwargs(system)
        kw["messages"] = [{"role": "user", "content": [{"type": "text", "text": prompt}]}]
        fmt = {"type": "json_schema", "schema": _strict(schema)}
        kw["output_config"] = {**kw.get("output_config", {}), "format": fmt}
        turn = self._turn(self._create(kw))
        try:
            data = json.loads(turn.text)
        except ValueError:
            data = None
        turn.structured = data if isinstance(data, dict) else None
        return turn

    # ------------------------------------------------------------ one API call, stop_reason handled
    def _create(self, kw: dict[str, Any]) -> tuple[Any, Usage]:
        msg = self._call(kw)
        usage = _usage(msg)
        if msg.stop_reason == "max_tokens":
            # Never keep a truncated reply (a cut-off tool call would run with partial input): ask again with room.
            kw = {**kw, "max_tokens": max(RETRY_MAX_TOKENS, kw["max_tokens"] * 2)}
            msg = self._call(kw)
            usage = _add(usage, _usage(msg))
            if msg.stop_reason == "max_tokens":
                raise ModelStopped(f"{self.name}'s reply was cut off at max_tokens={kw['max_tokens']} twice; "
                                   f"nothing of it was used")
        return msg, usage

    def _call(self, kw: dict[str, Any]) -> Any:
        import anthropic

        client = self._get_client()
        try:
            return client.messages.create(**kw)
        except anthropic.AuthenticationError as e:
            raise ModelUnavailable(f"Claude rejected the API key (401): {_msg(e)}; check ANTHROPIC_API_KEY") from None
        except anthropic.PermissionDeniedError as e:
            raise ModelUnavailable(f"Claude refused access (403): {_msg(e)}") from None
        except anthropic.RateLimitError as e:
            raise ModelUnavailable(f"Claude rate limit (429) persisted after the SDK's retries: {_msg(e)}") from None
        except anthropic.APIStatusError as e:
            if e.status_code >= 500 or e.status_code in (408, 409):  # transient: the SDK retried them already
                what = "overloaded, 529" if e.status_code == 529 else f"HTTP {e.status_code}"
                raise ModelUnavailable(f"Claude API error ({what}) after the SDK's retries: {_msg(e)}") from None
            kind = _kind(e)
            raise ModelRequestError(f"the Claude API refused the request ({e.status_code}{' ' + kind if kind else ''}"
                                    f", model {self.model}): {_msg(e)}") from None
        except anthropic.APIConnectionError as e:
            raise ModelUnavailable(f"cannot reach the Claude API ({type(e).__name__}): {e}") from None
        except anthropic.AnthropicError as e:
            raise ModelUnavailable(f"Claude API failure ({type(e).__name__}): {e}") from None

    def _turn(self, created: tuple[Any, Usage]) -> ModelTurn:
        msg, usage = created
        raw = [b.to_dict() for b in msg.content]
        text = "".join(b.get("text", "") for b in raw if b.get("type") == "text")
        calls = [ToolCall(id=b["id"], name=b["name"], input=dict(b.get("input") or {}))
                 for b in raw if b.get("type") == "tool_use"]
        detail = None
        if msg.stop_reason == "refusal":
            sd = getattr(msg, "stop_details", None)
            detail = "; ".join(x for x in (getattr(sd, "category", None), getattr(sd, "explanation", None), text) if x) \
                or "no explanation given"
        served = getattr(msg, "model", None) or self.model
        return ModelTurn(text=text, tool_calls=calls, usage=usage,
                         model=f"{self.label}:{served}" if self.label else served, raw=raw,
                         stop_reason=msg.stop_reason, stop_detail=detail)


def _strict(schema: dict) -> dict:
    """A pydantic JSON schema for structured output: every object closed (additionalProperties false)."""
    def walk(s: Any) -> Any:
        if isinstance(s, dict):
            s = {k: walk(v) for k, v in s.items() if k != "title"}
            if s.get("type") == "object":
                s.setdefault("additionalProperties", False)
            return s
        if isinstance(s, list):
            return [walk(x) for x in s]
        return s
    return walk(schema)


def _usage(msg: Any) -> Usage:
    u = msg.usage
    return Usage(input_tokens=u.input_tokens or 0, output_tokens=u.output_tokens or 0,
                 cache_creation_input_tokens=getattr(u, "cache_creation_input_tokens", None) or 0,
                 cache_read_input_tokens=getattr(u, "cache_read_input_tokens", None) or 0)


def _add(a: Usage, b: Usage) -> Usage:
    return Usage(**{k: getattr(a, k) + getattr(b, k) for k in Usage.model_fields})


def _kind(e: Any) -> str:
    body = getattr(e, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return str(body["error"].get("type", ""))
    return ""


def _msg(e: Any) -> str:
    body = getattr(e, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return str(body["error"].get("message", ""))
    return str(getattr(e, "message", e))
