"""Signatures of where data and work are placed: a kernel that reads host memory over PCIe (zero-copy), managed
pages that migrate every step, streams the legacy default stream serializes. Pure functions over `Measured`, like
the rest of signatures.py (which imports them, so `signatures.check` finds them by name)."""
from __future__ import annotations

from .signature_base import ABSENT, PRESENT, UNKNOWN, Measured


def sig_zero_copy(x: Measured) -> tuple[str, str]:
    """The kernel reads host memory over PCIe itself: L2 read misses to the system-memory aperture (zero-copy)."""
    from .analysis.mechanisms.host_memory import ZERO_COPY_MIN_SHARE, host_reads, reads_host_memory

    h = host_reads(x.m) if x.profile is not None else None
    if h is None:
        return UNKNOWN, "no system-memory or PCIe counters for the kernel"
    share = f", {h.share:.0%} of its L2 read misses" if h.share is not None else ""
    txt = f"it reads {h.bytes / 1e6:,.1f} MB from host memory per launch ({h.metric}{share})"
    if not reads_host_memory(h):
        return ABSENT, (txt + f": its data comes from device memory (zero-copy needs >= 1 MiB and "
                              f">= {ZERO_COPY_MIN_SHARE:.0%} of the misses from host memory)")
    return PRESENT, txt


def sig_managed_migration(x: Measured) -> tuple[str, str]:
    """Unified-memory pages migrate every step and the migrations take a real share of the GPU's busy time."""
    from .analysis.unified_memory import MIGRATION_MIN_BUSY_SHARE, MIGRATION_MIN_BYTES_PER_STEP

    s, p = x.timeline, x.program
    if s is None or not s.window_ns:
        return UNKNOWN, "no timeline"
    moved, ns = p.get("timeline.migration_bytes"), p.get("timeline.migration_ns") or 0.0
    if moved is None:
        return UNKNOWN, "the timeline does not record unified-memory migrations"
    steps = s.steps or s.repeats or 1
    if not moved:
        return ABSENT, (f"no unified-memory migration in the {s.window_ns / 1e6:.1f} ms steady window: the data does "
                        f"not move between host and device on demand")
    share = ns / s.busy_ns if s.busy_ns else 0.0
    txt = (f"{moved / steps / 1e6:,.1f} MB of unified-memory migrations per step, {ns / 1e6:.1f} ms ({share:.0%} of the "
           f"GPU's busy time)")
    present = moved / steps >= MIGRATION_MIN_BYTES_PER_STEP and share >= MIGRATION_MIN_BUSY_SHARE
    return (PRESENT if present else ABSENT), txt


def sig_default_stream(x: Measured) -> tuple[str, str]:
    """Kernels of several streams never overlap while work on the legacy default stream runs between them."""
    p = x.program
    streams, overlaps = p.get("timeline.kernel_streams"), p.get("timeline.overlapping_kernel_pairs")
    if streams is None or overlaps is None:
        return UNKNOWN, "no per-stream kernel timeline"
    if streams < 2:
        return ABSENT, ("the steady window runs its kernels on one stream: there are no concurrent streams for the "
                        "default stream to serialize")
    if overlaps > 0:
        return ABSENT, (f"the kernels of the {streams:.0f} streams run concurrently ({overlaps:,.0f} overlapping "
                        f"kernel pairs in the steady window): nothing serializes them")
    null = p.get("timeline.null_stream_ops")
    if null is None:
        return UNKNOWN, (f"the kernels of {streams:.0f} streams never overlap, but the capture does not say which "
                         f"stream is the legacy default one")
    if not null:
        return ABSENT, (f"the kernels of {streams:.0f} streams never overlap, but no work runs on the legacy default "
                        f"stream in the steady window: something else orders them")
    return PRESENT, (f"the kernels of {streams:.0f} streams never overlap in the steady window, with {null:,.0f} "
                     f"operations on the legacy default stream between them")
