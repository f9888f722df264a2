"""Artifact loading: recognise each file by its content and hand it to its one reader.

`load_paths` takes files and directories. A file named explicitly must be a
known format (else UnknownFormat); files found while walking a directory that
match no format are skipped. `.xz`-compressed files are decompressed to a
temporary folder first; the user's files are never modified.
"""
from __future__ import annotations

import json
import lzma
import shutil
import tempfile
from pathlib import Path
from typing import Callable, Iterable

from ..errors import (ArtifactError, CounterPermission, EmptyCapture, KernelProfilerError, ToolMissing,
                      UnknownFormat)
from . import kineto, ncu_csv, ncu_report, ncu_source, nsys_rep, nsys_sqlite, parallel, program_log, ptxas, sass
from .tables import Artifacts, ResourceUsage, SassFunction

HEAD_BYTES = 64 * 1024
XZ_MAGIC = b"\xfd7zXZ\x00"
TELEMETRY_KIND = b'"kind": "kernel-profiler.telemetry"'
STEPS_KIND = b'"kind": "kernel-profiler.steps"'


def _telemetry_sniff(path: Path, head: bytes) -> bool:
    return TELEMETRY_KIND in head[:4096] or STEPS_KIND in head[:4096]


def _telemetry_load(path: Path) -> dict:
    """kernel-profiler telemetry or step-time JSON, with its shape checked (bad input is an ArtifactError)."""
    try:
        d = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise ArtifactError(path, f"unreadable telemetry JSON ({e})") from e
    if not isinstance(d, dict):
        raise ArtifactError(path, "telemetry JSON must be an object")
    rank = d.get("rank")
    if rank is not None and not isinstance(rank, int):
        raise ArtifactError(path, f"'rank' must be an integer or null, not {rank!r}")
    if d.get("kind") == "kernel-profiler.steps":
        steps = d.get("step_s")
        if not isinstance(steps, list) or not all(isinstance(x, (int, float)) for x in steps):
            raise ArtifactError(path, "'step_s' must be a list of step times in seconds")
    else:
        samples = d.get("samples")
        if not isinstance(samples, list) or not all(isinstance(x, dict) for x in samples):
            raise ArtifactError(path, "'samples' must be a list of sample objects")
        if not isinstance(d.get("gpus", []), list):
            raise ArtifactError(path, "'gpus' must be a list")
    return d


# (format name, sniff, load, kind). Order matters only where sniffs could overlap.
READERS: list[tuple[str, Callable, Callable, str]] = [
    ("nsys-sqlite", nsys_sqlite.sniff, nsys_sqlite.load, "timeline"),
    ("nsys-rep", nsys_rep.sniff, nsys_rep.load, "timeline"),
    ("ncu-rep", ncu_report.sniff, ncu_report.load_all, "kernels"),
    ("telemetry", _telemetry_sniff, _telemetry_load, "telemetry"),
    ("kineto", kineto.sniff, kineto.load, "timeline"),
    ("ncu-csv", ncu_csv.sniff, ncu_csv.load, "kernels"),
    ("ncu-source-csv", ncu_source.sniff, ncu_source.load, "sass"),
    ("ptxas-log", ptxas.sniff, ptxas.load, "resources"),
    ("sass", sass.sniff, sass.load, "sass"),
    ("program-log", program_log.sniff, program_log.load, "log"),  # last: any text log with a timing in it
]


def _head(path: Path) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(HEAD_BYTES)
    except OSError as e:
        raise ArtifactError(path, f"cannot read ({e.strerror or e})") from e


def identify(path: Path) -> str | None:
    """The format name of a file, or None."""
    head = _head(path)
    for name, sniff, _, _ in READERS:
        try:
            if sniff(path, head):
                return name
        except ArtifactError:
            continue
    return None


def _decompress_xz(path: Path, tmpdir: Path) -> Path:
    out = tmpdir / path.name.removesuffix(".xz")
    try:
        with lzma.open(path) as fi, open(out, "wb") as fo:
            shutil.copyfileobj(fi, fo)
    except (lzma.LZMAError, EOFError) as e:
        raise ArtifactError(path, f"corrupt or truncated .xz file ({e})") from e
    return out


def _walk(paths: Iterable[str | Path]) -> list[tuple[Path, bool]]:
    out = []
    for p in paths:
        p = Path(p)
        if not p.exists():
            raise ArtifactError(p, "no such file or directory")
        if p.is_dir():
            out += [(f, False) for f in sorted(p.rglob("*")) if f.is_file() and not f.name.startswith(".")]
        else:
            out.append((p, True))
    return out


def load_paths(paths: Iterable[str | Path], tmpdir: Path | None = None) -> Artifacts:
    """Load every artifact under `paths` into one Artifacts bundle.

    A file named explicitly must load (its error is raised). Files found while walking a
    directory that cannot be used (unknown format, unreadable, refused) are skipped, and
    each skip is listed in `Artifacts.warnings`; if none could be used, the error says why.
    Timelines (a job's per-rank traces) are read at once, one worker process each (parallel.py).
    """
    arts = Artifacts()
    owned = tmpdir is None
    tmp = Path(tempfile.mkdtemp(prefix="kernel-profiler-")) if owned else tmpdir
    refused: list[KernelProfilerError] = []
    unknown: list[str] = []
    report_sass: list[SassFunction] = []
    try:
        planned = []  # (path, explicit, (load, kind, file to read) | None | the error), in the order given
        for i, (path, explicit) in enumerate(_walk(paths)):
            try:  # each file decompressed into its own folder: same-named files of two folders do not collide
                planned.append((path, explicit, _plan_one(path, tmp / f"{i:05d}", explicit)))
            except (ArtifactError, ToolMissing, CounterPermission) as e:
                if explicit:
                    raise
                planned.append((path, explicit, e))
        jobs = [p for _, _, p in planned if isinstance(p, tuple)]
        results = iter(parallel.load_all([(load, real) for load, _, real in jobs],
                                         in_workers=[kind == "timeline" for _, kind, _ in jobs]))
        for path, explicit, plan in planned:
            if plan is None:
                unknown.append(str(path))
                continue
            result = next(results) if isinstance(plan, tuple) else plan
            if isinstance(result, (ArtifactError, ToolMissing, CounterPermission)):
                if explicit:
                    raise result
                refused.append(result)
                arts.warnings.append(f"skipped {path}: {_reason(result, path)}")
                continue
            if isinstance(result, BaseException):
                raise result
            _add(arts, plan[1], result, str(path), report_sass)
            arts.files.append(str(path))
        # SASS dumps (cuobjdump: every instruction) come before the SASS an ncu report holds (the instructions its
        # counters saw): where both have a kernel, the dump is the one read first.
        arts.sass += report_sass
    finally:
        if owned:
            shutil.rmtree(tmp, ignore_errors=True)
    if arts.files and len(arts.logs) == len(arts.files):
        raise EmptyCapture(", ".join(str(p) for p in paths),
                           "a program's own log holds no profile: pass the nsys/ncu/PyTorch captures with it")
    if unknown:
        arts.warnings.append(f"skipped {len(unknown)} file(s) that are not profiler artifacts: "
                             + ", ".join(Path(u).name for u in unknown[:10]) + (" ..." if len(unknown) > 10 else ""))
    if not arts.files:
        if len(refused) == 1:
            raise refused[0]
        where = ", ".join(str(p) for p in paths)
        raise EmptyCapture(where, "no usable profiler artifacts found" + (
            " (" + "; ".join(w.removeprefix("skipped ") for w in arts.warnings) + ")" if arts.warnings else ""))
    return arts


def _reason(e: KernelProfilerError, path: Path) -> str:
    text = str(e)
    for prefix in (f"{path}: ", f"{getattr(e, 'path', '')}: "):
        text = text.removeprefix(prefix)
    return text


def _plan_one(path: Path, tmp: Path, explicit: bool) -> tuple[Callable, str, Path] | None:
    """(reader, kind, file to read) for one file; None if it is no known format (an error if named explicitly)."""
    if path.stat().st_size == 0:
        raise ArtifactError(path, "the file is empty")
    real = path
    head = _head(path)
    if head.startswith(XZ_MAGIC):
        tmp.mkdir(parents=True, exist_ok=True)
        real = _decompress_xz(path, tmp)
        head = _head(real)
    for name, sniff, load, kind in READERS:
        try:
            if not sniff(real, head):
                continue
        except ArtifactError:
            continue
        return load, kind, real
    if explicit:
        raise UnknownFormat(path, "not a recognised profiler artifact (expected an nsys .sqlite/.nsys-rep, "
                                  "ncu .ncu-rep or CSV (raw, details or source page), PyTorch trace "
                                  ".json[.gz], SASS/res-usage text, ptxas -v log, kernel-profiler telemetry JSON, "
                                  "or a program log (.log/.out/.txt) with timings in it)")
    return None


def _add(arts: Artifacts, kind: str, result, shown: str, report_sass: list[SassFunction]) -> None:
    if kind == "timeline":
        result.source = shown
        arts.timelines.append(result)
    elif kind == "kernels":  # an ncu report holds the SASS of the kernels whose source counters it collected
        for k in result:
            k.source = shown
            (report_sass if isinstance(k, SassFunction) else arts.kernel_profiles).append(k)
    elif kind == "log":  # the program's own output: numbers an answer may quote, no profile
        result.source = shown
        arts.logs.append(result)
    elif kind == "telemetry":
        result["source"] = shown
        (arts.step_times if result.get("kind") == "kernel-profiler.steps" else arts.telemetry).append(result)
    else:
        for item in result:
            item.source = shown
            if isinstance(item, SassFunction):
                arts.sass.append(item)
            elif isinstance(item, ResourceUsage):
                arts.resources.append(item)
