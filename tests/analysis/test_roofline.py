"""Two floors on real H200 captures: at the traffic the kernel moved, and for the bytes/FLOPs the work needs.

The yardstick for the needed floor is the suite's own fixed variants: a fixed kernel does the same work
(suite/cases.toml `fix_of`), so it cannot run faster than the floor its slow twin says the work needs.
"""
from __future__ import annotations

import pytest

from conftest import suite_cases
from kernel_profiler.artifacts import load_paths
from kernel_profiler.answer import Roofline
from kernel_profiler.analysis.engine import analyze, run
from kernel_profiler.kernel_name import KernelName
from kernel_profiler.render.markdown import markdown, roofline_sentence
from kernel_profiler.analysis.roofline import requested_bytes, roofline
from kernel_profiler.catalog import NEAR_PEAK_GAP

CASES = {c["name"]: c for c in suite_cases()}
# Before/after pairs that profile the same kernel (one kernel does the work on both sides).
PAIRS = [(c["fix_of"], c["name"]) for c in suite_cases()
         if c.get("fix_of") and c.get("kernel", "").isidentifier() and CASES[c["fix_of"]].get("kernel") == c["kernel"]]


def _kernel_roofline(captures, case: str) -> Roofline:
    rs = run(load_paths([captures.path(case, "ncu.ncu-rep")])).rooflines
    want = CASES[case]["kernel"]
    (r,) = [r for r in rs if KernelName(r.kernel).base == want]
    return r


def test_pairs_cover_the_motivating_case():
    assert ("cu_softmax_naive", "cu_softmax_fixed") in PAIRS and len(PAIRS) >= 5


@pytest.mark.parametrize("before,after", PAIRS)
def test_needed_floor_is_not_above_the_fixed_kernel(before, after, captures):
    slow, fixed = _kernel_roofline(captures, before), _kernel_roofline(captures, after)
    assert slow.needed_floor_ns <= fixed.duration_ns, (slow.needed_source, slow.needed_floor_ns, fixed.duration_ns)
    # the needed floor never exceeds the one at the measured traffic, and its gap is the larger
    assert slow.needed_bytes <= slow.dram_bytes and slow.needed_floor_ns <= slow.floor_ns * (1 + 1e-9)
    assert slow.needed_gap >= slow.gap * (1 - 1e-9)


def test_softmax_gap_is_consistent_with_the_fix(captures):
    """README's case: 'runs 6.5x its floor' while the fix ran 13x faster. The needed gap must cover the speedup."""
    naive, fixed = _kernel_roofline(captures, "cu_softmax_naive"), _kernel_roofline(captures, "cu_softmax_fixed")
    speedup = naive.duration_ns / fixed.duration_ns
    assert speedup > 10
    assert naive.gap < speedup  # the old floor (DRAM bytes the slow kernel moved) understated the gap
    # the stated gap covers the speedup, and the fixed kernel sits within the near-peak band of that floor
    assert speedup <= naive.needed_gap <= speedup * NEAR_PEAK_GAP
    # 256 MB in + 256 MB out (suite/cases/softmax.cu): the needed bytes are about one read and one write
    assert 0.5e9 <= naive.needed_bytes <= 0.6e9 < naive.dram_bytes
    assert naive.needed_limiter == "memory"


def test_sgemm_roofline_label_agrees_with_bound(captures):
    """A 4096^3 SGEMM needs 3 x 64 MB but 137 GFLOP: its floor is compute, as its bound says."""
    d = analyze([captures.path("cu_sgemm_fp32", "ncu.ncu-rep"), captures.path("cu_sgemm_fp32", "sass.txt")])
    r = d.roofline
    assert d.bound == "compute" and r.needed_limiter == "compute"
    assert r.limiter == "memory"  # at the 17 GB its small tiles re-read, the DRAM term would have won
    assert r.flops == pytest.approx(2 * 4096**3, rel=1e-6)
    text = markdown(d)
    assert "compute floor" in roofline_sentence(r) and "memory-bound" not in text and "memory floor" not in text


def test_csv_and_report_agree_on_needed_bytes(captures):
    a = _kernel_roofline(captures, "cu_softmax_naive")
    rs = run(load_paths([captures.path("cu_softmax_naive", "ncu_raw.csv")])).rooflines
    (b,) = [r for r in rs if KernelName(r.kernel).base == "softmax_rows"]
    assert b.needed_bytes == pytest.approx(a.needed_bytes, rel=1e-3)
    assert b.needed_floor_ns == pytest.approx(a.needed_floor_ns, rel=1e-3)


def test_tma_kernel_does_not_use_requested_bytes(captures):
    """cuBLAS on Hopper loads through TMA: the LSU sector counters miss that traffic, so they bound nothing."""
    k = next(k for k in load_paths([captures.path("cu_cublas_bf16", "ncu.ncu-rep")]).kernel_profiles
             if k.get("gpu__time_duration.sum"))
    assert requested_bytes(k) is None
    r = roofline(k)
    assert r.needed_limiter == "compute" and r.needed_gap <= NEAR_PEAK_GAP


def test_roofline_json_without_needed_fields_still_renders(captures):
    """Schema 1.0 JSON (no needed_*) validates and renders with the single floor."""
    r = _kernel_roofline(captures, "cu_softmax_naive")
    old = {k: v for k, v in r.model_dump().items() if not k.startswith("needed_")}
    r0 = Roofline.model_validate(old)
    assert r0.needed_gap is None and r0.stated_gap == r.gap and r0.stated_floor_ns == r.floor_ns
    assert "262.8 µs floor" in roofline_sentence(r0)
