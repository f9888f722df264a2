"""Reader for ``nvcc -Xptxas -v`` (ptxas verbose) logs -> list[ResourceUsage].

Recognised lines (sm_90 toolkits and older ones)::

    ptxas info    : Compiling entry function '_Z12table_lookupPKiPKfPfi' for 'sm_90a'
    ptxas info    : Function properties for _Z12table_lookupPKiPKfPfi
        128 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
    ptxas info    : Used 26 registers, used 0 barriers, 128 bytes cumulative stack size
    ptxas info    : Used 31 registers, 384 bytes smem, 400 bytes cmem[0]     (older)

One ResourceUsage per (entry function, arch). `name` is demangled with
``c++filt`` when it is on PATH (else the mangled name); the mangled name is
always kept in ``.mangled`` (a field of ResourceUsage).
``local_bytes`` is not printed by ptxas and stays None.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Optional

from kernel_profiler.artifacts.tables import ResourceUsage, read_artifact_bytes
from kernel_profiler.errors import EmptyCapture, UnknownFormat

_ENTRY = re.compile(r"Compiling entry function\s+'([^']+)'\s+for\s+'([^']+)'")
_PROPS = re.compile(r"Function properties for\s+(\S+)")
_FRAME = re.compile(
    r"(\d+)\s+bytes stack frame,\s*(\d+)\s+bytes spill stores,\s*(\d+)\s+bytes spill loads"
)
_USED = re.compile(r"\bUsed\s+(\d+)\s+registers\b(.*)")
_SMEM = re.compile(r"(\d+)\s+bytes smem")
_STACK_CUM = re.compile(r"(\d+)\s+bytes cumulative stack size")




@lru_cache(maxsize=1)
def _cxxfilt() -> Optional[str]:
    return shutil.which("c++filt")


def demangle_all(names: list[str]) -> dict[str, str]:
    """mangled -> demangled for C++ names (``_Z...``), via one ``c++filt`` call.

    Names that are not mangled, or when c++filt is missing or fails, map to
    themselves. Shared by every reader that sees raw symbol names.
    """
    out = {n: n for n in names}
    todo = sorted({n for n in names if n.startswith("_Z")})
    exe = _cxxfilt()
    if not todo or not exe:
        return out
    try:
        res = subprocess.run([exe], input="\n".join(todo) + "\n", capture_output=True,
                             text=True, timeout=20, check=True)
        lines = res.stdout.splitlines()
        if len(lines) == len(todo):
            out.update({m: d.strip() or m for m, d in zip(todo, lines)})
    except (OSError, subprocess.SubprocessError):
        pass
    return out


def sniff(path: Path, head: bytes) -> bool:
    text = head.decode("utf-8", "replace")
    return "ptxas" in text and bool(_ENTRY.search(text) or _USED.search(text))


def load(path: Path) -> list[ResourceUsage]:
    path = Path(path)
    data = read_artifact_bytes(path, "ptxas log")
    if b"\x00" in data[:65536]:
        raise UnknownFormat(path, "binary data, not an nvcc -Xptxas -v log")
    text = data.decode("utf-8", "replace")
    if not sniff(path, text.encode()):
        raise UnknownFormat(path, "not an nvcc -Xptxas -v log (no 'Compiling entry function' / 'Used N registers' lines)")

    entries: list[dict] = []
    cur: Optional[dict] = None
    props_for: Optional[str] = None
    frames: dict[str, tuple[int, int, int]] = {}
    for line in text.splitlines():
        m = _ENTRY.search(line)
        if m:
            cur = {"mangled": m.group(1), "arch": m.group(2)}
            entries.append(cur)
            props_for = None
            continue
        m = _PROPS.search(line)
        if m:
            props_for = m.group(1).strip("'")
            continue
        m = _FRAME.search(line)
        if m:
            vals = tuple(int(x) for x in m.groups())
            if props_for is not None:
                frames[props_for] = vals  # type: ignore[assignment]
            if cur is not None and props_for in (None, cur["mangled"]):
                cur["stack"], cur["spill_st"], cur["spill_ld"] = vals
            props_for = None
            continue
        m = _USED.search(line)
        if m and cur is not None:
            cur["registers"] = int(m.group(1))
            rest = m.group(2)
            s = _SMEM.search(rest)
            if s:
                cur["smem"] = int(s.group(1))
            c = _STACK_CUM.search(rest)
            if c and "stack" not in cur:
                cur["stack"] = int(c.group(1))
    if not entries:
        raise EmptyCapture(path, "ptxas log names no entry function (was it built with -Xptxas -v?)")

    names = demangle_all([e["mangled"] for e in entries])
    out = []
    for e in entries:
        # a 'Function properties' block printed before the 'Compiling entry' line
        if "stack" not in e and e["mangled"] in frames:
            e["stack"], e["spill_st"], e["spill_ld"] = frames[e["mangled"]]
        out.append(ResourceUsage(
            source=str(path), name=names[e["mangled"]], mangled=e["mangled"],
            registers=e.get("registers"), stack_bytes=e.get("stack"),
            spill_store_bytes=e.get("spill_st"), spill_load_bytes=e.get("spill_ld"),
            shared_bytes=e.get("smem", 0 if "registers" in e else None), local_bytes=None,
            arch=e["arch"],
        ))
    return out
