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
  `cpu_op` events (and PyTorch 1.8/1.9 `Operator` events) are not ranges (one per ATen op: far too many):
  they become `ops`, one row per op name
  (calls; total, median, min and max host time), and `gpu_user_annotation`
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

Streaming, typed, columnar: the events are read block by block into typed structs (kineto_events.py);
each block's events become numpy columns at once here and are dropped, so memory holds one block, its
events and the columns so far, whatever the file size.
"""
from __future__ import annotations

import gc
import gzip
import re
import sys
import zlib
from operator import attrgetter
from pathlib import Path
from typing import Any, Optional

import msgspec
import numpy as np
import pandas as pd

from ..errors import ArtifactError
from . import kineto_events
from .api_names import categorize
from .kineto_events import GZIP_MAGIC, NO_ARGS, Event
from .kineto_header import as_int, gpus, processes, refuse_if_not_ours
from .tables import (API_COLUMNS, COPY_COLUMNS, KERNEL_COLUMNS, OP_COLUMNS, RANGE_COLUMNS, SET_COLUMNS, Timeline,
                     empty)

_SNIFF_KEYS = (b'"traceEvents"', b'"schemaVersion"', b'"deviceProperties"')
_SNIFF_BYTES = 1 << 16
NAN = float("nan")

# Category -> what it becomes; both schemas.
_KIND = {
    "kernel": "kernel", "Kernel": "kernel",
    "gpu_memcpy": "copy", "Memcpy": "copy",
    "gpu_memset": "set", "Memset": "set",
    "cuda_runtime": "api", "cuda_driver": "api", "Runtime": "api", "Driver": "api",
    "user_annotation": "range", "Operator": "op", "cpu_op": "cpu_op",
    "Trace": "span",  # the profiler's own span: extends capture start/end only
    "cuda_profiler_range": "counters",  # CUPTI range-profiler mode
}

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


# --------------------------------------------------------------------------- load


def load(path: Path, progress: Optional[bool] = None) -> Timeline:
    """Read a Kineto trace. `progress`: a progress bar on stderr (None: only for big files on a terminal)."""
    path = Path(path)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of short-lived objects: the cyclic GC would rescan them again and again
    try:
        acc = _Accumulator()
        with kineto_events.Reader(path, progress) as rd:
            header = kineto_events.stream(rd, acc)
        if header is None:  # not Kineto's layout (compact JSON, a bare array) or a cut at the wrong depth
            acc = _Accumulator()
            with kineto_events.Reader(path, False) as rd:
                raw = rd.read_all()
            try:
                events, header = kineto_events.decode_doc(raw)
            except kineto_events.NotATrace:
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
        self.meta: list[Event] = []
        self.cats: set = set()
        self.op_ids: dict[str, int] = {}  # ATen op name -> id
        self.op_parts: list[tuple[np.ndarray, np.ndarray]] = []  # (op ids, host ns) per block
        self.counters = 0  # CUPTI range-profiler events
        self.t_min = np.inf
        self.t_max = -np.inf

    def add(self, events: list[Event]) -> None:
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
        self._count_ops(buckets.pop("cpu_op") + [e for e in steps if not (isinstance(e.name, str) and
                                                                           e.name.startswith("ProfilerStep#"))])
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
                args = [e.args or NO_ARGS for e in evs]
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
                    d["correlation"] = _num([(e.args or NO_ARGS).correlation for e in evs])
            self.parts[kind].append(d)


    def _count_ops(self, evs: list[Event]) -> None:
        """ATen ops, kept as (op id, host ns) columns: far too many to keep one by one with their names."""
        evs = [e for e in evs if e.ph == "X" and isinstance(e.name, str)]
        if evs:
            ids = self.op_ids
            self.op_parts.append((np.array([ids.setdefault(e.name, len(ids)) for e in evs], dtype=np.int32),
                                  np.rint(_num(_col(evs, "dur")) * 1e3)))

    def ops(self) -> pd.DataFrame:
        """Per ATen op name: calls and total, median, shortest and longest host time."""
        if not self.op_parts:
            return empty(OP_COLUMNS)
        df = pd.DataFrame({"id": np.concatenate([p[0] for p in self.op_parts]),
                           "ns": np.concatenate([p[1] for p in self.op_parts])})
        g = df.groupby("id")["ns"].agg(["count", "sum", "median", "min", "max"])
        names = np.empty(len(self.op_ids), dtype=object)
        names[list(self.op_ids.values())] = list(self.op_ids)
        out = pd.DataFrame({"name": names[g.index.to_numpy()], "calls": g["count"].to_numpy(dtype="int64"),
                            "total_ns": g["sum"].to_numpy(), "median_ns": g["median"].to_numpy(),
                            "min_ns": g["min"].to_numpy(), "max_ns": g["max"].to_numpy()})
        return out.sort_values("name", ignore_index=True)[OP_COLUMNS]


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
    refuse_if_not_ours(path, header, acc.cats, acc.counters, api, has_gpu=bool(kernels or copies or sets))
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
        gpus=gpus(header.get("deviceProperties")), rank=rank, processes=processes(acc.meta),
        world_size=as_int(dist.get("world_size")) if isinstance(dist, dict) else None,
        utc_origin_ns=as_int(header.get("baseTimeNanoseconds")),
        capture_start_ns=float(acc.t_min) if np.isfinite(acc.t_min) else None,
        capture_end_ns=float(acc.t_max) if np.isfinite(acc.t_max) else None,
        ops=acc.ops(),
    )
