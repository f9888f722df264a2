"""The tools about the machine and the working tree: gpu_telemetry (NVML), read_source and find_targets."""
from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, Field

from ...errors import ArtifactError
from ...telemetry import per_gpu
from .. import environment
from ..context import ToolContext
from ..finders import find_targets, query_words
from ..sandbox import MAX_TELEMETRY_S, READ_CAP_BYTES


# =============================================================== gpu_telemetry
class TelemetryInput(BaseModel):
    """Sample NVML clocks, throttle reasons, temperature, power and utilization for a while."""

    seconds: float = Field(2.0, gt=0, le=MAX_TELEMETRY_S)
    interval_s: float = Field(0.1, ge=0.01, le=5.0)


class GpuTelemetry(BaseModel):
    gpu: int
    name: Optional[str]
    samples: int
    sm_clock_mhz_median: Optional[float]
    max_sm_clock_mhz: Optional[float]
    temperature_c_max: Optional[float]
    power_w_median: Optional[float]
    power_limit_w: Optional[float]
    gpu_util_pct_median: Optional[float]
    throttle_reasons: dict[str, int] = Field(description="reason -> samples in which it was active")


class TelemetryOutput(BaseModel):
    seconds: float
    gpus: list[GpuTelemetry]
    note: str = "nvidia-smi-style utilization means a kernel was resident, not that the GPU did useful work."


def run_gpu_telemetry(ctx: ToolContext, inp: TelemetryInput) -> TelemetryOutput:
    s = environment.sample_gpus(inp.seconds, inp.interval_s)  # raises NvmlUnavailable with what to do
    return TelemetryOutput(seconds=inp.seconds, gpus=[GpuTelemetry(**g) for g in per_gpu(s.gpus, s.samples)])


# =============================================================== read_source
class ReadSourceInput(BaseModel):
    """Read a text file inside the working tree."""

    path: str = Field(max_length=1024, description="path relative to the working tree")
    max_bytes: int = Field(16384, ge=1, le=READ_CAP_BYTES)


class ReadSourceOutput(BaseModel):
    path: str
    size: int
    truncated: bool
    text: str


def run_read_source(ctx: ToolContext, inp: ReadSourceInput) -> ReadSourceOutput:
    p = ctx.sandbox.resolve_path(inp.path)
    if not p.is_file():
        raise ArtifactError(inp.path, "not a file in the working tree")
    size = p.stat().st_size
    with open(p, "rb") as f:
        data = f.read(inp.max_bytes)
    if b"\x00" in data[:8192]:
        raise ArtifactError(inp.path, "binary file; use the sass tool for binaries")
    return ReadSourceOutput(path=str(p.relative_to(ctx.sandbox.root)), size=size, truncated=size > inp.max_bytes,
                            text=data.decode("utf-8", errors="replace"))


# =============================================================== find_targets
class FindTargetsInput(BaseModel):
    """Find programs and benchmarks in the working tree that the question may be about."""

    query: str = Field(max_length=500, description="the question, or the words to look for (e.g. 'softmax')")


class TargetCandidate(BaseModel):
    path: str
    kind: Literal["python", "cuda", "c++", "executable", "script", "other"]
    score: int
    reasons: list[str]


class FindTargetsOutput(BaseModel):
    words: list[str]
    candidates: list[TargetCandidate]
    note: str = "The program to profile is chosen by the user (`-- CMD`); these are suggestions."


def run_find_targets(ctx: ToolContext, inp: FindTargetsInput) -> FindTargetsOutput:
    words = query_words(inp.query)
    if not words:
        return FindTargetsOutput(words=[], candidates=[])
    found = find_targets(ctx.sandbox.root, words)
    return FindTargetsOutput(words=words, candidates=[TargetCandidate(path=p, kind=k, score=s, reasons=r)
                                                      for p, k, s, r in found])
