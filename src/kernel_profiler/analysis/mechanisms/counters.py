"""The Nsight Compute metric names the mechanism detectors read (sm_90, ncu 2025.x), and the speed-of-light
throughputs of one kernel."""
from __future__ import annotations

from ...artifacts.tables import KernelProfile

SM_SOL = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
MEM_SOL = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
DRAM_SOL = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"
L1_SOL = "l1tex__throughput.avg.pct_of_peak_sustained_active"
TENSOR_ACTIVE = "sm__pipe_tensor_cycles_active.sum.pct_of_peak_sustained_elapsed"
FMA_ACTIVE = "sm__pipe_fma_cycles_active.sum.pct_of_peak_sustained_active"
INST = "smsp__inst_executed.sum"
DIVERGENCE = "smsp__thread_inst_executed_per_inst_executed.ratio"
LD_BYTES_PER_SECTOR = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"
ST_BYTES_PER_SECTOR = "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio"
LD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
LD_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
ST_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
LOCAL_LD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum"
LOCAL_ST_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum"
LOCAL_SPILL = "derived__local_spilling_requests"
SHARED_LD_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
SHARED_ST_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
SHARED_LD_INST = "smsp__sass_inst_executed_op_shared_ld.sum"
SHARED_ST_INST = "smsp__sass_inst_executed_op_shared_st.sum"
BANK_CONFLICTS_LD = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
BANK_CONFLICTS_ST = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
GLOBAL_ST_INST = "smsp__sass_inst_executed_op_global_st.sum"
ATOMIC_REQUESTS = ("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum")
L2_ATOMIC_SECTORS = ("lts__t_sectors_srcunit_tex_op_atom.sum", "lts__t_sectors_srcunit_tex_op_red.sum")
GRID = "launch__grid_size"
SM_COUNT = "launch__sm_count"
OCC_THEORETICAL = "sm__maximum_warps_per_active_cycle_pct"
OCC_ACHIEVED = "sm__warps_active.avg.pct_of_peak_sustained_active"
OCC_LIMITS = {
    "registers": "launch__occupancy_limit_registers",
    "shared memory": "launch__occupancy_limit_shared_mem",
    "warps per block": "launch__occupancy_limit_warps",
    "blocks per SM": "launch__occupancy_limit_blocks",
    "barriers": "launch__occupancy_limit_barriers",
}
REGISTERS = "launch__registers_per_thread"
SMEM_DYNAMIC = "launch__shared_mem_per_block_dynamic"
SMEM_STATIC = "launch__shared_mem_per_block_static"
STALL = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"


def sol(k: KernelProfile) -> dict[str, float]:
    """The speed-of-light throughputs (% of peak) the report holds: sm, memory, dram."""
    return {n: v for n, v in (("sm", k.get(SM_SOL)), ("memory", k.get(MEM_SOL)), ("dram", k.get(DRAM_SOL))) if v is not None}
# L2 read-miss sectors by the aperture they go to: system memory (host memory over PCIe) or the GPU's own DRAM.
SYSMEM_READ_SECTORS = "lts__t_sectors_srcunit_tex_aperture_sysmem_op_read_lookup_miss.sum"
DEVICE_READ_SECTORS = "lts__t_sectors_srcunit_tex_aperture_device_op_read_lookup_miss.sum"
SYSMEM_SECTORS = "lts__t_sectors_aperture_sysmem_lookup_miss.sum"  # every unit, reads and writes (older sections)
DEVICE_SECTORS = "lts__t_sectors_aperture_device_lookup_miss.sum"
PCIE_READ_RATE = "pcie__read_bytes.sum.per_second"
