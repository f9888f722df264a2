"""The answer under review and the critic's verdict, as pydantic models."""
from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, Field

from ..answer import Diagnosis
from ..errors import KernelProfilerError


class AnswerFormatError(KernelProfilerError):
    """The answer text is neither Diagnosis/Answer JSON nor a Markdown four-part answer."""


# ---------------------------------------------------------------- models
class EvidenceItem(BaseModel):
    metric: Optional[str] = None
    value: float
    unit: Optional[str] = None
    artifact: Optional[str] = None
    kernel: Optional[str] = None
    text: str = ""


class Answer(BaseModel):
    """The four-part answer an agent gives."""

    bottleneck: str
    evidence: list[EvidenceItem] = Field(default_factory=list)
    mechanism: str
    fix: str
    fix_metric: Optional[str] = None
    fix_direction: Optional[Literal["increase", "decrease"]] = None
    bound: Optional[str] = None
    mechanism_id: Optional[str] = None
    kernel: Optional[str] = None
    also_found: list[str] = Field(default_factory=list)  # one-time work etc., reported apart

    @classmethod
    def from_diagnosis(cls, d: Diagnosis) -> "Answer":
        fix = ""
        if d.fix is not None:
            fix = d.fix.change + (f" Expected: {d.fix.expected}." if d.fix.expected else "")
        return cls(
            bottleneck=d.bottleneck,
            evidence=[EvidenceItem(metric=e.metric, value=e.value, unit=e.unit, artifact=e.artifact,
                                   kernel=e.kernel, text=e.meaning) for e in d.evidence],
            mechanism=d.explanation,
            fix=fix,
            fix_metric=d.fix.metric if d.fix else None,
            fix_direction=d.fix.direction if d.fix else None,
            bound=d.bound,
            mechanism_id=d.mechanism,
            kernel=d.primary.kernel,
            also_found=[f.bottleneck + (f" Fix: {f.fix.change}" if f.fix else "") for f in d.secondary
                        if f.mechanism == "startup_dominated" and f is not d.primary],
        )


class NumberAudit(BaseModel):
    """One number of the answer and what it matched (for `critique --json`)."""

    written: str
    where: str
    fact: Optional[str] = Field(None, description="the fact matched: metric [kernel] = value (artifact) via derivation")
    derivation: Optional[str] = Field(None, description="the declared derivation, when the number is derived")
    operands: list[str] = Field(default_factory=list)


class Verdict(BaseModel):
    verdict: Literal["accept", "reject"]
    reasons: list[str] = Field(default_factory=list)
    checks: dict[str, bool] = Field(default_factory=dict)
    numbers: list[NumberAudit] = Field(default_factory=list, description="every number checked and its match")
    mechanism: Optional[str] = Field(None, description="the mechanism id the answer claims")
    signature: Optional[str] = Field(None, description="the measurement behind the mechanism check")
