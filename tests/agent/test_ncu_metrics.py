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


def test_first_request_has_no_source_counters_and_a_set_can_be_forced(monkeypatch):
    """SourceCounters cost 2 replay passes (16 instead of 14 on the H200, bench/README.md) only to carry the SASS,
    which LaunchStats' entry address gives without them; KERNEL_PROFILER_NCU_SET=full is the measured baseline."""
    from kernel_profiler.agent.ncu_metrics import SET_ENV, targeted_args
    from kernel_profiler.errors import UsageError
    monkeypatch.delenv(SET_ENV, raising=False)
    argv = targeted_args()
    sections = [argv[i + 1] for i, x in enumerate(argv) if x == "--section"]
    assert "LaunchStats" in sections and "SourceCounters" not in sections
    assert argv[argv.index("--metrics") + 1].split(",") == list(ENGINE_METRICS)
    monkeypatch.setenv(SET_ENV, "full")
    assert targeted_args() == ["--set", "full"]
    monkeypatch.setenv(SET_ENV, "everything")
    with pytest.raises(UsageError, match=SET_ENV):
        targeted_args()


def test_live_asks_profiled_each_kernel_in_at_most_15_passes_and_read_its_sass():
    """The live H200 transcripts recorded with the default request: every profiled launch took <= 15 replay passes
    (issue 9's goal), one ncu run per ask, and the SASS step found the kernel's code in that report."""
    import json
    from pathlib import Path
    files = sorted((Path(__file__).parents[2] / "transcripts").glob("live-h200-ot-*.jsonl"))
    assert len(files) == 5
    for f in files:
        events = [json.loads(ln) for ln in f.read_text().splitlines()[1:]]
        results = {e["name"]: e["content"] for e in events if e.get("event") == "tool_result" and not e.get("is_error")}
        passes = results["kernel_profile"]["replay_passes"]
        assert passes and max(passes) <= 15, f.name
        assert len(results["kernel_profile"]["reports"]) == 1
        assert sum(results["sass"]["opcode_counts"].values()) > 0, f.name
