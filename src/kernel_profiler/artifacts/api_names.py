"""Classify CUDA runtime/driver API names into the categories timeline triage uses.

Shared by the nsys sqlite and Kineto readers so both formats agree.
"""
from __future__ import annotations

import re

# Calls that block the host until GPU work completes (or can, for sync copies).
SYNC_PATTERN = re.compile(
    r"^(cuda|cu)(DeviceSynchronize|CtxSynchronize|StreamSynchronize|EventSynchronize|StreamQuery_?SYNC)",
)
LAUNCH_PATTERN = re.compile(r"^(cuda|cu)(LaunchKernel|LaunchCooperativeKernel|LaunchKernelEx|GraphLaunch|ModuleLaunch|Launch)")
MEMCPY_PATTERN = re.compile(r"^(cuda|cu)Memcpy")
MEMSET_PATTERN = re.compile(r"^(cuda|cu)Memset")
MALLOC_PATTERN = re.compile(r"^(cuda|cu)(Malloc|Free|MemAlloc|MemFree|HostAlloc|MallocHost|FreeHost|MemHostAlloc)")


def categorize(name: str) -> str:
    """launch | sync | memcpy | memset | malloc | other. Names may carry a _v2/_ptsz suffix."""
    if SYNC_PATTERN.match(name):
        return "sync"
    if LAUNCH_PATTERN.match(name):
        return "launch"
    if MEMCPY_PATTERN.match(name):
        # Plain cudaMemcpy (not ...Async) blocks the host: treat as sync-capable copy.
        return "memcpy"
    if MEMSET_PATTERN.match(name):
        return "memset"
    if MALLOC_PATTERN.match(name):
        return "malloc"
    return "other"


def is_blocking_memcpy(name: str) -> bool:
    """cudaMemcpy/cuMemcpyDtoH etc. without Async: returns only after the copy is done."""
    return bool(MEMCPY_PATTERN.match(name)) and "Async" not in name
