"""One-time work: what a program does once, outside its steady state, and what it costs.

GPU-side work outside the steady window is classified by its evidence (JIT, library initialisation, module
loading, allocator calls, one-time copies) and reported apart from the steady state, with its cost.
"""
from __future__ import annotations

import re
from typing import Optional

import numpy as np

from . import intervals as iv
from ..artifacts.tables import Timeline
from ..answer import Evidence, Finding, Fix, TimelineSummary
from ..catalog import CATALOG
from .idle import MODULE_LOAD, blocking_calls, call_spans, module_load_calls
from .ranks import COLLECTIVE
from .steady import Repeat, gpu_ops

# Host time before a kernel's first launch spent in no CUDA call, from this long: compilation (JIT) when the
# kernel was generated at run time (a name without a C++ signature, or a module loaded from memory).
JIT_MIN_NS = 50e6
# Kernels that come from a vendor library (their first launch follows the library's initialisation).
LIBRARY_KERNEL = re.compile(r"nvjet|xmma|cutlass|cublas|cudnn|gemv|gemmk|gemm_|_gemm|sm\d\d_|nccl|cusparse|cufft",
                            re.IGNORECASE)
ONETIME_CLASSES = ("jit", "library_init", "module_loading", "allocator", "upload", "download", "communication", "sync",
                   "warm_up", "host")


def _generated(name: str) -> bool:
    """A kernel compiled at run time (Triton, torch.compile, NVRTC): no C++ signature in its name."""
    return "(" not in name and not name.startswith("void ") and "<" not in name



def onetime_work(tl: Timeline, lo: float, hi: float) -> dict[str, float]:
    """ns of one-time work outside the steady window [lo, hi] (from the first to the last GPU operation), by class.

    GPU busy time there: copies (upload/download), collectives (communication) and other kernels (warm_up).
    Idle time there, gap by gap: module loading, allocator and synchronizing calls by how much of the gap they cover; the rest is host time spent in
    no CUDA call: JIT when the next kernel is generated at run time and the rest is long, library_init when the
    next kernel is a library's, else host (the program's own set-up)."""
    ops = gpu_ops(tl)
    if not len(ops):
        return {}
    first, last = float(ops["start_ns"].min()), float(ops["end_ns"].max())
    out = {c: 0.0 for c in ONETIME_CLASSES}
    regions = [(first, lo), (hi, last)]
    api = tl.api
    mods = call_spans(api, module_load_calls(api)) if len(api) else (np.empty(0), np.empty(0))
    allocs = call_spans(api, (api["category"] == "malloc").to_numpy()) if len(api) else (np.empty(0), np.empty(0))
    syncs = call_spans(api, blocking_calls(api)) if len(api) else (np.empty(0), np.empty(0))
    # Traces without driver calls (the PyTorch profiler) cannot show module loads: there a gap before a
    # kernel's first launch that no other call explains is taken for its lazy load.
    sees_loads = bool(len(api)) and bool(api["name"].fillna("").astype(str).str.match(r"^cu[A-Z]").any() and
                                         api["name"].fillna("").astype(str).str.match(MODULE_LOAD).any())
    for a, b in regions:
        if b <= a:
            continue
        inside = ops[(ops["end_ns"] > a) & (ops["start_ns"] < b)]
        for kind, grp in inside.groupby("kind"):
            s_, e_ = iv.union(*iv.clip(grp["start_ns"].to_numpy(np.float64), grp["end_ns"].to_numpy(np.float64), a, b))
            t = iv.total(s_, e_)
            if kind == "copy":
                up = grp[grp["token"] == "copy:HtoD"]
                down = grp[grp["token"] == "copy:DtoH"]
                tu = iv.total(*iv.union(*iv.clip(up["start_ns"].to_numpy(np.float64), up["end_ns"].to_numpy(np.float64), a, b)))
                td = iv.total(*iv.union(*iv.clip(down["start_ns"].to_numpy(np.float64), down["end_ns"].to_numpy(np.float64), a, b)))
                out["upload"] += tu
                out["download"] += td
                out["warm_up"] += max(t - tu - td, 0.0)
            else:
                cm = grp["token"].astype(str).map(lambda n: bool(COLLECTIVE.search(n))).to_numpy(dtype=bool)
                tc = iv.total(*iv.union(*iv.clip(grp["start_ns"].to_numpy(np.float64)[cm],
                                                 grp["end_ns"].to_numpy(np.float64)[cm], a, b))) if cm.any() else 0.0
                out["communication"] += tc
                out["warm_up"] += max(t - tc, 0.0)
        seg_s, seg_e = iv.union(*iv.clip(inside["start_ns"].to_numpy(np.float64), inside["end_ns"].to_numpy(np.float64), a, b))
        g0, g1 = iv.gaps(seg_s, seg_e, a, b)
        if not len(g0):
            continue
        length = g1 - g0
        mod = np.minimum(iv.overlap(*mods, g0, g1), length)
        alloc = np.minimum(iv.overlap(*allocs, g0, g1), length - mod)
        sync = np.minimum(iv.overlap(*syncs, g0, g1), length - mod - alloc)
        rest = length - mod - alloc - sync
        out["module_loading"] += float(mod.sum())
        out["allocator"] += float(alloc.sum())
        out["sync"] += float(sync.sum())
        kern = ops[ops["kind"] == "kernel"]
        kstart = kern["start_ns"].to_numpy(np.float64)
        knames = kern["token"].to_numpy()
        for g, r in zip(range(len(g0)), rest):
            if r <= 0:
                continue
            j = np.searchsorted(kstart, g1[g], side="left")  # the next kernel after the gap
            name = str(knames[j]) if j < len(knames) else ""
            first_launch = bool(name) and not (knames[:j] == name).any()
            if first_launch and LIBRARY_KERNEL.search(name):
                out["library_init"] += float(r)
            elif first_launch and r >= JIT_MIN_NS and _generated(name):
                out["jit"] += float(r)
            elif first_launch and not sees_loads:  # no driver calls in the trace: a first launch's lazy load
                out["module_loading"] += float(r)
            else:
                out["host"] += float(r)
    return {k: v for k, v in out.items() if v > 0}



ONETIME_LABEL = {
    "jit": "JIT compilation before a kernel's first launch",
    "library_init": "library initialisation (handles, workspaces, kernel modules) before its first kernel",
    "module_loading": "module loading (cuModuleLoad/cuLibraryLoad, lazy loading at a kernel's first launch)",
    "allocator": "allocator calls (cudaMalloc/cudaFree)",
    "upload": "one-time host-to-device copies",
    "download": "one-time device-to-host copies",
    "communication": "collective communication with no compute among it (NCCL kernels only)",
    "sync": "waiting in synchronizing calls",
    "warm_up": "GPU work that runs once (initialisation kernels, the first repetition)",
    "host": "host set-up between GPU operations (no CUDA call)",
}
ONETIME_ADVICE = {
    "jit": ("cache the compiled kernels across runs (keep TRITON_CACHE_DIR / the torch.compile cache on persistent "
            "storage, or compile ahead of time) and make one warm-up call before timing"),
    "library_init": ("initialise the library once per process (create the handle and run one call as warm-up before "
                     "timing); a long-lived process pays it once"),
    "module_loading": ("run one warm-up iteration before timing (CUDA_MODULE_LOADING=EAGER moves the loading to "
                       "start-up instead); it is paid once per process"),
    "allocator": "allocate once and reuse the buffers (or a caching/stream-ordered allocator such as cudaMallocAsync)",
    "upload": ("exclude the one-time upload from timing; if it recurs (per request or epoch), pin the host buffer "
               "(cudaMallocHost / pin_memory) and overlap it with compute"),
    "download": "exclude it from timing; if it recurs, copy into pinned memory asynchronously",
    "communication": ("keep it out of timing: a stretch of collectives with no compute (such as the initial "
                      "parameter sync of data-parallel start-up) is paid once per run; if it recurs every step, "
                      "overlap it with compute (bucketed, asynchronous collectives) or move fewer bytes"),
    "sync": "exclude the set-up from timing",
    "warm_up": "time only the repeated part, after a warm-up",
    "host": "time only the repeated part, after the set-up",
}



def onetime_finding(src: str, summary: TimelineSummary, rep: Optional[Repeat], only: bool) -> Finding:
    by = summary.onetime_by_class
    total = summary.onetime_ns
    ranked = sorted(by.items(), key=lambda kv: -kv[1])
    top, top_ns = ranked[0]
    parts = ", ".join(f"{k.replace('_', ' ')} {v / 1e6:.1f} ms" for k, v in ranked[:4])
    ev = [Evidence(metric="timeline.onetime_ns", value=total, unit="ns", artifact=src,
                   meaning=f"one-time work outside the steady state: {parts}"),
          Evidence(metric=f"timeline.onetime_{top}_ns", value=top_ns, unit="ns", artifact=src,
                   meaning=f"the largest part: {ONETIME_LABEL[top]}")]
    if only:
        bottleneck = (f"The program is only one-time work: no GPU work repeats, and {total / 1e6:.1f} ms of its GPU "
                      f"span goes to {ONETIME_LABEL[top]} and other one-time costs, not to a steady state.")
    else:
        ev.append(Evidence(metric="timeline.steady_window_ns", value=summary.window_ns, unit="ns", artifact=src,
                           meaning=f"the steady state analyzed apart: {summary.window_source}"))
        bottleneck = (f"One-time work takes {total / 1e6:.1f} ms outside the steady state "
                      f"({summary.window_ns / 1e6:.1f} ms), most of it {ONETIME_LABEL[top]}.")
    if summary.startup_ns:
        ev.append(Evidence(metric="timeline.startup_ns", value=summary.startup_ns, unit="ns", artifact=src,
                           meaning="process start to first GPU work (imports, CUDA context), not counted above"))
    return Finding(
        bound="host", mechanism="startup_dominated", share=total / max(total + summary.window_ns, 1.0),
        bottleneck=bottleneck, evidence=ev,
        explanation=("This is paid once per process, while the GPU idles or does set-up work; it is real wall time "
                     "but says nothing about the speed of the repeated work, which is judged on its own window."),
        fix=Fix(change=CATALOG["startup_dominated"].fix_text("onetime", advice=ONETIME_ADVICE[top]),
                metric=f"timeline.onetime_{top}_ns", direction="decrease",
                expected=f"up to {top_ns / 1e6:.1f} ms less wall time per process run", current_value=top_ns),
        confidence=0.8 if rep is not None or only else 0.6,
    )

