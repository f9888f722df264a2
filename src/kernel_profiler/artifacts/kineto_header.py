"""What a Kineto trace says about itself (the header half of the Kineto reader, kineto.py): its devices
(`deviceProperties`), its host processes (`process_name` metadata), and why a trace that is not one NVIDIA GPU
timeline is refused (ROCm, MTIA/XPU, CUPTI range-profiler and CPU-only traces)."""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from ..errors import EmptyCapture, UnsupportedCapture
from .kineto_events import NO_ARGS, Event
from .tables import GpuInfo

_NON_NVIDIA_CATS = (("mtia", "a Meta MTIA accelerator"), ("xpu", "an Intel XPU"))
_AMD_DEVICE = re.compile(r"\b(AMD|Radeon|Instinct)\b|\bMI\d{3}", re.IGNORECASE)


def refuse_if_not_ours(path: Path, header: dict, cats: set, counters: int, api: dict, has_gpu: bool) -> None:
    """UnsupportedCapture / EmptyCapture, with the reason, for a trace that is not one NVIDIA GPU timeline."""
    props = header.get("deviceProperties")
    devices = [str(p.get("name")) for p in props if isinstance(p, dict)] if isinstance(props, list) else []
    amd = next((d for d in devices if _AMD_DEVICE.search(d)), None)
    hip = next((n for n in (pd.unique(api["name"]) if api else []) if str(n).startswith("hip")), None)
    if amd or hip:
        seen = f"device '{amd}'" if amd else f"HIP calls such as {hip}"
        raise UnsupportedCapture(path, f"a ROCm trace from an AMD GPU ({seen}): not an NVIDIA GPU; kernel-profiler "
                                       "diagnoses CUDA captures only (for AMD GPUs use rocprofv3 / Omniperf)")
    if has_gpu:
        return
    cats = [str(c).lower() for c in cats if c]
    for prefix, what in _NON_NVIDIA_CATS:
        if any(c.startswith(prefix) for c in cats):
            raise UnsupportedCapture(path, f"a trace from {what} ({prefix}_* events): not an NVIDIA GPU; "
                                           "kernel-profiler diagnoses CUDA captures only")
    if counters:
        raise UnsupportedCapture(path, f"a CUPTI range-profiler trace: {counters} cuda_profiler_range events "
                                       "hold per-kernel counters but no kernel timeline (no kernel durations); "
                                       "profile again without experimental_config(profiler_metrics=...) for a "
                                       "timeline, and use Nsight Compute (ncu) for per-kernel counters")
    if not api:
        raise UnsupportedCapture(path, "a CPU-only PyTorch profiler trace (no CUDA calls, no GPU events): profile "
                                       "on an NVIDIA GPU with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]")
    raise EmptyCapture(path, "the PyTorch profiler trace holds no GPU activity (no kernel, gpu_memcpy or "
                             "gpu_memset events, though CUDA calls were traced); profile with "
                             "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]")


def as_int(v) -> int | None:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def gpus(props) -> list[GpuInfo]:
    if not isinstance(props, list):
        return []
    out = []
    for p in sorted((p for p in props if isinstance(p, dict)), key=lambda p: as_int(p.get("id")) or 0):
        major, minor = as_int(p.get("computeMajor")), as_int(p.get("computeMinor"))
        clock = p.get("clockRate")  # kHz in cudaDeviceProp, when a Kineto version writes it
        out.append(GpuInfo(
            name=str(p.get("name") or "unknown"), sm_count=as_int(p.get("numSms")),
            memory_bytes=as_int(p.get("totalGlobalMem")), l2_bytes=as_int(p.get("l2CacheSize")),
            sm_clock_hz=float(clock) * 1e3 if as_int(clock) else None,
            compute_capability=f"{major}.{minor}" if major is not None and minor is not None else None))
    return out


def processes(meta: list[Event]) -> dict[int, str]:
    names: dict[int, str] = {}
    gpu_pids: set = set()
    for e in meta:
        args = e.args or NO_ARGS
        if e.name == "process_labels" and str(args.labels or "").startswith("GPU"):
            gpu_pids.add(e.pid)
        elif e.name == "process_name" and as_int(e.pid) is not None:
            names[int(e.pid)] = str(args.name if args.name is not None else "")
    return {p: n for p, n in sorted(names.items()) if p not in gpu_pids}
