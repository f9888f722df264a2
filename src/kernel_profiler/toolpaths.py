"""Finding NVIDIA tools that are installed but often not on PATH (one place for every lookup)."""
from __future__ import annotations

import glob
import os
import shutil
from typing import Optional

# nsys ships inside Nsight Compute and CUDA toolkits without being on PATH.
NSYS_PLACES = ["/opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys", "/opt/nvidia/nsight-systems/*/bin/nsys",
               "/usr/local/cuda/bin/nsys"]
NCU_PLACES = ["/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/*/ncu"]
CUDA_BIN_PLACES = ["/usr/local/cuda/bin/{}", "/usr/local/cuda-*/bin/{}"]


def find_tool(name: str, places: list[str]) -> Optional[str]:
    """PATH first, then the glob patterns in order (newest version first)."""
    found = shutil.which(name)
    if found:
        return found
    for pattern in places:
        for p in sorted(glob.glob(pattern.format(name)), reverse=True):
            if os.access(p, os.X_OK):
                return p
    return None


def find_nsys() -> Optional[str]:
    """nsys, or what KERNEL_PROFILER_NSYS names ("none" hides it, e.g. to use the PyTorch-profiler fallback)."""
    forced = os.environ.get("KERNEL_PROFILER_NSYS")
    if forced:
        return None if forced.lower() == "none" else (forced if os.access(forced, os.X_OK) else None)
    return find_tool("nsys", NSYS_PLACES)


def find_ncu() -> Optional[str]:
    return find_tool("ncu", NCU_PLACES)


def find_cuda_tool(name: str) -> Optional[str]:
    return find_tool(name, CUDA_BIN_PLACES)
