"""Nsight Systems `.sqlite` export (`nsys export --type sqlite`) -> Timeline.

Reads only the columns triage needs, with SQL joins for names and enum labels.
Tables are optional in the schema (absent when empty), so each is tested
before it is queried.

Times: event timestamps are ns since the session start (time 0;
`TARGET_INFO_SESSION_START_TIME.utcEpochNs` is that instant on the UTC clock, kept as
`Timeline.utc_origin_ns`). The capture therefore spans 0 .. `ANALYSIS_DETAILS.duration`;
the nsys 2025 diagnostics agree ("Profiling has started." at 0, "Profiling has stopped." at
the duration). `ANALYSIS_DETAILS.startTime`/`stopTime` are on another clock (in our nsys
2025.3.1 H200 captures startTime is 0.32-0.66 s while CUDA API calls start before it), so
they are never compared with event times.

Refused with the reason: exports where CUDA API calls were traced but the GPU activity
tables are absent or empty (WSL2 does not support GPU activity tracing there).
"""
from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ArtifactError, EmptyCapture, UnsupportedCapture
from .api_names import categorize
from .tables import (API_COLUMNS, COPY_COLUMNS, KERNEL_COLUMNS, RANGE_COLUMNS, SET_COLUMNS, GpuInfo, Timeline,
                     empty)

SQLITE_MAGIC = b"SQLite format 3\x00"
PID_SHIFT = 24  # nsys globalPid/globalTid encode the OS pid in bits 24..47
PID_MASK = 0xFFFFFF

# ENUM_CUDA_MEMCPY_OPER: 11-13 are unified-memory (cudaMallocManaged) page migrations, not copies the program issued
_COPY_KIND = {1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD", 7: "DtoA", 8: "DtoD", 9: "HtoH",
              10: "PtoP", 11: "UVM_HtoD", 12: "UVM_DtoH", 13: "UVM_DtoD"}
NULL_STREAM_FLAG = 3  # TARGET_INFO_CUDA_STREAM.flag (ENUM_CUPTI_STREAM_TYPE): the legacy default (NULL) stream
_MEM_KIND = {0: "pageable", 1: "pinned", 2: "device", 3: "array", 4: "managed", 5: "device_static",
             6: "managed_static"}


def _pid(global_ids: pd.Series) -> np.ndarray:
    return (global_ids.to_numpy(dtype="int64") >> PID_SHIFT) & PID_MASK


def sniff(path: Path, head: bytes) -> bool:
    if not head.startswith(SQLITE_MAGIC):
        return False
    try:
        tables = _tables(path)
    except ArtifactError:
        return False
    return "CUPTI_ACTIVITY_KIND_KERNEL" in tables or "TARGET_INFO_SESSION_START_TIME" in tables


def _connect(path: Path) -> sqlite3.Connection:
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        con.execute("select count(*) from sqlite_master").fetchone()
        return con
    except sqlite3.DatabaseError as e:
        raise ArtifactError(path, f"not a readable sqlite database ({e})") from e


def _tables(path: Path) -> set[str]:
    con = _connect(path)
    try:
        return {r[0] for r in con.execute("select name from sqlite_master where type in ('table','view')")}
    except sqlite3.DatabaseError as e:
        raise ArtifactError(path, f"corrupt sqlite database ({e})") from e
    finally:
        con.close()


def _cols(con: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in con.execute(f"pragma table_info({table})")}


def _query(con, path, sql) -> pd.DataFrame:
    try:
        return pd.read_sql_query(sql, con)
    except (sqlite3.DatabaseError, pd.errors.DatabaseError) as e:
        raise ArtifactError(path, f"corrupt Nsight Systems export ({e}); re-export with `nsys export --type sqlite`") from e


def load(path: Path) -> Timeline:
    path = Path(path)
    con = _connect(path)
    try:
        tables = {r[0] for r in con.execute("select name from sqlite_master where type in ('table','view')")}
        tl = Timeline(source=str(path), format="nsys-sqlite")
        tl.kernels = _kernels(con, path, tables)
        tl.copies = _copies(con, path, tables)
        tl.sets = _sets(con, path, tables)
        tl.api = _api(con, path, tables)
        if len(tl.kernels) == 0 and len(tl.copies) == 0:
            _refuse_without_gpu_activity(con, path, tables, tl.api)
        tl.ranges = _ranges(con, path, tables)
        tl.gpus = _gpus(con, path, tables)
        tl.null_streams = _null_streams(con, tables)
        tl.processes = _processes(con, path, tables, tl)
        tl.capture_start_ns, tl.capture_end_ns = _capture_span(con, tables, tl)
        tl.utc_origin_ns = _utc_origin(con, tables)
    except sqlite3.DatabaseError as e:
        raise ArtifactError(path, f"corrupt Nsight Systems export ({e})") from e
    finally:
        con.close()
    return tl


def _capture_span(con, tables, tl: Timeline) -> tuple[float | None, float | None]:
    """The capture on the events' clock: session start (0) to its duration, widened to every event read."""
    starts = [float(df["start_ns"].min()) for df in (tl.kernels, tl.copies, tl.sets, tl.api) if len(df)]
    ends = [float(df["end_ns"].max()) for df in (tl.kernels, tl.copies, tl.sets, tl.api) if len(df)]
    start, end = 0.0, None
    if "DIAGNOSTIC_EVENT" in tables:
        marks = dict(con.execute("select text, min(timestamp) from DIAGNOSTIC_EVENT where text in "
                                 "('Profiling has started.', 'Profiling has stopped.') group by text").fetchall())
        start = float(marks.get("Profiling has started.", 0.0))
        end = float(marks["Profiling has stopped."]) if marks.get("Profiling has stopped.") is not None else None
    if end is None and "ANALYSIS_DETAILS" in tables:
        row = con.execute("select max(duration) from ANALYSIS_DETAILS").fetchone()
        end = float(row[0]) if row and row[0] is not None else None
    start = min([start, *starts])
    end = max([e for e in [end, *ends] if e is not None], default=None)
    return start, end


def _utc_origin(con, tables) -> int | None:
    if "TARGET_INFO_SESSION_START_TIME" not in tables:
        return None
    row = con.execute("select utcEpochNs from TARGET_INFO_SESSION_START_TIME").fetchone()
    return int(row[0]) if row and row[0] is not None else None


def _is_wsl(con, tables) -> bool:
    if "TARGET_INFO_SYSTEM_ENV" not in tables:
        return False
    rows = con.execute("select name, value from TARGET_INFO_SYSTEM_ENV where name in "
                       "('SoftwareReleaseVersion', 'OsDescription', 'DeviceEnvironment')").fetchall()
    return any(v and ("microsoft-standard-wsl" in str(v).lower() or "wsl_distro_name=" in str(v).lower())
               for _, v in rows)


def _refuse_without_gpu_activity(con, path, tables, api: pd.DataFrame) -> None:
    """No kernel and no copy: say why (WSL2, API traced without GPU activity, or CUDA tracing off)."""
    launches = int((api["category"] == "launch").sum()) if len(api) else 0
    if launches and _is_wsl(con, tables):
        raise UnsupportedCapture(path, (
            f"captured under WSL2: {launches} CUDA kernel launches were traced, but Nsight Systems does not record "
            "GPU activity (kernel and copy times) under WSL2 on this setup, so there is nothing to time; profile on "
            "native Linux, or use Nsight Compute (ncu) or the PyTorch profiler on WSL2"))
    if launches:
        raise UnsupportedCapture(path, (
            f"{launches} CUDA kernel launches were traced but the capture holds no GPU activity (kernel and copy "
            "times): GPU activity tracing was unavailable (check the driver/CUPTI support with `nsys status -e`); "
            "re-capture with `nsys profile -t cuda ...` on a supported setup, or use ncu"))
    raise EmptyCapture(path, "the Nsight Systems capture holds no CUDA kernels or copies "
                             "(was CUDA tracing on? use `nsys profile -t cuda,nvtx ...`)")


def _kernels(con, path, tables) -> pd.DataFrame:
    if "CUPTI_ACTIVITY_KIND_KERNEL" not in tables:
        return empty(KERNEL_COLUMNS)
    cols = _cols(con, "CUPTI_ACTIVITY_KIND_KERNEL")
    name_col = "demangledName" if "demangledName" in cols else "shortName"
    local = "k.localMemoryPerThread" if "localMemoryPerThread" in cols else "NULL"
    df = _query(con, path, f"""
        select k.start as start_ns, k.end as end_ns, s.value as name,
               k.deviceId as device, k.streamId as stream, k.globalPid as gpid, k.correlationId as correlation,
               k.gridX as grid_x, k.gridY as grid_y, k.gridZ as grid_z,
               k.blockX as block_x, k.blockY as block_y, k.blockZ as block_z,
               k.registersPerThread as registers, k.staticSharedMemory as static_smem,
               k.dynamicSharedMemory as dynamic_smem, {local} as local_mem_per_thread
        from CUPTI_ACTIVITY_KIND_KERNEL k
        left join StringIds s on s.id = k.{name_col}
        order by k.start""")
    df["pid"] = _pid(df.pop("gpid"))
    return df


def _copies(con, path, tables) -> pd.DataFrame:
    if "CUPTI_ACTIVITY_KIND_MEMCPY" not in tables:
        return empty(COPY_COLUMNS)
    df = _query(con, path, """
        select start as start_ns, end as end_ns, bytes, copyKind, srcKind, dstKind, deviceId as device,
               streamId as stream, globalPid as gpid, correlationId as correlation
        from CUPTI_ACTIVITY_KIND_MEMCPY order by start""")
    df["kind"] = df.pop("copyKind").map(_COPY_KIND).fillna("unknown")
    df["src"] = df.pop("srcKind").map(_MEM_KIND).fillna("unknown")
    df["dst"] = df.pop("dstKind").map(_MEM_KIND).fillna("unknown")
    df["pid"] = _pid(df.pop("gpid"))
    return df[COPY_COLUMNS]


def _sets(con, path, tables) -> pd.DataFrame:
    if "CUPTI_ACTIVITY_KIND_MEMSET" not in tables:
        return empty(SET_COLUMNS)
    df = _query(con, path, """
        select start as start_ns, end as end_ns, bytes, deviceId as device, streamId as stream,
               globalPid as gpid, correlationId as correlation
        from CUPTI_ACTIVITY_KIND_MEMSET order by start""")
    df["pid"] = _pid(df.pop("gpid"))
    return df[SET_COLUMNS]


def _api(con, path, tables) -> pd.DataFrame:
    parts = []
    for table in ("CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"):
        if table in tables:
            parts.append(_query(con, path, f"""
                select r.start as start_ns, r.end as end_ns, s.value as name, r.globalTid as gtid,
                       r.correlationId as correlation
                from {table} r left join StringIds s on s.id = r.nameId"""))
    if not parts:
        return empty(API_COLUMNS)
    df = pd.concat(parts, ignore_index=True).sort_values("start_ns", kind="stable", ignore_index=True)
    names = df["name"].fillna("")
    # Categorize each distinct name once (hundreds of names, not millions of rows).
    cats = {n: categorize(n) for n in names.unique()}
    df["category"] = names.map(cats)
    gtid = df.pop("gtid")
    df["pid"] = _pid(gtid)
    df["tid"] = gtid.to_numpy(dtype="int64") & PID_MASK
    return df[API_COLUMNS]


def _ranges(con, path, tables) -> pd.DataFrame:
    if "NVTX_EVENTS" not in tables:
        return empty(RANGE_COLUMNS)
    # eventType 59 = NvtxPushPopRange, 60 = NvtxStartEndRange (ENUM_NSYS_EVENT_TYPE).
    df = _query(con, path, """
        select n.start as start_ns, n.end as end_ns, coalesce(n.text, s.value) as name, n.globalTid as gtid
        from NVTX_EVENTS n left join StringIds s on s.id = n.textId
        where n.end is not null and n.eventType in (59, 60) order by n.start""")
    gtid = df.pop("gtid")
    df["pid"] = _pid(gtid)
    df["tid"] = gtid.to_numpy(dtype="int64") & PID_MASK
    return df[RANGE_COLUMNS]


def _null_streams(con, tables) -> frozenset[int]:
    """Ids of the legacy default (NULL) streams: work on one waits for, and blocks, every blocking stream."""
    if "TARGET_INFO_CUDA_STREAM" not in tables or "flag" not in _cols(con, "TARGET_INFO_CUDA_STREAM"):
        return frozenset()
    rows = con.execute("select streamId from TARGET_INFO_CUDA_STREAM where flag = ?", (NULL_STREAM_FLAG,)).fetchall()
    return frozenset(int(r[0]) for r in rows if r[0] is not None)


def _gpus(con, path, tables) -> list[GpuInfo]:
    if "TARGET_INFO_GPU" not in tables:
        return []
    cols = _cols(con, "TARGET_INFO_GPU")
    want = [c for c in ("id", "name", "smCount", "memoryBandwidth", "clockRate", "l2CacheSize", "totalMemory",
                        "computeMajor", "computeMinor") if c in cols]
    rows = con.execute(f"select {', '.join(want)} from TARGET_INFO_GPU order by id").fetchall()
    out = []
    for r in rows:
        d = dict(zip(want, r))
        cc = f"{d['computeMajor']}.{d['computeMinor']}" if d.get("computeMajor") is not None else None
        out.append(GpuInfo(name=d.get("name") or "unknown", sm_count=d.get("smCount"),
                           memory_bandwidth=float(d["memoryBandwidth"]) if d.get("memoryBandwidth") else None,
                           sm_clock_hz=float(d["clockRate"]) if d.get("clockRate") else None,
                           l2_bytes=d.get("l2CacheSize"), memory_bytes=d.get("totalMemory"), compute_capability=cc))
    return out


def _processes(con, path, tables, tl: Timeline) -> dict[int, str]:
    pids = set()
    for df in (tl.kernels, tl.copies, tl.api):
        if len(df):
            pids.update(int(p) for p in np.unique(df["pid"].to_numpy()))
    if "PROCESSES" not in tables or not pids:
        return {p: "" for p in pids}
    rows = con.execute("select pid, name from PROCESSES").fetchall()
    names = {int(p): n for p, n in rows if p is not None}
    return {p: names.get(p, "") for p in sorted(pids)}
