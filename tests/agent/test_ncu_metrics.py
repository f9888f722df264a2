"""The targeted ncu request (agent/ncu_metrics.py) carries what the engine needs: every real suite report cut
down to ENGINE_METRICS (plus the launch/device attributes LaunchStats and Occupancy carry) names the same
mechanism as the full report."""
from __future__ import annotations

import pytest

from kernel_profiler.agent.ncu_metrics import ENGINE_METRICS
from kernel_profiler.artifacts import load_paths
from kernel_profiler.analysis.kernels import analyze_kernels, excess_dram_traffic

CASES = ["cu_softmax_naive", "cu_transpose_conflict", "cu_local_array", "cu_grid_stride_small_grid", "cu_smem_occupancy",
         "cu_histogram_atomic", "cu_divergence", "cu_sgemm_fp32", "cu_cublas_bf16", "cu_vec_copy", "ho_register_spill",
         "ho_strided_store", "ho_smem_stride_reduce", "ho_small_grid_compute", "tr_strided", "py_unfused_gelu",
         "ot_cu_launch_once", "ot_cu_pageable_upload", "ot_py_eager_lazy", "ot_py_gemm_bf16", "ot_py_gemm_fp32",
         "ot_py_triton_jit"]


@pytest.mark.parametrize("case", CASES)
def test_targeted_metrics_name_the_same_mechanism(captures, case):
    profiles = load_paths([captures.path(case, "ncu.ncu-rep")]).kernel_profiles
    full = analyze_kernels(profiles, None, [], [])
    keep = set(ENGINE_METRICS)
    for k in profiles:
        k.metrics = {m: v for m, v in k.metrics.items() if m in keep or m.startswith(("launch__", "device__"))}
    cut = analyze_kernels(profiles, None, [], [])
    assert [a.findings[0].mechanism for a in cut] == [a.findings[0].mechanism for a in full]
    assert (excess_dram_traffic(cut) is None) == (excess_dram_traffic(full) is None)
    assert len(ENGINE_METRICS) < 100
