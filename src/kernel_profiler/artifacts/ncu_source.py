"""Reader for Nsight Compute's source page as CSV: ``ncu --import R.ncu-rep --csv --page source --print-source sass``.

The file is one block per profiled kernel: a line ``"Kernel Name","<name>",``, then a header row
(``"Address","Source","Warp Stall Sampling (All Samples)",...,"Instructions Executed",...``), then one row
per SASS instruction of the function in address order (``"0x7f1c6f7a3c00","      LDC R1, c[0x0][0x28]",...``).
ncu prints the whole function, so the rows include the trap loop after the last ``EXIT`` (a ``BRA`` to
itself) and the alignment ``NOP``s; the SASS a ``.ncu-rep`` yields (:mod:`ncu_report`, at the addresses its
source counters cover) stops before them. Columns are looked up by header name.

Each block becomes a :class:`SassFunction` (mnemonics with modifiers, opcode counts by base opcode, the name
as ncu prints it; ``mangled`` too when that name is a bare symbol; no arch: the page does not say), with
``addresses`` and, of the per-instruction counters, those in :data:`COUNTERS` that the header has
(``source_counters``, aligned with ``instructions``).

Lines ncu adds around the table (``==PROF==``, ``==WARNING==``) are skipped; an ``==ERROR==`` line, a block
without its ``Address``/``Source`` header, a row whose width differs from its header's (a truncated file) or
a block without instructions is an ArtifactError naming the file.
"""
from __future__ import annotations

import csv
import math
import re
from pathlib import Path

from kernel_profiler.artifacts.sass import make_function, parse_instruction
from kernel_profiler.artifacts.tables import SassFunction, read_artifact_bytes
from kernel_profiler.errors import ArtifactError, CounterPermission

_KERNEL = "Kernel Name"
COUNTERS = ("Instructions Executed", "Warp Stall Sampling (All Samples)", "Warp Stall Sampling (Not-issued Samples)")
_SYMBOL = re.compile(r"[A-Za-z_$][A-Za-z0-9_$.]*")
_HOW = "export it with `ncu --import REPORT.ncu-rep --csv --page source --print-source sass`"


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip() and not line.startswith("=="):
            return line
    return ""


def sniff(path: Path, head: bytes) -> bool:
    if b"\x00" in head:
        return False
    return _first_line(head.decode("utf-8", "replace")).startswith(f'"{_KERNEL}","')


def _number(cell: str) -> float:
    try:
        return float(cell.replace(",", ""))
    except ValueError:
        return math.nan  # "-", "n/a", empty


def _rows(path: Path, text: str) -> list[tuple[int, list[str]]]:
    """(line number, fields) of every CSV line, ncu's ``==...==`` lines left out (an ==ERROR== one raises)."""
    if "ERR_NVGPUCTRPERM" in text:
        raise CounterPermission(str(path))
    kept = []
    for n, line in enumerate(text.splitlines(), start=1):
        if line.startswith("==ERROR=="):
            raise ArtifactError(path, f"ncu reported an error instead of the source page (line {n}: "
                                      f"{line.strip()[:160]})")
        if line.strip() and not line.startswith("=="):
            kept.append((n, line))
    return [(n, fields) for (n, _), fields in zip(kept, csv.reader(line for _, line in kept))]


def _block(path: Path, name: str, header: list[str], rows: list[tuple[int, list[str]]]) -> SassFunction:
    where = f"kernel {name[:80]!r}"
    if "Address" not in header or "Source" not in header:
        raise ArtifactError(path, f"{where}: no \"Address\"/\"Source\" header after its \"Kernel Name\" line "
                                  f"(not ncu's source page; {_HOW})")
    ia, isrc = header.index("Address"), header.index("Source")
    cols = {c: header.index(c) for c in COUNTERS if c in header}
    texts, addresses, counters = [], [], {c: [] for c in cols}
    for n, r in rows:
        if len(r) != len(header):
            raise ArtifactError(path, f"line {n} has {len(r)} fields, its header has {len(header)} "
                                      "(truncated or corrupt file)")
        try:
            addresses.append(int(r[ia], 16))
        except ValueError:
            raise ArtifactError(path, f"line {n}: address {r[ia][:40]!r} is not hexadecimal ({where})") from None
        texts.append(r[isrc])
        for c, i in cols.items():
            counters[c].append(_number(r[i]))
    keep = [i for i, t in enumerate(texts) if parse_instruction(t)]
    if not keep:
        raise ArtifactError(path, f"{where}: no SASS instruction rows (truncated file, or exported without "
                                  f"--print-source sass; {_HOW})")
    fn = make_function(str(path), name, None, [texts[i] for i in keep],
                       mangled=name if _SYMBOL.fullmatch(name) else None)
    fn.addresses = [addresses[i] for i in keep]
    fn.source_counters = {c: [v[i] for i in keep] for c, v in counters.items()} if counters else None
    return fn


def load(path: Path) -> list[SassFunction]:
    """One SassFunction per kernel block of the file, in file order."""
    path = Path(path)
    text = read_artifact_bytes(path, "ncu source-page CSV").decode("utf-8", "replace")
    rows = _rows(path, text)
    if not rows or not rows[0][1] or rows[0][1][0] != _KERNEL:
        raise ArtifactError(path, f"does not start with a \"Kernel Name\" line (not ncu's source page; {_HOW})")
    starts = [i for i, (_, r) in enumerate(rows) if r and r[0] == _KERNEL] + [len(rows)]
    out = []
    for s, e in zip(starts, starts[1:]):
        name = rows[s][1][1] if len(rows[s][1]) > 1 else ""
        if s + 1 >= e:
            raise ArtifactError(path, f"kernel {name[:80]!r} has no header or instruction rows (truncated file?)")
        out.append(_block(path, name, rows[s + 1][1], rows[s + 2:e]))
    return out
