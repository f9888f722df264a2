"""Per-GPU ceilings for when a capture carries no peak-sustained metrics.

Datasheet values (dense, no sparsity) are leads, not measurements: a report's
own `*.peak_sustained` metrics at the kernel's measured clock take precedence
(see roofline.ceilings). Sources: NVIDIA H100/H200/A100/L4 datasheets (host link: PCIe Gen5 x16 for
H100/H200 SXM, Gen4 x16 for A100 and L4, per direction).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class DeviceSpec:
    name: str
    sm_count: int
    dram_bandwidth: float  # byte/s
    fp32: float  # FLOP/s (FMA pipe)
    fp64: float
    tf32_tensor: float
    bf16_tensor: float
    fp8_tensor: Optional[float] = None
    link_bandwidth: Optional[float] = None  # byte/s per direction of the host link (PCIe x16)


DEVICES = {
    "H100": DeviceSpec("H100 SXM", 132, 3.35e12, 67e12, 34e12, 495e12, 989e12, 1979e12, 64e9),
    "H200": DeviceSpec("H200 SXM", 132, 4.8e12, 67e12, 34e12, 495e12, 989e12, 1979e12, 64e9),
    "A100": DeviceSpec("A100 SXM 80GB", 108, 2.039e12, 19.5e12, 9.7e12, 156e12, 312e12, None, 32e9),
    "L4": DeviceSpec("L4", 58, 0.3e12, 30.3e12, 0.49e12, 60e12, 121e12, 242e12, 32e9),
}


def lookup(device_name: Optional[str]) -> Optional[DeviceSpec]:
    """Match a device name such as 'NVIDIA H200' or 'NVIDIA A100-SXM4-80GB'."""
    if not device_name:
        return None
    import re

    upper = device_name.upper()
    for key in ("H200", "H100", "A100", "L4"):
        if re.search(rf"(?<![A-Z0-9]){key}(?![A-Z0-9])", upper):  # "L4" must not match "L40S"
            return DEVICES[key]
    return None
