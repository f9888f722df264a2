"""The tidy tables every reader produces. Base units: ns, bytes, counts.

Readers (one per format) fill these; analysis modules only read them. Column
lists are the contract: a reader must provide every column (NaN/None where the
format has no value), and may add none that analysis relies on.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pandas as pd

KERNEL_COLUMNS = [
    "start_ns", "end_ns", "name", "device", "stream", "pid", "correlation",
    "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z",
    "registers", "static_smem", "dynamic_smem", "local_mem_per_thread",
]
# kind: HtoD, DtoH, DtoD, HtoH, PtoP, UVM_HtoD/UVM_DtoH/UVM_DtoD (unified-memory page migrations); src/dst: pageable, pinned, device, managed, array, unknown
COPY_COLUMNS = ["start_ns", "end_ns", "bytes", "kind", "src", "dst", "device", "stream", "pid", "correlation"]
SET_COLUMNS = ["start_ns", "end_ns", "bytes", "device", "stream", "pid", "correlation"]
# category: launch, sync, memcpy, memset, malloc, other
API_COLUMNS = ["start_ns", "end_ns", "name", "category", "pid", "tid", "correlation"]
# Host-side ranges: NVTX ranges, PyTorch ProfilerStep#N and user annotations.
RANGE_COLUMNS = ["start_ns", "end_ns", "name", "pid", "tid"]
OP_COLUMNS = ["name", "calls", "total_ns", "median_ns", "min_ns", "max_ns"]  # host ops per name (Kineto cpu_op), aggregated


def read_artifact_bytes(path, what: str) -> bytes:
    """A capture file's bytes; unreadable or empty files are ArtifactErrors naming the file."""
    from ..errors import ArtifactError

    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise ArtifactError(path, f"cannot read {what}: {e.strerror or e}") from None
    if not data.strip():
        raise ArtifactError(path, f"{what} file is empty")
    return data


def empty(columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype="float64") for c in columns})


@dataclass
class GpuInfo:
    name: str = "unknown"
    sm_count: Optional[int] = None
    memory_bandwidth: Optional[float] = None  # byte/s
    sm_clock_hz: Optional[float] = None
    l2_bytes: Optional[int] = None
    memory_bytes: Optional[int] = None
    compute_capability: Optional[str] = None


@dataclass
class Timeline:
    """What a timeline capture (nsys sqlite, Kineto trace) says happened.

    Timestamps are ns on one clock per file. `capture_start_ns` is the start of
    the capture (process launch for nsys, the trace's first event for Kineto).
    """

    source: str
    format: str  # nsys-sqlite | kineto
    kernels: pd.DataFrame = field(default_factory=lambda: empty(KERNEL_COLUMNS))
    copies: pd.DataFrame = field(default_factory=lambda: empty(COPY_COLUMNS))
    sets: pd.DataFrame = field(default_factory=lambda: empty(SET_COLUMNS))
    api: pd.DataFrame = field(default_factory=lambda: empty(API_COLUMNS))
    ranges: pd.DataFrame = field(default_factory=lambda: empty(RANGE_COLUMNS))
    ops: pd.DataFrame = field(default_factory=lambda: empty(OP_COLUMNS))  # framework ops per name (Kineto cpu_op)
    gpus: list[GpuInfo] = field(default_factory=list)
    capture_start_ns: Optional[float] = None
    capture_end_ns: Optional[float] = None
    rank: Optional[int] = None
    processes: dict[int, str] = field(default_factory=dict)  # pid -> name/command
    # UTC epoch ns of time 0 on this file's clock (nsys session start, Kineto baseTimeNanoseconds), if known:
    # places captures from different files in time (consistency checks across inputs).
    utc_origin_ns: Optional[int] = None
    world_size: Optional[int] = None  # distributed jobs: ranks in the job (Kineto distributedInfo.world_size)
    # Ids of the legacy default (NULL) stream(s), where the format says which they are (nsys); empty when unknown.
    null_streams: frozenset[int] = frozenset()


@dataclass
class KernelProfile:
    """One profiled kernel launch from Nsight Compute: every metric it holds.

    `metrics` maps ncu metric names to values converted to base units (ns,
    byte, byte/s, %, count...); `units` keeps the base unit per metric.
    """

    source: str
    name: str  # demangled function name as ncu shows it
    launch_id: int
    metrics: dict[str, float]
    units: dict[str, str]
    rules: list[dict] = field(default_factory=list)  # ncu guided-analysis results
    device: Optional[str] = None
    grid: Optional[tuple[int, int, int]] = None
    block: Optional[tuple[int, int, int]] = None
    mangled: Optional[str] = None
    compute_capability: Optional[str] = None  # "8.6", from the report's device attributes or the CSV's CC column

    def __post_init__(self):
        major = self.metrics.get("device__attribute_compute_capability_major")
        minor = self.metrics.get("device__attribute_compute_capability_minor")
        if self.compute_capability is None and major is not None and minor is not None:
            self.compute_capability = f"{int(major)}.{int(minor)}"

    def get(self, metric: str) -> Optional[float]:
        return self.metrics.get(metric)


@dataclass
class SassFunction:
    """One function's disassembly and what its instruction mix says."""

    source: str
    name: str
    arch: Optional[str]
    instructions: list[str]  # mnemonics with modifiers, e.g. "LDG.E.128"
    opcode_counts: dict[str, int]  # base opcode -> count, e.g. {"LDG": 4, "HGMMA": 64}
    mangled: Optional[str] = None  # the symbol as printed; join kernels across formats on it
    # Per-instruction data, aligned with `instructions`, where the format has it (ncu's source page):
    # the instruction addresses, and counters by ncu's column name ("Instructions Executed",
    # "Warp Stall Sampling (All Samples)", "Warp Stall Sampling (Not-issued Samples)"); None otherwise.
    addresses: Optional[list[int]] = None
    source_counters: Optional[dict[str, list[float]]] = None


@dataclass
class ResourceUsage:
    """Per-function resource usage from cuobjdump -res-usage or ptxas -v."""

    source: str
    name: str
    registers: Optional[int] = None
    stack_bytes: Optional[int] = None
    spill_store_bytes: Optional[int] = None
    spill_load_bytes: Optional[int] = None
    shared_bytes: Optional[int] = None
    local_bytes: Optional[int] = None
    arch: Optional[str] = None
    mangled: Optional[str] = None


@dataclass
class Artifacts:
    """Everything loaded from the user's files, grouped by kind."""

    timelines: list[Timeline] = field(default_factory=list)
    kernel_profiles: list[KernelProfile] = field(default_factory=list)
    sass: list[SassFunction] = field(default_factory=list)
    resources: list[ResourceUsage] = field(default_factory=list)
    telemetry: list[dict] = field(default_factory=list)  # kernel-profiler telemetry JSON (one per file)
    step_times: list[dict] = field(default_factory=list)  # kernel-profiler.steps JSON: {"rank", "step_s": [...]}
    logs: list = field(default_factory=list)  # program_log.ProgramLog: what the program printed (run.log)
    files: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # files skipped while walking a directory, and why
