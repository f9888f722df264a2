"""Kineto trace events, read streaming and typed: the reading half of the Kineto reader (kineto.py).

A 500k-kernel trace is ~600 MB of JSON. The file is read (and gunzipped) in blocks of `CHUNK_BYTES`;
each block is cut after the last boundary between two events (`}` `,` `{`), and the events before the
cut are decoded by msgspec straight into small typed structs holding only the fields read here (every
other key, e.g. a cpu_op's input shapes, is skipped without building a Python object). Each block's
events go to a sink (kineto.py turns them into numpy columns at once and drops them), so memory holds
one block, its events and the columns so far, whatever the file size. A cut at the wrong depth cannot
decode (its brackets do not balance); then, and for layouts with no cut (compact one-line JSON, a bare
event array), `stream` says so and the whole document is decoded at once (`decode_doc`), still into
typed structs. A progress bar goes to stderr for big files when it is a terminal
(KERNEL_PROFILER_PROGRESS=0: never).
"""
from __future__ import annotations

import gzip
import os
import re
import sys
import time
import zlib
from pathlib import Path
from typing import Any, Optional, Protocol, Union

import msgspec

from ..errors import ArtifactError

GZIP_MAGIC = b"\x1f\x8b"
# An event boundary: `}` `,` `{` with any white space (Kineto writes a newline there).
_SPLIT = re.compile(rb"\}\s*,\s*\{")
_ARRAY = re.compile(rb"\s*:\s*\[")
CHUNK_BYTES = 4 << 20
PROGRESS_BYTES = 64 << 20


class Args(msgspec.Struct, gc=False):
    """The `args` keys read here; msgspec skips every other key without building it."""

    device: Any = None
    stream: Any = None
    correlation: Any = None
    bytes: Any = None
    bandwidth: Any = msgspec.field(name="memory bandwidth (GB/s)", default=None)
    registers: Any = msgspec.field(name="registers per thread", default=None)
    smem: Any = msgspec.field(name="shared memory", default=None)
    dynamic_smem: Any = msgspec.field(name="dynamic shared memory", default=None)  # no Kineto writes these
    local_mem: Any = msgspec.field(name="local memory", default=None)  # two today: NaN columns
    grid: Any = None
    block: Any = None
    name: Any = None  # process_name metadata
    labels: Any = None  # process_labels metadata


class Event(msgspec.Struct, gc=False):
    ph: Optional[str] = None
    cat: Optional[str] = None
    name: Any = None
    ts: Any = None
    dur: Any = None
    pid: Any = None
    tid: Any = None
    args: Optional[Args] = None


class Doc(msgspec.Struct, gc=False):
    """A trace document: its events and the header keys read (the others are skipped)."""

    traceEvents: list[Event] = []
    deviceProperties: Any = None
    distributedInfo: Any = None
    baseTimeNanoseconds: Any = None


_EVENTS = msgspec.json.Decoder(list[Event])
_DOC_OR_EVENTS = msgspec.json.Decoder(Union[Doc, list[Event]])
NO_ARGS = Args()
_EVENT_KEYS = frozenset(Event.__struct_fields__)
_HEADER_KEYS = ("deviceProperties", "distributedInfo", "baseTimeNanoseconds")


def _lenient(items: Any) -> list[Event]:
    """Events from generically decoded JSON, one at a time: non-objects dropped, odd `args`/`cat`/`ph` ignored."""
    out = []
    for it in items if isinstance(items, list) else []:
        if not isinstance(it, dict):
            continue
        try:
            out.append(msgspec.convert(it, Event))
            continue
        except msgspec.ValidationError:
            pass
        it = {k: v for k, v in it.items() if k in _EVENT_KEYS}
        for k in ("cat", "ph"):
            if not isinstance(it.get(k), str):
                it.pop(k, None)
        if not isinstance(it.get("args"), dict):
            it.pop("args", None)
        try:
            out.append(msgspec.convert(it, Event))
        except msgspec.ValidationError:
            continue
    return out


def _decode_events(buf) -> list[Event]:
    try:
        return _EVENTS.decode(buf)
    except msgspec.ValidationError:  # a malformed event somewhere: decode this chunk item by item
        return _lenient(msgspec.json.decode(buf))


def decode_doc(buf) -> tuple[list[Event], dict]:
    """Whole document (or a tail `{"traceEvents": [...], ...}`): events and header keys."""
    try:
        doc = _DOC_OR_EVENTS.decode(buf)
    except msgspec.ValidationError:
        doc = msgspec.json.decode(buf)
        if isinstance(doc, list):
            return _lenient(doc), {}
        if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
            raise NotATrace() from None
        return _lenient(doc["traceEvents"]), {k: doc[k] for k in _HEADER_KEYS if k in doc}
    if isinstance(doc, list):
        return doc, {}
    return doc.traceEvents, {k: getattr(doc, k) for k in _HEADER_KEYS if getattr(doc, k) is not None}


class NotATrace(Exception):
    pass


class Sink(Protocol):
    """Where `stream` sends each block's events."""

    def add(self, events: list[Event]) -> None: ...


class Reader:
    """The file's (decompressed) bytes in blocks, with a progress bar on the terminal for big files."""

    def __init__(self, path: Path, progress: Optional[bool]):
        self.path = path
        try:
            self.raw = open(path, "rb")
            self.size = os.fstat(self.raw.fileno()).st_size
            magic = self.raw.read(2)
            self.raw.seek(0)
        except OSError as e:
            raise ArtifactError(path, f"cannot read the file ({e.strerror or e})") from None
        self.gz = magic == GZIP_MAGIC
        self.f = gzip.GzipFile(fileobj=self.raw, mode="rb") if self.gz else self.raw
        self.first = True
        show = progress if progress is not None else (self.size >= PROGRESS_BYTES and sys.stderr.isatty()
                                                      and os.environ.get("KERNEL_PROFILER_PROGRESS") != "0")
        self.bar = Progress(path.name, self.size) if show else None

    def __enter__(self) -> "Reader":
        return self

    def __exit__(self, *exc) -> None:
        if self.bar:
            self.bar.close()
        self.raw.close()

    def read(self, n: int = -1) -> bytes:
        try:
            block = self.f.read(n)
        except (OSError, EOFError, zlib.error) as e:
            if not self.gz:
                raise ArtifactError(self.path, f"cannot read the file ({getattr(e, 'strerror', None) or e})") from None
            raise ArtifactError(self.path, f"truncated or corrupt gzip data ({e}); copy the trace again") from None
        if self.first:
            self.first = False
            if not block or block.isspace():  # isspace stops at the first other byte
                raise ArtifactError(self.path, "the gzip file holds no data" if self.gz else "the file is empty")
        if self.bar:
            self.bar.update(self.raw.tell())
        return block

    def read_all(self) -> bytes:
        return self.read(-1)


class Progress:
    """`name: reading 312/635 MB (49%)` on stderr, redrawn at most 5 times a second, erased at the end."""

    DELAY = 0.5  # s before the first draw: quick reads show nothing
    EVERY = 0.2  # s between redraws

    def __init__(self, name: str, total: int):
        self.name, self.total, self.t0, self.last, self.drawn = name, max(total, 1), time.monotonic(), 0.0, False

    def update(self, done: int) -> None:
        now = time.monotonic()
        if now - self.t0 < self.DELAY or now - self.last < self.EVERY:
            return
        self.last, self.drawn = now, True
        sys.stderr.write(f"\r{self.name}: reading {done / 2**20:.0f}/{self.total / 2**20:.0f} MB "
                         f"({100 * done / self.total:.0f}%)")
        sys.stderr.flush()

    def close(self) -> None:
        if self.drawn:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def _last_cut(buf: bytearray) -> Optional[tuple[int, int]]:
    """(end of an event, start of the next) for the last event boundary in buf, or None."""
    i = len(buf)
    while True:
        i = buf.rfind(b"}", 0, i)
        if i < 0:
            return None
        m = _SPLIT.match(buf, i)
        if m is not None:
            return i + 1, m.end() - 1


def stream(rd: Reader, acc: "Sink") -> Optional[dict]:
    """Decode the traceEvents array block by block; the header keys, or None when the layout does not allow it."""
    buf = bytearray()
    while True:  # the start of the events array
        block = rd.read(CHUNK_BYTES)
        buf += block
        key = buf.find(b'"traceEvents"')
        m = _ARRAY.match(buf, key + len(b'"traceEvents"')) if key >= 0 else None
        if m is not None or not block:
            break
    if m is None:
        return None
    try:
        _, header = decode_doc(bytes(buf[:key]) + b'"traceEvents": []}')
        del buf[:m.end()]
        eof = False
        while True:
            if not eof:
                block = rd.read(CHUNK_BYTES)
                eof = not block
                buf += block
            if eof:  # the last events and any header keys after the array
                events, tail = decode_doc(b'{"traceEvents":[' + buf)
                acc.add(events)
                header.update(tail)
                return header
            cut = _last_cut(buf)
            if cut is None:
                continue
            events = _decode_events(b"[" + buf[:cut[0]] + b"]")
            del buf[:cut[1]]
            acc.add(events)
            del events
    except (msgspec.DecodeError, NotATrace):
        return None
