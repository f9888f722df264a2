"""The critic's verdict, as pydantic models; the answer under review is `kernel_profiler.answer.Answer`."""
from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, Field

from ..answer import Answer, Evidence
from ..errors import KernelProfilerError


class AnswerFormatError(KernelProfilerError):
    """The answer text is neither Answer/Diagnosis JSON nor a Markdown four-part answer."""


# The answer under review is the one answer model (kernel_profiler.answer.Answer); evidence items are its Evidence.
EvidenceItem = Evidence


class NumberAudit(BaseModel):
    """One number of the answer and what it matched (for `critique --json`)."""

    written: str
    where: str
    fact: Optional[str] = Field(None, description="the fact matched: metric [kernel] = value (artifact) via derivation")
    derivation: Optional[str] = Field(None, description="the declared derivation, when the number is derived")
    operands: list[str] = Field(default_factory=list)
    unverified: bool = Field(False, description="no capture measures it and it is not presented as a measurement "
                                                "(knowledge, a size from the source, a prediction): listed, not checked")


class ModelReview(BaseModel):
    """A model reviewer's verdict on an answer given to `critique --review` (the reviewer `ask` uses)."""

    model: str
    verdict: Literal["accept", "reject"]
    reasons: list[str] = Field(default_factory=list)


class Verdict(BaseModel):
    verdict: Literal["accept", "reject"]
    reasons: list[str] = Field(default_factory=list)
    checks: dict[str, bool] = Field(default_factory=dict)
    failed: dict[str, list[str]] = Field(default_factory=dict, description="the reasons of each check that failed")
    reading: Literal["layout", "role"] = Field(
        "layout", description="how the four parts were read: from the answer's layout (headings, labels, paragraph "
                              "order), or by the role of each sentence after the layout's reading missed a part")
    grounds: Optional[Literal["contradicted", "unconfirmed"]] = Field(
        None, description="what a rejection rests on: 'contradicted' (a measurement contradicts the answer) or "
                          "'unconfirmed' (only what the critic could not confirm: a number its words do not bind to "
                          "a measured value, a causal chain or a fix's outcome it did not find); None when accepted")
    review: Optional[ModelReview] = Field(
        None, description="the model reviewer's verdict (critique --review), which then stands as `verdict`; "
                          "`failed`, `checks` and `grounds` stay the deterministic checks' record")
    numbers: list[NumberAudit] = Field(default_factory=list, description="every number checked and its match")
    mechanism: Optional[str] = Field(None, description="the mechanism id the answer claims")
    signature: Optional[str] = Field(None, description="the measurement behind the mechanism check")
