"""What the host was doing while the GPU idled: classes of CUDA API calls, and each idle gap's cause.

A gap mostly covered by module loading or allocator calls is theirs; else a gap that began while a
synchronizing call was in progress is host_sync; a long gap with few launches is host_work (the host's own
computation); the rest is launch overhead.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from . import intervals as iv
from ..artifacts.api_names import is_blocking_memcpy
from ..artifacts.tables import Timeline

# An idle gap at least this long with few launches in it is host work, not launch
# overhead: ~10x the host cost of one eager PyTorch op (5-10 us) and ~30x one
# CUDA C++ launch (2-4 us), so launch cost alone cannot fill it.
HOST_WORK_GAP_NS = 100_000.0
# ...unless the host issued launches through it at least this densely (one per 20 us).
DISPATCH_LAUNCHES_PER_NS = 1 / 20_000.0
# A sync call counts as draining the queue if it was in progress when the GPU went
# idle; tolerance for host/GPU clock alignment.
SYNC_TOLERANCE_NS = 2_000.0
# A launch call this long is a first launch paying lazy module loading (the load runs inside the call).
LAZY_LOAD_LAUNCH_NS = 1e6
# An idle gap at least this much covered by one kind of call is attributed to that call.
GAP_COVERED_FRACTION = 0.5
MODULE_LOAD = re.compile(r"^cu(ModuleLoad|LibraryLoad)")


def call_spans(api: pd.DataFrame, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) of the API calls selected by `mask`."""
    return api["start_ns"].to_numpy(np.float64)[mask], api["end_ns"].to_numpy(np.float64)[mask]


def module_load_calls(api: pd.DataFrame) -> np.ndarray:
    """Calls that load kernel modules: cuModuleLoad*/cuLibraryLoad*, and launch calls long enough to hold a lazy
    load (a kernel's first launch under CUDA_MODULE_LOADING=LAZY; the PyTorch profiler shows only the launch)."""
    if len(api) == 0:
        return np.zeros(0, dtype=bool)
    names = api["name"].fillna("").astype(str)
    is_load = names.map({n: bool(MODULE_LOAD.match(n)) for n in names.unique()}).to_numpy(dtype=bool)
    long_launch = (api["category"].to_numpy() == "launch") & \
        ((api["end_ns"] - api["start_ns"]).to_numpy(np.float64) >= LAZY_LOAD_LAUNCH_NS)
    return is_load | long_launch



def blocking_calls(api: pd.DataFrame) -> np.ndarray:
    """Which API calls block the host until the GPU is done: synchronizations and blocking copies."""
    if len(api) == 0:
        return np.zeros(0, dtype=bool)
    names = api["name"].fillna("").astype(str)
    blocking_name = {n: is_blocking_memcpy(n) for n in names.unique()}  # once per distinct name
    cat = api["category"].to_numpy()
    return (cat == "sync") | ((cat == "memcpy") & names.map(blocking_name).to_numpy(dtype=bool))



def idle_causes(tl: Timeline, g0: np.ndarray, g1: np.ndarray) -> dict[str, float]:
    """ns of idle GPU time per cause. A gap mostly covered by module loading or by allocator calls is theirs; else
    a gap that began while a synchronizing call was in progress is host_sync; a long gap with few launches is
    host_work (the host's own computation); the rest is launch overhead."""
    api = tl.api
    length = g1 - g0
    if len(api) == 0 or len(g0) == 0:
        return {"unattributed": float(length.sum())} if len(g0) else {}
    cat = api["category"].to_numpy()
    blocking = blocking_calls(api)
    s = api["start_ns"].to_numpy(dtype=np.float64)
    e = api["end_ns"].to_numpy(dtype=np.float64)
    mod = iv.overlap(*call_spans(api, module_load_calls(api)), g0, g1) >= GAP_COVERED_FRACTION * length
    alloc = ~mod & (iv.overlap(*call_spans(api, cat == "malloc"), g0, g1) >= GAP_COVERED_FRACTION * length)
    other = ~mod & ~alloc
    drained = iv.in_progress(s[blocking], e[blocking], g0, SYNC_TOLERANCE_NS)
    launches = iv.count_in(s[cat == "launch"], g0, g1)
    long_quiet = (length >= HOST_WORK_GAP_NS) & (launches < length * DISPATCH_LAUNCHES_PER_NS)
    out = {
        "host_sync": float(length[other & drained].sum()),
        "host_work": float(length[other & ~drained & long_quiet].sum()),
        "launch_overhead": float(length[other & ~drained & ~long_quiet].sum()),
    }
    if mod.any():
        out["module_loading"] = float(length[mod].sum())
    if alloc.any():
        out["allocator"] = float(length[alloc].sum())
    return out

