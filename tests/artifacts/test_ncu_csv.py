"""ncu --csv raw/details readers, checked against the .ncu-rep of the same capture."""
from __future__ import annotations

import math

import pytest

from kernel_profiler.artifacts import ncu_csv, ncu_report
from kernel_profiler.artifacts.units import to_base
from kernel_profiler.errors import ArtifactError, CounterPermission, EmptyCapture, UnknownFormat

CASES = ["cu_softmax_naive", "cu_transpose_conflict", "cu_histogram_atomic", "cu_cublas_bf16"]

# metrics the detectors rely on; checked across formats
KEY = ["gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes.sum.per_second",
       "sm__cycles_elapsed.avg.per_second", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
       "launch__grid_size", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]


@pytest.mark.parametrize("case", CASES)
def test_raw_agrees_with_report(captures, case):
    (raw,) = ncu_csv.load(captures.path(case, "ncu_raw.csv"))
    (rep,) = ncu_report.load(captures.path(case, "ncu.ncu-rep"))
    assert raw.name == rep.name and raw.grid == rep.grid and raw.block == rep.block
    assert raw.device == rep.device
    for k in KEY:
        assert raw.units[k] == rep.units[k], k
        assert math.isclose(raw.metrics[k], rep.metrics[k], rel_tol=1e-5), k
    # every shared metric agrees within the CSV's printed precision
    shared = [k for k in raw.metrics if k in rep.metrics]
    assert len(shared) > 2000
    off = [k for k in shared
           if not math.isclose(raw.metrics[k], rep.metrics[k], rel_tol=1e-3, abs_tol=0.051)]
    assert len(off) <= 3, off[:5]  # a couple of tiny negative/rounded counters differ


@pytest.mark.parametrize("case", CASES)
def test_details_maps_to_raw_names(captures, case):
    (det,) = ncu_csv.load(captures.path(case, "ncu_details.csv"))
    (rep,) = ncu_report.load(captures.path(case, "ncu.ncu-rep"))
    mapped = [k for k in det.metrics if k in rep.metrics]
    assert "gpu__time_duration.sum" in mapped and "launch__registers_per_thread" in mapped
    assert len(mapped) >= 50
    for k in mapped:  # details values are rounded to 2-3 significant decimals
        assert math.isclose(det.metrics[k], rep.metrics[k], rel_tol=6e-3, abs_tol=6e-3), k
    # unmapped display metrics keep "Section: Name"
    assert any(": " in k for k in det.metrics if k not in rep.metrics)
    assert sorted(r["id"] for r in det.rules) == sorted(r["id"] for r in rep.rules if r["type"] != "NONE")


def test_noise_separators_and_na(tmp_path, captures):
    src = captures.path("cu_softmax_naive", "ncu_raw.csv").read_text().splitlines()
    header = src[0].split('","')
    i = header.index("launch__grid_size")
    j = header.index("gpu__time_duration.sum")
    row = src[2].split('","')
    assert row[i] == "1,024"  # the capture really has a thousands separator
    row[j] = "n/a"
    text = "\n".join([
        "==PROF== Connected to process 1685 (/tmp/cap/bin/cu_softmax_naive)",
        "softmax: checksum 123.0",
        "==WARNING== something odd",
        src[0], src[1], '","'.join(row),
        "==PROF== Disconnected from process 1685",
    ])
    p = tmp_path / "noisy.csv"
    p.write_text(text)
    assert ncu_csv.sniff(p, p.read_bytes()[:65536])
    (k,) = ncu_csv.load(p)
    assert k.metrics["launch__grid_size"] == 1024.0
    assert "gpu__time_duration.sum" not in k.metrics


def test_bad_files(tmp_path, captures):
    good = captures.path("cu_softmax_naive", "ncu_raw.csv").read_text()
    header_only = good.splitlines()[0] + "\n" + good.splitlines()[1] + "\n"
    cases = {
        "empty.csv": ("", ArtifactError),
        "other.csv": ("a,b,c\n1,2,3\n", UnknownFormat),
        "nokernels.csv": ("==PROF== Connected\n==WARNING== No kernels were profiled.\n", EmptyCapture),
        "headeronly.csv": (header_only, EmptyCapture),
        "trunc.csv": (good[: len(good) - 5000], ArtifactError),
        "perm.csv": ("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission\n", CounterPermission),
    }
    for name, (data, exc) in cases.items():
        p = tmp_path / name
        p.write_text(data)
        with pytest.raises(exc) as e:
            ncu_csv.load(p)
        if issubclass(exc, ArtifactError):
            assert name in str(e.value)


def test_units_shared():
    assert to_base(1.709856, "ms") == (1709856.0, "ns")
    assert to_base(739.56, "Gbyte/s") == (739.56e9, "byte/s")
    assert to_base(1.98, "Ghz") == (1.98e9, "hz")
    assert to_base(3, "sector/us") == (3e6, "sector/s")
    assert to_base(12, "inst/cycle") == (12, "inst/cycle")
    assert to_base(60.2, "%") == (60.2, "%")
