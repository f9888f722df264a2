"""The memory-side detectors on real reports, including when a report lacks a metric (older ncu builds)."""
from __future__ import annotations

from kernel_profiler.artifacts import ncu_report
from kernel_profiler.analysis.mechanisms import detect
from kernel_profiler.analysis.mechanisms.counters import (LD_BYTES_PER_SECTOR, SHARED_LD_INST, SHARED_LD_WAVEFRONTS,
                                                          ST_BYTES_PER_SECTOR)
from kernel_profiler.analysis.roofline import roofline


def test_missing_bytes_per_sector_lowers_confidence_and_names_the_metric(captures):
    k = ncu_report.load(captures.path("cu_softmax_naive", "ncu.ncu-rep"))[0]
    full = detect(k, roofline(k))[0]
    for n in (LD_BYTES_PER_SECTOR, ST_BYTES_PER_SECTOR):
        k.metrics.pop(n, None)
    f = detect(k, roofline(k))[0]
    assert f.mechanism == full.mechanism == "uncoalesced_global"  # still found, from sectors per request
    assert f.confidence < full.confidence
    assert any(LD_BYTES_PER_SECTOR in m for m in f.missing)


def test_bank_conflict_ways_count_against_the_conflict_free_wavefronts(captures):
    """128-bit shared loads need 4 wavefronts without conflicts: row_sums' 32.1 wavefronts/inst is 8-way, not 29-
    or 32-way; 32-bit loads (transpose_tile) need 1, so 32.3 wavefronts/inst is 32-way. The evidence value is
    the ratio its metric names."""
    for case, ways in (("ho_smem_stride_reduce", 8), ("cu_transpose_conflict", 32)):
        k = ncu_report.load(captures.path(case, "ncu.ncu-rep"))[0]
        f = detect(k, roofline(k))[0]
        assert f.mechanism == "shared_bank_conflict"
        assert f"{ways}-way" in f.bottleneck
        ev = f.evidence[0]
        ratio = k.get(SHARED_LD_WAVEFRONTS) / k.get(SHARED_LD_INST)
        assert ev.metric == f"{SHARED_LD_WAVEFRONTS}/{SHARED_LD_INST}" and abs(ev.value - ratio) < 0.01
