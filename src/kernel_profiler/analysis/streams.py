"""Streams in the steady window: do the kernels of different streams run at the same time, and does work on the
legacy default (NULL) stream sit between them?

Work on the legacy default stream waits for all earlier work of every blocking stream and makes all later work
wait for it: a memset, copy or kernel issued there without a stream argument is a device-wide barrier. Kernels
of several streams that never overlap, with such work between them, run one at a time.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..answer import Evidence, Finding, Fix
from .intervals import rows_in
from ..artifacts.tables import Timeline
from ..catalog import CATALOG
from ..display import duration
from ..kernel_name import KernelName

# The serialization costs time only when the kernels leave SMs idle: at least this share of kernel time is in
# kernels whose grid is smaller than the SM count (they could run side by side).
SMALL_KERNEL_SHARE = 0.5


@dataclass(frozen=True)
class StreamUse:
    """How the steady window's kernels use streams."""

    streams: int  # streams (not the legacy default one) that run kernels in the window
    kernels: int  # kernels in the window
    overlaps: int  # pairs of kernels that run at the same time (one starts before the other ends)
    null_ops: Optional[int]  # kernels, copies and memsets on the legacy default stream; None: the format does not say
    small_share: Optional[float]  # kernel time in grids smaller than the SM count / all kernel time; None: unknown
    kernel_ns: float  # summed kernel time in the window


def overlapping_pairs(starts: np.ndarray, ends: np.ndarray) -> int:
    """Pairs (a, b) with a.start <= b.start < a.end, b after a in start order: kernels that run at the same time."""
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    return int(np.clip(np.searchsorted(s, e, side="left") - np.arange(1, len(s) + 1), 0, None).sum()) if len(s) else 0


def stream_use(tl: Timeline, lo: float, hi: float) -> Optional[StreamUse]:
    """The window's stream use; None without kernels or stream ids."""
    k = rows_in(tl.kernels, lo, hi)
    if not len(k) or k["stream"].isna().all():
        return None
    st, en = k["start_ns"].to_numpy(np.float64), k["end_ns"].to_numpy(np.float64)
    null = tl.null_streams
    null_ops = None
    if null:
        null_ops = int(sum(int(rows_in(df, lo, hi)["stream"].isin(list(null)).sum())
                           for df in (tl.kernels, tl.copies, tl.sets) if len(df)))
    dur = en - st
    small = None
    sms = tl.gpus[0].sm_count if tl.gpus else None
    if sms and {"grid_x", "grid_y", "grid_z"} <= set(k.columns) and dur.sum() > 0:
        blocks = (k["grid_x"] * k["grid_y"] * k["grid_z"]).to_numpy(np.float64)
        small = float(dur[blocks < sms].sum() / dur.sum())
    streams = int(k.loc[~k["stream"].isin(list(null)), "stream"].nunique())
    return StreamUse(streams=streams, kernels=int(len(k)), overlaps=overlapping_pairs(st, en), null_ops=null_ops,
                     small_share=small, kernel_ns=float(dur.sum()))


def serialized(u: Optional[StreamUse], steps: Optional[int]) -> bool:
    """Kernels of several streams that never overlap, with legacy-default-stream work (at least one per step)
    between them, while most kernel time is in grids that leave SMs idle."""
    return (u is not None and u.streams >= 2 and u.overlaps == 0 and u.null_ops is not None
            and u.null_ops >= max(steps or 1, 1) and (u.small_share is None or u.small_share >= SMALL_KERNEL_SHARE))


def serialization_finding(tl: Timeline, lo: float, hi: float, steps: Optional[int], top: Optional[str]
                          ) -> Optional[Finding]:
    """The finding when the window's streams are serialized by the legacy default stream (`serialized`), else None."""
    u = stream_use(tl, lo, hi)
    if not serialized(u, steps):
        return None
    src, n = tl.source, max(steps or 1, 1)
    sms = tl.gpus[0].sm_count if tl.gpus else None
    k = rows_in(tl.kernels, lo, hi)
    rows = k[k["name"] == top] if top is not None else k
    blocks = int(rows.iloc[0]["grid_x"] * rows.iloc[0]["grid_y"] * rows.iloc[0]["grid_z"]) if len(rows) else None
    name = KernelName(str(top)).qualified if top is not None else "the kernels"
    ev = [Evidence(metric="timeline.kernel_streams", value=u.streams, unit="count", artifact=src,
                   meaning=f"{u.streams} streams run kernels in the steady window"),
          Evidence(metric="timeline.overlapping_kernel_pairs", value=u.overlaps, unit="count", artifact=src,
                   meaning=f"no two of its {u.kernels} kernels run at the same time"),
          Evidence(metric="timeline.null_stream_ops", value=u.null_ops, unit="count", artifact=src,
                   meaning=f"{u.null_ops} operations on the legacy default stream between them ({u.null_ops / n:.0f} per step)")]
    if blocks and sms:
        ev.append(Evidence(metric="timeline.grid_blocks", value=blocks, unit="block", artifact=src, kernel=top,
                           meaning=f"`{name}` launches {blocks} blocks on a {sms}-SM GPU"))
    fits = f" ({blocks} blocks on {sms} SMs)" if blocks and sms else ""
    target = u.kernel_ns / n / u.streams
    return Finding(
        bound="latency", mechanism="default_stream_serialization", kernel=top, share=1.0,
        bottleneck=(f"The kernels of {u.streams} streams never overlap: {u.null_ops} operations on the legacy default "
                    f"stream sit between them, each a device-wide barrier, so `{name}`{fits} runs alone and most SMs "
                    f"idle."),
        evidence=ev,
        explanation=("Work issued without a stream argument (cudaMemsetAsync/cudaMemcpyAsync/a launch on stream 0) goes "
                     "to the legacy default stream, which waits for all earlier work of every blocking stream and "
                     "makes all later work wait for it. With such an operation between the launches, the streams' "
                     "independent kernels run one after another, each on a fraction of the SMs, instead of side by "
                     "side."),
        fix=Fix(change=CATALOG["default_stream_serialization"].fix_text(), metric="timeline.steady_step_median_ns",
                direction="decrease",
                expected=(f"toward ~{duration(target)} of kernel time per step as the {u.streams} streams' kernels run "
                          f"side by side (now {duration(u.kernel_ns / n)} one after another)"),
                current_value=u.kernel_ns / n, target_value=target),
        confidence=0.8,
    )
