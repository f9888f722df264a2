"""Which inputs may be combined into one answer.

`reconcile(arts)` runs after loading and before any analysis. It keeps the inputs
that describe one program on one device (and, for timelines, one run), and sets
the others apart, each named in `Artifacts.warnings` with the reason:

* **Device.** The main timeline (nsys preferred, then the one with most kernels,
  as the engine chooses) fixes the device; without a timeline, the first kernel
  profile does. A timeline or a kernel profile from another GPU model (or, where
  a file names no model, another compute capability) is set apart: its times
  are not this device's times, and a roofline needs the ceilings of the device
  that ran the kernel.
* **Run.** Timelines are combined (as ranks of one job) only when they were
  captured at the same time: their spans on the UTC clock (`utc_origin_ns` +
  capture span) overlap the main timeline's, they come from a job of the same
  size, and no two of them claim the same rank. A file that cannot be placed
  in time is kept only when it names its rank in a job of the same size.
* **Program.** A kernel profile none of whose kernels appears in the main
  timeline comes from another program (or another part of it) and is set apart.

Whether the ranks kept cover their whole job is `multirank`'s question (a sample
of ranks cannot name a straggler). Pure functions; nothing is read from disk.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Iterable, Optional

from ..artifacts.tables import Artifacts, KernelProfile, Timeline
from ..kernel_name import KernelName


@dataclass(frozen=True)
class DeviceId:
    model: Optional[str]  # normalized GPU model name ("H200", "GEFORCERTX3060LAPTOPGPU"), None if the file names none
    cc: Optional[str]  # compute capability "8.6", if known
    label: str  # as the file names it

    def same_as(self, other: "DeviceId") -> Optional[bool]:
        """True/False when the files say enough to tell, None when they do not."""
        if self.model and other.model:
            return self.model == other.model
        if self.cc and other.cc:
            return self.cc == other.cc
        return None


_GENERIC = re.compile(r"\b(NVIDIA|TESLA|CORPORATION)\b|[\s\-_]+")


def _model(name: Optional[str]) -> Optional[str]:
    if not name or name == "unknown" or "compute capability" in name:
        return None
    return _GENERIC.sub("", name.upper()) or None


def timeline_device(tl: Timeline) -> Optional[DeviceId]:
    if not tl.gpus:
        return None
    g = tl.gpus[0]
    d = DeviceId(model=_model(g.name), cc=g.compute_capability, label=g.name)
    return d if d.model or d.cc else None


def profile_device(k: KernelProfile) -> Optional[DeviceId]:
    d = DeviceId(model=_model(k.device), cc=k.compute_capability, label=k.device or f"compute capability {k.compute_capability}")
    return d if d.model or d.cc else None


def main_timeline(timelines: list[Timeline]) -> Optional[Timeline]:
    """The timeline the answer rests on: nsys (it sees start-up and every API call), then most kernels."""
    if not timelines:
        return None
    return max(timelines, key=lambda t: (t.format == "nsys-sqlite", len(t.kernels)))


# Event times this large (ns) are already on the UTC clock (after 2001-09-09): PyTorch profiler traces
# older than baseTimeNanoseconds write epoch microseconds.
EPOCH_NS = 1.0e18


def utc_span(tl: Timeline) -> Optional[tuple[float, float]]:
    """The capture's span on the UTC clock (ns), if the file places itself in time."""
    if tl.capture_start_ns is None or tl.capture_end_ns is None:
        return None
    origin = tl.utc_origin_ns
    if origin is None:
        if tl.capture_start_ns < EPOCH_NS:
            return None
        origin = 0
    return origin + tl.capture_start_ns, origin + tl.capture_end_ns


def _when(ns: float) -> str:
    return datetime.fromtimestamp(ns / 1e9, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _apart(a: tuple[float, float], b: tuple[float, float]) -> str:
    gap = max(b[0] - a[1], a[0] - b[1]) / 1e9
    if gap < 120:
        return f"{gap:.1f} s"
    if gap < 2 * 3600:
        return f"{gap / 60:.0f} min"
    if gap < 2 * 86400:
        return f"{gap / 3600:.1f} h"
    return f"{gap / 86400:.1f} days"


def _same_run(tl: Timeline, main: Timeline, kept: list[Timeline]) -> Optional[str]:
    """None if `tl` may be combined with `main` (one run), else why not."""
    if tl.world_size and main.world_size and tl.world_size != main.world_size:
        return f"it comes from a job of {tl.world_size} ranks, {main.source} from a job of {main.world_size}"
    if tl.rank is not None and any(k.rank == tl.rank for k in kept):
        other = next(k for k in kept if k.rank == tl.rank)
        return f"it is rank {tl.rank} again ({other.source} is rank {tl.rank}): two runs, not one job"
    a, b = utc_span(tl), utc_span(main)
    if a and b:
        if a[0] < b[1] and b[0] < a[1]:
            return None
        return (f"a timeline of another run (captured {_when(a[0])}, {_apart(a, b)} apart from "
                f"{main.source}), not combined with it")
    if tl.rank is not None and main.rank is not None and (tl.world_size or None) == (main.world_size or None):
        return None  # ranks of one job as far as the files tell (neither can be placed in time)
    return f"nothing in it places it in the same run as {main.source} (no wall-clock time or rank)"


def reconcile(arts: Artifacts) -> Artifacts:
    """The inputs that can be combined, with every file set apart named in `warnings` (see the module docstring)."""
    warnings = list(arts.warnings)
    apart: set[str] = set()
    main = main_timeline(arts.timelines)
    device: Optional[DeviceId] = timeline_device(main) if main is not None else None
    device_src = main.source if main is not None else None
    if device is None:
        for k in arts.kernel_profiles:
            device = profile_device(k)
            if device is not None:
                device_src = k.source
                break

    timelines = [main] if main is not None else []
    for tl in arts.timelines:
        if tl is main:
            continue
        d = timeline_device(tl)
        if device is not None and d is not None and d.same_as(device) is False:
            why = f"it ran on {d.label}, {device_src} on {device.label}"
        else:
            why = _same_run(tl, main, timelines)
        if why:
            warnings.append(f"set apart {tl.source}: {why}")
            apart.add(tl.source)
        else:
            timelines.append(tl)

    main_names = {KernelName(n).base for n in main.kernels["name"].dropna().astype(str).unique()} \
        if main is not None and len(main.kernels) else set()
    profiles: list[KernelProfile] = []
    for source, group in _by_source(arts.kernel_profiles):
        d = next((x for x in map(profile_device, group) if x is not None), None)
        if device is not None and d is not None and d.same_as(device) is False:
            why = (f"its kernels ran on {d.label}, {device_src} on {device.label}: a roofline needs the ceilings of "
                   f"the device that ran the kernel")
        elif main_names and not any(KernelName(k.name).base in main_names for k in group):
            why = f"none of its kernels appears in the timeline {main.source}: another program (or another part of it)"
        else:
            profiles += group
            continue
        warnings.append(f"set apart {source}: {why}")
        apart.add(source)

    if not apart:
        return dataclasses.replace(arts, warnings=warnings)
    return dataclasses.replace(
        arts, timelines=timelines, kernel_profiles=profiles, warnings=warnings,
        files=[f for f in arts.files if f not in apart])


def _by_source(profiles: Iterable[KernelProfile]) -> list[tuple[str, list[KernelProfile]]]:
    out: dict[str, list[KernelProfile]] = {}
    for k in profiles:
        out.setdefault(k.source, []).append(k)
    return list(out.items())


def device_mismatch(a: Artifacts, b: Artifacts) -> Optional[str]:
    """Why two sets of captures (verify's BEFORE and AFTER) ran on different devices, or None."""
    def dev(arts: Artifacts) -> Optional[DeviceId]:
        tl = main_timeline(arts.timelines)
        d = timeline_device(tl) if tl is not None else None
        return d or next((x for x in map(profile_device, arts.kernel_profiles) if x is not None), None)

    da, db = dev(a), dev(b)
    if da is not None and db is not None and da.same_as(db) is False:
        return f"BEFORE ran on {da.label}, AFTER on {db.label}: the change in time mixes the code change with the device change"
    return None
