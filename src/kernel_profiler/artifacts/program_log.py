"""Reader for a program's own output saved beside its captures (``run.log``, ``train.out``) -> ProgramLog.

A program often prints its own timing ("grid_stride: 10 steps, median step 0.0654 ms", "rank 0: median step
20.10 ms"), and people quote it. The log is no profiler format: it holds no kernel, so nothing is analysed from
it; it is read so that a number an answer takes from it has a provenance (the file and the line). Only numbers
with a unit of time, size, rate or percent are kept, each with the words of its line; progress bars and
warnings carry none of those and are dropped.

Recognised by name and content: a text file named ``*.log``, ``*.out`` or ``*.txt`` (after the profiler formats
that share those suffixes, ptxas logs and SASS dumps, were tried first) with at least one such number.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from kernel_profiler.artifacts.tables import read_artifact_bytes
from kernel_profiler.errors import UnknownFormat

SUFFIXES = (".log", ".out", ".txt")
MAX_VALUES = 10_000  # a log that prints more numbers than this is a data dump; the first ones are kept
_VALUE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s?"
                    r"(ns|us|µs|ms|s|sec|[kKMGT]i?B/s|[kKMGT]?B|[GT]FLOP/s|%)(?![\w/])")
# the profilers' own lines, not the program's: nsys's progress bar ("[1/1] [==20%   ]") and ncu's "==PROF==" lines
_PROFILER_LINE = re.compile(r"\[\d+/\d+\]|\[=*\d+%|^\s*==[A-Z]+==")


@dataclass(frozen=True)
class LogValue:
    line: int  # 1-based line number
    text: str  # the line, stripped
    value: float
    unit: str


@dataclass
class ProgramLog:
    values: list[LogValue] = field(default_factory=list)
    source: str = ""


def sniff(path: Path, head: bytes) -> bool:
    if Path(path).suffix.lower() not in SUFFIXES or b"\x00" in head:
        return False
    text = head.decode("utf-8", "replace")
    return any(_VALUE.search(line) and not _PROFILER_LINE.search(line) for line in text.splitlines())


def load(path: Path) -> ProgramLog:
    data = read_artifact_bytes(path, "program log")
    if b"\x00" in data[:65536]:
        raise UnknownFormat(path, "binary data, not a program's text output")
    out = ProgramLog()
    for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        if _PROFILER_LINE.search(line):
            continue
        for m in _VALUE.finditer(line):
            out.values.append(LogValue(n, line.strip()[:200], float(m.group(1)), m.group(2)))
            if len(out.values) >= MAX_VALUES:
                return out
    if not out.values:
        raise UnknownFormat(path, "a text file with no timing, size, rate or percent in it (not a program log)")
    return out
