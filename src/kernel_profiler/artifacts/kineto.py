"""PyTorch profiler / Kineto trace JSON (`.json` or `.json.gz`) -> Timeline.

What is read (Chrome trace format as `prof.export_chrome_trace` writes it):

* `kernel`, `gpu_memcpy`, `gpu_memset` complete events -> kernels / copies / sets.
  Copy kind and pageable/pinned come from the name ("Memcpy HtoD (Pageable -> Device)");
  bytes from `args.bytes`, else `args["memory bandwidth (GB/s)"] * dur` (GB/s == byte/ns).
  Kineto puts GPU events under a pseudo-process whose pid is the device id, so a GPU
  event's `pid` here is the *host* pid of the API call with the same correlation id
  (NaN when no such call is in the trace).
  Kineto's kernel "shared memory" arg is static + dynamic shared memory per block (CUPTI's two
  fields added): it goes to `static_smem` and `dynamic_smem` is NaN, so static + dynamic (NaN as 0)
  is still the block's total. Kineto has no local-memory field: `local_mem_per_thread` is NaN.
* `cuda_runtime` and `cuda_driver` events -> api, categorised with the same rules as the
  nsys reader (`api_names.categorize`): cudaStreamWaitEvent is "other" (it only enqueues a
  device-side dependency; the host does not wait), cudaStreamQuery/cudaEventQuery are
  "other" (non-blocking polls), plain cudaMemcpy is "memcpy" (see `api_names.is_blocking_memcpy`).
* `user_annotation` events (record_function ranges, including `ProfilerStep#N`) -> ranges.
  `cpu_op` events are not ranges (one per ATen op: far too many), and `gpu_user_annotation`
  events (Kineto's projection of an annotation onto the GPU stream) are skipped: ranges are
  host-side by contract.
* `deviceProperties` -> gpus; `distributedInfo.rank` -> rank; `process_name` metadata events
  -> processes (host processes only: Kineto's "GPU N" pseudo-processes are left out).

Times: Kineto `ts`/`dur` are microseconds (floats with ns resolution). They are converted to
ns (rounded to whole ns) as float64 *on the trace's own clock*; `baseTimeNanoseconds` is NOT
added, because adding ~1.8e18 to a float64 would throw away ~256 ns of resolution. For a wall
clock time add `baseTimeNanoseconds` (when present) yourself. `capture_start_ns` /
`capture_end_ns` are the first start / last end of the events read (the profiler's own
"PyTorch Profiler (N)" span included when present).

Speed: a 500k-kernel trace is ~700 MB of JSON. The events array is parsed in chunks split
at raw newlines between events (a raw newline is never inside a JSON string, and every
chunk must parse on its own, so a split at the wrong depth is detected and we fall back to
one whole-document parse). Each chunk is reduced to numpy columns right away, so the Python
objects of only one chunk are alive at a time, with the cyclic GC paused while they are.
"""
from __future__ import annotations

import gc
import gzip
import re
import sys
import zlib
from pathlib import Path
from operator import itemgetter
from typing import Any

import numpy as np
import orjson
import pandas as pd

from ..errors import ArtifactError, EmptyCapture
from .api_names import categorize
from .tables import (API_COLUMNS, COPY_COLUMNS, KERNEL_COLUMNS, RANGE_COLUMNS, SET_COLUMNS, GpuInfo, Timeline,
                     empty)

GZIP_MAGIC = b"\x1f\x8b"
_SNIFF_KEYS = (b'"traceEvents"', b'"schemaVersion"', b'"deviceProperties"')
_SNIFF_BYTES = 1 << 16
NAN = float("nan")
_NO_DIM = (NAN, NAN, NAN)

# Split candidates between two events: `}` , <raw newline> `{`.
_SPLIT = re.compile(rb"\}[ \t\r]*,[ \t\r]*\n[ \t\r\n]*\{")
_CHUNK_BYTES = 16 << 20

_GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
_API_CATS = ("cuda_runtime", "cuda_driver")
_RANGE_CATS = ("user_annotation",)
_SPAN_CATS = ("Trace",)  # the profiler's own span: extends capture start/end only

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


def load(path: Path) -> Timeline:
    path = Path(path)
    raw = _read(path)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of short-lived dicts: the cyclic GC would rescan them again and again
    try:
        acc = _Accumulator()
        header = _parse(path, raw, acc)
        del raw
        return _build(path, header, acc)
    finally:
        if gc_was_enabled:
            gc.enable()


def _read(path: Path) -> bytes:
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise ArtifactError(path, f"cannot read the file ({e.strerror or e})") from e
    if not raw or raw.isspace():  # isspace stops at the first other byte; strip() would copy it all
        raise ArtifactError(path, "the file is empty")
    if raw.startswith(GZIP_MAGIC):
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as e:
            raise ArtifactError(path, f"truncated or corrupt gzip data ({e}); copy the trace again") from e
        if not raw or raw.isspace():
            raise ArtifactError(path, "the gzip file holds no data")
    return raw


def _parse(path: Path, raw: bytes, acc: "_Accumulator") -> dict:
    """Feed every event to `acc`; return the top-level keys other than traceEvents."""
    try:
        header = _parse_chunked(raw, acc)
        if header is not None:
            return header
    except orjson.JSONDecodeError:
        pass
    acc.reset()
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise ArtifactError(path, f"not valid JSON, the trace may be truncated ({e})") from e
    if isinstance(doc, list):  # the Chrome trace format also allows a bare event array
        events, header = doc, {}
    elif isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list):
        events = doc.pop("traceEvents")
        header = doc
    else:
        raise ArtifactError(path, "JSON but not a PyTorch profiler trace (no traceEvents list)")
    del doc
    for i in range(0, len(events), 200_000):
        acc.add(events[i:i + 200_000])
    return header


def _parse_chunked(raw: bytes, acc: "_Accumulator") -> dict | None:
    """Chunked parse of the traceEvents array; None when the layout does not allow it."""
    key = raw.find(b'"traceEvents"')
    if key < 0:
        return None
    # Cut points: the first event boundary after every _CHUNK_BYTES (index just after a `}`).
    step = max(min(_CHUNK_BYTES, (len(raw) - key) // 2), 1)
    cuts, pos = [], key + step
    while pos < len(raw):
        m = _SPLIT.search(raw, pos)
        if m is None:
            break
        cuts.append(m.start() + 1)
        pos = m.end() + step
    if not cuts:
        return None
    mv = memoryview(raw)

    def next_event(pos: int) -> int:  # start of the `{` after a cut
        return raw.index(b"{", pos)

    first = orjson.loads(bytes(mv[:cuts[0]]) + b"]}")
    if not isinstance(first, dict) or not first or list(first)[-1] != "traceEvents" \
            or not isinstance(first["traceEvents"], list):
        return None  # the first cut is not inside the traceEvents array
    acc.add(first.pop("traceEvents"))
    header = first
    for a, b in zip(cuts, cuts[1:]):
        buf = bytearray(b"[")
        buf += mv[next_event(a):b]
        buf += b"]"
        chunk = orjson.loads(buf)
        del buf
        acc.add(chunk)
        del chunk
    tail = orjson.loads(b'{"traceEvents":[' + bytes(mv[next_event(cuts[-1]):]))
    if not isinstance(tail, dict) or list(tail)[:1] != ["traceEvents"]:
        return None
    acc.add(tail.pop("traceEvents"))
    header.update(tail)
    return header


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


def _pick(dicts: list[dict], keys: tuple, defaults: tuple) -> list:
    """One sequence per key. Fast path: C-level itemgetter when every dict has every key."""
    try:
        return list(zip(*map(itemgetter(*keys), dicts)))
    except (KeyError, TypeError):
        return [[d.get(k, v) if type(d) is dict else v for d in dicts] for k, v in zip(keys, defaults)]


def _times(ts: list, dur: list) -> tuple[np.ndarray, np.ndarray]:
    start = np.rint(_num(ts) * 1e3)
    return start, start + np.rint(_num(dur) * 1e3)


def _args(evs: list[dict]) -> list[dict]:
    try:
        out = list(map(itemgetter("args"), evs))
    except KeyError:
        return [a if isinstance(a := e.get("args"), dict) else {} for e in evs]
    if not all(type(a) is dict for a in out):  # "args": null or a non-object in a malformed trace
        out = [a if isinstance(a, dict) else {} for a in out]
    return out


class _Accumulator:
    """Buckets events by category and reduces each chunk to numpy columns at once."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.parts: dict[str, list[dict[str, Any]]] = {k: [] for k in ("kernel", "copy", "set", "api", "range")}
        self.meta: list[dict] = []
        self.t_min = np.inf
        self.t_max = -np.inf

    def add(self, events: list) -> None:
        buckets: dict[Any, list] = {c: [] for c in (*_GPU_CATS, *_API_CATS, *_RANGE_CATS, *_SPAN_CATS)}
        other = []
        for e in events:
            b = buckets.get(e.get("cat")) if type(e) is dict else None
            if b is not None:
                b.append(e)
            elif type(e) is dict and e.get("ph") == "M":
                other.append(e)
        self.meta.extend(other)
        for cat in _GPU_CATS + _API_CATS + _RANGE_CATS + _SPAN_CATS:
            evs = buckets[cat]
            if not evs:
                continue
            # Complete events only ("X"; Kineto writes no other phase for these categories).
            ts, dur, names, phs = _pick(evs, ("ts", "dur", "name", "ph"), (NAN, NAN, "", "X"))
            if any(ph != "X" for ph in set(phs)):
                keep = [i for i, ph in enumerate(phs) if ph == "X"]
                evs = [evs[i] for i in keep]
                ts, dur, names = [ts[i] for i in keep], [dur[i] for i in keep], [names[i] for i in keep]
                if not evs:
                    continue
            start, end = _times(ts, dur)
            if np.isfinite(start).any():
                self.t_min = min(self.t_min, np.nanmin(start))
            if np.isfinite(end).any():
                self.t_max = max(self.t_max, np.nanmax(end))
            if cat == "kernel":
                self.parts["kernel"].append(self._kernels(evs, start, end, names))
            elif cat == "gpu_memcpy":
                d = self._gpu_common(evs, start, end, _args(evs))
                d["name"] = _names(names)
                self.parts["copy"].append(d)
            elif cat == "gpu_memset":
                self.parts["set"].append(self._gpu_common(evs, start, end, _args(evs)))
            elif cat in _API_CATS:
                self.parts["api"].append(self._api(evs, start, end, names))
            elif cat in _RANGE_CATS:
                self.parts["range"].append(self._host(evs, start, end, names))

    @staticmethod
    def _gpu_common(evs, start, end, args) -> dict[str, Any]:
        d = {"start_ns": start, "end_ns": end}
        dev, stream, corr, byts = _pick(args, ("device", "stream", "correlation", "bytes"), (NAN,) * 4)
        d["device"], d["stream"], d["correlation"] = _num(dev), _num(stream), _num(corr)
        byts = _num(byts)
        if np.isnan(byts).any():
            bw = _num([a.get("memory bandwidth (GB/s)", NAN) for a in args])  # GB/s == byte/ns
            byts = np.where(np.isnan(byts), np.rint(bw * (end - start)), byts)
        d["bytes"] = byts
        return d

    @staticmethod
    def _kernels(evs, start, end, names) -> dict[str, Any]:
        args = _args(evs)
        d = {"start_ns": start, "end_ns": end, "name": _names(names)}
        keys = ("device", "stream", "correlation", "registers per thread", "shared memory", "grid", "block")
        dev, stream, corr, regs, smem, grid, block = _pick(args, keys, (NAN,) * 5 + (_NO_DIM, _NO_DIM))
        d.update(device=_num(dev), stream=_num(stream), correlation=_num(corr), registers=_num(regs),
                 static_smem=_num(smem), grid=_dims(grid), block=_dims(block))
        # Absent from Kineto today (NaN); read if a version ever writes them.
        for col, key in (("dynamic_smem", "dynamic shared memory"), ("local_mem_per_thread", "local memory")):
            d[col] = _num([a.get(key, NAN) for a in args]) if isinstance(args[0], dict) and key in args[0] else np.full(len(args), NAN)
        return d

    @staticmethod
    def _api(evs, start, end, names) -> dict[str, Any]:
        pid, tid = _pick(evs, ("pid", "tid"), (None, None))
        (corr,) = _pick(_args(evs), ("correlation", "correlation"), (NAN, NAN))[:1]
        return {"start_ns": start, "end_ns": end, "name": _names(names), "pid": list(pid), "tid": list(tid),
                "correlation": _num(corr)}

    @staticmethod
    def _host(evs, start, end, names) -> dict[str, Any]:
        pid, tid = _pick(evs, ("pid", "tid"), (None, None))
        return {"start_ns": start, "end_ns": end, "name": [str(n) for n in names], "pid": list(pid), "tid": list(tid)}


# --------------------------------------------------------------------------- assembly


def _concat(parts: list[dict], key: str) -> Any:
    vals = [p[key] for p in parts]
    if isinstance(vals[0], np.ndarray):
        return np.concatenate(vals)
    return [x for v in vals for x in v]


def _frame(parts: list[dict], columns: list[str], dims: bool = False) -> pd.DataFrame:
    if not parts:
        return empty(columns)
    data: dict[str, Any] = {}
    for key in parts[0]:
        if key in ("grid", "block"):
            arr = _concat(parts, key)
            for j, axis in enumerate("xyz"):
                data[f"{key}_{axis}"] = arr[:, j]
        else:
            data[key] = _concat(parts, key)
    df = pd.DataFrame(data)
    for c in ("pid", "tid"):
        if c in df and df[c].dtype == object:
            df[c] = pd.to_numeric(df[c], errors="coerce")
    return df


def _copy_name_fields(names: pd.Series) -> pd.DataFrame:
    rows = {}
    for n in names.unique():
        m = _COPY_NAME.search(str(n))
        if not m:
            rows[n] = ("unknown", "unknown", "unknown")
            continue
        kind = m.group(1)
        kind = {"htod": "HtoD", "dtoh": "DtoH", "dtod": "DtoD", "htoh": "HtoH", "ptop": "PtoP"}.get(kind.lower(), kind)
        src = _MEM_KINDS.get((m.group(2) or "").lower(), "unknown")
        dst = _MEM_KINDS.get((m.group(3) or "").lower(), "unknown")
        rows[n] = (kind, src, dst)
    table = pd.DataFrame.from_dict(rows, orient="index", columns=["kind", "src", "dst"])
    return table.reindex(names.to_numpy()).reset_index(drop=True)


def _gpu_table(df: pd.DataFrame, api: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """GPU events with the host pid of their launch call, in time order, as the column contract says."""
    if len(df) == 0:
        return empty(columns)
    df["pid"] = _host_pid(df, api)
    return df.sort_values("start_ns", kind="stable", ignore_index=True)[columns]


def _host_pid(gpu: pd.DataFrame, api: pd.DataFrame) -> np.ndarray:
    """Host pid of each GPU event: the pid of the API call with the same correlation id."""
    if len(gpu) == 0:
        return np.empty(0)
    if len(api) == 0:
        return np.full(len(gpu), NAN)
    keyed = api.dropna(subset=["correlation"]).drop_duplicates("correlation", keep="first")
    idx = pd.Index(keyed["correlation"].to_numpy()).get_indexer(gpu["correlation"].to_numpy())
    pids = keyed["pid"].to_numpy(dtype="float64")
    return np.where(idx >= 0, pids[np.maximum(idx, 0)], NAN) if len(pids) else np.full(len(gpu), NAN)


def _build(path: Path, header: dict, acc: _Accumulator) -> Timeline:
    kernels = _frame(acc.parts["kernel"], KERNEL_COLUMNS)
    copies = _frame(acc.parts["copy"], COPY_COLUMNS)
    sets = _frame(acc.parts["set"], SET_COLUMNS)
    api = _frame(acc.parts["api"], API_COLUMNS)
    ranges = _frame(acc.parts["range"], RANGE_COLUMNS)
    acc.parts.clear()
    if len(kernels) == 0 and len(copies) == 0 and len(sets) == 0:
        raise EmptyCapture(path, "the PyTorch profiler trace holds no GPU activity (no kernel, gpu_memcpy or "
                                 "gpu_memset events); profile with activities=[ProfilerActivity.CPU, "
                                 "ProfilerActivity.CUDA]")

    if len(api):
        names = api["name"]
        cats = {n: categorize(n) for n in names.unique()}
        api["category"] = names.map(cats)
        api = api.sort_values("start_ns", kind="stable", ignore_index=True)[API_COLUMNS]
    else:
        api = empty(API_COLUMNS)
    if len(copies):
        copies = pd.concat([copies.reset_index(drop=True), _copy_name_fields(copies.pop("name"))], axis=1)
    kernels = _gpu_table(kernels, api, KERNEL_COLUMNS)
    copies = _gpu_table(copies, api, COPY_COLUMNS)
    sets = _gpu_table(sets, api, SET_COLUMNS)
    ranges = ranges.sort_values("start_ns", kind="stable", ignore_index=True)[RANGE_COLUMNS] if len(ranges) \
        else empty(RANGE_COLUMNS)

    rank = None
    dist = header.get("distributedInfo")
    if isinstance(dist, dict) and isinstance(dist.get("rank"), (int, float)) and not isinstance(dist["rank"], bool):
        rank = int(dist["rank"])
    return Timeline(
        source=str(path), format="kineto", kernels=kernels, copies=copies, sets=sets, api=api, ranges=ranges,
        gpus=_gpus(header.get("deviceProperties")), rank=rank, processes=_processes(acc.meta),
        world_size=_int(dist.get("world_size")) if isinstance(dist, dict) else None,
        utc_origin_ns=_int(header.get("baseTimeNanoseconds")),
        capture_start_ns=float(acc.t_min) if np.isfinite(acc.t_min) else None,
        capture_end_ns=float(acc.t_max) if np.isfinite(acc.t_max) else None,
    )


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


def _processes(meta: list[dict]) -> dict[int, str]:
    names: dict[int, str] = {}
    gpu_pids: set = set()
    for e in meta:
        args = e.get("args") or {}
        pid = e.get("pid")
        if e.get("name") == "process_labels" and str(args.get("labels", "")).startswith("GPU"):
            gpu_pids.add(pid)
        elif e.get("name") == "process_name" and _int(pid) is not None:
            names[int(pid)] = str(args.get("name", ""))
    return {p: n for p, n in sorted(names.items()) if p not in gpu_pids}
