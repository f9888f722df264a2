"""Advice that fits the kernel (issue 9): no low-parallelism advice for kernels of a few microseconds (a grid
sized by a tiny problem), and library kernels (ATen, cuBLAS, ...) fixed at the call site. Real H200 reports."""
from __future__ import annotations

from kernel_profiler.artifacts import load_paths
from kernel_profiler.analysis.kernels import FEW_US_NS, analyze_kernels, is_library_kernel
from kernel_profiler.analysis.mechanisms import detect
from kernel_profiler.analysis.roofline import roofline


def _first(captures, case):
    k = load_paths([captures.path(case, "ncu.ncu-rep")]).kernel_profiles[0]
    return k, analyze_kernels([k], None, [], [])[0]


def test_few_microsecond_kernels_get_no_low_parallelism_advice(captures):
    for case in ("py_tiny_ops", "cu_tiny_launches"):
        k, ka = _first(captures, case)
        assert ka.duration_ns < FEW_US_NS and k.get("launch__grid_size") == 1
        assert "low_parallelism" in [f.mechanism for f in detect(k, roofline(k))]  # the raw detector fires...
        assert "low_parallelism" not in [f.mechanism for f in ka.findings]  # ...and the advice is dropped


def test_library_kernel_fix_is_at_the_call_site(captures):
    k, ka = _first(captures, "ho_py_torch_softmax")
    assert is_library_kernel(k.name)
    f = ka.findings[0]
    assert f.mechanism == "instruction_bound" and "call site" in f.fix.change


def test_user_kernels_keep_kernel_fixes(captures):
    for case, mech in (("ot_py_triton_jit", "uncoalesced_global"), ("ot_cu_launch_once", "shared_bank_conflict")):
        k, ka = _first(captures, case)
        assert not is_library_kernel(k.name)
        assert ka.findings[0].mechanism == mech and "call site" not in ka.findings[0].fix.change
