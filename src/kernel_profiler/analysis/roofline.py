"""Roofline of one profiled kernel: work done on the path it really uses, ceilings, floor, gap.

Pure functions over a KernelProfile's metrics. The math path is chosen from
what the kernel executed: tensor-core ops (HGMMA/HMMA op counters) if any,
otherwise FP64 or FP32 thread instructions from the SASS counters. Ceilings
come from the report's own peak-sustained metrics at the clock the kernel ran
at; the per-GPU table (devices.py) is the fallback.

Two floors: the time at the measured traffic (the DRAM bytes the kernel moved)
and the time for the bytes the work needs (`needed_bytes`): the smallest of the
DRAM bytes moved, the bytes its threads asked for (useful bytes per sector x
sectors, global loads and stores through L1) and the device memory allocated
when it ran, each byte moved once (ncu's replay footprint). A kernel that reads
its input three times, or fetches 32-byte sectors for 4 useful bytes, moves
more than it needs; its gap is stated against the needed floor.
"""
from __future__ import annotations

from typing import Optional

from ..artifacts.tables import KernelProfile
from ..devices import lookup
from ..answer import Roofline

DURATION = "gpu__time_duration.sum"
DRAM_READ = "dram__bytes_read.sum"
DRAM_WRITE = "dram__bytes_write.sum"
SM_CLOCK = "sm__cycles_elapsed.avg.per_second"
DRAM_CLOCK = "dram__cycles_elapsed.avg.per_second"
SMSP_CYCLES = "smsp__cycles_elapsed.avg"
DRAM_PEAK = "dram__bytes.sum.peak_sustained"
FP32_OPS = {"fadd": 1, "fmul": 1, "ffma": 2}
FP64_OPS = {"dadd": 1, "dmul": 1, "dfma": 2}
TENSOR_PREFIX = "sm__ops_path_tensor_op_"
# Global loads/stores through L1 and the useful bytes each sector delivered.
LD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
ST_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
LD_BYTES_PER_SECTOR = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"
ST_BYTES_PER_SECTOR = "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio"
ATOMIC_SECTORS = ("l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum")
# Traffic that bypasses those counters (TMA, cp.async): the requested-bytes bound is not used then.
BYPASS = ("l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum",
          "sm__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum",
          "l1tex__m_l1tex2xbar_write_bytes_mem_global_op_tma_st.sum")
# Device memory ncu saved and restored to replay the kernel: everything allocated when it ran.
FOOTPRINT = ("profiler__replayer_bytes_mem_accessible.avg", "profiler__replayer_bytes_mem_accessible.max")
SECTOR_BYTES = 32.0


def _thread_inst(k: KernelProfile, op: str) -> Optional[float]:
    """Thread instructions executed for one SASS op, from the per-cycle rate (all ncu exposes)."""
    total = k.get(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum")
    if total is not None:
        return total
    rate = k.get(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum.per_cycle_elapsed")
    cycles = k.get(SMSP_CYCLES)
    if rate is None or cycles is None:
        return None
    return rate * cycles


def flops(k: KernelProfile, ops: dict[str, int]) -> Optional[float]:
    vals = [(_thread_inst(k, op), w) for op, w in ops.items()]
    if all(v is None for v, _ in vals):
        return None
    return sum((v or 0.0) * w for v, w in vals)


def tensor_ops(k: KernelProfile) -> tuple[float, Optional[str]]:
    """Largest tensor-core op count among the op-path counters, and its metric name."""
    best, name = 0.0, None
    for m, v in k.metrics.items():
        if m.startswith(TENSOR_PREFIX) and m.endswith(".sum") and v and v > best:
            best, name = v, m
    return best, name


def _path_label(metric: str) -> str:
    # sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum -> "bf16 tensor (hgmma)"
    rest = metric[len(TENSOR_PREFIX):].removesuffix(".sum")
    inst = rest.split("_")[0]
    src = rest.split("_src_")[1].split("_")[0] if "_src_" in rest else "?"
    return f"{src} tensor ({inst})"


def ceilings(k: KernelProfile) -> tuple[dict[str, float], str]:
    """FLOP/s per path and DRAM byte/s, and where they came from."""
    clock = k.get(SM_CLOCK)
    out: dict[str, float] = {}
    src = []
    if clock:
        ffma = k.get("sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained")
        dfma = k.get("sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained")
        if ffma:
            out["fp32"] = 2 * ffma * clock
        if dfma:
            out["fp64"] = 2 * dfma * clock
        for m, v in k.metrics.items():
            if m.startswith(TENSOR_PREFIX) and m.endswith(".sum.peak_sustained") and v:
                out[m.removesuffix(".peak_sustained")] = v * clock
        src.append(f"ncu peak-sustained at the measured {clock / 1e9:.2f} GHz SM clock")
    dram_peak, dram_clock = k.get(DRAM_PEAK), k.get(DRAM_CLOCK)
    if dram_peak and dram_clock:
        out["dram"] = dram_peak * dram_clock
    spec = lookup(k.device)
    if spec and ("fp32" not in out or "dram" not in out):
        out.setdefault("fp32", spec.fp32)
        out.setdefault("fp64", spec.fp64)
        out.setdefault("dram", spec.dram_bandwidth)
        src.append(f"datasheet table ({spec.name})")
    return out, "; ".join(src) or "none"


def requested_bytes(k: KernelProfile) -> Optional[float]:
    """Bytes the threads asked for in global loads and stores (useful bytes per sector x sectors), or None
    when the counters are missing or some traffic bypasses them (TMA, cp.async)."""
    if any(k.get(m) for m in BYPASS):
        return None
    total = 0.0
    for sectors, per_sector in ((LD_SECTORS, LD_BYTES_PER_SECTOR), (ST_SECTORS, ST_BYTES_PER_SECTOR)):
        n, b = k.get(sectors), k.get(per_sector)
        if n is None:
            return None
        if n and b is None:
            return None
        total += n * (b or 0.0)
    total += sum((k.get(m) or 0.0) for m in ATOMIC_SECTORS) * SECTOR_BYTES  # atomics: whole sectors
    return total


def footprint_bytes(k: KernelProfile) -> Optional[float]:
    """Device memory allocated when the kernel ran (ncu's replay footprint), if the report has it."""
    for m in FOOTPRINT:
        v = k.get(m)
        if v:
            return v
    return None


def needed_bytes(k: KernelProfile, dram_bytes: float) -> tuple[float, str]:
    """The bytes the work needs to move, and which bound set it (see the module docstring)."""
    cands = [(dram_bytes, "the DRAM bytes it moved")]
    req = requested_bytes(k)
    if req:
        cands.append((req, "the bytes its threads requested (useful bytes per sector x sectors)"))
    fp = footprint_bytes(k)
    if fp:
        cands.append((fp, "the device memory allocated when it ran, each byte moved once"))
    return min(cands, key=lambda c: c[0])


def roofline(k: KernelProfile) -> Optional[Roofline]:
    """The kernel's floor and gap, or None when duration or ceilings are missing."""
    duration = k.get(DURATION)
    ceil, source = ceilings(k)
    if not duration or "dram" not in ceil or k.get(DRAM_READ) is None or k.get(DRAM_WRITE) is None:
        return None
    dram_bytes = k.get(DRAM_READ) + k.get(DRAM_WRITE)
    t_ops, t_metric = tensor_ops(k)
    candidates = []  # (time at ceiling, path label, flops, peak)
    if t_metric and t_metric in ceil:
        candidates.append((t_ops / ceil[t_metric], _path_label(t_metric), t_ops, ceil[t_metric]))
    for path, ops in (("fp32", FP32_OPS), ("fp64", FP64_OPS)):
        f = flops(k, ops)
        if f and path in ceil:
            candidates.append((f / ceil[path], path, f, ceil[path]))
    if candidates:
        t_math, path, work, peak = max(candidates, key=lambda c: c[0])
    else:
        t_math, path, work, peak = 0.0, "none", 0.0, ceil.get("fp32", 0.0)
    t_mem = dram_bytes / ceil["dram"]
    floor = max(t_math, t_mem) * 1e9
    if floor <= 0:
        return None
    seconds = duration / 1e9
    need, need_src = needed_bytes(k, dram_bytes)
    t_need = need / ceil["dram"]
    need_floor = max(t_math, t_need) * 1e9
    return Roofline(
        kernel=k.name, math_path=path, flops=work, dram_bytes=dram_bytes, duration_ns=duration,
        arithmetic_intensity=(work / dram_bytes) if dram_bytes else None, peak_flops=peak,
        peak_bandwidth=ceil["dram"], ceiling_source=source, achieved_flops=work / seconds,
        achieved_bandwidth=dram_bytes / seconds, floor_ns=floor, gap=duration / floor,
        limiter="compute" if t_math >= t_mem else "memory",
        needed_bytes=need, needed_source=need_src, needed_floor_ns=need_floor, needed_gap=duration / need_floor,
        needed_limiter="compute" if t_math >= t_need else "memory",
    )


def fp32_tensor_alternative(k: KernelProfile) -> Optional[float]:
    """FLOP/s the tensor cores offer for work now done in FP32 (TF32 path), if known."""
    for m, v in k.metrics.items():
        if m.startswith(TENSOR_PREFIX) and "_src_tf32" in m and m.endswith(".sum.peak_sustained") and v:
            clock = k.get(SM_CLOCK)
            return v * clock if clock else None
    spec = lookup(k.device)
    return spec.tf32_tensor if spec else None
