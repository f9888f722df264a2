"""Unified-memory page migrations in the steady window: a cudaMallocManaged buffer that both the CPU and the GPU
touch every step moves, page group by page group, on demand (the nsys rows of copy kind UVM_HtoD / UVM_DtoH).

Each migration is a page fault the kernel (or the CPU) stalls on; the records show only the transfer, so the
migrations' share of the GPU's busy time is a lower bound on what they cost.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import pandas as pd

from . import intervals as iv
from ..answer import Evidence, Finding, Fix
from ..catalog import CATALOG
from ..display import duration, size

UVM_KINDS = ("UVM_HtoD", "UVM_DtoH", "UVM_DtoD")
# Migrations are the program's data path when the steady window moves at least this many bytes per step...
MIGRATION_MIN_BYTES_PER_STEP = float(1 << 20)
# ...and they take at least this share of the GPU's busy time (a page migrated once, then resident, does neither).
MIGRATION_MIN_BUSY_SHARE = 0.25


@dataclass(frozen=True)
class Migrations:
    """Unified-memory migrations in a window: bytes each way, their time (union of intervals), their count."""

    htod_bytes: float
    dtoh_bytes: float
    ns: float
    count: int

    @property
    def bytes(self) -> float:
        return self.htod_bytes + self.dtoh_bytes


def migrations(copies: pd.DataFrame, lo: float, hi: float) -> Migrations:
    """The unified-memory migrations among `copies` (a Timeline's copies table) that overlap [lo, hi]."""
    if not len(copies):
        return Migrations(0.0, 0.0, 0.0, 0)
    m = iv.rows_in(copies[copies["kind"].isin(UVM_KINDS)], lo, hi)
    if not len(m):
        return Migrations(0.0, 0.0, 0.0, 0)
    s, e = iv.union(*iv.clip(m["start_ns"].to_numpy(np.float64), m["end_ns"].to_numpy(np.float64), lo, hi))
    return Migrations(float(m.loc[m["kind"] == "UVM_HtoD", "bytes"].sum()),
                      float(m.loc[m["kind"] == "UVM_DtoH", "bytes"].sum()), iv.total(s, e), int(len(m)))


def material(m: Migrations, steps: Optional[int], busy_ns: float) -> bool:
    """Migrations every step that take a real share of the GPU's busy time."""
    per_step = m.bytes / max(steps or 1, 1)
    return per_step >= MIGRATION_MIN_BYTES_PER_STEP and busy_ns > 0 and m.ns / busy_ns >= MIGRATION_MIN_BUSY_SHARE


def managed_finding(src: str, m: Migrations, steps: Optional[int], busy_ns: float, window: float,
                    ev_busy: Evidence) -> Finding:
    n = max(steps or 1, 1)
    per = "per step" if steps else "in the window"
    share = m.ns / busy_ns if busy_ns else 0.0
    return Finding(
        bound="transfer", mechanism="managed_migration", share=m.ns / window,
        bottleneck=(f"Unified-memory pages migrate between host and device every step: {size(m.bytes / n)} {per} "
                    f"({size(m.htod_bytes)} host-to-device and {size(m.dtoh_bytes)} device-to-host in the window, "
                    f"{m.count:,} migrations), taking {share:.0%} of the GPU's busy time."),
        evidence=[
            Evidence(metric="timeline.migration_bytes", value=m.bytes, unit="byte", artifact=src,
                     meaning=f"unified-memory bytes migrated in the steady window ({size(m.bytes / n)} {per})"),
            Evidence(metric="timeline.migration_ns", value=m.ns, unit="ns", artifact=src,
                     meaning=f"{duration(m.ns)} of migrations, {share:.0%} of the GPU's busy time"),
            ev_busy,
        ],
        explanation=("The data lives in managed memory (cudaMallocManaged) that the CPU and the GPU both touch every "
                     "step: each CPU write faults its page back to the host, and the next kernel faults it back to the "
                     "device, a page group at a time, at a fraction of the copy engines' bandwidth. The kernel stalls "
                     "on its faults (it runs far longer in the timeline than with the pages resident) and the CPU "
                     "pass stalls on its own: the step pays for moving the data twice, on demand."),
        fix=Fix(change=CATALOG["managed_migration"].fix_text(), metric="timeline.migration_bytes",
                direction="decrease", expected="to ~0 per step: one explicit copy per step at the link's rate, or none",
                current_value=m.bytes, target_value=0.0),
        confidence=0.85,
    )
