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


# --- files from other people's machines (tests/data/wild/README.md says where each comes from) ---

def _rows(path):
    import csv
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_metrics_page_with_raw_names_is_read(wild):
    """`ncu --csv --metrics ...`: raw names under "Command line profiler metrics", every value read."""
    path = wild("c01_esmm_metrics_cc86.csv")
    profiles = ncu_csv.load(path)
    rows = _rows(path)
    assert len(profiles) == len({r["ID"] for r in rows}) > 1
    by_id = {p.launch_id: p for p in profiles}
    for r in rows:  # every cell of the file is in the profile, converted to base units
        p = by_id[int(r["ID"])]
        want, unit = to_base(float(r["Metric Value"].replace(",", "")), r["Metric Unit"])
        assert p.metrics[r["Metric Name"]] == want and p.units[r["Metric Name"]] == unit
    assert all(p.units["gpu__time_duration.sum"] == "ns" for p in profiles)  # "nsecond" in the file
    assert {p.compute_capability for p in profiles} == {"8.6"}
    assert all("8.6" in p.device and "Ampere" in p.device for p in profiles)


def test_app_range_export_with_nvtx_columns_is_read(wild):
    path = wild("c03_cfregly_app_range_cc100.csv")
    (p,) = ncu_csv.load(path)
    assert p.name == "range compute_kernel"  # "Kernel Name" is just "range": the NVTX range names it
    assert p.compute_capability == "10.0" and "compute capability 10.0" in p.device
    for r in _rows(path):
        assert p.metrics[r["Metric Name"]] == float(r["Metric Value"])
    assert not any(": " in k for k in p.metrics)  # nothing left under a "Section: Name" key


@pytest.mark.parametrize("name", ["c01_esmm_metrics_cc86.csv", "c03_cfregly_app_range_cc100.csv"])
def test_unmeasured_throughput_is_never_printed_as_zero(wild, name):
    from kernel_profiler.analysis.engine import analyze

    d = analyze([wild(name)])
    for f in [d.primary, *d.secondary]:
        assert "SM 0%" not in f.bottleneck and "memory 0%" not in f.bottleneck, f.bottleneck
        assert all(math.isfinite(e.value) for e in f.evidence), f.evidence
    assert d.device and "compute capability" in d.device
