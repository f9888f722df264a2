"""A LOCAL mock of the Anthropic Messages API (http.server in a thread) for the Claude adapter tests.

Every response below is a HAND-BUILT PROTOCOL FIXTURE written from the Messages API's documented
shapes. None of it is a recorded Claude session; no request leaves this machine.
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class MockMessagesAPI:
    """Scripted responses: a list of (status, headers, body) popped per request; requests are kept."""

    def __init__(self):
        self.script: list[tuple[int, dict, dict]] = []
        self.requests: list[dict] = []
        mock = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers["content-length"]))
                mock.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                                      "json": json.loads(body)})
                if not mock.script:
                    status, headers, payload = 500, {"x-should-retry": "false"}, error("api_error", "script exhausted")
                else:
                    status, headers, payload = mock.script.pop(0)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "MockMessagesAPI":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


# ------------------------------------------------------------------ hand-built protocol fixtures
FIXTURE_MODEL = "claude-sonnet-5-5"


def error(kind: str, message: str) -> dict:
    """HAND-BUILT: an API error body."""
    return {"type": "error", "error": {"type": kind, "message": message}}


def tool_use(name: str, inp: dict, n: int, text: str = "", usage: dict | None = None) -> dict:
    """HAND-BUILT: an assistant message that calls one tool."""
    content = ([{"type": "text", "text": text}] if text else []) + [
        {"type": "tool_use", "id": f"toolu_fixture_{n:02d}", "name": name, "input": inp}]
    return {"id": f"msg_fixture_{n:02d}", "type": "message", "role": "assistant", "model": FIXTURE_MODEL,
            "content": content, "stop_reason": "tool_use", "stop_sequence": None,
            "usage": usage or {"input_tokens": 100 + n, "output_tokens": 20, "cache_creation_input_tokens": 0,
                               "cache_read_input_tokens": 3000}}


def text_only(text: str, n: int) -> dict:
    """HAND-BUILT: an assistant message with text and no tool call."""
    return {"id": f"msg_fixture_{n:02d}", "type": "message", "role": "assistant", "model": FIXTURE_MODEL,
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5}}
