"""Typed errors. Each message tells the user what is wrong and what to do.

The CLI prints `str(error)` on one line and exits with `error.exit_code`;
nothing in the package prints a traceback for these.
"""
from __future__ import annotations

from pathlib import Path

from .exitcodes import ExitCode


class KernelProfilerError(Exception):
    """Base class: an expected failure with a one-line, actionable message."""

    exit_code = ExitCode.USAGE


class ArtifactError(KernelProfilerError):
    """A capture file cannot be used: empty, truncated, corrupt, or not a known format."""

    def __init__(self, path: str | Path, problem: str):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")

    def __reduce__(self):  # rebuilt from (path, problem) when a worker process raises it
        return type(self), (self.path, self.problem)


class UnknownFormat(ArtifactError):
    """The file's content matches none of the profiler formats kernel-profiler reads."""


class EmptyCapture(ArtifactError):
    """The file is a valid capture but holds nothing to analyze (e.g. no kernels)."""


class UnsupportedCapture(ArtifactError):
    """A real capture that cannot be analyzed as it is: GPU activity not recorded on that platform (WSL2), a
    non-NVIDIA GPU (ROCm, MTIA), a CPU-only run, or counters without a timeline (CUPTI range profiler).

    The message says why and what to capture instead.
    """


class ToolMissing(KernelProfilerError):
    """A profiler or helper program (nsys, ncu, cuobjdump) is not installed or not on PATH."""


class CounterPermission(KernelProfilerError):
    """ncu could not read GPU performance counters (ERR_NVGPUCTRPERM)."""

    def __init__(self, detail: str = ""):
        super().__init__(
            "ncu cannot read GPU performance counters (ERR_NVGPUCTRPERM): run as root or with CAP_SYS_ADMIN "
            "(--cap-add SYS_ADMIN in containers), or load the driver with NVreg_RestrictProfilingToAdminUsers=0"
            + (f" [{detail}]" if detail else "")
        )


class UsageError(KernelProfilerError):
    """The command line or a request is inconsistent."""
