"""`detect` (the mechanism detectors in priority order) when a report lacks core metrics: a finding, never an
exception, and less confidence without a roofline. The detectors of each group: tests/analysis/mechanisms/."""
from __future__ import annotations

from kernel_profiler.artifacts import ncu_report
from kernel_profiler.analysis.mechanisms import detect
from kernel_profiler.analysis.roofline import roofline


def _without(k, *names):
    for n in names:
        k.metrics.pop(n, None)
    return k


def test_missing_core_metrics_do_not_abort(captures):
    k = ncu_report.load(captures.path("cu_transpose_conflict", "ncu.ncu-rep"))[0]
    k = _without(k, "gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum")
    assert roofline(k) is None
    f = detect(k, None)[0]  # a finding, not an exception
    assert f.mechanism == "shared_bank_conflict"
    assert "could not be computed" in f.explanation


def test_engine_lowers_confidence_without_a_roofline(captures):
    from kernel_profiler.artifacts.tables import Artifacts
    from kernel_profiler.analysis.engine import diagnose

    k = ncu_report.load(captures.path("cu_transpose_conflict", "ncu.ncu-rep"))[0]
    full = diagnose(Artifacts(kernel_profiles=[k], files=["x"]))
    k2 = _without(ncu_report.load(captures.path("cu_transpose_conflict", "ncu.ncu-rep"))[0], "dram__bytes_read.sum")
    d = diagnose(Artifacts(kernel_profiles=[k2], files=["x"]))
    assert d.mechanism == full.mechanism and d.confidence < full.confidence
    assert "dram__bytes_read.sum" in d.missing
