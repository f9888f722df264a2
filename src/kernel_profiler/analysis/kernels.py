"""Kernel analysis: roofline plus mechanism detection for every profiled kernel,
ranked by the share of GPU time the timeline gives it, and the program-level
check for work split over many memory-streaming kernels (excess DRAM traffic).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

import pandas as pd

from ..artifacts.tables import KernelProfile, ResourceUsage, SassFunction
from ..catalog import CATALOG, TENSOR_OPS
from ..answer import Evidence, Finding, Fix, Roofline
from ..display import duration, short_name, size
from .mechanisms import detect
from .mechanisms import fallback as mech_fallback
from .roofline import DURATION, roofline

# Program-level excess DRAM traffic: at least this many distinct memory-streaming kernels...
EXCESS_MIN_KERNELS = 3
# ...each within this factor of its DRAM roofline (they stream efficiently; the waste is the passes)...
EXCESS_STREAMING_GAP = 2.0
# ...with at most this arithmetic intensity (FLOP per DRAM byte: elementwise work)...
EXCESS_MAX_INTENSITY = 1.0
# ...that together take at least this share of GPU time.
EXCESS_MIN_SHARE = 0.5


def kernel_key(name: str) -> str:
    """Comparable kernel identity across formats: function name without 'void', arguments and spaces."""
    n = re.sub(r"^void\s+", "", (name or "").strip())
    depth = 0
    for i, ch in enumerate(n):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth <= 0:
            n = n[:i]
            break
    return re.sub(r"\s+", "", n)


_CAST = re.compile(r"\((?:unsigned |signed )?(?:int|long|long long|short|char|bool|size_t)\)(?=-?\d)")
_ANON = re.compile(r"\(anonymous ?namespace\)|<unnamed>|\{anonymous\}")
_LAMBDA = re.compile(r"\[lambda\(([^)]*)\)\s*\(instance\s*(\d+)\)\]")
_PARENS = re.compile(r"\([^()]*\)")
_INT_SUFFIX = re.compile(r"(?<=[<,\s])(-?\d+)(?:ull|llu|ul|lu|ll|u|l)\b", re.IGNORECASE)


def norm_key(name: str) -> str:
    """kernel_key made comparable across nsys, ncu and Kineto spellings of template arguments.

    Drops `void`, integer casts `(int)4` and suffixes `2ul`, unifies anonymous namespaces and lambda
    spellings (`{lambda(float)#2}` vs `[lambda(float) (instance 2)]`), then removes every parenthesized
    list left inside the key (parameter types are spelled `float` by one tool and `T2` by another).
    """
    n = re.sub(r"\bvoid\s+", "", name or "")
    n = _CAST.sub("", n)
    n = _ANON.sub("anon", n)
    n = _INT_SUFFIX.sub(r"\1", n)
    n = _LAMBDA.sub(r"{lambda(\1)#\2}", n)
    k = kernel_key(n)
    prev = None
    while prev != k:
        prev, k = k, _PARENS.sub("", k)
    return k


def base_name(name: str) -> str:
    """The function's base name: no namespace, template arguments or parameters."""
    return re.split(r"[<(]", kernel_key(name))[0].split("::")[-1]


def display_name(name: str, width: int = 70) -> str:
    """Kernel name for people (display.short_name): shortened with an ellipsis, never cut silently."""
    return short_name(name, width)


@dataclass
class KernelAnalysis:
    profile: KernelProfile
    roofline: Optional[Roofline]
    findings: list[Finding]
    share: Optional[float]  # of steady-state GPU time, from the timeline
    duration_ns: float = 0.0
    sass: Optional[SassFunction] = None
    resources: list[ResourceUsage] = field(default_factory=list)


def dedupe(profiles: list[KernelProfile]) -> list[KernelProfile]:
    """The same launches read from a .ncu-rep and its CSV exports count once.

    For each kernel, profiles are taken from the one source file that holds the
    most metrics for it (the .ncu-rep over its CSV pages).
    """
    def base(k: KernelProfile) -> str:  # formats spell template arguments differently; compare the function
        return base_name(k.name)

    richness: dict[tuple[str, str], int] = {}
    for k in profiles:
        key = (base(k), k.source)
        richness[key] = max(richness.get(key, 0), len(k.metrics))
    best_source: dict[str, str] = {}
    for (name, source), n in richness.items():
        if name not in best_source or n > richness[(name, best_source[name])]:
            best_source[name] = source
    return [k for k in profiles if best_source.get(base(k)) == k.source]


def shares_from_timeline(ranked: Optional[pd.DataFrame]) -> dict[str, float]:
    if ranked is None or len(ranked) == 0:
        return {}
    keys = ranked["name"].map(lambda n: norm_key(str(n)))  # nsys, Kineto and ncu spell templates differently
    return ranked.groupby(keys)["share"].sum().to_dict()


def analyze_kernels(profiles: list[KernelProfile], ranked: Optional[pd.DataFrame],
                    sass: list[SassFunction], resources: list[ResourceUsage]) -> list[KernelAnalysis]:
    shares = shares_from_timeline(ranked)
    out = []
    for k in dedupe(profiles):
        r = roofline(k)
        key = kernel_key(k.name)
        fn = next((s for s in sass if kernel_key(s.name) == key or getattr(s, "mangled", None) == k.mangled), None)
        res = [u for u in resources if kernel_key(u.name) == key or getattr(u, "mangled", None) == k.mangled]
        ka = KernelAnalysis(profile=k, roofline=r, findings=detect(k, r), share=shares.get(norm_key(k.name)),
                            duration_ns=k.get(DURATION) or 0.0, sass=fn, resources=res)
        for f in ka.findings:
            f.share = ka.share
            if r is None:  # no floor: the mechanism is not tied to a measured gap
                f.confidence = round(f.confidence * 0.7, 3)
                f.missing = f.missing + [m for m in ("gpu__time_duration.sum", "dram__bytes_read.sum",
                                                     "dram__bytes_write.sum", "dram__bytes.sum.peak_sustained")
                                         if k.get(m) is None]
        fit_advice(ka)
        confirm_with_sass(ka)
        confirm_with_ncu_rules(ka)
        out.append(ka)
    # Rank by timeline share when known, else by profiled duration.
    total = sum(a.duration_ns for a in out) or 1.0
    for a in out:
        if a.share is None:
            a.share = a.duration_ns / total
            for f in a.findings:
                f.share = a.share
    return sorted(out, key=lambda a: -(a.share or 0.0))


# --- Advice that fits the kernel ---
# Low parallelism is not a lever for a kernel this short (a few microseconds: the grid is sized by a tiny problem,
# launch latency dominates) or this small a share of GPU time, nor for communication kernels (NCCL sizes its grid
# by channels, not by the SM count).
FEW_US_NS = 10_000.0
NEGLIGIBLE_SHARE = 0.01
COMMS_KERNEL = re.compile(r"nccl", re.IGNORECASE)
# Kernels the user does not write: vendor libraries, ATen, CUB, and code generated by torch.compile/Inductor.
# Their fixes are at the call site (shape, dtype, layout, a fused op, a different API), never in the kernel.
LIBRARY_KERNEL = re.compile(r"nvjet|xmma|cutlass|cublas|cudnn|cusparse|cufft|nccl|\bat::|at::native|\bcub::|"
                            r"^triton_(poi|red|per|tem)_|flash|gemv|sm\d\d_", re.IGNORECASE)


def is_library_kernel(name: str) -> bool:
    return bool(LIBRARY_KERNEL.search(name))


def fit_advice(ka: "KernelAnalysis") -> None:
    """Drop advice that does not fit the kernel; move library kernels' fixes to the call site."""
    name = ka.profile.name
    tiny = (ka.duration_ns and ka.duration_ns < FEW_US_NS) or (ka.share is not None and ka.share < NEGLIGIBLE_SHARE)
    if tiny or COMMS_KERNEL.search(name):
        kept = [f for f in ka.findings if f.mechanism != "low_parallelism"]
        if len(kept) != len(ka.findings):
            ka.findings = kept or [mech_fallback(ka.profile, ka.roofline)]
    if is_library_kernel(name):
        for f in ka.findings:
            e = CATALOG.get(f.mechanism or "")
            if f.fix is not None and e is not None and "library" in e.fixes:
                f.fix.change = e.fix_text("library", kernel=kernel_key(name))


def excess_dram_traffic(analyses: list[KernelAnalysis]) -> Optional[Finding]:
    """Several elementwise kernels each streaming near DRAM bandwidth: the waste is the number of passes."""
    streaming = [a for a in analyses if a.roofline and a.roofline.limiter == "memory"
                 and a.roofline.gap <= EXCESS_STREAMING_GAP
                 and (a.roofline.arithmetic_intensity or 0.0) <= EXCESS_MAX_INTENSITY]
    names = {kernel_key(a.profile.name) + str(a.profile.launch_id) for a in streaming}
    # Several launches of one kernel share its timeline share: count each kernel once.
    share = sum({kernel_key(a.profile.name): a.share or 0.0 for a in streaming}.values())
    if len(names) < EXCESS_MIN_KERNELS or share < EXCESS_MIN_SHARE:
        return None
    total_bytes = sum(a.roofline.dram_bytes for a in streaming)
    biggest = max(a.roofline.dram_bytes for a in streaming)
    passes = total_bytes / biggest if biggest else float(len(streaming))
    total_ns = sum(a.duration_ns for a in streaming)
    src = streaming[0].profile.source
    return Finding(
        bound="memory", mechanism="excess_dram_traffic", share=share,
        bottleneck=(f"The work is split over {len(streaming)} elementwise kernels that each stream the data through "
                    f"DRAM: {size(total_bytes)} moved where about {size(biggest)} (one pass) would do."),
        evidence=[
            Evidence(metric="derived.streaming_kernels", value=len(streaming), unit="count", artifact=src,
                     meaning="memory-bound elementwise kernels, each within 2x of its DRAM roofline"),
            Evidence(metric="derived.streaming_dram_bytes", value=total_bytes, unit="byte",
                     artifact=src, meaning=f"DRAM bytes moved by these kernels together (~{passes:.1f} passes)"),
            Evidence(metric="derived.streaming_duration_ns", value=total_ns, unit="ns", artifact=src,
                     meaning=f"their combined duration, {share:.0%} of GPU time"),
        ],
        explanation=("Each kernel is individually efficient (close to DRAM bandwidth), so no single kernel looks "
                     "wrong; the waste is structural: every intermediate result is written to DRAM and read back "
                     f"by the next kernel, about {passes:.1f}x the bytes one fused pass needs. Memory-bound time "
                     "scales with bytes moved."),
        fix=Fix(change=CATALOG["excess_dram_traffic"].fix_text(),
                metric="derived.streaming_dram_bytes", direction="decrease",
                expected=f"about {passes:.0f}x fewer DRAM bytes; time from {duration(total_ns)} toward "
                         f"{duration(total_ns / max(passes, 1))}", current_value=total_bytes, target_value=biggest),
        confidence=0.8,
    )


def confirm_with_ncu_rules(a: KernelAnalysis) -> None:
    """Say when ncu's own guided analysis points at the same mechanism (a second, independent opinion)."""
    f = a.findings[0]
    e = CATALOG.get(f.mechanism or "")
    ids = e.ncu_rules if e is not None else ()
    hits = [r for r in a.profile.rules if r.get("id") in ids and r.get("speedup")]
    if hits:
        best = max(hits, key=lambda r: float(r["speedup"]))
        f.explanation += (f" ncu's own guided analysis agrees: rule {best['id']} estimates up to "
                          f"{float(best['speedup']):.0f}% speedup.")


def confirm_with_sass(a: KernelAnalysis) -> None:
    """Let SASS and compiler output confirm or refute the primary mechanism of a kernel."""
    f = a.findings[0]
    fn, res = a.sass, a.resources
    ops = fn.opcode_counts if fn else {}

    def count(*prefixes: str) -> int:
        return sum(v for op, v in ops.items() if op.startswith(prefixes))

    e = CATALOG.get(f.mechanism or "")
    n = count(*e.sass) if e is not None and e.sass and fn else None  # the opcodes the catalog says confirm it
    ev: Optional[Evidence] = None
    if n is not None:
        ev = Evidence(metric=e.sass_metric, value=n, unit="instructions", artifact=fn.source, kernel=fn.name, meaning="")
    if f.mechanism == "local_memory_spill":
        if ev is not None:
            ev.meaning = f"{n} local-memory instructions in the kernel's SASS"
            f.confidence = min(1.0, f.confidence + 0.1) if n else f.confidence - 0.3
        stack = next((u for u in res if u.stack_bytes), None)
        if stack:
            spill = stack.spill_store_bytes or 0
            f.explanation += (f" The compiler reports a {stack.stack_bytes}-byte stack frame"
                              + (f" and {spill} bytes of spill stores" if spill else " and no spills: an indexed array, not register pressure")
                              + f" ({stack.source}).")
    elif ev is None:
        return
    elif f.mechanism == "atomic_contention":
        ev.meaning = f"{n} global atomic instructions (RED/ATOM) in the SASS"
        f.confidence = min(1.0, f.confidence + 0.05) if n else f.confidence - 0.3
    elif f.mechanism == "no_tensor_cores":
        mma = count(*TENSOR_OPS)
        ev.meaning = f"{n} FFMA and {mma} tensor-core (HMMA/HGMMA) instructions in the SASS"
        f.confidence = min(1.0, f.confidence + 0.05) if mma == 0 else f.confidence - 0.4
    elif f.mechanism == "shared_bank_conflict":
        ev.meaning = f"{n} shared-memory instructions in the SASS"
    elif f.mechanism == "uncoalesced_global":
        ev.meaning = (f"{n} global load{'s' if n != 1 else ''}, as "
                      + ", ".join(sorted({i for i in fn.instructions if i.startswith('LDG')}))[:80])
    if ev is not None:
        f.evidence = f.evidence[:2] + [ev]


def confirm_with_telemetry(f: Finding, telemetry: list[dict]) -> None:
    """NVML samples recorded with the captures (kernel-profiler telemetry) that show the GPU power- or
    thermally throttled while busy: the kernel's ceilings are at the clock it ran at, so say what held the
    clock down (evidence the captures already hold, next to a kernel finding)."""
    from pathlib import Path

    from ..display import fraction
    from ..telemetry import clock_throttling

    if f.kernel is None or f.roofline is None or not telemetry:
        return
    th = clock_throttling(telemetry)
    if th is None:
        return
    src, why = th["source"], ", ".join(th["reasons"])
    kind = "power-capped" if th["power"] else "thermally throttled"
    ev_share = Evidence(metric="telemetry.throttled_sample_fraction", value=round(th["share"], 4), unit="ratio",
                        artifact=src, meaning=f"{th['throttled']} of {th['busy']} busy NVML samples report {why}")
    ev_clock = Evidence(metric="telemetry.sm_clock_mhz_median", value=th["clock_median_mhz"], unit="MHz", artifact=src,
                        meaning=f"median SM clock while busy (maximum {th['clock_max_mhz']:.0f})")
    f.evidence = f.evidence[:2] + [ev_share] + f.evidence[2:] + [ev_clock]
    f.explanation += (f" NVML telemetry given with the captures ({Path(src).name}) shows the GPU {kind} ({why}) in "
                      f"{fraction(th['share'])} of its busy samples, SM clock median {th['clock_median_mhz']:.0f} MHz "
                      f"(maximum {th['clock_max_mhz']:.0f}): the ceilings here are at the clock the kernel ran at, so "
                      f"the {'power limit' if th['power'] else 'temperature'}, not the kernel, holds back the rest; "
                      f"check the power limit and cooling (nvidia-smi -q -d PERFORMANCE,POWER) before tuning code.")
