"""Compute-side mechanisms: matrix work off the tensor cores, divergent warps, and instruction issue that is not
the useful math."""
from __future__ import annotations

from typing import Optional

from ...answer import Evidence, Finding, Fix, Roofline
from ...artifacts.tables import KernelProfile
from ...catalog import CATALOG, GEMM_NAME
from ...display import duration, flop_rate, quantity
from ...kernel_name import KernelName
from ..roofline import fp32_tensor_alternative
from .counters import DIVERGENCE, FMA_ACTIVE, INST, SHARED_LD_INST, SM_SOL, TENSOR_ACTIVE
from .evidence import ev, gap_text
from .stalls import next_look, stall_words

# Tensor pipe under this % of peak = the tensor cores are not doing the matrix work.
TENSOR_IDLE_PCT = 5.0
# FP32 FLOPs per DRAM byte above which FMA work is matrix-like (the H100/H200 FP32 ridge is ~14-20).
GEMM_MIN_INTENSITY = 20.0
# Shared-memory loads per instruction above which the kernel is tiling through shared memory.
GEMM_SHARED_LD_FRACTION = 0.05
# Active threads per warp instruction below half a warp: divergence halves throughput or worse.
DIVERGENCE_MAX_ACTIVE = 16.0
# SM throughput at which instruction issue, not memory, is the limiter.
COMPUTE_BOUND_SOL = 60.0


def detect_no_tensor_cores(k: KernelProfile, r: Optional[Roofline]) -> Optional[Finding]:
    if r is None or r.math_path != "fp32" or not r.flops:
        return None
    tensor = k.get(TENSOR_ACTIVE)
    if tensor is None:  # "the tensor cores sit idle" needs their activity measured, never assumed 0
        return None
    intensity = r.arithmetic_intensity if r.arithmetic_intensity is not None else float("inf")
    inst = k.get(INST) or 0.0
    shared_ld = k.get(SHARED_LD_INST) or 0.0
    tiled = inst > 0 and shared_ld / inst >= GEMM_SHARED_LD_FRACTION
    # Matrix-like: named as a GEMM/matmul, or tiled through shared memory at high arithmetic intensity.
    # (Measured intensity alone can be low for a GEMM with small tiles that re-reads its operands.)
    gemm_like = bool(GEMM_NAME.search(k.name)) or (tiled and intensity >= GEMM_MIN_INTENSITY)
    if tensor >= TENSOR_IDLE_PCT or not gemm_like:
        return None
    tf32 = fp32_tensor_alternative(k)
    frac = r.achieved_flops / r.peak_flops
    fix_gain = f"up to ~{tf32 / r.peak_flops:.0f}x more math throughput" if tf32 else "several-fold"
    return Finding(
        bound="compute", mechanism="no_tensor_cores", kernel=k.name,
        bottleneck=(f"`{KernelName(k.name).display(60)}` does matrix multiplication on the FP32 FMA pipe at {flop_rate(r.achieved_flops)} "
                    f"({frac:.0%} of the FP32 ceiling) while the tensor cores sit idle."),
        evidence=[
            ev(k, TENSOR_ACTIVE, "%", f"tensor pipes active {tensor:.2f}% of peak: no tensor-core work"),
            Evidence(metric="derived.fp32_flops_per_second", value=r.achieved_flops, unit="flop/s", artifact=k.source,
                     kernel=k.name, meaning=f"{quantity(r.flops, 'flop')} in {duration(r.duration_ns)}, "
                                            f"against an FP32 ceiling of {flop_rate(r.peak_flops)}"),
            ev(k, FMA_ACTIVE, "%", "FMA pipe busy: the FP32 path is where the time goes"),
        ],
        explanation=(("Its measured DRAM traffic is inflated (small tiles re-read the operands: only "
                      f"{intensity:.0f} FLOP per DRAM byte), so " if r.limiter == "memory" else
                      f"Its arithmetic intensity ({intensity:.0f} FLOP per DRAM byte) puts it right of the ridge; ")
                     + f"{gap_text(r)} on the FP32 path. But FP32 FMA is "
                     f"the slowest path for matrix products on this GPU: the tensor cores offer "
                     + (f"{flop_rate(tf32)} in TF32 and about twice that in BF16/FP16. " if tf32 else
                        "several times the FP32 rate in TF32, and about twice that in BF16/FP16. ")
                     + "The true ceiling for this work is the tensor path, so the gap to it is several times the FP32 "
                       "gap."),
        fix=Fix(change=CATALOG["no_tensor_cores"].fix_text(),
                metric=TENSOR_ACTIVE, direction="increase",
                expected=f"tensor pipe from ~0% to well above 50%; kernel time down by {fix_gain}",
                current_value=tensor),
        confidence=0.85,
    )


def detect_warp_divergence(k: KernelProfile, r: Optional[Roofline]) -> Optional[Finding]:
    active = k.get(DIVERGENCE)
    sm = k.get(SM_SOL) or 0.0
    if active is None or active >= DIVERGENCE_MAX_ACTIVE or sm < COMPUTE_BOUND_SOL:
        return None
    return Finding(
        bound="compute", mechanism="warp_divergence", kernel=k.name, roofline=r,
        bottleneck=(f"`{KernelName(k.name).display(60)}` is instruction-bound with divergent warps: on average only {active:.1f} of 32 "
                    f"threads are active per executed instruction."),
        evidence=[
            ev(k, DIVERGENCE, "threads/inst", f"{active:.1f} active threads per warp instruction (32 = no divergence)"),
            ev(k, SM_SOL, "%", "SM throughput: instruction issue is the busy resource"),
            ev(k, INST, "inst", "warp instructions executed"),
        ],
        explanation=(f"Threads of one warp take different branches, so the warp executes every path in turn with the "
                     f"other lanes masked off: the SM issues ~{32 / active:.0f}x the instructions the work needs and is "
                     f"saturated doing it; {gap_text(r)}."),
        fix=Fix(change=CATALOG["warp_divergence"].fix_text(),
                metric=DIVERGENCE, direction="increase",
                expected=f"from {active:.1f} toward 32 active threads per instruction; warp instructions and kernel "
                         f"time down by up to ~{32 / active:.0f}x", current_value=active, target_value=32.0),
        confidence=0.85,
    )


def detect_instruction_bound(k: KernelProfile, r: Optional[Roofline]) -> Optional[Finding]:
    sm = k.get(SM_SOL)
    if sm is None or sm < COMPUTE_BOUND_SOL:
        return None
    return Finding(
        bound="compute", mechanism="instruction_bound", kernel=k.name, roofline=r,
        bottleneck=f"`{KernelName(k.name).display(60)}` is bound by instruction issue ({sm:.0f}% SM throughput) without reaching its roofline.",
        evidence=[ev(k, SM_SOL, "%", "SM throughput"), ev(k, INST, "inst", "warp instructions executed"),
                  ev(k, FMA_ACTIVE, "%", "FMA pipe activity")],
        explanation=(f"The SMs are busy issuing instructions that are not the useful floating-point work counted by "
                     f"the roofline (index arithmetic, conversions, special functions, control flow); {gap_text(r)}."
                     + stall_words(k)),
        fix=Fix(change=CATALOG["instruction_bound"].fix_text(),
                metric=INST, direction="decrease", expected="proportional drop in kernel time", current_value=k.get(INST)),
        confidence=0.5, missing=next_look(k, "the instructions that dominate"),
    )
