"""The answer kernel-profiler gives, as pydantic models with a published JSON schema.

A `Diagnosis` has the four parts of every answer: the bottleneck in one
sentence, two or three measured numbers as evidence (each traceable to a file
and a kernel), the mechanism, and the fix with the metric it should move. The
primary finding's `bound` and `mechanism` sit at the top level for JSON
consumers; secondary findings follow, ranked by their share of time.
"""
from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, Field

from .catalog import MECHANISM_IDS

SCHEMA_VERSION = "1.1"  # 1.1: Roofline.needed_* (the floor for the bytes the work needs)

Bound = Literal["host", "transfer", "memory", "compute", "latency", "near_peak", "comms", "inconclusive"]
Mechanism = Literal[MECHANISM_IDS]  # type: ignore[valid-type]  # the ids of the catalog (catalog.py)
BOUNDS: tuple[str, ...] = Bound.__args__  # type: ignore[attr-defined]
MECHANISMS: tuple[str, ...] = Mechanism.__args__  # type: ignore[attr-defined]


class Evidence(BaseModel):
    """One measured number and where it came from."""

    metric: str = Field(description="metric name as the artifact spells it, or a derived name (timeline.*, derived.*)")
    value: float
    unit: str = Field(description="base unit: ns, byte, byte/s, flop/s, %, ratio, count, ...")
    artifact: str = Field(description="the file the number was read or derived from")
    kernel: Optional[str] = Field(default=None, description="the kernel it belongs to, if any")
    meaning: str = Field(default="", description="what the number shows, in words")


class Roofline(BaseModel):
    """Floor time of one kernel against the ceilings of the path it really uses."""

    kernel: str
    math_path: str = Field(description="fp32, fp64, fp16/bf16 tensor, tf32 tensor, int/other")
    flops: float = Field(description="floating-point operations the kernel executed on that path")
    dram_bytes: float = Field(description="bytes read from and written to device memory")
    duration_ns: float
    arithmetic_intensity: Optional[float] = Field(description="flops per DRAM byte")
    peak_flops: float = Field(description="FLOP/s ceiling of the math path")
    peak_bandwidth: float = Field(description="byte/s ceiling of device memory")
    ceiling_source: str = Field(description="where the ceilings came from (ncu peak-sustained metrics, device table, ...)")
    achieved_flops: float = Field(description="FLOP/s achieved")
    achieved_bandwidth: float = Field(description="byte/s achieved")
    floor_ns: float = Field(description="max(flops / peak_flops, bytes / peak_bandwidth)")
    gap: float = Field(description="duration / floor: 1.0 is the roofline")
    limiter: Literal["memory", "compute"] = Field(description="which term sets the floor")
    # Since schema 1.1: the floor for the bytes the work needs (absent in older JSON).
    needed_bytes: Optional[float] = Field(default=None, description="bytes the work needs to move: the smallest of "
                                          "the DRAM bytes moved, the bytes the threads requested (useful bytes per "
                                          "sector x sectors) and the device memory allocated when it ran")
    needed_source: str = Field(default="", description="which of those bounds set needed_bytes")
    needed_floor_ns: Optional[float] = Field(default=None, description="max(flops / peak_flops, needed_bytes / "
                                             "peak_bandwidth): the time the work needs")
    needed_gap: Optional[float] = Field(default=None, description="duration / needed_floor_ns: the gap answers state")
    needed_limiter: Optional[Literal["memory", "compute"]] = Field(default=None, description="which term sets the "
                                                                   "needed floor: the roofline label")

    @property
    def stated_floor_ns(self) -> float:
        """The floor answers state: the needed one when known, else the one at the measured traffic."""
        return self.needed_floor_ns if self.needed_floor_ns else self.floor_ns

    @property
    def stated_gap(self) -> float:
        return self.needed_gap if self.needed_gap else self.gap

    @property
    def stated_limiter(self) -> str:
        return self.needed_limiter or self.limiter

    @property
    def moved_floor_differs(self) -> bool:
        """The floor at the measured DRAM traffic differs (by over 2%) from the floor for what the work needs,
        so both are worth stating."""
        return self.needed_floor_ns is not None and abs(self.floor_ns - self.needed_floor_ns) > 0.02 * self.needed_floor_ns


class Fix(BaseModel):
    """The change to make and the measurement that should confirm it."""

    change: str
    metric: str = Field(description="the metric expected to move")
    direction: Literal["increase", "decrease"]
    expected: str = Field(description="rough size of the move, in words")
    current_value: Optional[float] = None
    target_value: Optional[float] = None


class Finding(BaseModel):
    """One diagnosed problem (or the statement that a kernel is done)."""

    bound: Bound
    mechanism: Optional[Mechanism] = None
    bottleneck: str = Field(description="one sentence")
    kernel: Optional[str] = None
    share: Optional[float] = Field(default=None, description="fraction of steady-state GPU (or wall) time it concerns")
    evidence: list[Evidence] = Field(default_factory=list)
    explanation: str = Field(default="", description="the mechanism: why the code causes it, tied to the gap")
    fix: Optional[Fix] = None
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    missing: list[str] = Field(default_factory=list, description="metrics or captures that would settle it")
    roofline: Optional[Roofline] = None


class KernelRow(BaseModel):
    name: str
    count: int
    total_ns: float
    median_ns: float
    share: float = Field(description="fraction of steady-state GPU-busy time")


class TimelineSummary(BaseModel):
    source: str
    capture_ns: float = Field(description="whole capture span")
    startup_ns: float = Field(description="capture start to first GPU work")
    window_ns: float = Field(description="steady-state window analyzed")
    window_source: str = Field(description="how the window was chosen (NVTX steps, ProfilerStep, first-to-last GPU op)")
    busy_ns: float = Field(description="union of kernel, copy and set intervals inside the window")
    busy_fraction: float
    kernel_ns: float
    copy_ns: float
    idle_ns: float
    idle_by_cause: dict[str, float] = Field(default_factory=dict, description="ns of idle GPU time per host cause")
    kernel_count: int
    copy_bytes: dict[str, float] = Field(default_factory=dict)
    steps: Optional[int] = None
    step_ns_median: Optional[float] = None
    top_kernels: list[KernelRow] = Field(default_factory=list)
    onetime_ns: float = Field(default=0.0, description="one-time work apart from the steady window (after start-up)")
    onetime_by_class: dict[str, float] = Field(default_factory=dict, description="ns of one-time work per class: "
                                               "jit, library_init, module_loading, allocator, upload, download, "
                                               "sync, warm_up, host")
    repeats: Optional[int] = Field(default=None, description="repetitions of the GPU work found without step markers")


class RankRow(BaseModel):
    """One rank of a multi-process job."""

    rank: int
    pid: Optional[int] = None
    device: Optional[int] = None
    steps: int = 0
    step_p50_ns: Optional[float] = None
    step_p90_ns: Optional[float] = None
    step_p99_ns: Optional[float] = None
    step_max_ns: Optional[float] = None
    compute_ns_per_step: Optional[float] = None
    collective_ns_per_step: Optional[float] = None
    collective_enter_lag_ns: Optional[float] = Field(default=None, description="median delay entering the collective "
                                                     "after the first rank entered it (0 = first)")
    sm_clock_mhz_median: Optional[float] = None
    throttle_reasons: list[str] = Field(default_factory=list)
    source: str = ""


class Diagnosis(BaseModel):
    """kernel-profiler's answer. `bound`/`mechanism` repeat the primary finding's."""

    schema_version: str = SCHEMA_VERSION
    bound: Bound
    mechanism: Optional[Mechanism] = None
    bottleneck: str = Field(description="the bottleneck in one sentence")
    evidence: list[Evidence] = Field(description="two or three measured numbers")
    explanation: str = Field(description="the mechanism, tied to the gap to the roofline")
    fix: Optional[Fix] = None
    confidence: float = Field(ge=0.0, le=1.0)
    missing: list[str] = Field(default_factory=list)
    roofline: Optional[Roofline] = None
    primary: Finding
    secondary: list[Finding] = Field(default_factory=list, description="ranked by share of time")
    timeline: Optional[TimelineSummary] = None
    artifacts: list[str] = Field(default_factory=list)
    device: Optional[str] = None
    straggler_rank: Optional[int] = Field(default=None, description="multi-rank jobs: the slow rank, if any")
    straggler_verdict: Optional[Literal["straggler", "no straggler"]] = Field(
        default=None, description="multi-rank jobs: whether one rank holds the others back beyond noise")
    straggler_cause: Optional[str] = Field(default=None, description="uneven_work | host | throttle:<reason>")
    ranks: list[RankRow] = Field(default_factory=list, description="multi-rank jobs: per-rank table")
    warnings: list[str] = Field(default_factory=list, description="inputs skipped or set apart (not combined with "
                                "the others: another device, program, job or time), and why")

    @classmethod
    def from_findings(cls, primary: Finding, secondary: list[Finding], **extra) -> "Diagnosis":
        return cls(
            bound=primary.bound,
            mechanism=primary.mechanism,
            bottleneck=primary.bottleneck,
            evidence=primary.evidence[:3],
            explanation=primary.explanation,
            fix=primary.fix,
            confidence=primary.confidence,
            missing=primary.missing,
            roofline=primary.roofline,
            primary=primary,
            secondary=sorted(secondary, key=lambda f: -(f.share or 0.0)),
            **extra,
        )


def json_schema() -> dict:
    return Diagnosis.model_json_schema()
