"""Mechanism detectors when a report lacks metrics (older ncu builds, fewer sections)."""
from __future__ import annotations

from kernel_profiler.artifacts import ncu_report
from kernel_profiler.mechanisms import LD_BYTES_PER_SECTOR, ST_BYTES_PER_SECTOR, detect
from kernel_profiler.roofline import roofline


def _without(k, *names):
    for n in names:
        k.metrics.pop(n, None)
    return k


def test_missing_bytes_per_sector_lowers_confidence_and_names_the_metric(captures):
    k = ncu_report.load(captures.path("cu_softmax_naive", "ncu.ncu-rep"))[0]
    full = detect(k, roofline(k))[0]
    k = _without(k, LD_BYTES_PER_SECTOR, ST_BYTES_PER_SECTOR)
    f = detect(k, roofline(k))[0]
    assert f.mechanism == full.mechanism == "uncoalesced_global"  # still found, from sectors per request
    assert f.confidence < full.confidence
    assert any(LD_BYTES_PER_SECTOR in m for m in f.missing)


def test_missing_core_metrics_do_not_abort(captures):
    k = ncu_report.load(captures.path("cu_transpose_conflict", "ncu.ncu-rep"))[0]
    k = _without(k, "gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum")
    assert roofline(k) is None
    f = detect(k, None)[0]  # a finding, not an exception
    assert f.mechanism == "shared_bank_conflict"
    assert "could not be computed" in f.explanation


def test_engine_lowers_confidence_without_a_roofline(captures):
    from kernel_profiler.artifacts.tables import Artifacts
    from kernel_profiler.engine import diagnose

    k = ncu_report.load(captures.path("cu_transpose_conflict", "ncu.ncu-rep"))[0]
    full = diagnose(Artifacts(kernel_profiles=[k], files=["x"]))
    k2 = _without(ncu_report.load(captures.path("cu_transpose_conflict", "ncu.ncu-rep"))[0], "dram__bytes_read.sum")
    d = diagnose(Artifacts(kernel_profiles=[k2], files=["x"]))
    assert d.mechanism == full.mechanism and d.confidence < full.confidence
    assert "dram__bytes_read.sum" in d.missing
