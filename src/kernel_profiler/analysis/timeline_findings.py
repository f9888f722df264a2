"""The findings of the timeline's verdicts: start-up dominated, transfer-bound, host-bound.

Each finding names the bottleneck, its measured evidence from the timeline, the mechanism and the fix.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..answer import Evidence, Finding, Fix, TimelineSummary
from ..display import bandwidth, duration, size
from ..catalog import CATALOG
from ..metrics import copy_bandwidth, pageable
from .idle import blocking_calls

# Pageable copies count as the mechanism when they carry at least this share of bytes.
PAGEABLE_BYTES_FRACTION = 0.5


def startup_finding(src: str, step_ns: list[float], summary: TimelineSummary) -> Finding:
    first, rest = step_ns[0], step_ns[1:]
    med = float(np.median(rest))
    return Finding(
        bound="host", mechanism="startup_dominated", share=first / (first + sum(rest)),
        bottleneck=(f"The measured run is dominated by one-time start-up work: the first step takes "
                    f"{duration(first)} against a {duration(med)} median for the other {len(rest)} steps."),
        evidence=[
            Evidence(metric="timeline.first_step_ns", value=first, unit="ns", artifact=src,
                     meaning="duration of the first marked step (lazy initialisation, allocation, uploads)"),
            Evidence(metric="timeline.steady_step_median_ns", value=med, unit="ns", artifact=src,
                     meaning=f"median of the remaining {len(rest)} steps"),
            Evidence(metric="timeline.startup_ns", value=summary.startup_ns, unit="ns", artifact=src,
                     meaning="process start to first GPU work (imports, CUDA context), reported apart"),
        ],
        explanation=("The first step pays for work done once (building and uploading weights, library handles, "
                     "allocator growth, compilation); with so few steady steps it outweighs everything the "
                     "kernels do, so the number measures start-up, not the model."),
        fix=Fix(change=CATALOG["startup_dominated"].fix_text(),
                metric="timeline.first_step_ns / steady step median", direction="decrease",
                expected=f"the measured time drops toward {duration(med)} per step once warm-up is excluded",
                current_value=first, target_value=med),
        confidence=0.85,
    )


def transfer_finding(src: str, cpw: pd.DataFrame, copy_ns: float, window: float, ev_busy: Evidence) -> Finding:
    host_side = cpw[cpw["kind"].isin(["HtoD", "DtoH"])]
    rows = host_side if len(host_side) else cpw  # bytes and time from the same copies
    total_bytes, bw = copy_bandwidth(rows)
    pageable_bytes = float(pageable(host_side)["bytes"].sum())
    ev_copy = Evidence(metric="timeline.copy_fraction", value=round(copy_ns / window, 4), unit="ratio", artifact=src,
                       meaning=f"copies occupy {copy_ns / 1e6:.2f} ms of the {window / 1e6:.2f} ms window")
    ev_bw = Evidence(metric="timeline.host_copy_bandwidth", value=bw, unit="byte/s", artifact=src,
                     meaning=f"{size(total_bytes)} host<->device at {bandwidth(bw)}")
    if total_bytes and pageable_bytes >= PAGEABLE_BYTES_FRACTION * total_bytes:
        ev_pg = Evidence(metric="timeline.pageable_copy_bytes", value=pageable_bytes, unit="byte", artifact=src,
                         meaning=f"{pageable_bytes / total_bytes:.0%} of host<->device bytes come from pageable memory")
        return Finding(
            bound="transfer", mechanism="pageable_transfer", share=copy_ns / window,
            bottleneck=(f"Host-to-device copies from pageable memory take {copy_ns / window:.0%} of the run and "
                        f"move only {bw / 1e9:.1f} GB/s."),
            evidence=[ev_copy, ev_bw, ev_pg],
            explanation=("Pageable host memory cannot be read by the copy engines directly: the driver stages every "
                         "copy through a small pinned bounce buffer with the CPU doing a memcpy, so the transfer "
                         "runs at CPU-copy speed, is synchronous with the host, and cannot overlap kernels."),
            fix=Fix(change=CATALOG["pageable_transfer"].fix_text(),
                    metric="timeline.host_copy_bandwidth", direction="increase",
                    expected="several-fold: pinned copies run near link bandwidth (tens of GB/s)", current_value=bw),
            confidence=0.9,
        )
    return Finding(
        bound="transfer", mechanism="transfer_volume", share=copy_ns / window,
        bottleneck=(f"Host<->device copies take {copy_ns / window:.0%} of the run: {size(total_bytes)} "
                    f"at {bw / 1e9:.1f} GB/s, already from pinned memory."),
        evidence=[ev_copy, ev_bw, ev_busy],
        explanation=("The copies already run from pinned memory near link bandwidth; the cost is the volume itself "
                     "and that the copies do not overlap computation."),
        fix=Fix(change=CATALOG["transfer_volume"].fix_text(),
                metric="timeline.copy_fraction", direction="decrease",
                expected="proportional to the bytes no longer moved, or hidden behind kernels when overlapped",
                current_value=copy_ns / window),
        confidence=0.75,
    )


def host_finding(src, tl, causes, idle, window, ev_busy, summary) -> Finding:
    cause = max(causes, key=causes.get) if causes else "launch_overhead"
    if cause == "unattributed":
        cause = "launch_overhead"
    cause_ns = causes.get(cause, 0.0)
    ev_cause = Evidence(metric=f"timeline.idle_{cause}_ns", value=cause_ns, unit="ns", artifact=src,
                        meaning=f"{cause_ns / idle:.0%} of the {idle / 1e6:.2f} ms of GPU idle time is {cause.replace('_', ' ')}")
    k = tl.kernels
    med_kernel = float((k["end_ns"] - k["start_ns"]).median()) if len(k) else 0.0
    if cause == "launch_overhead":
        launches = int((tl.api["category"] == "launch").sum()) if len(tl.api) else summary.kernel_count
        ev_k = Evidence(metric="timeline.kernel_median_ns", value=med_kernel, unit="ns", artifact=src,
                        meaning=f"median kernel lasts {duration(med_kernel)}; {summary.kernel_count} kernels in the window")
        return Finding(
            bound="host", mechanism="launch_overhead", share=idle / window,
            bottleneck=(f"The GPU is idle {idle / window:.0%} of the time between {summary.kernel_count} tiny kernels: "
                        f"the host cannot launch them as fast as the GPU finishes them."),
            evidence=[ev_busy, ev_k, ev_cause],
            explanation=("Each launch costs several microseconds of host time (framework dispatch plus the CUDA "
                         "launch call) while the kernel itself runs for about as long or less, so the queue runs dry "
                         "and the GPU waits between kernels. Kernel speed is irrelevant here."),
            fix=Fix(change=CATALOG["launch_overhead"].fix_text(),
                    metric="timeline.gpu_busy_fraction", direction="increase",
                    expected=f"from {idle and (1 - idle / window):.0%} toward 90%+, with far fewer kernels per step",
                    current_value=1 - idle / window, target_value=0.9),
            confidence=0.85, missing=[] if launches else ["CUDA API trace (launch calls)"],
        )
    if cause == "allocator":
        allocs = tl.api[tl.api["category"] == "malloc"] if len(tl.api) else tl.api
        n_alloc = int(len(allocs))
        alloc_ns = float((allocs["end_ns"] - allocs["start_ns"]).sum()) if n_alloc else 0.0
        ev_n = Evidence(metric="timeline.allocator_calls", value=n_alloc, unit="count", artifact=src,
                        meaning=f"{n_alloc} cudaMalloc/cudaFree-type calls, {alloc_ns / 1e6:.2f} ms of host time in them")
        return Finding(
            bound="host", mechanism="allocator_churn", share=idle / window,
            bottleneck=(f"The GPU is idle {idle / window:.0%} of the time while the host is inside allocator calls "
                        f"(cudaMalloc/cudaFree) between launches."),
            evidence=[ev_busy, ev_cause, ev_n],
            explanation=("Device allocation is slow host work (page mapping), and cudaFree waits for the GPU to finish "
                         "before releasing memory: allocating and freeing around every launch drains the queue and "
                         "leaves the GPU waiting for the host's allocator, not for any computation."),
            fix=Fix(change=CATALOG["allocator_churn"].fix_text(),
                    metric="timeline.idle_allocator_ns", direction="decrease",
                    expected=f"most of the {cause_ns / 1e6:.2f} ms of allocator-bound idle time disappears; GPU busy rises",
                    current_value=cause_ns),
            confidence=0.8,
        )
    if cause == "host_sync":
        n_sync = int(blocking_calls(tl.api).sum())
        ev_n = Evidence(metric="timeline.sync_calls", value=n_sync, unit="count", artifact=src,
                        meaning=f"{n_sync} synchronizing calls (synchronize, blocking copies) in the capture")
        return Finding(
            bound="host", mechanism="host_sync", share=idle / window,
            bottleneck=(f"The GPU is idle {idle / window:.0%} of the time because the host synchronizes with it "
                        f"every iteration and then does its own work with an empty GPU queue."),
            evidence=[ev_busy, ev_cause, ev_n],
            explanation=("A synchronizing call (cudaDeviceSynchronize, a blocking cudaMemcpy to the host, "
                         "tensor.item()/.cpu()/print of a GPU value) drains the queue: the host waits for the GPU, "
                         "then the GPU waits while the host runs its bookkeeping and issues the next work. Host and "
                         "GPU time add up instead of overlapping."),
            fix=Fix(change=CATALOG["host_sync"].fix_text(),
                    metric="timeline.idle_host_sync_ns", direction="decrease",
                    expected=f"most of the {cause_ns / 1e6:.2f} ms of sync-drained idle time disappears; GPU busy rises",
                    current_value=cause_ns),
            confidence=0.85,
        )
    # host_work
    ev_gap = Evidence(metric="timeline.kernel_ns_per_idle_ns", value=round(summary.kernel_ns / max(idle, 1.0), 4),
                      unit="ratio", artifact=src,
                      meaning=f"{summary.kernel_ns / 1e6:.2f} ms of kernels against {idle / 1e6:.2f} ms of idle GPU")
    return Finding(
        bound="host", mechanism="host_work", share=idle / window,
        bottleneck=(f"The GPU is idle {idle / window:.0%} of the time waiting for the host's own computation between "
                    f"launches (long gaps with few launches and no synchronization)."),
        evidence=[ev_busy, ev_cause, ev_gap],
        explanation=("Between GPU steps the host runs its own code (data preparation, Python logic, CPU math) "
                     "for longer than the GPU work it feeds; nothing is queued meanwhile, so the GPU waits."),
        fix=Fix(change=CATALOG["host_work"].fix_text(),
                metric="timeline.gpu_busy_fraction", direction="increase",
                expected="toward the ratio of GPU work to step time once host work overlaps", current_value=1 - idle / window),
        confidence=0.8,
    )
