"""No detector fired: the kernel's bound from its speed-of-light throughputs alone, or inconclusive."""
from __future__ import annotations

from typing import Optional

from ...answer import Finding, Roofline
from ...artifacts.tables import KernelProfile
from ...kernel_name import KernelName
from ..roofline import DURATION as DURATION_METRIC
from .compute import COMPUTE_BOUND_SOL
from .counters import DRAM_SOL, LD_BYTES_PER_SECTOR, MEM_SOL, OCC_THEORETICAL, SM_SOL, sol
from .evidence import ev, gap_text
from .stalls import next_look, stall_evidence, stall_words

# Memory-bound fallback.
MEMORY_BOUND_SOL = 60.0


def fallback(k: KernelProfile, r: Optional[Roofline]) -> Finding:
    """No detector fired. A throughput the report does not hold is said to be missing, never printed as 0%."""
    s = sol(k)
    sm = s.get("sm")
    mem_metric = MEM_SOL if "memory" in s or "dram" not in s else DRAM_SOL
    mem = s.get("memory", s.get("dram"))
    missing = [m for m in (DURATION_METRIC, SM_SOL, MEM_SOL, LD_BYTES_PER_SECTOR, OCC_THEORETICAL) if k.get(m) is None]
    missing = missing or next_look(k, "the hot instructions")
    if sm is None and mem is None:
        held = [m for m in (DURATION_METRIC, "dram__bytes.sum", "dram__bytes_read.sum") if k.get(m) is not None]
        return Finding(
            bound="inconclusive", mechanism=None, kernel=k.name, roofline=r,
            bottleneck=(f"`{KernelName(k.name).display(60)}`: the report holds no SM or memory throughput (speed of light), so "
                        f"what limits it cannot be named."),
            evidence=[ev(k, m, k.units.get(m, ""), "measured in the report") for m in held[:2]]
            or [ev(k, SM_SOL, "%", "SM throughput (not in the report)")],
            explanation=f"None of the mechanism detectors fired; {gap_text(r)}.",
            fix=None, confidence=0.2, missing=missing)
    if sm is not None and mem is not None:
        bound = "memory" if mem >= MEMORY_BOUND_SOL else ("compute" if sm >= COMPUTE_BOUND_SOL else "latency")
    elif (mem or 0.0) >= MEMORY_BOUND_SOL:
        bound = "memory"
    elif (sm or 0.0) >= COMPUTE_BOUND_SOL:
        bound = "compute"
    else:
        bound = "inconclusive"  # one throughput is low and the other was not measured
    pct = lambda v: f"{v:.0f}%" if v >= 10 else f"{v:.2g}%"  # noqa: E731  (0.14% is not "0%")
    sm_txt = f"SM {pct(sm)}" if sm is not None else "SM not measured"
    mem_txt = f"memory {pct(mem)}" if mem is not None else "memory not measured"
    label = f"{bound}-bound" if bound != "inconclusive" else "of unknown bound"
    return Finding(
        bound=bound if r else "inconclusive", mechanism=None, kernel=k.name, roofline=r,
        bottleneck=(f"`{KernelName(k.name).display(60)}` is {label} ({sm_txt}, {mem_txt} of peak) but no specific "
                    f"mechanism in the report explains its gap."),
        evidence=[ev(k, SM_SOL, "%", "SM throughput"), ev(k, mem_metric, "%", "memory throughput")] + stall_evidence(k),
        explanation=f"None of the mechanism detectors fired; {gap_text(r)}." + stall_words(k),
        fix=None, confidence=0.3, missing=missing,
    )
