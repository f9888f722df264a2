"""PyTorch profiler / Kineto trace JSON (`.json` or `.json.gz`) -> Timeline.

What is read (Chrome trace format as `prof.export_chrome_trace` writes it), in both schemas:
PyTorch >= 1.10 (`kernel`, `gpu_memcpy`, `gpu_memset`, `cuda_runtime`, `cuda_driver`, `user_annotation`)
and PyTorch 1.8/1.9 (`Kernel`, `Memcpy`, `Memset`, `Runtime`, and `ProfilerStep#N` as an `Operator` event).

* kernel / memcpy / memset complete events -> kernels / copies / sets.
  Copy kind and pageable/pinned come from the name ("Memcpy HtoD (Pageable -> Device)");
  bytes from `args.bytes`, else `args["memory bandwidth (GB/s)"] * dur` (GB/s == byte/ns).
  Kineto puts GPU events under a pseudo-process whose pid is the device id, so a GPU
  event's `pid` here is the *host* pid of the API call with the same correlation id
  (NaN when no such call is in the trace). Zero-length events (`dur: 0`, old traces) are kept.
  Kineto's kernel "shared memory" arg is static + dynamic shared memory per block (CUPTI's two
  fields added): it goes to `static_smem` and `dynamic_smem` is NaN, so static + dynamic (NaN as 0)
  is still the block's total. Kineto has no local-memory field: `local_mem_per_thread` is NaN.
* runtime / driver events -> api, categorised with the same rules as the
  nsys reader (`api_names.categorize`): cudaStreamWaitEvent is "other" (it only enqueues a
  device-side dependency; the host does not wait), cudaStreamQuery/cudaEventQuery are
  "other" (non-blocking polls), plain cudaMemcpy is "memcpy" (see `api_names.is_blocking_memcpy`).
* `user_annotation` events (record_function ranges, including `ProfilerStep#N`) -> ranges.
  `cpu_op` events are not ranges (one per ATen op: far too many), and `gpu_user_annotation`
  events (Kineto's projection of an annotation onto the GPU stream) are skipped: ranges are
  host-side by contract.
* `deviceProperties` -> gpus (absent from old traces: no gpus); `distributedInfo.rank` -> rank;
  `process_name` metadata events -> processes (host processes only: Kineto's "GPU N" pseudo-processes
  are left out).

Refused, with the reason (UnsupportedCapture, one line): traces from AMD GPUs (ROCm: HIP API calls or an
AMD device) and from MTIA/XPU accelerators, CPU-only traces, and CUPTI range-profiler traces (per-kernel
counters without a kernel timeline).

Times: Kineto `ts`/`dur` are microseconds (floats with ns resolution). They are converted to
ns (rounded to whole ns) as float64 *on the trace's own clock*; `baseTimeNanoseconds` is NOT
added, because adding ~1.8e18 to a float64 would throw away ~256 ns of resolution. For a wall
clock time add `baseTimeNanoseconds` (when present) yourself. `capture_start_ns` /
`capture_end_ns` are the first start / last end of the events read (the profiler's own
"PyTorch Profiler (N)" span included when present).

Streaming, typed, columnar: a 500k-kernel trace is ~600 MB of JSON. The file is read (and gunzipped)
in blocks of `_CHUNK_BYTES`; each block is cut after the last boundary between two events
(`}` `,` `{`), and the events before the cut are decoded by msgspec straight into small typed structs
holding only the fields read here (every other key, e.g. a cpu_op's input shapes, is skipped without
building a Python object). The structs of one block become numpy columns at once and are dropped,
so memory holds one block, its events and the columns so far, whatever the file size. A cut at the
wrong depth cannot decode (its brackets do not balance); then, and for layouts with no cut (compact
one-line JSON, a bare event array), the whole document is decoded at once, still into typed structs.
A progress bar goes to stderr for big files when it is a terminal (KERNEL_PROFILER_PROGRESS=0: never).
"""
from __future__ import annotations

import gc
import gzip
import os
import re
import sys
import time
import zlib
from operator import attrgetter
from pathlib import Path
from typing import Any, Optional, Union

import msgspec
import numpy as np
import pandas as pd

from ..errors import ArtifactError, EmptyCapture, UnsupportedCapture
from .api_names import categorize
from .tables import (API_COLUMNS, COPY_COLUMNS, KERNEL_COLUMNS, RANGE_COLUMNS, SET_COLUMNS, GpuInfo, Timeline,
                     empty)

GZIP_MAGIC = b"\x1f\x8b"
_SNIFF_KEYS = (b'"traceEvents"', b'"schemaVersion"', b'"deviceProperties"')
_SNIFF_BYTES = 1 << 16
NAN = float("nan")

# An event boundary: `}` `,` `{` with any white space (Kineto writes a newline there).
_SPLIT = re.compile(rb"\}\s*,\s*\{")
_ARRAY = re.compile(rb"\s*:\s*\[")
_CHUNK_BYTES = 4 << 20
_PROGRESS_BYTES = 64 << 20

# Category -> what it becomes; both schemas.
_KIND = {
    "kernel": "kernel", "Kernel": "kernel",
    "gpu_memcpy": "copy", "Memcpy": "copy",
    "gpu_memset": "set", "Memset": "set",
    "cuda_runtime": "api", "cuda_driver": "api", "Runtime": "api", "Driver": "api",
    "user_annotation": "range", "Operator": "op",
    "Trace": "span",  # the profiler's own span: extends capture start/end only
    "cuda_profiler_range": "counters",  # CUPTI range-profiler mode
}
_GPU_CATS = tuple(c for c, k in _KIND.items() if k in ("kernel", "copy", "set"))
_NON_NVIDIA_CATS = (("mtia", "a Meta MTIA accelerator"), ("xpu", "an Intel XPU"))
_AMD_DEVICE = re.compile(r"\b(AMD|Radeon|Instinct)\b|\bMI\d{3}", re.IGNORECASE)

_COPY_NAME = re.compile(r"Memcpy\s+(\w+)(?:\s*\(\s*(\w+)\s*->\s*(\w+)\s*\))?", re.IGNORECASE)
_MEM_KINDS = {"pageable": "pageable", "pinned": "pinned", "device": "device", "managed": "managed",
              "array": "array"}


# --------------------------------------------------------------------------- sniff


def sniff(path: Path, head: bytes) -> bool:
    """True when the content looks like a Kineto trace (gzip'ed or not); never raises."""
    try:
        if head.startswith(GZIP_MAGIC):
            text = _gunzip_head(head)
            if len(text) < 4096 and len(head) < _SNIFF_BYTES:
                with gzip.open(path, "rb") as f:
                    text = f.read(_SNIFF_BYTES)
        else:
            text = head
            if len(text) < _SNIFF_BYTES and not any(k in text for k in _SNIFF_KEYS):
                with open(path, "rb") as f:
                    text = f.read(_SNIFF_BYTES)
    except (OSError, EOFError, zlib.error):
        return False
    body = text.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not body.startswith((b"{", b"[")):
        return False
    return any(k in text for k in _SNIFF_KEYS)


def _gunzip_head(head: bytes) -> bytes:
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, _SNIFF_BYTES)
    except zlib.error:
        return b""


# --------------------------------------------------------------------------- typed events


class _Args(msgspec.Struct, gc=False):
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


class _Event(msgspec.Struct, gc=False):
    ph: Optional[str] = None
    cat: Optional[str] = None
    name: Any = None
    ts: Any = None
    dur: Any = None
    pid: Any = None
    tid: Any = None
    args: Optional[_Args] = None


class _Doc(msgspec.Struct, gc=False):
    """A trace document: its events and the header keys read (the others are skipped)."""

    traceEvents: list[_Event] = []
    deviceProperties: Any = None
    distributedInfo: Any = None
    baseTimeNanoseconds: Any = None


_EVENTS = msgspec.json.Decoder(list[_Event])
_DOC = msgspec.json.Decoder(_Doc)
_DOC_OR_EVENTS = msgspec.json.Decoder(Union[_Doc, list[_Event]])
_NO_ARGS = _Args()
_EVENT_KEYS = frozenset(_Event.__struct_fields__)
_HEADER_KEYS = ("deviceProperties", "distributedInfo", "baseTimeNanoseconds")


def _lenient(items: Any) -> list[_Event]:
    """Events from generically decoded JSON, one at a time: non-objects dropped, odd `args`/`cat`/`ph` ignored."""
    out = []
    for it in items if isinstance(items, list) else []:
        if not isinstance(it, dict):
            continue
        try:
            out.append(msgspec.convert(it, _Event))
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
            out.append(msgspec.convert(it, _Event))
        except msgspec.ValidationError:
            continue
    return out


def _decode_events(buf) -> list[_Event]:
    try:
        return _EVENTS.decode(buf)
    except msgspec.ValidationError:  # a malformed event somewhere: decode this chunk item by item
        return _lenient(msgspec.json.decode(buf))


def _decode_doc(buf) -> tuple[list[_Event], dict]:
    """Whole document (or a tail `{"traceEvents": [...], ...}`): events and header keys."""
    try:
        doc = _DOC_OR_EVENTS.decode(buf)
    except msgspec.ValidationError:
        doc = msgspec.json.decode(buf)
        if isinstance(doc, list):
            return _lenient(doc), {}
        if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
            raise _NotATrace() from None
        return _lenient(doc["traceEvents"]), {k: doc[k] for k in _HEADER_KEYS if k in doc}
    if isinstance(doc, list):
        return doc, {}
    return doc.traceEvents, {k: getattr(doc, k) for k in _HEADER_KEYS if getattr(doc, k) is not None}


class _NotATrace(Exception):
    pass


# --------------------------------------------------------------------------- load


def load(path: Path, progress: Optional[bool] = None) -> Timeline:
    """Read a Kineto trace. `progress`: a progress bar on stderr (None: only for big files on a terminal)."""
    path = Path(path)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of short-lived objects: the cyclic GC would rescan them again and again
    try:
        acc = _Accumulator()
        with _Reader(path, progress) as rd:
            header = _stream(rd, acc)
        if header is None:  # not Kineto's layout (compact JSON, a bare array) or a cut at the wrong depth
            acc = _Accumulator()
            with _Reader(path, False) as rd:
                raw = rd.read_all()
            try:
                events, header = _decode_doc(raw)
            except _NotATrace:
                raise ArtifactError(path, "JSON but not a PyTorch profiler trace (no traceEvents list)") from None
            except msgspec.DecodeError as e:
                raise ArtifactError(path, f"not valid JSON, the trace may be truncated ({e})") from None
            del raw
            for i in range(0, len(events), 200_000):
                acc.add(events[i:i + 200_000])
            del events
        return _build(path, header, acc)
    finally:
        if gc_was_enabled:
            gc.enable()


class _Reader:
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
        show = progress if progress is not None else (self.size >= _PROGRESS_BYTES and sys.stderr.isatty()
                                                      and os.environ.get("KERNEL_PROFILER_PROGRESS") != "0")
        self.bar = _Progress(path.name, self.size) if show else None

    def __enter__(self) -> "_Reader":
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


class _Progress:
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


def _stream(rd: _Reader, acc: "_Accumulator") -> Optional[dict]:
    """Decode the traceEvents array block by block; the header keys, or None when the layout does not allow it."""
    buf = bytearray()
    while True:  # the start of the events array
        block = rd.read(_CHUNK_BYTES)
        buf += block
        key = buf.find(b'"traceEvents"')
        m = _ARRAY.match(buf, key + len(b'"traceEvents"')) if key >= 0 else None
        if m is not None or not block:
            break
    if m is None:
        return None
    try:
        _, header = _decode_doc(bytes(buf[:key]) + b'"traceEvents": []}')
        del buf[:m.end()]
        eof = False
        while True:
            if not eof:
                block = rd.read(_CHUNK_BYTES)
                eof = not block
                buf += block
            if eof:  # the last events and any header keys after the array
                events, tail = _decode_doc(b'{"traceEvents":[' + buf)
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
    except (msgspec.DecodeError, _NotATrace):
        return None
# --------------------------------------------------------------------------- per-chunk columns


def _names(names) -> list[str]:
    """Kernel/API names repeat millions of times: share one string object per distinct name."""
    return list(map(sys.intern, map(str, names)))


def _num(values) -> np.ndarray:
    """float64 array from a list of numbers (NaN for missing); coerces odd values to NaN."""
    try:
        return np.array(values, dtype="float64")
    except (TypeError, ValueError):
        return pd.to_numeric(pd.Series(values, dtype="object"), errors="coerce").to_numpy(dtype="float64")


def _dims(values: list) -> np.ndarray:
    try:
        arr = np.array(values, dtype="float64")
        if arr.ndim == 2 and arr.shape[1] == 3:
            return arr
    except (TypeError, ValueError):
        pass
    out = np.full((len(values), 3), NAN)
    for i, v in enumerate(values):
        if isinstance(v, (list, tuple)):
            for j, x in enumerate(v[:3]):
                if isinstance(x, (int, float)):
                    out[i, j] = x
    return out


def _col(objs: list, attr: str) -> list:
    return list(map(attrgetter(attr), objs))


class _Accumulator:
    """Routes each chunk's events by category and reduces them to numpy columns at once."""

    def __init__(self) -> None:
        self.parts: dict[str, list[dict[str, Any]]] = {k: [] for k in ("kernel", "copy", "set", "api", "range")}
        self.meta: list[_Event] = []
        self.cats: set = set()
        self.counters = 0  # CUPTI range-profiler events
        self.t_min = np.inf
        self.t_max = -np.inf

    def add(self, events: list[_Event]) -> None:
        buckets: dict[str, list] = {k: [] for k in (*set(_KIND.values()), None)}
        route = {c: buckets[k] for c, k in _KIND.items()}
        route[None] = buckets[None]
        get = route.get
        for e in events:
            b = get(e.cat)
            if b is not None:
                b.append(e)
        self.cats.update(map(attrgetter("cat"), events))
        self.meta += [e for e in buckets.pop(None) if e.ph == "M"]
        self.counters += len(buckets.pop("counters"))
        steps = buckets.pop("op")  # PyTorch 1.8/1.9: ProfilerStep#N is an `Operator` event
        buckets["range"] += [e for e in steps if isinstance(e.name, str) and e.name.startswith("ProfilerStep#")]
        for kind, evs in buckets.items():
            if evs and any(ph != "X" for ph in set(_col(evs, "ph"))):
                evs = [e for e in evs if e.ph == "X"]  # complete events (Kineto writes no other phase for these)
            if not evs:
                continue
            start = np.rint(_num(_col(evs, "ts")) * 1e3)
            end = start + np.rint(_num(_col(evs, "dur")) * 1e3)
            if np.isfinite(start).any():
                self.t_min = min(self.t_min, np.nanmin(start))
            if np.isfinite(end).any():
                self.t_max = max(self.t_max, np.nanmax(end))
            if kind == "span":
                continue
            d: dict[str, Any] = {"start_ns": start, "end_ns": end}
            if kind in ("kernel", "copy", "set"):
                args = [e.args or _NO_ARGS for e in evs]
                d.update(device=_num(_col(args, "device")), stream=_num(_col(args, "stream")),
                         correlation=_num(_col(args, "correlation")))
                if kind == "kernel":
                    d.update(name=_names(_col(evs, "name")), registers=_num(_col(args, "registers")),
                             static_smem=_num(_col(args, "smem")), dynamic_smem=_num(_col(args, "dynamic_smem")),
                             local_mem_per_thread=_num(_col(args, "local_mem")),
                             grid=_dims(_col(args, "grid")), block=_dims(_col(args, "block")))
                else:
                    byts = _num(_col(args, "bytes"))
                    if np.isnan(byts).any():  # GB/s == byte/ns
                        byts = np.where(np.isnan(byts), np.rint(_num(_col(args, "bandwidth")) * (end - start)), byts)
                    d["bytes"] = byts
                    if kind == "copy":
                        d["name"] = _names(_col(evs, "name"))
            else:
                d.update(name=_names(_col(evs, "name")) if kind == "api" else [str(n) for n in _col(evs, "name")],
                         pid=_num(_col(evs, "pid")), tid=_num(_col(evs, "tid")))
                if kind == "api":
                    d["correlation"] = _num([(e.args or _NO_ARGS).correlation for e in evs])
            self.parts[kind].append(d)


# --------------------------------------------------------------------------- assembly


def _columns(parts: list[dict]) -> dict[str, Any]:
    """The chunks' columns joined (each chunk's piece freed as soon as it is copied), in time order."""
    if not parts:
        return {}
    cols: dict[str, Any] = {}
    for key in list(parts[0]):
        vals = [p.pop(key) for p in parts]
        arr = np.concatenate(vals) if isinstance(vals[0], np.ndarray) else np.array(
            [x for v in vals for x in v] or [], dtype=object)
        del vals
        if key in ("grid", "block"):
            for j, axis in enumerate("xyz"):
                cols[f"{key}_{axis}"] = np.ascontiguousarray(arr[:, j])
        else:
            cols[key] = arr
    parts.clear()
    order = np.argsort(cols["start_ns"], kind="stable")
    if not (order[1:] > order[:-1]).all():
        for k in cols:  # one column at a time: the table is never held twice
            cols[k] = cols[k][order]
    for k in ("pid", "tid"):  # whole numbers stay integers (host pids/tids), as the nsys reader has them
        if k in cols and len(cols[k]) and not np.isnan(cols[k]).any() and (cols[k] == np.floor(cols[k])).all():
            cols[k] = cols[k].astype(np.int64)
    return cols


def _table(cols: dict[str, Any], columns: list[str]) -> pd.DataFrame:
    """The contract's columns, without copying (copy=False keeps one block per column: no consolidation)."""
    if not cols or len(cols["start_ns"]) == 0:
        return empty(columns)
    return pd.DataFrame({c: cols[c] for c in columns}, copy=False)


def _copy_name_fields(names: np.ndarray) -> dict[str, np.ndarray]:
    rows = {}
    for n in pd.unique(names):
        m = _COPY_NAME.search(str(n))
        if not m:
            rows[n] = ("unknown", "unknown", "unknown")
            continue
        kind = m.group(1)
        kind = {"htod": "HtoD", "dtoh": "DtoH", "dtod": "DtoD", "htoh": "HtoH", "ptop": "PtoP"}.get(kind.lower(), kind)
        src = _MEM_KINDS.get((m.group(2) or "").lower(), "unknown")
        dst = _MEM_KINDS.get((m.group(3) or "").lower(), "unknown")
        rows[n] = (kind, src, dst)
    return {c: np.array([rows[n][j] for n in names], dtype=object) for j, c in enumerate(("kind", "src", "dst"))}


def _host_pid(gpu: dict[str, Any], api: dict[str, Any]) -> np.ndarray:
    """Host pid of each GPU event: the pid of the API call with the same correlation id."""
    corr = gpu["correlation"]
    if not api or len(api["start_ns"]) == 0:
        return np.full(len(corr), NAN)
    a_corr = api["correlation"]
    ok = ~np.isnan(a_corr)
    keyed = pd.Index(a_corr[ok])
    first = ~keyed.duplicated(keep="first")
    idx = keyed[first].get_indexer(corr)
    pids = np.asarray(api["pid"], dtype="float64")[ok][first]
    return np.where(idx >= 0, pids[np.maximum(idx, 0)], NAN) if len(pids) else np.full(len(corr), NAN)


def _build(path: Path, header: dict, acc: _Accumulator) -> Timeline:
    kernels, copies, sets, api, ranges = (_columns(acc.parts[k]) for k in ("kernel", "copy", "set", "api", "range"))
    _refuse_if_not_ours(path, header, acc, api, has_gpu=bool(kernels or copies or sets))
    if api:
        cats = {n: categorize(n) for n in pd.unique(api["name"])}
        api["category"] = np.array([cats[n] for n in api["name"]], dtype=object)
    if copies:
        copies.update(_copy_name_fields(copies.pop("name")))
    for gpu in (kernels, copies, sets):
        if gpu:
            gpu["pid"] = _host_pid(gpu, api)

    rank = None
    dist = header.get("distributedInfo")
    if isinstance(dist, dict) and isinstance(dist.get("rank"), (int, float)) and not isinstance(dist["rank"], bool):
        rank = int(dist["rank"])
    return Timeline(
        source=str(path), format="kineto", kernels=_table(kernels, KERNEL_COLUMNS), copies=_table(copies, COPY_COLUMNS),
        sets=_table(sets, SET_COLUMNS), api=_table(api, API_COLUMNS), ranges=_table(ranges, RANGE_COLUMNS),
        gpus=_gpus(header.get("deviceProperties")), rank=rank, processes=_processes(acc.meta),
        world_size=_int(dist.get("world_size")) if isinstance(dist, dict) else None,
        utc_origin_ns=_int(header.get("baseTimeNanoseconds")),
        capture_start_ns=float(acc.t_min) if np.isfinite(acc.t_min) else None,
        capture_end_ns=float(acc.t_max) if np.isfinite(acc.t_max) else None,
    )


def _refuse_if_not_ours(path: Path, header: dict, acc: _Accumulator, api: dict, has_gpu: bool) -> None:
    """UnsupportedCapture / EmptyCapture, with the reason, for a trace that is not one NVIDIA GPU timeline."""
    props = header.get("deviceProperties")
    devices = [str(p.get("name")) for p in props if isinstance(p, dict)] if isinstance(props, list) else []
    amd = next((d for d in devices if _AMD_DEVICE.search(d)), None)
    hip = next((n for n in (pd.unique(api["name"]) if api else []) if str(n).startswith("hip")), None)
    if amd or hip:
        seen = f"device '{amd}'" if amd else f"HIP calls such as {hip}"
        raise UnsupportedCapture(path, f"a ROCm trace from an AMD GPU ({seen}): not an NVIDIA GPU; kernel-profiler "
                                       "diagnoses CUDA captures only (for AMD GPUs use rocprofv3 / Omniperf)")
    if has_gpu:
        return
    cats = [str(c).lower() for c in acc.cats if c]
    for prefix, what in _NON_NVIDIA_CATS:
        if any(c.startswith(prefix) for c in cats):
            raise UnsupportedCapture(path, f"a trace from {what} ({prefix}_* events): not an NVIDIA GPU; "
                                           "kernel-profiler diagnoses CUDA captures only")
    if acc.counters:
        raise UnsupportedCapture(path, f"a CUPTI range-profiler trace: {acc.counters} cuda_profiler_range events "
                                       "hold per-kernel counters but no kernel timeline (no kernel durations); "
                                       "profile again without experimental_config(profiler_metrics=...) for a "
                                       "timeline, and use Nsight Compute (ncu) for per-kernel counters")
    if not api:
        raise UnsupportedCapture(path, "a CPU-only PyTorch profiler trace (no CUDA calls, no GPU events): profile "
                                       "on an NVIDIA GPU with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]")
    raise EmptyCapture(path, "the PyTorch profiler trace holds no GPU activity (no kernel, gpu_memcpy or "
                             "gpu_memset events, though CUDA calls were traced); profile with "
                             "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]")


def _int(v) -> int | None:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _gpus(props) -> list[GpuInfo]:
    if not isinstance(props, list):
        return []
    out = []
    for p in sorted((p for p in props if isinstance(p, dict)), key=lambda p: _int(p.get("id")) or 0):
        major, minor = _int(p.get("computeMajor")), _int(p.get("computeMinor"))
        clock = p.get("clockRate")  # kHz in cudaDeviceProp, when a Kineto version writes it
        out.append(GpuInfo(
            name=str(p.get("name") or "unknown"), sm_count=_int(p.get("numSms")),
            memory_bytes=_int(p.get("totalGlobalMem")), l2_bytes=_int(p.get("l2CacheSize")),
            sm_clock_hz=float(clock) * 1e3 if _int(clock) else None,
            compute_capability=f"{major}.{minor}" if major is not None and minor is not None else None))
    return out


def _processes(meta: list[_Event]) -> dict[int, str]:
    names: dict[int, str] = {}
    gpu_pids: set = set()
    for e in meta:
        args = e.args or _NO_ARGS
        if e.name == "process_labels" and str(args.labels or "").startswith("GPU"):
            gpu_pids.add(e.pid)
        elif e.name == "process_name" and _int(e.pid) is not None:
            names[int(e.pid)] = str(args.name if args.name is not None else "")
    return {p: n for p, n in sorted(names.items()) if p not in gpu_pids}
