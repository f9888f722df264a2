"""ncu's source page CSV (--page source --print-source sass), checked against the .ncu-rep of the same capture."""
from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from kernel_profiler.artifacts import identify, load_paths, ncu_csv, ncu_report, ncu_source
from kernel_profiler.errors import ArtifactError, CounterPermission

# every capture that keeps its source page (suite/pack_testdata.py KEEP_SOURCE_SASS)
CASES = ["cu_cublas_bf16", "ot_py_gemm_bf16", "ot_py_gemm_fp32", "py_gemm_bf16", "py_matmul_fp32"]
CSV = "ncu_source_sass.csv"


@pytest.mark.parametrize("case", CASES)
def test_same_sass_as_the_report(captures, case):
    (fn,) = ncu_source.load(captures.path(case, CSV))
    (rep,) = ncu_report.load_sass(captures.path(case, "ncu.ncu-rep"))
    assert fn.name == rep.name and fn.mangled == rep.mangled and fn.arch is None
    # ncu prints the whole function; the report's SASS (its source counters' addresses) stops at the trap loop
    # after the last EXIT (a BRA to itself) and the alignment NOPs that follow it
    n = len(rep.instructions)
    assert fn.instructions[:n] == rep.instructions  # same mnemonics, same address order
    tail = fn.instructions[n:]
    assert tail[0] == "BRA" and set(tail[1:]) <= {"NOP"} and fn.addresses[n] == int(
        _source_of(captures.path(case, CSV), fn.addresses[n]).split()[-1], 16)
    assert Counter(fn.opcode_counts) - Counter(tail) == Counter(rep.opcode_counts)
    assert sum(fn.opcode_counts.values()) == len(fn.instructions)
    assert fn.addresses == sorted(fn.addresses) and len(set(fn.addresses)) == len(fn.addresses)


def _source_of(path: Path, address: int) -> str:
    """The Source cell of one address, read straight from the file (the trap loop's branch target)."""
    for line in path.read_text().splitlines():
        if line.startswith(f'"{address:#x}",'):
            return line.split('","')[1]
    raise AssertionError(address)


@pytest.mark.parametrize("case", CASES)
def test_counters_agree_with_the_report(captures, case):
    (fn,) = ncu_source.load(captures.path(case, CSV))
    ((_, action),) = list(ncu_report._actions(captures.path(case, "ncu.ncu-rep")))
    m = action.metric_by_name("inst_executed")  # per-instruction, correlated by address
    ids = m.correlation_ids()
    per_pc = {ids.as_uint64(i): m.as_uint64(i) for i in range(m.num_instances())}
    executed = dict(zip(fn.addresses, fn.source_counters["Instructions Executed"]))
    assert sum(per_pc.values()) > 0
    assert {pc: executed[pc] for pc in per_pc} == per_pc
    assert all(executed[pc] == 0 for pc in set(executed) - set(per_pc))  # the trap loop and padding never run
    samples = fn.source_counters["Warp Stall Sampling (All Samples)"]
    assert sum(samples) == action.metric_by_name("smsp__pcsamp_sample_count").value()
    not_issued = fn.source_counters["Warp Stall Sampling (Not-issued Samples)"]
    assert len(samples) == len(not_issued) == len(fn.instructions)
    assert all(0 <= b <= a for a, b in zip(samples, not_issued))


def test_folder_with_only_the_source_page(captures, tmp_path):
    (tmp_path / CSV).write_bytes(captures.path("ot_py_gemm_fp32", CSV).read_bytes())
    arts = load_paths([tmp_path])
    assert arts.files == [str(tmp_path / CSV)] and not arts.kernel_profiles and not arts.warnings
    (fn,) = arts.sass
    assert fn.source == str(tmp_path / CSV) and fn.opcode_counts["FFMA"] > 1000
    p = subprocess.run([sys.executable, "-m", "kernel_profiler.cli", "analyze", str(tmp_path), "--json"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["bound"] == "inconclusive"  # SASS alone names no bottleneck


def test_capture_folder_reads_the_source_page_too(captures):
    arts = load_paths([captures.case_dir("cu_cublas_bf16")])
    assert any(f.endswith(CSV) for f in arts.files)
    from_csv = [s for s in arts.sass if s.source.endswith(CSV)]
    assert len(from_csv) == 1 and from_csv[0].opcode_counts.get("HGMMA", 0) > 0


def test_several_kernels_in_one_file(captures, tmp_path):
    two = tmp_path / "two.csv"
    two.write_text(captures.path("cu_cublas_bf16", CSV).read_text()
                   + captures.path("ot_py_gemm_fp32", CSV).read_text())
    a, b = ncu_source.load(two)
    (one,) = ncu_source.load(captures.path("cu_cublas_bf16", CSV))
    (other,) = ncu_source.load(captures.path("ot_py_gemm_fp32", CSV))
    assert (a.name, a.opcode_counts, b.name, b.opcode_counts) == (one.name, one.opcode_counts,
                                                                  other.name, other.opcode_counts)


@pytest.mark.parametrize("case", ["cu_cublas_bf16", "py_matmul_fp32"])
def test_sniffs_do_not_overlap(captures, case):
    assert identify(captures.path(case, CSV)) == "ncu-source-csv"
    assert identify(captures.path(case, "ncu_raw.csv")) == "ncu-csv"
    assert identify(captures.path(case, "ncu_details.csv")) == "ncu-csv"
    for other in ("ncu_raw.csv", "ncu_details.csv"):
        p = captures.path(case, other)
        assert not ncu_source.sniff(p, p.read_bytes()[:65536])
    p = captures.path(case, CSV)
    assert not ncu_csv.sniff(p, p.read_bytes()[:65536])


def _bad(tmp_path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_truncated_file(captures, tmp_path):
    text = captures.path("ot_py_gemm_fp32", CSV).read_text()
    cut = _bad(tmp_path, "cut.csv", text[: len(text) // 2])  # ends in the middle of a row
    with pytest.raises(ArtifactError, match="truncated or corrupt"):
        ncu_source.load(cut)
    header_only = _bad(tmp_path, "head.csv", "\n".join(text.splitlines()[:2]) + "\n")
    with pytest.raises(ArtifactError, match="no SASS instruction rows"):
        ncu_source.load(header_only)
    name_only = _bad(tmp_path, "name.csv", text.splitlines()[0] + "\n")
    with pytest.raises(ArtifactError, match="no header"):
        ncu_source.load(name_only)


def test_kernel_name_without_address_and_source_columns(captures, tmp_path):
    lines = captures.path("cu_cublas_bf16", CSV).read_text().splitlines()
    header = lines[1].replace('"Address"', '"Addr"')
    p = _bad(tmp_path, "cols.csv", "\n".join([lines[0], header, *lines[2:]]) + "\n")
    assert identify(p) == "ncu-source-csv"
    with pytest.raises(ArtifactError, match='no "Address"/"Source" header'):
        ncu_source.load(p)


def test_ncu_error_text(captures, tmp_path):
    lines = captures.path("cu_cublas_bf16", CSV).read_text().splitlines()
    err = "==ERROR== Failed to import report: the file is corrupt"
    p = _bad(tmp_path, "err.csv", "\n".join([lines[0], lines[1], err]) + "\n")
    with pytest.raises(ArtifactError, match="ncu reported an error"):
        ncu_source.load(p)
    perm = _bad(tmp_path, "perm.csv", "\n".join([lines[0], "==ERROR== ERR_NVGPUCTRPERM - The user does not "
                                                 "have permission to access NVIDIA GPU Performance Counters"]))
    with pytest.raises(CounterPermission):
        ncu_source.load(perm)


@pytest.mark.parametrize("kind", ["cut", "cols", "error", "only_error"])
def test_cli_exit_2_on_bad_input(captures, tmp_path, kind):
    text = captures.path("cu_cublas_bf16", CSV).read_text()
    lines = text.splitlines()
    body = {"cut": text[:20000],
            "cols": "\n".join([lines[0], '"Addr","Src"', '"0x10","NOP"']),
            "error": "\n".join([lines[0], lines[1], "==ERROR== An error occurred while trying to import"]),
            "only_error": "==ERROR== An error occurred while trying to import"}[kind]
    f = _bad(tmp_path, "broken.csv", body + "\n")
    before = f.read_bytes()
    p = subprocess.run([sys.executable, "-m", "kernel_profiler.cli", "analyze", str(f)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1 and str(f) in p.stderr
    assert f.read_bytes() == before
