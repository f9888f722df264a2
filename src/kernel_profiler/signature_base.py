"""The vocabulary of the signatures (signatures.py, signatures_placement.py): the three verdicts, and `Measured`, what
the captures say about the kernel (or program) a claim is about."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from .artifacts.tables import KernelProfile
    from .answer import RankRow, Roofline, TimelineSummary

PRESENT, ABSENT, UNKNOWN = "present", "absent", "unknown"


@dataclass
class Measured:
    """What the captures say about the kernel (or program) a claim is about."""

    profile: Optional[KernelProfile] = None
    roofline: Optional[Roofline] = None
    sass_ops: dict[str, int] = field(default_factory=dict)
    spill: tuple[int, int] = (0, 0)  # (stack bytes, spill bytes) from the compiler
    timeline: Optional[TimelineSummary] = None
    name: str = ""
    program: dict[str, float] = field(default_factory=dict)  # program-level values by metric (timeline.pageable_share, ...)
    ranks: list[RankRow] = field(default_factory=list)  # the ranks of a multi-rank capture, compared (analysis/ranks.py)

    def m(self, metric: str) -> Optional[float]:
        return self.profile.get(metric) if self.profile is not None else None

    def ops(self, *prefixes: str) -> Optional[int]:
        if not self.sass_ops:
            return None
        return sum(v for op, v in self.sass_ops.items() if op.startswith(prefixes))
