"""The sandbox around every tool: what a model may choose, and how programs are run.

The program to profile is fixed by the user (an argv list). A model can only
choose, through validated tool inputs:
  * kernels, as a regular expression (compiled, length-capped, and refused if
    it holds shell metacharacters: they are never needed, because every command
    is an argv list run without a shell);
  * ncu sections and section sets, from an allow-list of ids;
  * launch skip / count and durations, as bounded integers;
  * files, which must resolve (symlinks followed) inside the working tree
    (the one exception: the sass tool's `triton-cache` source reads the user's
    own Triton cache folder, and every file it takes must resolve inside it).
Programs run are only those on the allow-list (nsys, ncu, cuobjdump, nvdisasm
and the user's fixed target), with argv lists (never shell=True), a timeout that
kills the whole process group, output written to files in a per-run scratch
directory and read back capped, and an environment passed through explicitly.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..toolpaths import find_cuda_tool, find_ncu, find_nsys
from ..errors import CounterPermission, KernelProfilerError, ToolMissing
from ..exitcodes import ExitCode

# --- limits -------------------------------------------------------------------
MAX_REGEX_LEN = 256
MAX_LAUNCH_SKIP = 10_000
MAX_LAUNCH_COUNT = 32
MAX_SECTIONS = 16
MAX_TELEMETRY_S = 60.0
DEFAULT_TIMEOUT_S = 600.0
OUTPUT_CAP_BYTES = 256 * 1024  # what is read back from a program's stdout/stderr
TAIL_CHARS = 2000  # stderr shown in a typed error
READ_CAP_BYTES = 64 * 1024  # read_source

# Characters that mean something to a shell and nothing to a kernel-name regex.
# `|`, `(`, `)`, `<`, `>`, `*`, `?`, `[`, `]`, `^` and a trailing `$` are regex syntax
# (and appear in templated kernel names), so they are allowed.
SHELL_META = re.compile(r"[;&`'\"!#~%=\n\r\t\x00-\x1f\x7f]|\$\(|\$\{|\$(?!$)")
SECTION_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")

# ncu section identifiers (`ncu --list-sections`, Nsight Compute 2025.x) a model may request.
ALLOWED_SECTIONS = frozenset({
    "SpeedOfLight", "SpeedOfLight_RooflineChart", "SpeedOfLight_HierarchicalSingleRooflineChart",
    "SpeedOfLight_HierarchicalHalfRooflineChart", "SpeedOfLight_HierarchicalDoubleRooflineChart",
    "SpeedOfLight_HierarchicalTensorRooflineChart",
    "MemoryWorkloadAnalysis", "MemoryWorkloadAnalysis_Chart", "MemoryWorkloadAnalysis_Tables",
    "ComputeWorkloadAnalysis", "LaunchStats", "Occupancy", "SchedulerStats", "WarpStateStats",
    "InstructionStats", "SourceCounters", "WorkloadDistribution", "Nvlink", "Nvlink_Tables", "Nvlink_Topology",
    "NumaAffinity", "PmSampling", "PmSampling_WarpStates",
})
ALLOWED_SETS = frozenset({"basic", "detailed", "full", "roofline", "targeted"})

# Environment variables passed through to profiled programs (nothing else is).
PASS_ENV = (
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TERM", "TMPDIR", "LD_LIBRARY_PATH",
    "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "NVIDIA_VISIBLE_DEVICES",
    "PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX", "TRITON_CACHE_DIR", "TORCH_HOME", "HF_HOME",
    "OMP_NUM_THREADS", "NCCL_DEBUG",
)


MISSING_HINTS = {
    "nsys": "install Nsight Systems (it also ships inside Nsight Compute and the CUDA toolkit) or set "
            "KERNEL_PROFILER_NSYS=/path/to/nsys, or pass existing captures with --artifacts",
    "ncu": "install Nsight Compute (part of the CUDA toolkit) and put `ncu` on PATH, or pass an "
           "existing .ncu-rep with --artifacts",
    "cuobjdump": "install the CUDA toolkit (cuobjdump is in its bin/) or pass a SASS dump with --artifacts",
    "nvdisasm": "install the CUDA toolkit (nvdisasm is in its bin/)",
    "target": "the program given after `--` was not found: give its path or put it on PATH",
}


def missing_tool_message(name: str) -> str:
    """One line: which program is missing and how to get it (ToolMissing's message)."""
    forced = os.environ.get("KERNEL_PROFILER_NSYS", "") if name == "nsys" else ""
    why = (f" (KERNEL_PROFILER_NSYS={forced} is not an executable file)"
           if forced and forced.lower() != "none" else "")
    return f"`{name}` is not available here{why}: {MISSING_HINTS[name]}"


class SandboxViolation(KernelProfilerError):
    """A tool request the sandbox refuses: a path outside the working tree, a symlink escaping it,
    a kernel regex or section holding shell metacharacters or not on the allow-list, an out-of-range
    number, or an executable not on the allow-list."""

    exit_code = ExitCode.USAGE  # a refused request is bad input, not an internal error


class TargetFailed(KernelProfilerError):
    """The profiled program (or the profiler running it) exited with a non-zero status."""

    def __init__(self, argv: list[str], returncode: int, stderr_tail: str):
        self.argv, self.returncode, self.stderr_tail = argv, returncode, stderr_tail
        tail = stderr_tail.strip().replace("\n", " | ")[-TAIL_CHARS:]
        super().__init__(f"`{' '.join(argv[:6])}{' ...' if len(argv) > 6 else ''}` exited with status {returncode}; "
                         f"run the program alone to check it works. stderr tail: {tail or '(empty)'}")


class TargetTimeout(KernelProfilerError):
    """The profiled program (or the profiler) ran past its time limit and was killed."""

    def __init__(self, argv: list[str], timeout_s: float, stderr_tail: str = ""):
        self.argv, self.timeout_s = argv, timeout_s
        super().__init__(f"`{' '.join(argv[:6])}` ran longer than {timeout_s:.0f} s and was killed: make the "
                         f"program shorter (fewer iterations) or raise the time limit"
                         + (f". stderr tail: {stderr_tail.strip()[-500:]}" if stderr_tail.strip() else ""))


@dataclass
class RunResult:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float


def check_regex(pattern: str, what: str = "kernel regex") -> str:
    if not isinstance(pattern, str) or not pattern.strip():
        raise SandboxViolation(f"{what} is empty")
    if len(pattern) > MAX_REGEX_LEN:
        raise SandboxViolation(f"{what} is {len(pattern)} characters long (at most {MAX_REGEX_LEN})")
    if SHELL_META.search(pattern):
        raise SandboxViolation(f"{what} {pattern!r} holds shell metacharacters; give a plain regular expression "
                               f"over kernel names")
    if pattern.startswith("-"):
        raise SandboxViolation(f"{what} {pattern!r} starts with '-'")
    try:
        re.compile(pattern)
    except re.error as e:
        raise SandboxViolation(f"{what} {pattern!r} is not a valid regular expression ({e})") from None
    return pattern


def check_sections(sections: list[str]) -> list[str]:
    if len(sections) > MAX_SECTIONS:
        raise SandboxViolation(f"{len(sections)} sections requested (at most {MAX_SECTIONS})")
    for s in sections:
        if not isinstance(s, str) or not SECTION_ID.match(s) or s not in ALLOWED_SECTIONS:
            raise SandboxViolation(f"ncu section {s!r} is not on the allow-list: "
                                   + ", ".join(sorted(ALLOWED_SECTIONS)))
    return list(sections)


def check_set(name: Optional[str]) -> Optional[str]:
    if name is not None and name not in ALLOWED_SETS:
        raise SandboxViolation(f"ncu section set {name!r} is not on the allow-list: {', '.join(sorted(ALLOWED_SETS))}")
    return name


def check_int(name: str, value: int, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise SandboxViolation(f"{name}={value!r} is out of range [{lo}, {hi}]")
    return value


# Variables with these prefixes configure the GPU stack (NCCL, NVSHMEM, PyTorch, CUDA, OpenMP) and are
# passed through too: a multi-GPU job must keep e.g. NCCL_NVLS_ENABLE=0 where the machine sets it.
PASS_ENV_PREFIXES = ("NCCL_", "NVSHMEM_", "TORCH_", "PYTORCH_", "CUDA_", "OMP_", "KMP_", "TRITON_", "KERNEL_PROFILER_")


def passthrough_env(extra: Optional[dict[str, str]] = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in PASS_ENV or k.startswith(PASS_ENV_PREFIXES)}
    env.update(extra or {})
    return env


@dataclass
class Sandbox:
    """One investigation's sandbox: the working tree, the fixed target, a scratch directory."""

    root: Path
    target: Optional[list[str]] = None
    scratch: Optional[Path] = None
    env: dict[str, str] = field(default_factory=passthrough_env)
    timeout_s: float = DEFAULT_TIMEOUT_S
    output_cap: int = OUTPUT_CAP_BYTES

    def __post_init__(self) -> None:
        self.root = Path(self.root).resolve()
        if self.target is not None:
            if not self.target or not all(isinstance(a, str) for a in self.target):
                raise SandboxViolation("the target command must be a non-empty list of strings")
            self.target = list(self.target)
        if self.scratch is None:
            self.scratch = Path(tempfile.mkdtemp(prefix="kp-run-"))
        self.scratch = Path(self.scratch)
        self.scratch.mkdir(parents=True, exist_ok=True)
        self._runs = 0

    # ---------------------------------------------------------------- paths
    def resolve_path(self, path: str) -> Path:
        """A path the model named, resolved inside the working tree (or SandboxViolation)."""
        if not isinstance(path, str) or not path or "\x00" in path:
            raise SandboxViolation(f"invalid path {path!r}")
        p = Path(path)
        full = (p if p.is_absolute() else self.root / p)
        resolved = full.resolve()  # follows every symlink on the way
        if not resolved.is_relative_to(self.root):
            raise SandboxViolation(f"path {path!r} resolves to {resolved}, outside the working tree {self.root}")
        return resolved

    # ---------------------------------------------------------- executables
    def target_executable(self) -> Optional[str]:
        if not self.target:
            return None
        exe = self.target[0]
        if os.sep in exe:
            p = Path(exe) if Path(exe).is_absolute() else (Path.cwd() / exe)
            return str(p.resolve())
        found = shutil.which(exe, path=self.env.get("PATH"))
        return str(Path(found).resolve()) if found else None

    def allowed_executables(self) -> dict[str, Optional[str]]:
        return {
            "nsys": find_nsys(),
            "ncu": find_ncu(),
            "cuobjdump": find_cuda_tool("cuobjdump"),
            "nvdisasm": find_cuda_tool("nvdisasm"),
            "target": self.target_executable(),
        }

    def executable(self, name: str) -> str:
        """The path of an allow-listed program, or ToolMissing with what to do."""
        allowed = self.allowed_executables()
        if name not in allowed:
            raise SandboxViolation(f"{name!r} is not on the allow-list of programs ({', '.join(allowed)})")
        path = allowed[name]
        if path is None:
            raise ToolMissing(missing_tool_message(name))
        return path

    def check_argv(self, argv: list[str]) -> None:
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            raise SandboxViolation("commands are argv lists of strings")
        exe = argv[0]
        real = str(Path(exe).resolve()) if os.sep in exe else (shutil.which(exe, path=self.env.get("PATH")) or exe)
        real = str(Path(real).resolve()) if os.path.exists(real) else real
        allowed = {str(Path(p).resolve()) for p in self.allowed_executables().values() if p}
        if real not in allowed:
            raise SandboxViolation(f"executable {exe!r} is not on the allow-list (nsys, ncu, cuobjdump, nvdisasm, "
                                   f"and the target given by the user)")

    # ------------------------------------------------------------------ run
    def new_dir(self, label: str) -> Path:
        self._runs += 1
        d = self.scratch / f"{self._runs:02d}-{re.sub(r'[^A-Za-z0-9_-]', '_', label)[:40]}"
        d.mkdir(parents=True, exist_ok=True)
        return d

    def run(self, argv: list[str], *, label: str = "run", timeout_s: Optional[float] = None,
            cwd: Optional[Path] = None) -> RunResult:
        """Run an allow-listed program (argv list, no shell) with a timeout and capped output."""
        import time

        self.check_argv(argv)
        timeout = timeout_s or self.timeout_s
        d = self.new_dir(label)
        out_p, err_p = d / "stdout.txt", d / "stderr.txt"
        t0 = time.monotonic()
        with open(out_p, "wb") as fo, open(err_p, "wb") as fe:
            try:
                proc = subprocess.Popen(argv, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL, env=self.env,
                                        cwd=str(cwd or Path.cwd()), shell=False, start_new_session=True)
            except FileNotFoundError as e:
                raise ToolMissing(f"cannot run {argv[0]!r}: {e.strerror}") from None
            except PermissionError as e:
                raise SandboxViolation(f"cannot execute {argv[0]!r}: {e.strerror}") from None
            try:
                rc = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
                raise TargetTimeout(argv, timeout, _tail(err_p, self.output_cap)) from None
        res = RunResult(argv=argv, returncode=rc, stdout=_tail(out_p, self.output_cap),
                        stderr=_tail(err_p, self.output_cap), seconds=time.monotonic() - t0)
        if "ERR_NVGPUCTRPERM" in res.stdout or "ERR_NVGPUCTRPERM" in res.stderr:
            raise CounterPermission(f"{Path(argv[0]).name} reported ERR_NVGPUCTRPERM")
        if rc != 0:
            raise TargetFailed(argv, rc, res.stderr or res.stdout)
        return res


def _tail(path: Path, cap: int) -> str:
    size = path.stat().st_size
    with open(path, "rb") as f:
        if size > cap:
            f.seek(size - cap)
        data = f.read(cap)
    text = data.decode("utf-8", errors="replace")
    return ("[... output truncated ...]\n" + text) if size > cap else text
