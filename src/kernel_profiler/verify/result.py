"""What `verify` reports: one record per comparison (kernels, overall time, the prediction, the bottleneck), and the
exit code a CI job reads from it."""
from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, Field

from ..answer import Diagnosis
from ..exitcodes import ExitCode
from .text import render

Verdict = Literal["improved", "regressed", "within_noise"]
PredictionStatus = Literal["confirmed", "wrong_direction", "not_evaluated", "partial"]

EXIT_IMPROVED = ExitCode.OK
EXIT_REGRESSED = ExitCode.REJECTED
EXIT_WITHIN_NOISE = ExitCode.WITHIN_NOISE


class Measurement(BaseModel):
    """One side of a comparison: the median of repeated measurements and their spread."""

    median: float
    q25: float
    q75: float
    n: int


class KernelSide(BaseModel):
    """A kernel present on one side only."""

    name: str
    launch: Optional[str] = Field(default=None, description="grid=(x,y,z) block=(x,y,z), if the timeline has it")
    count: int
    median_ns: float
    total_ns: float


class KernelChange(BaseModel):
    name: str = Field(description="the kernel's name on the AFTER side")
    before_name: str
    match: Literal["name+launch", "base+launch", "name", "base"]
    before_launch: Optional[str] = None
    after_launch: Optional[str] = None
    launch_changed: bool = False
    before: Measurement
    after: Measurement
    ratio: float = Field(description="after / before median duration")
    speedup: float = Field(description="before / after median duration")
    beyond_noise: bool


class OverallChange(BaseModel):
    metric: Literal["step_ns", "gpu_busy_ns", "profiled_kernel_ns"]
    before: Measurement
    after: Measurement
    ratio: float = Field(description="after / before")
    speedup: float = Field(description="before / after")
    beyond_noise: bool
    method: str = Field(description="how the noise was judged")


class PredictionCheck(BaseModel):
    metric: Optional[str] = None
    direction: Optional[Literal["increase", "decrease"]] = None
    expected: str = ""
    kernel: Optional[str] = None
    before_value: Optional[float] = None
    after_value: Optional[float] = None
    target_value: Optional[float] = None
    unit: str = Field(default="", description="base unit of the metric's values (ns, byte, %, byte/sector, ...)")
    progress: Optional[float] = Field(default=None, description="(after - before) / (target - before)")
    source: str = Field(default="", description="where the AFTER value was read")
    detail: str = ""


class VerifyResult(BaseModel):
    """What `kernel-profiler verify BEFORE AFTER` found."""

    verdict: Verdict
    speedup: float
    overall: OverallChange
    kernels: list[KernelChange] = Field(default_factory=list)
    removed: list[KernelSide] = Field(default_factory=list)
    added: list[KernelSide] = Field(default_factory=list)
    prediction: PredictionStatus
    prediction_check: PredictionCheck
    before_bound: str
    before_mechanism: Optional[str] = None
    before_bottleneck: str
    after_bound: str
    after_mechanism: Optional[str] = None
    after_bottleneck: str
    bottleneck_moved: bool = Field(description="the primary (bound, mechanism) differs between BEFORE and AFTER")
    before_mechanism_still_present: bool = Field(description="the BEFORE mechanism appears among AFTER's findings")
    before_artifacts: list[str] = Field(default_factory=list)
    after_artifacts: list[str] = Field(default_factory=list)
    after_diagnosis: Diagnosis
    shared_kernels: int = Field(default=0, description="kernels found on both sides (paired by name)")
    warnings: list[str] = Field(default_factory=list, description="what makes the comparison doubtful (no shared "
                                "kernel, another device) and inputs set apart on either side")

    def exit_code(self) -> int:
        """0 improved (prediction not wrong_direction); 1 regressed or prediction wrong_direction; 5 within noise (exitcodes.py)."""
        if self.verdict == "regressed" or self.prediction == "wrong_direction":
            return EXIT_REGRESSED
        if self.verdict == "within_noise":
            return EXIT_WITHIN_NOISE
        return EXIT_IMPROVED

    def render(self) -> str:
        return render(self)
