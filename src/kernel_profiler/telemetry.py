"""NVML telemetry: clocks, throttle (clock-event) reasons, temperature, power, utilization.

`Sampler` records every GPU at a fixed interval on a background thread; use it
as a context manager around the code to watch, or through
`kernel-profiler telemetry -- CMD`. The result is plain JSON (see `to_json`),
read back by `kernel_profiler.artifacts.detect` as a telemetry artifact.
"""
from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path
from typing import Optional

from .errors import KernelProfilerError

# NVML clock-event reason bits (nvmlClocksEventReason*, formerly ClocksThrottleReason*).
THROTTLE_REASONS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}
THERMAL_REASONS = {"sw_thermal_slowdown", "hw_thermal_slowdown", "hw_slowdown"}
POWER_REASONS = {"sw_power_cap", "hw_power_brake_slowdown"}


class NvmlUnavailable(KernelProfilerError):
    """NVML cannot be used: no NVIDIA driver, or the nvidia-ml-py package is missing."""


def decode_reasons(mask: int) -> list[str]:
    return [name for bit, name in THROTTLE_REASONS.items() if mask & bit]


def _nvml():
    try:
        import pynvml  # from the nvidia-ml-py package
    except ImportError as e:  # pragma: no cover - it is a core dependency
        raise NvmlUnavailable("the nvidia-ml-py package is missing: pip install nvidia-ml-py") from e
    try:
        pynvml.nvmlInit()
    except Exception as e:  # pynvml raises NVMLError subclasses
        raise NvmlUnavailable(
            f"NVML is not available ({e}): telemetry needs an NVIDIA GPU and its driver on this machine"
        ) from e
    return pynvml


class Sampler:
    """Samples all GPUs every `interval_s` seconds until stopped."""

    def __init__(self, interval_s: float = 0.1, devices: Optional[list[int]] = None):
        self.interval_s = interval_s
        self.devices = devices
        self.samples: list[dict] = []
        self.gpus: list[dict] = []
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self.started_ns: Optional[int] = None
        self.stopped_ns: Optional[int] = None

    def _read(self, nv, idx: int, handle) -> dict:
        def safe(fn, *a):
            try:
                return fn(*a)
            except Exception:  # a field this GPU/driver does not support
                return None

        util = safe(nv.nvmlDeviceGetUtilizationRates, handle)
        get_reasons = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or nv.nvmlDeviceGetCurrentClocksThrottleReasons
        mask = safe(get_reasons, handle)
        power = safe(nv.nvmlDeviceGetPowerUsage, handle)
        return {
            "t_ns": time.time_ns(),
            "gpu": idx,
            "sm_clock_mhz": safe(nv.nvmlDeviceGetClockInfo, handle, nv.NVML_CLOCK_SM),
            "mem_clock_mhz": safe(nv.nvmlDeviceGetClockInfo, handle, nv.NVML_CLOCK_MEM),
            "temperature_c": safe(nv.nvmlDeviceGetTemperature, handle, nv.NVML_TEMPERATURE_GPU),
            "power_w": power / 1000.0 if power is not None else None,
            "gpu_util_pct": util.gpu if util is not None else None,
            "mem_util_pct": util.memory if util is not None else None,
            "throttle_mask": mask,
            "throttle_reasons": decode_reasons(mask) if mask is not None else [],
        }

    def _loop(self, nv, handles) -> None:
        while not self._stop.is_set():
            for idx, h in handles:
                self.samples.append(self._read(nv, idx, h))
            self._stop.wait(self.interval_s)

    def start(self) -> "Sampler":
        nv = _nvml()
        count = nv.nvmlDeviceGetCount()
        ids = self.devices if self.devices is not None else list(range(count))
        handles = [(i, nv.nvmlDeviceGetHandleByIndex(i)) for i in ids]
        for i, h in handles:
            name = nv.nvmlDeviceGetName(h)
            limit = None
            try:
                limit = nv.nvmlDeviceGetPowerManagementLimit(h) / 1000.0
            except Exception:
                pass
            self.gpus.append({
                "gpu": i,
                "name": name.decode() if isinstance(name, bytes) else name,
                "max_sm_clock_mhz": _try(nv.nvmlDeviceGetMaxClockInfo, h, nv.NVML_CLOCK_SM),
                "power_limit_w": limit,
            })
        self.started_ns = time.time_ns()
        self._thread = threading.Thread(target=self._loop, args=(nv, handles), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> "Sampler":
        self._stop.set()
        if self._thread:
            self._thread.join()
        self.stopped_ns = time.time_ns()
        return self

    def __enter__(self) -> "Sampler":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def to_json(self, rank: Optional[int] = None) -> dict:
        return {
            "kind": "kernel-profiler.telemetry",
            "version": 1,
            "host": socket.gethostname(),
            "rank": rank,
            "interval_s": self.interval_s,
            "started_ns": self.started_ns,
            "stopped_ns": self.stopped_ns,
            "gpus": self.gpus,
            "samples": self.samples,
        }

    def write(self, path: str | Path, rank: Optional[int] = None) -> Path:
        path = Path(path)
        path.write_text(json.dumps(self.to_json(rank)))
        return path


def _try(fn, *a):
    try:
        return fn(*a)
    except Exception:
        return None


def median(xs: list) -> Optional[float]:
    """The median of the values present (the upper one of an even count: a value that was sampled), or None."""
    xs = sorted(float(x) for x in xs if x is not None)
    return xs[len(xs) // 2] if xs else None


def per_gpu(gpus: list[dict], samples: list[dict]) -> list[dict]:
    """Each GPU's samples summarised: medians of SM clock, power and utilization, the hottest temperature and how
    many samples each throttle reason was active in."""
    out = []
    for g in gpus:
        mine = [x for x in samples if x["gpu"] == g["gpu"]]
        temps = [x["temperature_c"] for x in mine if x["temperature_c"] is not None]
        reasons: dict[str, int] = {}
        for x in mine:
            for r in x["throttle_reasons"]:
                reasons[r] = reasons.get(r, 0) + 1
        out.append(dict(gpu=g["gpu"], name=g["name"], samples=len(mine),
                        sm_clock_mhz_median=median([x["sm_clock_mhz"] for x in mine]),
                        max_sm_clock_mhz=g.get("max_sm_clock_mhz"), temperature_c_max=max(temps) if temps else None,
                        power_w_median=median([x["power_w"] for x in mine]), power_limit_w=g.get("power_limit_w"),
                        gpu_util_pct_median=median([x["gpu_util_pct"] for x in mine]), throttle_reasons=reasons))
    return out


# A throttle reason counts when it is in at least this share of the busy samples.
THROTTLE_MIN_SHARE = 0.2
# Busy: NVML utilization at least this % (a sample of an idle GPU says nothing about the kernel's clock).
BUSY_UTIL_PCT = 50


def clock_throttling(telemetry: list[dict]) -> Optional[dict]:
    """Power or thermal throttling while the GPU was busy, from kernel-profiler telemetry JSON: the share of
    busy samples with a power/thermal reason, the reasons, the median busy SM clock and the maximum; None when
    no file shows it (fewer than 5 busy samples, or throttled in under THROTTLE_MIN_SHARE of them)."""
    for t in telemetry:
        busy = busy_samples(t)
        if len(busy) < 5:
            continue
        hot = [s for s in busy if set(s.get("throttle_reasons") or []) & (POWER_REASONS | THERMAL_REASONS)]
        if len(hot) < THROTTLE_MIN_SHARE * len(busy):
            continue
        reasons = sorted({r for s in hot for r in s["throttle_reasons"]} & (POWER_REASONS | THERMAL_REASONS))
        clocks = sorted(float(s["sm_clock_mhz"]) for s in busy)
        gpus = [g for g in t.get("gpus") or [] if isinstance(g, dict) and g.get("max_sm_clock_mhz")]
        return {"source": t.get("source", ""), "busy": len(busy), "throttled": len(hot), "share": len(hot) / len(busy),
                "reasons": reasons, "clock_median_mhz": median(clocks),
                "clock_max_mhz": float(gpus[0]["max_sm_clock_mhz"]) if gpus else clocks[-1],
                "power": bool(set(reasons) & POWER_REASONS)}
    return None


def _clocked(t: dict) -> list[dict]:
    return [s for s in t.get("samples") or [] if isinstance(s, dict) and s.get("sm_clock_mhz")]


def busy_samples(t: dict) -> list[dict]:
    """A telemetry file's samples with an SM clock, taken while the GPU was busy (BUSY_UTIL_PCT)."""
    return [s for s in _clocked(t) if (s.get("gpu_util_pct") or 0) >= BUSY_UTIL_PCT]


def clock_summary(t: dict) -> Optional[dict]:
    """One telemetry file's clocks and utilisation: the median and lowest SM clock while busy (over all samples when
    none is busy), the median busy memory clock, the median and highest NVML utilisation; None without samples."""
    samples = _clocked(t)
    if not samples:
        return None
    busy = busy_samples(t) or samples
    clocks = [float(s["sm_clock_mhz"]) for s in busy]
    mem = [float(s["mem_clock_mhz"]) for s in busy if s.get("mem_clock_mhz")]
    util = [float(s.get("gpu_util_pct") or 0) for s in samples]
    return {"source": t.get("source") or "telemetry", "sm_clock_median_mhz": median(clocks),
            "sm_clock_min_mhz": min(clocks), "mem_clock_median_mhz": median(mem) if mem else None,
            "util_median_pct": median(util), "util_max_pct": max(util)}
