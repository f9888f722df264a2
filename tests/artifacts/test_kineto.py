"""Kineto trace reader on real H200 captures, checked against Nsight Systems runs of the
same programs (nsys.sqlite in the same case folder) and against the programs' sources.

The nsys run and the torch-profiler run are different executions, so only structure is
compared (kernels per step, their names and launch dimensions, copy sizes/kinds), never
timestamps.
"""
from __future__ import annotations

import gzip
import re
import sqlite3
from collections import Counter
from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import pytest

from kernel_profiler.artifacts import kineto, kineto_events
from kernel_profiler.artifacts.tables import API_COLUMNS, COPY_COLUMNS, KERNEL_COLUMNS, RANGE_COLUMNS, SET_COLUMNS
from kernel_profiler.errors import ArtifactError, EmptyCapture

CAPTURES = Path(__file__).parent.parent / "data" / "captures"
CASES = sorted(p.name for p in CAPTURES.iterdir()
               if p.name.startswith(("py_", "tr_")) and (p / "trace.json.gz").exists())
MiB = 1 << 20


def test_all_python_and_triton_cases_have_a_trace():
    assert len(CASES) >= 14, CASES


@pytest.fixture(scope="module")
def timelines(captures):
    return {c: kineto.load(captures.path(c, "trace.json.gz")) for c in CASES}


def raw_doc(captures, case: str) -> dict:
    with gzip.open(captures.path(case, "trace.json.gz")) as f:
        return orjson.loads(f.read())


def short_name(name: str) -> str:
    """Base function name from any demangler's output (nsys and Kineto format templates differently)."""
    name = re.sub(r"^void\s+", "", name)
    cut = min([i for i in (name.find("<"), name.find("(")) if i >= 0] or [len(name)])
    return name[:cut].rsplit("::", 1)[-1].strip()


# --------------------------------------------------------------------------- nsys: independent truth


def nsys_steps(db: Path) -> list[Counter]:
    """Per NVTX 'step' range: Counter of (short name, grid, block) of the kernels launched in it."""
    con = sqlite3.connect(db)
    tables = {r[0] for r in con.execute("select name from sqlite_master where type='table'")}
    api = pd.concat([pd.read_sql(f"select start as a, correlationId as c, globalTid as t from {t}", con)
                     for t in ("CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER") if t in tables])
    k = pd.read_sql("""select k.correlationId as c, s.value as name, gridX, gridY, gridZ, blockX, blockY, blockZ
                       from CUPTI_ACTIVITY_KIND_KERNEL k join StringIds s on s.id = k.shortName""", con)
    steps = pd.read_sql("select start, end, globalTid as t from NVTX_EVENTS where text = 'step' order by start", con)
    con.close()
    k = k.merge(api, on="c")
    out = []
    for r in steps.itertuples():
        m = k[(k.a >= r.start) & (k.a <= r.end) & (k.t == r.t)]
        out.append(Counter(zip(m.name.map(short_name), m.gridX, m.gridY, m.gridZ, m.blockX, m.blockY, m.blockZ)))
    return out


def kineto_steps(tl) -> list[Counter]:
    k = tl.kernels.merge(tl.api[["correlation", "start_ns", "pid", "tid"]].rename(
        columns={"start_ns": "a", "pid": "apid", "tid": "atid"}), on="correlation")
    out = []
    for r in tl.ranges[tl.ranges.name.str.match(r"ProfilerStep#\d+$")].itertuples():
        m = k[(k.a >= r.start_ns) & (k.a <= r.end_ns) & (k.atid == r.tid)]
        dims = m[["grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z"]].astype(int).itertuples(index=False)
        out.append(Counter((short_name(n), *d) for n, d in zip(m.name, dims)))
    return out


@pytest.mark.parametrize("case", CASES)
def test_kernels_per_step_match_nsys(case, captures, timelines):
    """Same program, two profilers: every step launches the same kernels with the same grids."""
    truth = nsys_steps(captures.path(case, "nsys.sqlite"))
    got = kineto_steps(timelines[case])
    assert len(got) == len(truth) > 0
    assert sum(sum(c.values()) for c in got) > 0
    assert got == truth


# --------------------------------------------------------------------------- contract


@pytest.mark.parametrize("case", CASES)
def test_timeline_contract(case, captures, timelines):
    tl = timelines[case]
    assert tl.format == "kineto" and tl.source.endswith("trace.json.gz")
    for df, cols in ((tl.kernels, KERNEL_COLUMNS), (tl.copies, COPY_COLUMNS), (tl.sets, SET_COLUMNS),
                     (tl.api, API_COLUMNS), (tl.ranges, RANGE_COLUMNS)):
        assert list(df.columns) == cols
        if len(df):
            assert (df.end_ns >= df.start_ns).all()
            assert df.start_ns.is_monotonic_increasing
    k = tl.kernels
    assert len(k) > 0 and k.name.notna().all() and (k.name != "").all()
    assert k.device.eq(0).all() and k.stream.notna().all() and k.correlation.notna().all()
    assert (k[["grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z"]] >= 1).all().all()
    assert k.registers.between(1, 255).all()
    # GPU events carry the host pid of their launch; that process is named in the trace.
    (pid,) = tl.processes
    assert tl.processes[pid] == "python3"
    assert k.pid.eq(pid).all()
    assert set(tl.api.pid) == {pid}
    assert tl.capture_start_ns <= k.start_ns.min() and tl.capture_end_ns >= k.end_ns.max()
    assert tl.rank is None
    (gpu,) = tl.gpus
    assert (gpu.name, gpu.sm_count, gpu.compute_capability) == ("NVIDIA H200", 132, "9.0")
    assert gpu.memory_bytes > 140e9
    # Times: µs floats -> whole ns on the trace's own clock (baseTimeNanoseconds not added).
    doc = raw_doc(captures, case)
    first = min((e for e in doc["traceEvents"] if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    assert k.start_ns.iloc[0] == round(first["ts"] * 1000)
    assert k.end_ns.iloc[0] - k.start_ns.iloc[0] == pytest.approx(first["dur"] * 1000, abs=1)


@pytest.mark.parametrize("case", CASES)
def test_every_kernel_has_its_launch_call(case, timelines):
    tl = timelines[case]
    launches = tl.api[tl.api.category == "launch"]
    assert set(tl.kernels.correlation) <= set(launches.correlation)
    assert len(launches) >= len(tl.kernels)


def test_profiler_steps_are_ranges(timelines):
    tl = timelines["py_tiny_ops"]
    assert list(tl.ranges.name) == [f"ProfilerStep#{i}" for i in range(50)]  # STEPS=50 in py_tiny_ops.py
    assert len(tl.kernels) == 50 * 200  # 100 x (mul_ + add_) per step
    assert tl.ranges.pid.eq(next(iter(tl.processes))).all()


def test_api_categories(timelines):
    cats = pd.concat([tl.api[["name", "category"]] for tl in timelines.values()]).drop_duplicates()
    by = dict(zip(cats.name, cats.category))
    assert by["cudaLaunchKernel"] == "launch"
    assert by["cuLaunchKernelEx"] == "launch"  # Triton launches through the driver API
    assert by["cudaMemcpyAsync"] == "memcpy"
    assert by["cudaMemsetAsync"] == "memset"
    assert by["cudaStreamSynchronize"] == by["cudaDeviceSynchronize"] == "sync"
    assert by["cudaMalloc"] == "malloc"
    assert by["cudaStreamIsCapturing"] == "other"
    assert set(cats.category) <= {"launch", "sync", "memcpy", "memset", "malloc", "other"}


def test_item_sync_sync_calls_match_nsys(captures, timelines):
    """py_item_sync calls .item() inside each step: a DtoH copy plus a stream synchronize."""
    tl = timelines["py_item_sync"]
    con = sqlite3.connect(captures.path("py_item_sync", "nsys.sqlite"))
    steps = con.execute("select start, end from NVTX_EVENTS where text='step'").fetchall()
    truth = sum(con.execute("""select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME r join StringIds s on s.id=r.nameId
                               where s.value like 'cudaStreamSynchronize%' and r.start between ? and ?""", st
                            ).fetchone()[0] for st in steps)
    con.close()
    syncs = tl.api[(tl.api.category == "sync")]
    in_steps = sum(((syncs.start_ns >= r.start_ns) & (syncs.start_ns <= r.end_ns)).sum()
                   for r in tl.ranges.itertuples())
    assert in_steps == truth > 0
    dtoh = tl.copies[tl.copies.kind == "DtoH"]
    assert len(dtoh) == truth
    assert (dtoh.dst == "pinned").all() and (dtoh.src == "device").all()


def test_framework_ops_counted_per_name(captures, timelines):
    """cpu_op events are aggregated per ATen op (calls, total/min/max host time): py_item_sync's source calls
    `loss.item()` 10 times per step for 20 profiled steps; the counts agree with the raw events."""
    ops = timelines["py_item_sync"].ops.set_index("name")
    raw = [e for e in raw_doc(captures, "py_item_sync")["traceEvents"] if e.get("cat") == "cpu_op"]
    assert ops.loc["aten::item", "calls"] == 10 * 20
    assert ops["calls"].to_dict() == dict(Counter(e["name"] for e in raw))
    item = [e["dur"] * 1e3 for e in raw if e["name"] == "aten::item"]
    assert ops.loc["aten::item", "total_ns"] == pytest.approx(sum(item), rel=1e-6)
    assert ops.loc["aten::item", "max_ns"] == pytest.approx(max(item), abs=1)
    assert ops.loc["aten::item", "min_ns"] == pytest.approx(min(item), abs=1)
    assert ops.loc["aten::item", "median_ns"] == pytest.approx(float(np.median(item)), abs=1)


# --------------------------------------------------------------------------- copies


@pytest.mark.parametrize("case, src", [("py_pageable_copy", "pageable"), ("py_pinned_copy", "pinned")])
def test_copies_match_program_and_nsys(case, src, captures, timelines):
    """py_pageable_copy.py: each of 10 steps uploads a 64M-float (256 MiB) host tensor; FIXED=1 pins it."""
    c = timelines[case].copies
    assert len(c) == 10
    assert (c.kind == "HtoD").all() and (c.src == src).all() and (c.dst == "device").all()
    assert (c.bytes == 256 * MiB).all()
    con = sqlite3.connect(captures.path(case, "nsys.sqlite"))
    rows = con.execute("""select m.bytes, lower(s.label) from CUPTI_ACTIVITY_KIND_MEMCPY m
                          join ENUM_CUDA_MEM_KIND s on s.id = m.srcKind where m.copyKind = 1""").fetchall()
    con.close()
    assert {r for r in rows if r[0] == 256 * MiB} == {(256 * MiB, src)}
    # Pageable copies are staged through a bounce buffer: far slower than pinned ones.
    bw = (c.bytes / (c.end_ns - c.start_ns)).median()  # byte/ns == GB/s
    assert (bw < 20) if src == "pageable" else (bw > 20)


def test_copy_bytes_from_bandwidth_when_bytes_missing(captures, tmp_path):
    doc = raw_doc(captures, "py_pageable_copy")
    for e in doc["traceEvents"]:
        if e.get("cat") == "gpu_memcpy":
            del e["args"]["bytes"]
    p = tmp_path / "nobytes.json"
    p.write_bytes(orjson.dumps(doc))
    got = kineto.load(p).copies.bytes
    assert np.allclose(got, 256 * MiB, rtol=1e-6)


def test_memsets(timelines):
    s = timelines["py_startup"].sets
    assert len(s) == 40 and s.bytes.gt(0).all() and s.pid.notna().all()


# --------------------------------------------------------------------------- parsing paths


def _frames(tl):
    return [tl.kernels, tl.copies, tl.sets, tl.api, tl.ranges, tl.ops]


def test_chunked_and_whole_parse_agree(captures, tmp_path, monkeypatch):
    path = captures.path("py_item_sync", "trace.json.gz")
    reference = kineto.load(path)
    # Many small chunks (the path big traces take) ...
    monkeypatch.setattr(kineto_events, "CHUNK_BYTES", 64 * 1024)
    chunked = kineto.load(path)
    monkeypatch.undo()
    # ... and compact one-line JSON (cut at `},{` with no newline between events).
    compact = tmp_path / "compact.json"
    compact.write_bytes(orjson.dumps(raw_doc(captures, "py_item_sync")))
    whole = kineto.load(compact)
    for a, b, c in zip(_frames(reference), _frames(chunked), _frames(whole)):
        pd.testing.assert_frame_equal(a, b)
        pd.testing.assert_frame_equal(a, c)
    assert (reference.capture_start_ns, reference.capture_end_ns) == (whole.capture_start_ns, whole.capture_end_ns)
    assert reference.processes == whole.processes and reference.gpus == whole.gpus


def test_cut_at_the_wrong_depth_falls_back_to_a_whole_parse(captures, tmp_path, monkeypatch):
    """Objects inside an event's args look like an event boundary too (`}, {`): a block cut there cannot
    decode (its brackets do not balance), and the reader decodes the whole document instead."""
    doc = raw_doc(captures, "py_item_sync")
    for e in doc["traceEvents"]:
        if e.get("cat") == "cpu_op":
            e.setdefault("args", {})["nested"] = [{"a": 1}, {"b": 2}]
    p = tmp_path / "nested.json"
    p.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    reference = kineto.load(captures.path("py_item_sync", "trace.json.gz"))
    streamed = []
    real_stream = kineto_events.stream
    monkeypatch.setattr(kineto_events, "stream", lambda rd, acc: streamed.append(real_stream(rd, acc)) or streamed[-1])
    monkeypatch.setattr(kineto_events, "CHUNK_BYTES", 4096)
    got = kineto.load(p)
    assert streamed == [None]  # the streamed parse gave up...
    for a, b in zip(_frames(reference), _frames(got)):  # ...and the whole parse read the same
        pd.testing.assert_frame_equal(a, b)


def test_progress_bar_only_when_asked_or_on_a_terminal(captures, capsys, monkeypatch):
    path = captures.path("py_tiny_ops", "trace.json.gz")
    monkeypatch.setattr(kineto_events, "CHUNK_BYTES", 64 * 1024)
    monkeypatch.setattr(kineto_events.Progress, "DELAY", 0.0)
    monkeypatch.setattr(kineto_events.Progress, "EVERY", 0.0)
    with_bar = kineto.load(path, progress=True)
    err = capsys.readouterr().err
    assert "trace.json.gz: reading " in err and "%)" in err and err.endswith("\r\x1b[K")  # erased at the end
    without = kineto.load(path)  # stderr is not a terminal under pytest
    assert capsys.readouterr().err == ""
    pd.testing.assert_frame_equal(with_bar.kernels, without.kernels)


def test_bare_event_array_and_rank(captures, tmp_path):
    doc = raw_doc(captures, "tr_low_parallelism")
    p = tmp_path / "bare.json"
    p.write_bytes(orjson.dumps(doc["traceEvents"]))
    tl = kineto.load(p)
    assert len(tl.kernels) == 5 and tl.gpus == []
    doc["distributedInfo"] = {"rank": 3, "world_size": 8}
    p2 = tmp_path / "rank3.json"
    p2.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    tl3 = kineto.load(p2)
    assert (tl3.rank, tl3.world_size) == (3, 8)  # distributedInfo written after the events array
    assert tl3.utc_origin_ns == doc["baseTimeNanoseconds"] > 1.7e18


def test_low_parallelism_triton_kernel(timelines):
    """tr_low_parallelism.py: saxpy_loop on a grid of 16 programs, 5 steps."""
    k = timelines["tr_low_parallelism"].kernels
    assert list(k.name) == ["saxpy_loop"] * 5
    assert (k[["grid_x", "grid_y", "grid_z"]].to_numpy() == [16, 1, 1]).all()


# --------------------------------------------------------------------------- sniff


def _head(p: Path) -> bytes:
    return p.read_bytes()[:4096]


@pytest.mark.parametrize("case", CASES)
def test_sniff_real_traces(case, captures):
    p = captures.path(case, "trace.json.gz")
    assert kineto.sniff(p, _head(p))


def test_sniff_content_not_extension(captures, tmp_path):
    plain = tmp_path / "trace.bin"
    with gzip.open(captures.path("py_gemm_bf16", "trace.json.gz")) as f:
        plain.write_bytes(f.read())
    assert kineto.sniff(plain, _head(plain))
    db = captures.path("py_gemm_bf16", "nsys.sqlite")
    assert not kineto.sniff(db, _head(db))
    other = tmp_path / "x.json"
    other.write_text('{"a": 1, "b": [1, 2]}')
    assert not kineto.sniff(other, _head(other))
    gz_other = tmp_path / "x.json.gz"
    gz_other.write_bytes(gzip.compress(b'{"a": 1}'))
    assert not kineto.sniff(gz_other, _head(gz_other))
    empty_file = tmp_path / "empty.json"
    empty_file.write_bytes(b"")
    assert not kineto.sniff(empty_file, b"")
    broken_gz = tmp_path / "broken.json.gz"
    broken_gz.write_bytes(b"\x1f\x8b\x08\x00garbage")
    assert not kineto.sniff(broken_gz, _head(broken_gz))


# --------------------------------------------------------------------------- bad input


def _assert_one_line(err, path: Path, *words):
    msg = str(err.value)
    assert str(path) in msg and "\n" not in msg
    for w in words:
        assert w in msg.lower()


def test_empty_file(tmp_path):
    p = tmp_path / "empty.json"
    p.write_bytes(b"")
    with pytest.raises(ArtifactError) as err:
        kineto.load(p)
    _assert_one_line(err, p, "empty")


def test_truncated_gzip(captures, tmp_path):
    data = captures.path("py_tiny_ops", "trace.json.gz").read_bytes()
    p = tmp_path / "trunc.json.gz"
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(ArtifactError) as err:
        kineto.load(p)
    _assert_one_line(err, p, "gzip")


def test_empty_gzip(tmp_path):
    p = tmp_path / "e.json.gz"
    p.write_bytes(gzip.compress(b""))
    with pytest.raises(ArtifactError) as err:
        kineto.load(p)
    _assert_one_line(err, p)


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.999])
def test_truncated_json(captures, tmp_path, fraction):
    with gzip.open(captures.path("py_tiny_ops", "trace.json.gz")) as f:
        data = f.read()
    p = tmp_path / "trunc.json"
    p.write_bytes(data[: int(len(data) * fraction)])
    with pytest.raises(ArtifactError) as err:
        kineto.load(p)
    _assert_one_line(err, p, "truncated")


@pytest.mark.parametrize("content", [b'{"a": 1}', b'{"traceEvents": 5}', b"42", b"\x00\x01garbage"])
def test_not_a_trace(tmp_path, content):
    p = tmp_path / "x.json"
    p.write_bytes(content)
    with pytest.raises(ArtifactError) as err:
        kineto.load(p)
    _assert_one_line(err, p)


def test_trace_without_gpu_events(captures, tmp_path):
    doc = raw_doc(captures, "py_tiny_ops")
    doc["traceEvents"] = [e for e in doc["traceEvents"] if kineto._KIND.get(e.get("cat")) not in ("kernel", "copy", "set")]
    p = tmp_path / "cpu_only.json"
    p.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    with pytest.raises(EmptyCapture) as err:
        kineto.load(p)
    _assert_one_line(err, p, "no gpu activity")


def test_missing_file(tmp_path):
    with pytest.raises(ArtifactError) as err:
        kineto.load(tmp_path / "nope.json")
    _assert_one_line(err, tmp_path / "nope.json")


def test_odd_events_do_not_break_the_reader(captures, tmp_path):
    """Events missing args / with null args / non-X phases / string pids are tolerated."""
    doc = raw_doc(captures, "tr_low_parallelism")
    kernels = [e for e in doc["traceEvents"] if e.get("cat") == "kernel"]
    kernels[0]["args"] = None
    del kernels[1]["args"]
    kernels[2]["args"]["grid"] = "16,1,1"
    doc["traceEvents"].append({"ph": "i", "cat": "kernel", "name": "marker", "ts": kernels[0]["ts"], "pid": "x"})
    doc["traceEvents"].append("not an event")
    p = tmp_path / "odd.json"
    p.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    k = kineto.load(p).kernels
    assert list(k.name) == ["saxpy_loop"] * 5
    assert k.grid_x.isna().sum() == 3 and k.grid_x.eq(16).sum() == 2
