"""The .ncu-rep reader on real H200 captures, cross-checked against ncu's own CSV export."""
from __future__ import annotations

import csv
import math

import pytest

from kernel_profiler.artifacts import ncu_report
from kernel_profiler.errors import ArtifactError, EmptyCapture, UnknownFormat

CASES = ["cu_softmax_naive", "cu_cublas_bf16", "cu_local_array", "py_matmul_fp32"]


def _raw_csv(path):
    lines = [ln for ln in path.read_text().splitlines() if ln.startswith('"')]
    rows = list(csv.reader(lines))
    return rows[0], rows[1], rows[2:]


@pytest.mark.parametrize("case", CASES)
def test_duration_and_shape_match_raw_csv(captures, case):
    (p,) = ncu_report.load(captures.path(case, "ncu.ncu-rep"))
    header, units, rows = _raw_csv(captures.path(case, "ncu_raw.csv"))
    row = dict(zip(header, rows[0]))
    unit = dict(zip(header, units))
    # independent conversion of ncu's display unit for the duration
    scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[unit["gpu__time_duration.sum"]]
    csv_ns = float(row["gpu__time_duration.sum"].replace(",", "")) * scale
    assert p.units["gpu__time_duration.sum"] == "ns"
    assert math.isclose(p.metrics["gpu__time_duration.sum"], csv_ns, rel_tol=1e-5)
    assert p.name == row["Kernel Name"]
    assert "(%d, %d, %d)" % p.grid == row["Grid Size"]
    assert "(%d, %d, %d)" % p.block == row["Block Size"]
    assert p.device == row["device__attribute_display_name"]


def test_base_units(captures):
    (p,) = ncu_report.load(captures.path("cu_softmax_fixed", "ncu.ncu-rep"))
    assert p.units["sm__cycles_elapsed.avg.per_second"] == "hz"
    assert p.units["dram__bytes.sum.per_second"] == "byte/s"
    assert p.units["dram__bytes_read.sum"] == "byte"
    assert p.units["sm__throughput.avg.pct_of_peak_sustained_elapsed"] == "%"
    # a clock in hz is in the GHz range on an H200, not 1.9
    assert 1e8 < p.metrics["sm__cycles_elapsed.avg.per_second"] < 1e10
    # every value is numeric; strings went to fields
    assert all(isinstance(v, float) for v in p.metrics.values())
    assert set(p.metrics) == set(p.units)


def test_rules_match_details_csv(captures):
    (p,) = ncu_report.load(captures.path("cu_softmax_naive", "ncu.ncu-rep"))
    lines = [ln for ln in captures.path("cu_softmax_naive", "ncu_details.csv").read_text().splitlines()]
    rows = [r for r in csv.DictReader(lines) if r["Rule Name"]]
    want = sorted((r["Rule Name"], r["Rule Type"]) for r in rows)
    got = sorted((r["id"], r["type"]) for r in p.rules if r["type"] != "NONE")
    assert got == want
    # a rule id can fire several times with different estimates: compare as multisets
    got_sp = sorted((r["id"], r["speedup_type"], float(f"{r['speedup']:.4g}")) for r in p.rules if r["speedup"] is not None)
    want_sp = sorted((r["Rule Name"], r["Estimated Speedup Type"], float(f"{float(r['Estimated Speedup']):.4g}"))
                     for r in rows if r["Estimated Speedup"])
    assert got_sp == want_sp
    assert all("@section:" not in r["message"] for r in p.rules)


def test_sass_from_report_matches_cuobjdump(captures):
    # cuBLAS kernel: no cuobjdump of the library in the capture, but the report's
    # own opcode histogram (sass__inst_executed_per_opcode) is an independent source
    (f,) = ncu_report.load_sass(captures.path("cu_cublas_bf16", "ncu.ncu-rep"))
    assert f.opcode_counts.get("HGMMA", 0) > 0
    assert f.opcode_counts.get("HMMA", 0) == 0
    # our own kernel: the report's SASS has the same local loads/stores as cuobjdump's
    from kernel_profiler.artifacts import sass
    (g,) = ncu_report.load_sass(captures.path("cu_local_array", "ncu.ncu-rep"))
    ref = next(x for x in sass.load(captures.path("cu_local_array", "sass.txt"))
               if x.mangled == g.mangled)
    for op in ("LDL", "STL", "LDG"):
        assert g.opcode_counts.get(op, 0) == ref.opcode_counts.get(op, 0) > 0


def _write(tmp_path, name, data: bytes):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_bad_files(captures, tmp_path):
    good = captures.path("cu_softmax_naive", "ncu.ncu-rep").read_bytes()
    cases = {
        "empty.ncu-rep": (b"", ArtifactError),
        "garbage.ncu-rep": (bytes(range(256)) * 20, UnknownFormat),
        "csv.ncu-rep": (captures.path("cu_softmax_naive", "ncu_raw.csv").read_bytes(), UnknownFormat),
        "trunc_head.ncu-rep": (good[:5000], ArtifactError),
        "trunc_tail.ncu-rep": (good[: len(good) * 9 // 10], ArtifactError),
    }
    for name, (data, exc) in cases.items():
        p = _write(tmp_path, name, data)
        with pytest.raises(exc) as e:
            ncu_report.load(p)
        assert name in str(e.value) and "\n" not in str(e.value)
        with pytest.raises(ArtifactError):
            ncu_report.load_sass(p)


def test_sniff(captures):
    p = captures.path("cu_softmax_naive", "ncu.ncu-rep")
    assert ncu_report.sniff(p, p.read_bytes()[:65536])
    q = captures.path("cu_softmax_naive", "ncu_raw.csv")
    assert not ncu_report.sniff(q, q.read_bytes()[:65536])


def test_empty_capture_is_artifact_error():
    assert issubclass(EmptyCapture, ArtifactError)


def test_load_paths_reads_the_sass_a_report_holds(captures):
    """`load_paths` emits everything a report holds: its kernels and the SASS of their source counters, so
    `analyze` and the agent's sass tool see the same evidence."""
    from kernel_profiler.artifacts import load_paths

    rep = captures.path("cu_local_array", "ncu.ncu-rep")
    arts = load_paths([rep])
    (g,) = ncu_report.load_sass(rep)
    assert [k.name for k in arts.kernel_profiles] == [k.name for k in ncu_report.load(rep)]
    assert [(f.name, f.source, f.instructions) for f in arts.sass] == [(g.name, str(rep), g.instructions)]


def test_same_named_xz_reports_in_two_folders_do_not_collide(tmp_path):
    """Two `ncu.ncu-rep.xz` of different programs, each in its own folder: each decompressed apart, each kernel
    and its SASS read from its own report."""
    from pathlib import Path

    from kernel_profiler.artifacts import load_paths

    captures = Path(__file__).parent.parent / "data" / "captures"
    cases = ("cu_softmax_naive", "cu_vec_copy")
    for case in cases:
        (tmp_path / case).mkdir()
        (tmp_path / case / "ncu.ncu-rep.xz").write_bytes((captures / case / "ncu.ncu-rep.xz").read_bytes())
    arts = load_paths([tmp_path / c / "ncu.ncu-rep.xz" for c in cases])
    got = {(k.name.split("(")[0], k.source) for k in arts.kernel_profiles}
    assert got == {("softmax_rows", str(tmp_path / cases[0] / "ncu.ncu-rep.xz")),
                   ("scale_vec4", str(tmp_path / cases[1] / "ncu.ncu-rep.xz"))}
    assert {(f.name.split("(")[0], f.source) for f in arts.sass} == got


def test_a_sass_dump_is_read_before_the_reports_sass(captures):
    """A folder with both cuobjdump's SASS dump and an ncu report of the same kernel: the dump (every instruction)
    comes first, the report's SASS (the instructions its counters saw) after it."""
    from kernel_profiler.artifacts import load_paths

    arts = load_paths([captures.path("cu_local_array", "ncu.ncu-rep"), captures.path("cu_local_array", "sass.txt")])
    sources = [f.source.rsplit("/", 1)[-1] for f in arts.sass]
    assert "ncu.ncu-rep" in sources and "sass.txt" in sources
    assert sources.index("sass.txt") < sources.index("ncu.ncu-rep")
    assert all(s == "ncu.ncu-rep" for s in sources[sources.index("ncu.ncu-rep"):])


@pytest.mark.parametrize("case", ["ot_py_gemm_bf16", "ot_cu_pageable_upload", "cu_local_array"])
def test_sass_walked_from_the_entry_address_without_source_counters(captures, monkeypatch, case):
    """A report profiled without SourceCounters has no inst_executed; the SASS is then walked from the entry
    address LaunchStats records. On real reports that have both, the walk gives the source counters' listing
    (minus the alignment NOPs after the end; plus the BRA trap after EXIT that inst_executed does not list)."""
    path = captures.path(case, "ncu.ncu-rep")
    with_counters = ncu_report.load_sass(path)
    monkeypatch.setattr(ncu_report, "_pcs", lambda action: [])
    walked = ncu_report.load_sass(path)
    assert [f.mangled for f in walked] == [f.mangled for f in with_counters]
    for w, c in zip(walked, with_counters):
        code = list(c.instructions)
        while code and code[-1] == "NOP":
            code.pop()
        assert w.instructions[:len(code)] == code
        assert w.instructions[len(code):] in ([], ["BRA"])
        assert w.instructions[-1] in ("EXIT", "BRA", "RET")


def test_sass_of_a_report_with_the_default_request_equals_cuobjdump(captures):
    """A real report of ask's default ncu request (LaunchStats, Occupancy and the engine's metrics: no source
    counters; 14 replay passes on the H200) carries the kernel's code: the listing walked from its entry address is
    cuobjdump's listing of the same function, instruction for instruction (minus the alignment NOPs)."""
    from kernel_profiler.artifacts import sass
    path = captures.path("ot_cu_pageable_upload", "ncu_targeted.ncu-rep")
    (k,) = ncu_report.load(path)
    assert k.metrics["profiler__replayer_passes"] <= 15 and "inst_executed" not in k.metrics
    (f,) = ncu_report.load_sass(path)
    ref = next(x for x in sass.load(captures.path("ot_cu_pageable_upload", "sass.txt")) if x.mangled == f.mangled)
    code = list(ref.instructions)
    while code and code[-1] == "NOP":
        code.pop()
    assert list(f.instructions) == code and len(code) > 100
