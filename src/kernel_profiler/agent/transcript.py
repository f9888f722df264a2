"""Transcripts: JSONL written as the investigation goes, and read back for replay.

Line 1 is the header: {"format_version", "question", "model", "machine", "created",
"kernel_profiler", "cmd", "artifacts", "insist"}. Every later line is one event:
{"seq", "t", "event", ...}, where event is one of EVENTS. Each write is flushed
(and fsync'd) so an interrupted run keeps everything written so far.
"""
from __future__ import annotations

import json
import os
import platform
import socket
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Optional

from .. import __version__
from ..errors import KernelProfilerError

FORMAT_VERSION = 1
EVENTS = ("model_request", "model_response", "tool_call", "tool_result", "answer", "critic_verdict", "notice")


class TranscriptError(KernelProfilerError):
    """A transcript file cannot be read: missing, not JSONL, wrong format version, or no header."""


def gpu_name() -> str:
    """The first GPU's name via NVML, or 'no GPU'."""
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            if pynvml.nvmlDeviceGetCount() == 0:
                return "no GPU"
            name = pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(0))
            return name.decode() if isinstance(name, bytes) else str(name)
        finally:
            pynvml.nvmlShutdown()
    except Exception:
        return "no GPU"


def machine() -> dict:
    return {"hostname": socket.gethostname(), "platform": platform.platform(), "python": platform.python_version(),
            "cpu": platform.machine(), "gpu": gpu_name()}


class TranscriptWriter:
    """Appends events to a JSONL file, flushing after every line."""

    def __init__(self, path: str | Path, *, question: str, model: str, cmd: Optional[list[str]] = None,
                 artifacts: Optional[list[str]] = None, insist: bool = False, extra: Optional[dict] = None):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f = open(self.path, "w", encoding="utf-8")
        self._seq = 0
        self.header = {
            "format_version": FORMAT_VERSION,
            "question": question,
            "model": model,
            "machine": machine(),
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "kernel_profiler": __version__,
            "cmd": cmd,
            "artifacts": list(artifacts or []),
            "insist": insist,
            **(extra or {}),
        }
        self._write(self.header)

    def _write(self, obj: dict) -> None:
        self._f.write(json.dumps(obj, default=str, ensure_ascii=False) + "\n")
        self._f.flush()
        try:
            os.fsync(self._f.fileno())
        except OSError:
            pass

    def event(self, kind: str, **data: Any) -> None:
        if kind not in EVENTS:
            raise ValueError(f"unknown transcript event {kind!r}")
        self._seq += 1
        self._write({"seq": self._seq, "t": round(time.time(), 3), "event": kind, **data})

    def close(self) -> None:
        if not self._f.closed:
            self._f.close()


def read(path: str | Path) -> tuple[dict, list[dict]]:
    """(header, events) of a transcript; TranscriptError (naming the file and line) for anything else."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise TranscriptError(f"{p}: cannot read transcript ({e.strerror or e})") from None
    rows = []
    for i, raw in enumerate(data.splitlines(), 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise TranscriptError(f"{p}:{i}: not UTF-8 text (byte {e.start}); a transcript is JSONL written by "
                                  f"`ask --record`") from None
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as e:
            raise TranscriptError(f"{p}:{i}: not a JSON line ({e})") from None
        if not isinstance(row, dict):
            raise TranscriptError(f"{p}:{i}: not a JSON object (a {type(row).__name__}); every transcript line is "
                                  f"an object")
        if rows and not isinstance(row.get("event"), str):
            raise TranscriptError(f"{p}:{i}: an event line without an \"event\" name")
        rows.append(row)
    if not rows or "format_version" not in rows[0]:
        raise TranscriptError(f"{p}: no transcript header (first line must hold format_version)")
    header = rows[0]
    if header["format_version"] != FORMAT_VERSION:
        raise TranscriptError(f"{p}: transcript format {header['format_version']} (this version reads {FORMAT_VERSION})")
    return header, rows[1:]
