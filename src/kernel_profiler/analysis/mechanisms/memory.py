"""Memory-side mechanisms: local-memory traffic, scattered global accesses, shared-memory bank conflicts."""
from __future__ import annotations

from typing import Optional

from ...answer import Evidence, Finding, Fix, Roofline
from ...artifacts.tables import KernelProfile
from ...catalog import CATALOG
from ...kernel_name import KernelName
from .counters import (BANK_CONFLICTS_LD, BANK_CONFLICTS_ST, L1_SOL, LD_BYTES_PER_SECTOR, LD_REQUESTS, LD_SECTORS,
                       LOCAL_LD_SECTORS, LOCAL_SPILL, LOCAL_ST_SECTORS, MEM_SOL, SHARED_LD_INST, SHARED_LD_WAVEFRONTS,
                       SHARED_ST_INST, SHARED_ST_WAVEFRONTS, ST_BYTES_PER_SECTOR, ST_SECTORS, STALL)
from .evidence import ev, floor_words, gap_text

# Useful bytes per 32-byte global sector below this = at least half of every sector fetched is wasted.
COALESCED_MIN_BYTES_PER_SECTOR = 16.0
# n-way shared-memory conflict (wavefronts per instruction) at or above this is a real serialization.
BANK_CONFLICT_MIN_WAYS = 4.0
# ...and the shared-memory pipe is busy: L1/shared throughput at least this %, or warps stalled on the
# MIO queue at least this many cycles per issued instruction.
SHARED_PIPE_BUSY_PCT = 50.0
MIO_STALL_MIN = 5.0
# Local-memory sectors at least this share of (local + global) L1 sectors.
LOCAL_MIN_SHARE = 0.25


def detect_local_memory(k: KernelProfile, r: Optional[Roofline]) -> Optional[Finding]:
    local = (k.get(LOCAL_LD_SECTORS) or 0.0) + (k.get(LOCAL_ST_SECTORS) or 0.0)
    glob = (k.get(LD_SECTORS) or 0.0) + (k.get(ST_SECTORS) or 0.0)
    if local <= 0 or local / (local + glob) < LOCAL_MIN_SHARE:
        return None
    spills = k.get(LOCAL_SPILL) or 0.0
    kind = "register spills" if spills > 0 else "a per-thread array the compiler placed in local memory"
    return Finding(
        bound="memory", mechanism="local_memory_spill", kernel=k.name, roofline=r,
        bottleneck=(f"`{KernelName(k.name).display(60)}` is memory-bound on local-memory traffic ({kind}): "
                    f"{local / (local + glob):.0%} of its L1 sectors are local loads and stores."),
        evidence=[
            ev(k, LOCAL_LD_SECTORS, "sector", "local-memory load sectors"),
            ev(k, LOCAL_ST_SECTORS, "sector", "local-memory store sectors"),
            ev(k, "dram__bytes_write.sum", "byte", "DRAM bytes written (local data evicted from L2 lands here)"),
        ],
        explanation=(f"Local memory is per-thread storage in device memory, cached in L1/L2. {kind.capitalize()} turns "
                     f"what should be register accesses into loads and stores through the memory hierarchy, which "
                     f"dominate the kernel's traffic; {gap_text(r)}."),
        fix=Fix(change=CATALOG["local_memory_spill"].fix_text(),
                metric=LOCAL_LD_SECTORS, direction="decrease", expected="to ~0; kernel time toward " + floor_words(r),
                current_value=k.get(LOCAL_LD_SECTORS), target_value=0.0),
        confidence=0.85,
    )


def detect_uncoalesced(k: KernelProfile, r: Optional[Roofline]) -> Optional[Finding]:
    ld = k.get(LD_BYTES_PER_SECTOR)
    st = k.get(ST_BYTES_PER_SECTOR)
    sectors, requests = k.get(LD_SECTORS), k.get(LD_REQUESTS)
    spr = sectors / requests if sectors and requests else None
    missing: list[str] = []
    if ld is None and st is None and spr:
        # Older ncu builds lack the bytes-per-sector metric: estimate it from sectors per request,
        # assuming 4-byte accesses (128 bytes per warp request).
        ld = min(32.0, 128.0 / spr)
        missing.append(f"{LD_BYTES_PER_SECTOR} (estimated from sectors per request assuming 4-byte loads)")
    worst = min((v for v in (ld, st) if v), default=None)
    if worst is None or worst >= COALESCED_MIN_BYTES_PER_SECTOR:
        return None
    metric = LD_BYTES_PER_SECTOR if worst == ld else ST_BYTES_PER_SECTOR
    lines = [Evidence(metric=f"{LD_SECTORS}/{LD_REQUESTS}" if missing else metric,
                      value=round(spr, 2) if missing else worst, unit="sector/request" if missing else "byte/sector",
                      artifact=k.source, kernel=k.name,
                      meaning=(f"{spr:.1f} sectors per warp load request (4 for coalesced 4-byte loads)" if missing
                               else f"only {worst:.0f} of every 32 bytes fetched are used"))]
    if spr is not None and not missing:
        lines.append(Evidence(metric=f"{LD_SECTORS}/{LD_REQUESTS}", value=round(spr, 2), unit="sector/request",
                              artifact=k.source, kernel=k.name,
                              meaning=f"{spr:.1f} sectors per warp load request (4 for coalesced 4-byte loads)"))
    lines.append(ev(k, L1_SOL if k.get(L1_SOL) is not None else MEM_SOL, "%", "L1 busy serving the scattered sectors"))
    return Finding(
        bound="memory", mechanism="uncoalesced_global", kernel=k.name, roofline=r,
        bottleneck=(f"`{KernelName(k.name).display(60)}` is memory-bound on scattered global accesses: each 32-byte sector it fetches "
                    f"delivers {worst:.0f} useful bytes."),
        evidence=lines,
        explanation=(f"Neighbouring threads of a warp access addresses far apart, so one warp-wide access needs up to "
                     f"32 separate sectors instead of 4; the memory system moves and tracks {32 / worst:.0f}x the "
                     f"useful bytes and the warps stall waiting for them; {gap_text(r)}."),
        fix=Fix(change=CATALOG["uncoalesced_global"].fix_text(),
                metric=f"{LD_SECTORS}/{LD_REQUESTS}" if missing else metric,
                direction="decrease" if missing else "increase",
                expected=(f"from {spr:.0f} to ~4 sectors per request" if missing else
                          f"from {worst:.0f} to 32 bytes per sector") + "; kernel time toward " + floor_words(r),
                current_value=spr if missing else worst, target_value=4.0 if missing else 32.0),
        confidence=0.7 if missing else 0.85, missing=missing,
    )


def detect_bank_conflicts(k: KernelProfile, r: Optional[Roofline]) -> Optional[Finding]:
    # n-way = wavefronts / conflict-free wavefronts (wavefronts - conflicts) when ncu counts conflicts: a
    # conflict-free 128-bit access needs 4 wavefronts by design, so wavefronts per instruction alone (or
    # 1 + conflicts per instruction) would overstate it. Without the conflict count, wavefronts/inst is used.
    ways = []
    for wf, inst, conf, label in ((SHARED_LD_WAVEFRONTS, SHARED_LD_INST, BANK_CONFLICTS_LD, "loads"),
                                  (SHARED_ST_WAVEFRONTS, SHARED_ST_INST, BANK_CONFLICTS_ST, "stores")):
        w, i, c = k.get(wf), k.get(inst), k.get(conf)
        if not i or not w:
            continue
        ideal = (w - c) / i if c is not None and w > c else 1.0
        ways.append(((w / i) / ideal, label, wf, inst, w / i, ideal))
    if not ways:
        return None
    nway, label, wf, inst, per_inst, ideal = max(ways)
    pipe_busy = (k.get(L1_SOL) or 0.0) >= SHARED_PIPE_BUSY_PCT or (k.get(STALL.format("mio_throttle")) or 0.0) >= MIO_STALL_MIN
    if nway < BANK_CONFLICT_MIN_WAYS or not pipe_busy:
        return None
    return Finding(
        bound="memory", mechanism="shared_bank_conflict", kernel=k.name, roofline=r,
        bottleneck=(f"`{KernelName(k.name).display(60)}` is limited by {nway:.0f}-way shared-memory bank conflicts on its shared "
                    f"{label}."),
        evidence=[
            Evidence(metric=f"{wf}/{inst}", value=round(per_inst, 2), unit="wavefronts/inst", artifact=k.source,
                     kernel=k.name, meaning=(f"each shared {label[:-1]} instruction needs {per_inst:.1f} wavefronts where "
                                             f"{ideal:.0f} would do without conflicts: {nway:.1f}-way")),
            ev(k, BANK_CONFLICTS_LD, "conflict", "bank conflicts on shared loads"),
            ev(k, STALL.format("mio_throttle"), "cycles/issue", "warps stalled on the shared-memory (MIO) queue"),
        ],
        explanation=(f"The 32 threads of a warp hit addresses in the same bank (e.g. a column of a [32][32] float "
                     f"tile, 128 bytes apart), so each access is serialized into {nway:.0f} times the conflict-free wavefronts; the "
                     f"shared-memory pipe saturates and warps queue behind it; {gap_text(r)}."),
        fix=Fix(change=CATALOG["shared_bank_conflict"].fix_text(),
                metric=f"{wf}/{inst}", direction="decrease",
                expected=f"from {per_inst:.0f} to ~{ideal:.0f} wavefront(s) per instruction",
                current_value=per_inst, target_value=ideal),
        confidence=0.85,
    )
