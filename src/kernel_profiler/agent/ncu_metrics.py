"""What a live `ask` asks Nsight Compute for first: the metrics the engine reads, not whole section sets.

Measured on the H200 (bench/ncu_passes.py, 2026-11-30): ncu's seven targeted sections (SpeedOfLight,
MemoryWorkloadAnalysis, ComputeWorkloadAnalysis, LaunchStats, Occupancy, WarpStateStats, SourceCounters)
took 22 replay passes and did not carry the counters the mechanisms need (the engine named none); with
the memory tables, instruction and scheduler sections added, 36 passes; `--set full`, 38; every metric name
in the engine's source plus the whole tensor/stall families (119 metrics), 21 (23 with SourceCounters). So
the first pass asks for exactly the metrics the engine reads (this list: the metrics its detectors,
roofline and evidence read on 22 real suite reports, found by recording every lookup, plus the dense
tensor-pipe family the roofline scans; tests/agent/test_ncu_metrics.py checks that every suite report cut
down to this list still names its mechanism), with LaunchStats and Occupancy (launch attributes, no replay).
SourceCounters is not asked for: it cost 2 passes (16 instead of 14) only to put the kernel's SASS in the
report, and the report carries the kernel's code without it: `artifacts.ncu_report.load_sass` walks it from
the entry address LaunchStats records (launch__function_pcs), so the SASS step works for library kernels too.
The full set is the fallback when this cannot name a mechanism. Passes measured for this choice: bench/README.md.
`KERNEL_PROFILER_NCU_SET=full` (or another ncu set name) makes the first request that set instead (the
baseline bench/ask_time.py measures).
"""
from __future__ import annotations

import os

from ..errors import UsageError

TARGETED_SECTIONS: tuple[str, ...] = ("LaunchStats", "Occupancy")
SET_ENV = "KERNEL_PROFILER_NCU_SET"
NCU_SETS = ("basic", "detailed", "full", "roofline")

ENGINE_METRICS: tuple[str, ...] = (
    "dram__bytes.sum.peak_sustained",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "dram__cycles_elapsed.avg.per_second",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__time_duration.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
    "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "sm__cycles_elapsed.avg.per_second",
    "sm__maximum_warps_per_active_cycle_pct",
    "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum",
    "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained",
    "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum",
    "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum.peak_sustained",
    "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum",
    "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum.peak_sustained",
    "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum",
    "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained",
    "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp16_sparsity_off.sum",
    "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp16_sparsity_off.sum.peak_sustained",
    "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum",
    "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum.peak_sustained",
    "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32_sparsity_off.sum",
    "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32_sparsity_off.sum.peak_sustained",
    "sm__ops_path_tensor_op_igmma_src_int8_sparsity_off.sum",
    "sm__ops_path_tensor_op_igmma_src_int8_sparsity_off.sum.peak_sustained",
    "sm__ops_path_tensor_op_imma_src_int8_sparsity_off.sum",
    "sm__ops_path_tensor_op_imma_src_int8_sparsity_off.sum.peak_sustained",
    "sm__pipe_fma_cycles_active.sum.pct_of_peak_sustained_active",
    "sm__pipe_tensor_cycles_active.sum.pct_of_peak_sustained_elapsed",
    "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio",
    "smsp__cycles_elapsed.avg",
    "smsp__inst_executed.sum",
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio",
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio",
    "smsp__sass_inst_executed_op_global_st.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum",
    "smsp__sass_inst_executed_op_shared_st.sum",
    "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum.per_cycle_elapsed",
    "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum.per_cycle_elapsed",
    "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum.per_cycle_elapsed",
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed",
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum.per_cycle_elapsed",
    "smsp__thread_inst_executed_per_inst_executed.ratio",
)


def targeted_args() -> list[str]:
    """ncu arguments of the first, targeted request (or `--set NAME` when KERNEL_PROFILER_NCU_SET names one)."""
    forced = os.environ.get(SET_ENV, "").strip()
    if forced and forced != "targeted":
        if forced not in NCU_SETS:
            raise UsageError(f"{SET_ENV}={forced!r}: expected one of targeted, {', '.join(NCU_SETS)}")
        return ["--set", forced]
    return [x for s in TARGETED_SECTIONS for x in ("--section", s)] + ["--metrics", ",".join(ENGINE_METRICS)]
