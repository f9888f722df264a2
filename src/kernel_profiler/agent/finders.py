"""Finding files for the tools: the program's kind, SASS sources (captures, the target binary, cubins, Triton's
cache) and candidate targets in the working tree. Files are read by the artifact readers (`artifacts/`); every
path a model names, and every file found under it, must resolve inside the working tree (`Sandbox.resolve_path`),
except the user's own Triton cache (see `sass_sources`).
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterator, Optional

from ..artifacts import identify
from ..artifacts import ncu_report
from ..artifacts import sass as sass_reader
from ..artifacts.tables import SassFunction
from ..errors import ArtifactError, EmptyCapture, KernelProfilerError
from . import environment
from .context import ToolContext
from .sandbox import Sandbox, SandboxViolation

PYTHON_EXE = re.compile(r"^python(\d+(\.\d+)?)?$")
MAX_CUBINS = 50
FIND_MAX_FILES = 5000
FIND_MAX_RESULTS = 20
FIND_EXTS = {".py", ".cu", ".cuh", ".cpp", ".cc", ".c", ".h", ".hpp", ".triton", ".sh"}
SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache", ".tox",
             "site-packages", ".eggs"}
STOP_WORDS = {"why", "is", "my", "the", "a", "an", "slow", "so", "what", "does", "do", "how", "make", "faster",
              "fast", "kernel", "gpu", "this", "it", "of", "in", "on", "for", "and", "to", "with", "program", "code",
              "run", "runs", "take", "takes", "long", "than", "be", "can", "i", "me", "our", "speed", "up", "time"}


def python_script_target(target: list[str]) -> bool:
    """`python script.py ...` or `python -m module ...`: the PyTorch profiler can record it without nsys."""
    if len(target) < 2 or not PYTHON_EXE.match(Path(target[0]).name):
        return False
    return target[1].endswith(".py") or (target[1] == "-m" and len(target) > 2)


def is_elf(p: Path) -> bool:
    try:
        with open(p, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def is_interpreter(exe: str) -> bool:
    """python, bash, ...: an ELF whose SASS is not the program's (Python programs' kernels live in libraries or
    Triton's cache)."""
    return bool(re.match(r"^(python|pypy|bash|sh|env|torchrun|uv|conda)[\d.]*$", Path(exe).name))


def _cuda_target(ctx: ToolContext) -> Optional[Path]:
    """The target binary when it is a CUDA program's own ELF (not an interpreter)."""
    exe = ctx.sandbox.target_executable()
    return Path(exe) if exe and is_elf(Path(exe)) and not is_interpreter(exe) else None


def produced_ncu_reps(ctx: ToolContext) -> list[Path]:
    """The ncu reports the tools made in this investigation (the user's are read with their artifacts)."""
    return [Path(p) for p in ctx.produced if p.endswith(".ncu-rep")]


def sass_available(ctx: ToolContext, reports: list[str]) -> bool:
    """Whether the sass tool has a source: SASS among the user's artifacts (dumps, ncu reports' source counters),
    an ncu report the tools made, or the target's own binary."""
    if ctx.artifacts and ctx.user_artifacts().sass:
        return True
    if any(r.endswith(".ncu-rep") for r in reports) or produced_ncu_reps(ctx):
        return True
    return _cuda_target(ctx) is not None


def triton_cache_dir(sb: Sandbox) -> Path:
    """The user's Triton cache ($TRITON_CACHE_DIR, else ~/.triton/cache), resolved."""
    env = sb.env.get("TRITON_CACHE_DIR")
    cache = Path(env).expanduser() if env else Path(sb.env.get("HOME") or "~").expanduser() / ".triton" / "cache"
    return cache.resolve()


def cubins_under(sb: Sandbox, folder: Path, allowed: Optional[Path]) -> list[Path]:
    """The .cubin files under `folder`, each resolved (symlinks followed) inside `allowed`, or inside the working
    tree when `allowed` is None. Files escaping it are skipped; SandboxViolation if every one of them escapes."""
    cubins: list[Path] = []
    refused: list[str] = []
    for f in sorted(folder.rglob("*.cubin")):
        try:
            if allowed is None:
                real = sb.resolve_path(str(f))
            else:
                real = f.resolve()
                if not real.is_relative_to(allowed):
                    raise SandboxViolation(f"{f} resolves to {real}, outside {allowed}")
        except SandboxViolation:
            refused.append(str(f))
            continue
        if real.is_file() and real not in cubins:
            cubins.append(real)
    if refused and not cubins:
        raise SandboxViolation(f"every .cubin under {folder} resolves outside "
                               f"{allowed or 'the working tree'} (symlinks): {', '.join(refused[:5])}")
    return cubins


def _named_source(ctx: ToolContext, source: str) -> list[SassFunction]:
    """The SASS of the source a model named: 'triton-cache', or a binary, cubin, folder of cubins, SASS dump or
    .ncu-rep inside the working tree."""
    sb = ctx.sandbox
    if source == "triton-cache":
        # The one place a tool reads outside the working tree: the user's own Triton cache
        # ($TRITON_CACHE_DIR, else ~/.triton/cache). Every cubin must still resolve inside that folder.
        cache = triton_cache_dir(sb)
        cubins = cubins_under(sb, cache, cache) if cache.is_dir() else []
    else:
        p = sb.resolve_path(source)
        if not p.exists():
            raise ArtifactError(source, "no such file or directory in the working tree")
        if p.is_dir():
            cubins = cubins_under(sb, p, None)
        elif is_elf(p):
            cubins = [p]
        else:
            fmt = identify(p)
            if fmt == "ncu-rep":
                return list(ncu_report.load_sass(p))
            if fmt == "sass":
                return [f for f in sass_reader.load(p) if isinstance(f, SassFunction)]
            raise ArtifactError(source, "not a binary, cubin, SASS dump or .ncu-rep")
    if not cubins:
        raise EmptyCapture(source, "no .cubin files found")
    return [f for c in cubins[:MAX_CUBINS] for f in environment.cuobjdump(ctx, c)]


def sass_sources(ctx: ToolContext, source: Optional[str]) -> Iterator[list[SassFunction]]:
    """Lists of SASS functions, one per source, in the order they are tried (lazily: cuobjdump runs last)."""
    if source is not None:
        yield _named_source(ctx, source)
        return
    if ctx.artifacts and ctx.user_artifacts().sass:
        yield list(ctx.user_artifacts().sass)
    for rep in produced_ncu_reps(ctx):
        try:
            yield list(ncu_report.load_sass(rep))
        except KernelProfilerError:
            continue
    exe = _cuda_target(ctx)
    if exe is not None:
        yield environment.cuobjdump(ctx, exe)


def _kind(p: Path) -> str:
    return {".py": "python", ".cu": "cuda", ".cuh": "cuda", ".cpp": "c++", ".cc": "c++", ".c": "c++",
            ".sh": "script"}.get(p.suffix, "executable" if os.access(p, os.X_OK) and is_elf(p) else "other")


def query_words(query: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9_]{3,}", query.lower()) if w not in STOP_WORDS][:8]


def find_targets(root: Path, words: list[str]) -> list[tuple[str, str, int, list[str]]]:
    """(path relative to root, kind, score, reasons) of the programs under `root` whose name or text holds the
    words, best first (at most FIND_MAX_RESULTS; symlinks and tool folders skipped)."""
    cands: list[tuple[str, str, int, list[str]]] = []
    seen = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".")]
        for fn in filenames:
            seen += 1
            if seen > FIND_MAX_FILES:
                break
            p = Path(dirpath) / fn
            if p.is_symlink():
                continue
            elf = p.suffix == "" and is_elf(p) and os.access(p, os.X_OK)
            if p.suffix not in FIND_EXTS and not elf:
                continue
            name = p.name.lower()
            score, why = 0, []
            for w in words:
                if w in name:
                    score += 5
                    why.append(f"'{w}' in the file name")
            if not elf:
                try:
                    text = p.read_bytes()[:65536].decode("utf-8", "replace").lower()
                except OSError:
                    continue
                for w in words:
                    n = text.count(w)
                    if n:
                        score += min(n, 5)
                        why.append(f"'{w}' {n}x in the text")
                if score and ("__main__" in text or "int main" in text):
                    score += 2
                    why.append("has a main entry point")
            if score:
                cands.append((str(p.relative_to(root)), _kind(p), score, why))
    cands.sort(key=lambda c: (-c[2], c[0]))
    return cands[:FIND_MAX_RESULTS]
