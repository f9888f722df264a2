"""A LOCAL, contract-faithful FAKE of the Anthropic Messages API, driven through the real `anthropic` client.

Nothing here is Claude and nothing leaves this machine: a threading http.server on 127.0.0.1 (ephemeral
port) answers POST /v1/messages with responses a per-test *brain* writes (a function request -> reply).
What the fake adds is the API's side of the contract, so that a client breaking it fails the way it would
against the real service:

Request rules, enforced per model (a violation is answered 400 invalid_request_error and recorded in
`api.violations`). Sources: the Claude Sonnet 5.5 migration guide and "What's new in Claude Sonnet 5.5"
(platform.claude.com/docs/en/models/sonnet-5-5/...), as restated in kernel-profiler issue 11:
  * forced tool choice (`tool_choice` of type "tool" or "any") -> 400;
  * thinking budgets (`thinking: {"type": "enabled", "budget_tokens": N}`) -> 400;
  * `thinking: {"type": "disabled"}` -> 400 (the message points at "between_tools");
  * sampling parameters (temperature, top_p, top_k) -> 400;
  * assistant prefill (the last message is an assistant turn) -> 400, except the documented continuation of a
    `pause_turn` response sent back as is;
  * `between_tools` thinking with effort xhigh or max -> 400;
  * adaptive thinking is on when `thinking` is absent; thinking display defaults to "omitted" (the thinking text
    comes back empty, with its signature).
Rules every model shares (Messages API reference):
  * every tool_use of an assistant turn is answered by a tool_result with its id in the next user turn, and the
    tool_results come first in that turn; a tool_result must answer a tool_use of the turn just before it;
  * at most 4 blocks carry cache_control;
  * thinking blocks come back unmodified: the fake signs each one (HMAC over model, conversation and text) and
    verifies the signature when a later request carries it; an assistant turn the fake produced must come back
    with the same blocks (thinking included) -- the check behind "assistant content sent back verbatim";
  * tools: unique names matching ^[a-zA-Z0-9_-]{1,64}$ and an object input_schema; `output_config.effort` in
    low|medium|high|xhigh|max (models without effort -> 400); `output_config.format` of type json_schema;
  * an unknown model -> 404 not_found_error; a wrong x-api-key -> 401 authentication_error.

Responses have the real shapes: thinking blocks with signatures, several tool_use blocks in one turn, every
stop_reason (end_turn, tool_use, max_tokens -- with the tool_use cut short --, refusal with stop_details,
pause_turn), and usage counted by a deterministic tokenizer approximation (`approx_tokens`) with prompt-cache
reads and writes at the request's cache_control breakpoints. Failures are scripted: `api.fail(...)` queues
HTTP errors (401/403/404/429/500/529, with retry-after) or dropped connections for the next requests.

Anything recorded through this server is a PROTOCOL FIXTURE, never a Claude session.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
import os
import re
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional, Union

FAKE_LABEL = "fake-messages-api (local protocol fixture, not Claude)"
API_KEY = "sk-fake-not-a-key"


# ------------------------------------------------------------------ per-model rules
@dataclass(frozen=True)
class ModelRules:
    forced_tool_choice: bool = True
    thinking_types: tuple[str, ...] = ("enabled", "disabled", "adaptive")
    thinking_default: Optional[str] = None  # the thinking a request without `thinking` runs with
    display_default: str = "summarized"
    sampling: bool = True
    prefill: bool = True
    effort: bool = False
    effort_between_tools: tuple[str, ...] = ("low", "medium", "high")


SONNET_5_5 = ModelRules(forced_tool_choice=False, thinking_types=("adaptive", "between_tools"),
                        thinking_default="adaptive", display_default="omitted", sampling=False, prefill=False,
                        effort=True)
MODELS: dict[str, ModelRules] = {"claude-sonnet-5-5": SONNET_5_5}
EFFORTS = ("low", "medium", "high", "xhigh", "max")
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


# ------------------------------------------------------------------ tokenizer approximation
_TOKEN = re.compile(r"[A-Za-z]+|[0-9]+|\s+|[^A-Za-z0-9\s]+")


def approx_tokens(text: str) -> int:
    """A deterministic stand-in for a BPE tokenizer: letter runs cost one token per 4 letters, digit runs one per
    3 digits, punctuation runs one per 2 characters (BPE merges `":"`, `","`, `{"`), whitespace nothing: about 4
    characters per token on prose, 3 on JSON, fewer on long numbers, as with real tokenizers."""
    n = 0
    for m in _TOKEN.finditer(text):
        s = m.group(0)
        if s[0].isalpha():
            n += math.ceil(len(s) / 4)
        elif s[0].isdigit():
            n += math.ceil(len(s) / 3)
        elif not s.isspace():
            n += math.ceil(len(s) / 2)
    return n


def _canon(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# ------------------------------------------------------------------ what a brain returns
@dataclass
class Reply:
    """One assistant message. Blocks: thinking(...), text(...), tool(...). stop_reason None = tool_use when there is
    a tool call, else end_turn (max_tokens is applied by the fake when the reply does not fit)."""

    blocks: list[dict]
    stop_reason: Optional[str] = None
    refusal_category: Optional[str] = None
    refusal_explanation: Optional[str] = None


@dataclass
class Fail:
    """An HTTP error answer."""

    status: int
    kind: str
    message: str
    headers: dict = field(default_factory=dict)


DROP = "drop-connection"  # the server closes the connection without answering


def thinking(text: str) -> dict:
    return {"type": "thinking", "thinking": text}


def text(t: str) -> dict:
    return {"type": "text", "text": t}


def tool(name: str, inp: dict) -> dict:
    return {"type": "tool_use", "name": name, "input": inp}


def reply(*blocks: dict, stop_reason: Optional[str] = None) -> Reply:
    return Reply(list(blocks), stop_reason)


def refusal(explanation: str = "declined", category: Optional[str] = None, partial: str = "") -> Reply:
    return Reply([text(partial)] if partial else [], "refusal", category, explanation)


def error(status: int, kind: str, message: str, **headers: str) -> Fail:
    return Fail(status, kind, message, dict(headers))


OUTAGES = {401: "authentication_error", 403: "permission_error", 404: "not_found_error", 429: "rate_limit_error",
           500: "api_error", 529: "overloaded_error", 400: "invalid_request_error", 422: "invalid_request_error"}


# ------------------------------------------------------------------ the request a brain sees
@dataclass
class Request:
    body: dict
    index: int

    @property
    def messages(self) -> list[dict]:
        return self.body["messages"]

    @property
    def structured(self) -> Optional[dict]:
        """The JSON schema of output_config.format (a structured-output request), else None."""
        f = (self.body.get("output_config") or {}).get("format")
        return f.get("schema") if isinstance(f, dict) else None

    def tool_results(self) -> list[dict]:
        """The tool_result blocks of the last user turn, with `name` (from the matching tool_use) and `content`
        as the text the model reads."""
        msgs = _merged(self.messages)
        if not msgs or msgs[-1]["role"] != "user":
            return []
        names = {}
        if len(msgs) > 1:
            names = {b["id"]: b["name"] for b in _blocks(msgs[-2]) if b.get("type") == "tool_use"}
        out = []
        for b in _blocks(msgs[-1]):
            if b.get("type") == "tool_result":
                c = b.get("content", "")
                if isinstance(c, list):
                    c = "".join(x.get("text", "") for x in c if isinstance(x, dict))
                out.append({"name": names.get(b.get("tool_use_id")), "content": c, "is_error": bool(b.get("is_error"))})
        return out

    def all_tool_results(self) -> list[dict]:
        """Every tool_result of the conversation, in order, with its tool's name."""
        names: dict[str, str] = {}
        out = []
        for m in self.messages:
            for b in _blocks(m):
                if b.get("type") == "tool_use":
                    names[b["id"]] = b["name"]
                elif b.get("type") == "tool_result":
                    c = b.get("content", "")
                    if isinstance(c, list):
                        c = "".join(x.get("text", "") for x in c if isinstance(x, dict))
                    out.append({"name": names.get(b.get("tool_use_id")), "content": c,
                                "is_error": bool(b.get("is_error"))})
        return out

    def user_text(self) -> str:
        return "\n".join(b.get("text", "") for m in self.messages if m["role"] == "user" for b in _blocks(m)
                         if b.get("type") == "text")


Brain = Callable[[Request], Union[Reply, Fail, str]]


def script(*steps: Union[Reply, Fail, str, Brain]) -> Brain:
    """A brain answering the requests in order from a list (each step a reply, a failure, DROP, or a brain)."""
    todo = list(steps)

    def brain(req: Request):
        if not todo:
            return Fail(500, "api_error", "the test's script is exhausted", {"x-should-retry": "false"})
        s = todo.pop(0)
        return s(req) if callable(s) else s

    return brain


# ------------------------------------------------------------------ helpers over messages
def _blocks(m: dict) -> list[dict]:
    c = m.get("content")
    return [{"type": "text", "text": c}] if isinstance(c, str) else list(c or [])


def _merged(messages: list[dict]) -> list[dict]:
    """Consecutive messages of one role, merged into one turn (as the API does)."""
    out: list[dict] = []
    for m in messages:
        if out and out[-1]["role"] == m.get("role"):
            out[-1]["content"] = out[-1]["content"] + _blocks(m)
        else:
            out.append({"role": m.get("role"), "content": _blocks(m)})
    return out


_KEEP = {"text": ("type", "text"), "thinking": ("type", "thinking", "signature"),
         "redacted_thinking": ("type", "data"), "tool_use": ("type", "id", "name", "input")}


def _essential(block: dict) -> dict:
    keys = _KEEP.get(block.get("type"), tuple(k for k in block if k != "cache_control"))
    return {k: block.get(k) for k in keys}


def _cache_marks(body: dict) -> int:
    n = 0
    for b in body.get("system") or [] if isinstance(body.get("system"), list) else []:
        n += "cache_control" in b
    for t in body.get("tools") or []:
        n += "cache_control" in t
    for m in body.get("messages") or []:
        for b in _blocks(m):
            n += "cache_control" in b
            if b.get("type") == "tool_result" and isinstance(b.get("content"), list):
                n += sum("cache_control" in x for x in b["content"] if isinstance(x, dict))
    return n


class Violation(Exception):
    def __init__(self, status: int, kind: str, message: str):
        super().__init__(message)
        self.status, self.kind = status, kind


# ------------------------------------------------------------------ the server
class FakeMessagesAPI:
    """`with FakeMessagesAPI(brain) as api:` -> api.url for the client's base_url; api.requests (bodies),
    api.violations (every 400 the fake answered, with why), api.usage (summed over the answered requests)."""

    def __init__(self, brain: Optional[Brain] = None, *, models: Optional[dict[str, ModelRules]] = None,
                 api_key: str = API_KEY):
        self.brain: Brain = brain or script()
        self.models = dict(MODELS if models is None else models)
        self.api_key = api_key
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.violations: list[str] = []
        self.responses: list[dict] = []
        self.brain_errors: list[str] = []
        self.usage = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0}
        self._failures: list[Union[Fail, str]] = []
        self._secret = os.urandom(32)
        self._issued: dict[str, list[dict]] = {}  # tool_use id or thinking signature -> the content it came in
        self._paused: list[list[dict]] = []  # contents answered with pause_turn
        self._cache: dict[str, int] = {}  # prefix hash -> tokens
        self._n = 0
        self._lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                with api._lock:
                    status, headers, payload = api._handle(self.path, dict(self.headers), raw)
                if payload is DROP:
                    try:
                        self.connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    self.close_connection = True
                    return
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("request-id", f"req_fake_{len(api.requests):03d}")
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "FakeMessagesAPI":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    # -------------------------------------------------------------- scripting
    def fail(self, *failures: Union[int, Fail, str], retry_after: str = "0.01") -> None:
        """Queue failures for the next requests: a status code (401/403/404/429/500/529, with a short retry-after),
        a Fail, or DROP (connection closed without an answer)."""
        for f in failures:
            if isinstance(f, int):
                f = Fail(f, OUTAGES.get(f, "api_error"), f"scripted HTTP {f}",
                         {"retry-after": retry_after} if f in (429, 500, 529) else {})
            self._failures.append(f)

    def total_input_tokens(self) -> int:
        u = self.usage
        return u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"]

    # -------------------------------------------------------------- one request
    def _handle(self, path: str, headers: dict, raw: bytes):
        hdr = {k.lower(): v for k, v in headers.items()}
        self.headers.append(hdr)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        self.requests.append(body)
        if self._failures:
            f = self._failures.pop(0)
            if f == DROP:
                return 0, {}, DROP
            return f.status, f.headers, _err(f.kind, f.message)
        if path.split("?")[0] != "/v1/messages":
            return 404, {}, _err("not_found_error", f"no route {path}")
        if self.api_key not in (hdr.get("x-api-key"), hdr.get("authorization", "").removeprefix("Bearer ")):
            return 401, {}, _err("authentication_error", "invalid x-api-key")
        try:
            rules = self._validate(body)
        except Violation as v:
            if v.status == 400:
                self.violations.append(f"request {len(self.requests)}: {v}")
            return v.status, {}, _err(v.kind, str(v))
        try:
            out = self.brain(Request(body, len(self.requests) - 1))
            if out == DROP:
                return 0, {}, DROP
            if isinstance(out, Fail):
                return out.status, out.headers, _err(out.kind, out.message)
            msg = self._respond(body, rules, out)
        except Exception as e:  # a bug in the test's brain: visible, never retried
            self.brain_errors.append(f"{type(e).__name__}: {e}")
            return 500, {"x-should-retry": "false"}, _err("api_error", f"fake brain failed: {e}")
        self.responses.append(msg)
        for k in self.usage:
            self.usage[k] += msg["usage"][k]
        return 200, {}, msg

    # -------------------------------------------------------------- the rules
    def _validate(self, body: dict) -> ModelRules:
        def bad(message: str):
            raise Violation(400, "invalid_request_error", message)

        model = body.get("model")
        if not isinstance(model, str):
            bad("model: Field required")
        if model not in self.models:
            raise Violation(404, "not_found_error", f"model: {model}")
        rules = self.models[model]
        mt = body.get("max_tokens")
        if not isinstance(mt, int) or isinstance(mt, bool) or mt < 1:
            bad("max_tokens: Field required (a positive integer)")
        for p in ("temperature", "top_p", "top_k"):
            if p in body and not rules.sampling:
                bad(f"{p}: sampling parameters are not supported on {model}; remove {p}")
        th = body.get("thinking")
        th_type = (th or {}).get("type") if th is not None else rules.thinking_default
        if th is not None:
            if not isinstance(th, dict) or th.get("type") not in rules.thinking_types:
                hint = " Use thinking.type=between_tools to turn off up-front thinking." \
                    if (th or {}).get("type") == "disabled" else ""
                bad(f"thinking.type: {(th or {}).get('type')!r} is not supported on {model}; accepted: "
                    f"{', '.join(rules.thinking_types)}.{hint}")
            if "budget_tokens" in th and th.get("type") != "enabled":
                bad("thinking.budget_tokens: Extra inputs are not permitted")
        oc = body.get("output_config")
        effort = None
        if oc is not None:
            if not isinstance(oc, dict) or set(oc) - {"effort", "format", "task_budget"}:
                bad(f"output_config: unexpected fields {sorted(set(oc or {}) - {'effort', 'format'})}")
            effort = oc.get("effort")
            if effort is not None:
                if not rules.effort:
                    bad(f"output_config.effort: not supported on {model}")
                if effort not in EFFORTS:
                    bad(f"output_config.effort: must be one of {', '.join(EFFORTS)}")
            fmt = oc.get("format")
            if fmt is not None and (not isinstance(fmt, dict) or fmt.get("type") != "json_schema"
                                    or not isinstance(fmt.get("schema"), dict)):
                bad("output_config.format: expected {\"type\": \"json_schema\", \"schema\": {...}}")
        if th_type == "between_tools" and effort not in (None, *rules.effort_between_tools):
            bad(f"thinking.type between_tools is not available at effort {effort}; use adaptive thinking")
        tools = body.get("tools") or []
        names = [t.get("name") for t in tools]
        for t in tools:
            if not isinstance(t.get("name"), str) or not TOOL_NAME.match(t["name"]):
                bad(f"tools: invalid tool name {t.get('name')!r}")
            sch = t.get("input_schema")
            if not isinstance(sch, dict) or sch.get("type") != "object":
                bad(f"tools.{t.get('name')}.input_schema: must be a JSON schema of type object")
        if len(set(names)) != len(names):
            bad("tools: tool names must be unique")
        tc = body.get("tool_choice")
        if tc is not None:
            kind = tc.get("type") if isinstance(tc, dict) else None
            if kind not in ("auto", "any", "tool", "none"):
                bad(f"tool_choice.type: {kind!r} is not valid")
            if kind in ("any", "tool") and not rules.forced_tool_choice:
                bad(f"tool_choice: forced tool use (type {kind!r}) is not supported on {model}; use "
                    f"tool_choice auto and ask for the tool in the prompt")
            if kind == "tool" and tc.get("name") not in names:
                bad(f"tool_choice.name: no tool named {tc.get('name')!r}")
        n = _cache_marks(body)
        if n > 4:
            bad(f"A maximum of 4 blocks with cache_control may be provided. Found {n}.")
        msgs = body.get("messages")
        if not isinstance(msgs, list) or not msgs:
            bad("messages: at least one message is required")
        for i, m in enumerate(msgs):
            if m.get("role") not in ("user", "assistant"):
                bad(f"messages.{i}.role: must be user or assistant")
            if not _blocks(m):
                bad(f"messages.{i}: content must not be empty")
        if msgs[0]["role"] != "user":
            bad("messages.0.role: the first message must be a user turn")
        conv = _conversation_id(msgs)
        turns = _merged(msgs)
        for i, t in enumerate(turns):
            if t["role"] == "assistant":
                self._check_assistant(model, conv, t, i)
                uses = [b["id"] for b in t["content"] if b.get("type") == "tool_use"]
                nxt = turns[i + 1] if i + 1 < len(turns) else None
                if uses and nxt is not None:
                    lead = []
                    for b in nxt["content"]:
                        if b.get("type") != "tool_result":
                            break
                        lead.append(b.get("tool_use_id"))
                    missing = [u for u in uses if u not in lead]
                    if missing:
                        bad(f"messages.{i + 1}: tool_use ids were found without tool_result blocks immediately after: "
                            f"{', '.join(missing)}. Each tool_use block must have a corresponding tool_result block "
                            f"in the next message, first in its content.")
            else:
                prev = {b["id"] for b in turns[i - 1]["content"] if b.get("type") == "tool_use"} if i else set()
                for b in t["content"]:
                    if b.get("type") == "tool_result" and b.get("tool_use_id") not in prev:
                        bad(f"messages.{i}: unexpected tool_use_id {b.get('tool_use_id')!r} in tool_result blocks: "
                            f"each tool_result must answer a tool_use of the previous assistant turn")
        if turns[-1]["role"] == "assistant":
            last = [_essential(b) for b in _blocks(msgs[-1])]
            if not any(last == p for p in self._paused) and not rules.prefill:
                bad(f"assistant message prefill is not supported on {model}: the last message must be a user turn "
                    f"(or a pause_turn response sent back as is)")
        return rules

    def _check_assistant(self, model: str, conv: str, turn: dict, i: int) -> None:
        def bad(message: str):
            raise Violation(400, "invalid_request_error", f"messages.{i}: {message}")

        blocks = [_essential(b) for b in turn["content"]]
        for b in blocks:
            if b["type"] == "thinking":
                if not self._signature_ok(model, conv, b.get("thinking") or "", b.get("signature") or ""):
                    bad("Invalid `signature` in `thinking` block: thinking blocks must be passed back unmodified, "
                        "in the conversation and to the model that produced them")
        # Every assistant content this server produced must come back with the same blocks.
        issued: list[list[dict]] = []
        for b in blocks:
            key = b.get("id") if b["type"] == "tool_use" else b.get("signature") if b["type"] == "thinking" else None
            if key and key in self._issued and self._issued[key] not in issued:
                issued.append(self._issued[key])
            elif b["type"] == "tool_use" and key not in self._issued:
                bad(f"tool_use id {key!r} was never produced by the model")
        expected = [x for c in issued for x in c]
        if issued and blocks != expected:
            bad("assistant content differs from what the model returned (blocks dropped, reordered or modified); "
                "send the assistant turn back verbatim, thinking blocks included")

    def _sign(self, model: str, conv: str, text: str) -> str:
        payload = base64.urlsafe_b64encode(os.urandom(12)).decode()
        mac = hmac.new(self._secret, f"{model}|{conv}|{text}|{payload}".encode(), hashlib.sha256).hexdigest()
        return f"{payload}.{mac}"

    def _signature_ok(self, model: str, conv: str, text: str, sig: str) -> bool:
        payload, _, mac = sig.partition(".")
        good = hmac.new(self._secret, f"{model}|{conv}|{text}|{payload}".encode(), hashlib.sha256).hexdigest()
        return bool(mac) and hmac.compare_digest(mac, good)

    # -------------------------------------------------------------- the response
    def _respond(self, body: dict, rules: ModelRules, out: Reply) -> dict:
        self._n += 1
        model = body["model"]
        conv = _conversation_id(body["messages"])
        th = body.get("thinking") or {}
        display = th.get("display") or rules.display_default
        content: list[dict] = []
        budget = body["max_tokens"]
        used = 0
        stop = out.stop_reason
        for j, b in enumerate(out.blocks):
            b = dict(b)
            cost = approx_tokens(_canon(b.get("input")) if b["type"] == "tool_use" else b.get("text") or
                                 b.get("thinking") or "") + 4
            if used + cost > budget and stop not in ("refusal",):
                room = max(budget - used, 0)
                if b["type"] == "tool_use":  # the tool call is cut short: its input is incomplete
                    b = {"type": "tool_use", "id": f"toolu_fake_{self._n:03d}_{j}", "name": b["name"],
                         "input": _truncated_input(b.get("input") or {}, room)}
                elif b["type"] == "text":
                    b["text"] = b["text"][: room * 3]
                if b["type"] != "thinking":
                    content.append(b)
                used = budget
                stop = "max_tokens"
                break
            used += cost
            if b["type"] == "thinking":
                full = b["thinking"]
                shown = full if display == "summarized" else ""
                b = {"type": "thinking", "thinking": shown, "signature": self._sign(model, conv, shown)}
            elif b["type"] == "tool_use":
                b = {"type": "tool_use", "id": f"toolu_fake_{self._n:03d}_{j}", "name": b["name"],
                     "input": b.get("input") or {}}
            elif b["type"] == "text":
                b = {"type": "text", "text": b["text"]}
            content.append(b)
        if stop is None:
            stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        fmt = (body.get("output_config") or {}).get("format")
        if fmt and stop == "end_turn":
            txt = "".join(b.get("text", "") for b in content if b["type"] == "text")
            _check_json(txt, fmt["schema"])
        essential = [_essential(b) for b in content]
        for b in essential:
            key = b.get("id") if b["type"] == "tool_use" else b.get("signature") if b["type"] == "thinking" else None
            if key:
                self._issued[key] = essential
        if stop == "pause_turn":
            self._paused.append(essential)
        msg = {"id": f"msg_fake_{self._n:03d}", "type": "message", "role": "assistant", "model": model,
               "content": content, "stop_reason": stop, "stop_sequence": None,
               "usage": {**self._input_usage(body), "output_tokens": max(used, 1)}}
        if stop == "refusal":
            msg["stop_details"] = {"type": "refusal", "category": out.refusal_category,
                                   "explanation": out.refusal_explanation}
        return msg

    def _input_usage(self, body: dict) -> dict:
        """Input tokens of the prompt (tools, system, messages, in the API's cache-prefix order), split into cache
        reads (the longest prefix ending at a block boundary written before), cache writes (from there to the last
        cache_control breakpoint) and the rest."""
        segs: list[tuple[dict, bool]] = []
        for t in body.get("tools") or []:
            segs.append(({k: v for k, v in t.items() if k != "cache_control"}, "cache_control" in t))
        system = body.get("system")
        for b in ([{"type": "text", "text": system}] if isinstance(system, str) else system or []):
            segs.append(({k: v for k, v in b.items() if k != "cache_control"}, "cache_control" in b))
        for m in body["messages"]:
            for b in _blocks(m):
                segs.append(({"role": m["role"], **{k: v for k, v in b.items() if k != "cache_control"}},
                             "cache_control" in b))
        extra = _canon({k: body.get(k) for k in ("output_config", "tool_choice") if body.get(k)})
        h = hashlib.sha256(body["model"].encode())
        prefix, total, read, marks = [], 0, 0, []
        for seg, mark in segs:
            h.update(_canon(seg).encode())
            total += approx_tokens(_canon(seg))
            key = h.hexdigest()
            prefix.append((key, total))
            if key in self._cache:
                read = total
            if mark:
                marks.append((key, total))
        total += approx_tokens(extra)
        write = 0
        if marks and marks[-1][1] > read:
            write = marks[-1][1] - read
        for key, n in marks:
            self._cache[key] = n
        return {"input_tokens": total - read - write, "cache_creation_input_tokens": write,
                "cache_read_input_tokens": read}


def _conversation_id(msgs: list[dict]) -> str:
    first = [{k: v for k, v in b.items() if k != "cache_control"} for b in _blocks(msgs[0])] if msgs else []
    return hashlib.sha256(_canon(first).encode()).hexdigest()[:16]


def _truncated_input(inp: dict, room: int) -> dict:
    out: dict = {}
    for k, v in inp.items():
        if approx_tokens(_canon({**out, k: v})) > room:
            break
        out[k] = v
    return out


def _check_json(txt: str, schema: dict) -> None:
    import jsonschema

    try:
        jsonschema.validate(json.loads(txt), schema)
    except (ValueError, jsonschema.ValidationError) as e:
        raise AssertionError(f"the test's brain answered a structured-output request with text that does not match "
                             f"the schema: {str(e).splitlines()[0]}") from None


def _err(kind: str, message: str) -> dict:
    return {"type": "error", "error": {"type": kind, "message": message}}
