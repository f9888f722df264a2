"""A kernel that reads host memory itself: zero-copy (mapped pinned) memory read over PCIe on every launch.

No copy shows in the timeline: the transfer happens inside the kernel, one L2 miss at a time, at the link's rate
(tens of GB/s) instead of HBM's (TB/s). ncu sees it in the L2 misses that go to the system-memory aperture.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ...answer import Finding, Fix, Roofline
from ...artifacts.tables import KernelProfile
from ...catalog import CATALOG
from ...display import bandwidth, duration, size
from ...kernel_name import KernelName
from .counters import DEVICE_READ_SECTORS, DEVICE_SECTORS, PCIE_READ_RATE, SYSMEM_READ_SECTORS, SYSMEM_SECTORS
from .evidence import ev

SECTOR_BYTES = 32
# Host memory read per launch below this is a flag or a small table: not what limits a kernel.
ZERO_COPY_MIN_BYTES = 1 << 20
# ...and at least this share of the kernel's L2 read misses go to host memory: the host is where its data lives.
ZERO_COPY_MIN_SHARE = 0.25


@dataclass(frozen=True)
class HostReads:
    """What one kernel read from host memory: bytes, their share of its L2 read misses, and the metric said so."""

    bytes: float
    share: Optional[float]
    metric: str


def host_reads(get: Callable[[str], Optional[float]]) -> Optional[HostReads]:
    """Host-memory reads of one kernel from its ncu metrics (`get`): the L2 sectors that miss to the system-memory
    aperture, else the PCIe read rate over the kernel's duration; None when the report holds neither."""
    for sys_m, dev_m in ((SYSMEM_READ_SECTORS, DEVICE_READ_SECTORS), (SYSMEM_SECTORS, DEVICE_SECTORS)):
        sys_s = get(sys_m)
        if sys_s is not None:
            dev_s = get(dev_m) or 0.0
            return HostReads(sys_s * SECTOR_BYTES, sys_s / (sys_s + dev_s) if sys_s + dev_s else None, sys_m)
    rate, dur = get(PCIE_READ_RATE), get("gpu__time_duration.sum")
    if rate is not None and dur:
        b = rate * dur / 1e9
        dram = get("dram__bytes_read.sum")
        return HostReads(b, b / (b + dram) if dram is not None and b + dram else None, PCIE_READ_RATE)
    return None


def reads_host_memory(h: Optional[HostReads]) -> bool:
    return h is not None and h.bytes >= ZERO_COPY_MIN_BYTES and (h.share is None or h.share >= ZERO_COPY_MIN_SHARE)


def detect_zero_copy(k: KernelProfile, r: Optional[Roofline]) -> Optional[Finding]:
    h = host_reads(k.get)
    if not reads_host_memory(h):
        return None
    dur = k.get("gpu__time_duration.sum")
    rate = h.bytes / (dur / 1e9) if dur else None
    share = f"{h.share:.0%} of its L2 read misses" if h.share is not None else "its reads"
    evidence = [ev(k, h.metric, "sector" if "sectors" in h.metric else "byte/s",
                   f"{size(h.bytes)} read from host memory (system-memory aperture) per launch: {share}")]
    if k.get(PCIE_READ_RATE) is not None and h.metric != PCIE_READ_RATE:
        evidence.append(ev(k, PCIE_READ_RATE, "byte/s", "PCIe read traffic while the kernel runs"))
    evidence.append(ev(k, "dram__bytes_read.sum", "byte", "DRAM bytes read: the data does not come from HBM"))
    if dur:
        evidence.append(ev(k, "gpu__time_duration.sum", "ns", "kernel duration"))
    peak = r.peak_bandwidth if r is not None and r.peak_bandwidth else None
    dram = (k.get("dram__bytes_read.sum") or 0.0) + (k.get("dram__bytes_write.sum") or 0.0)
    target = (h.bytes + dram) / peak * 1e9 if peak else None
    return Finding(
        bound="transfer", mechanism="zero_copy_reads", kernel=k.name, roofline=r,
        bottleneck=(f"`{KernelName(k.name).display(60)}` reads {size(h.bytes)} from host memory over PCIe on every "
                    f"launch (zero-copy mapped memory): {share} go to system memory"
                    + (f", at {bandwidth(rate)}" if rate else "") + "; the transfer hides inside the kernel."),
        evidence=evidence,
        explanation=("The kernel dereferences mapped pinned host memory (cudaHostAlloc with cudaHostAllocMapped, "
                     "cudaHostRegister, or a host pointer the device can address): every L2 miss on it crosses PCIe at "
                     "the link's tens of GB/s instead of HBM's TB/s, on every launch, and no copy appears in the "
                     "timeline because the transfer happens inside the kernel; the warps wait on these remote loads."),
        fix=Fix(change=CATALOG["zero_copy_reads"].fix_text(), metric="gpu__time_duration.sum", direction="decrease",
                expected=(f"from {duration(dur)} toward ~{duration(target)} (the same bytes from HBM)"
                          if dur and target else "the kernel runs at HBM's rate instead of the link's"),
                current_value=dur, target_value=target),
        confidence=0.85,
    )
