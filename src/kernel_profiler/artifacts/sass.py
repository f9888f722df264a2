"""Readers for SASS disassembly and per-function resource usage.

Formats (recognised by content):

* ``cuobjdump --dump-sass``: ``Function : NAME`` headers, instruction lines
  ``/*0040*/   @P0 LDG.E.128 R4, desc[UR4][R2.64] ;   /* 0x... */``, arch from
  ``code for sm_90a`` / ``arch = sm_90a``.
* ``nvdisasm [-c] [-g] [-hex] CUBIN``: functions start at
  ``.section .text.NAME,...`` (or a ``.text.NAME:`` label); same instruction
  lines; arch from ``.target sm_XX`` or the ``EF_CUDA_SM90`` header flag.
* ``cuobjdump -res-usage``: ``Function NAME:`` then
  ``REG:31 STACK:384 SHARED:0 LOCAL:0 ...`` -> ResourceUsage (no spill sizes).
  Note: SHARED there includes the driver-reserved shared memory (1 KiB per
  block on sm_90) for kernels that use shared memory; ptxas ``bytes smem`` does
  not (cu_transpose_fixed: 5248 vs 4224 = ncu static 4224 + driver 1024).

``load`` returns list[SassFunction] for disassembly and list[ResourceUsage] for
res-usage text. Instruction text is parsed in exactly one place,
:func:`parse_instruction` / :func:`make_function`; the .ncu-rep reader uses
them for the SASS it pulls out of a report.

Names: ``name`` is demangled with c++filt when available (else as printed);
``mangled`` keeps the symbol as printed.
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Iterable, Optional

from kernel_profiler.artifacts.ptxas import demangle_all
from kernel_profiler.artifacts.tables import ResourceUsage
from kernel_profiler.artifacts.tables import SassFunction, read_artifact_bytes
from kernel_profiler.errors import EmptyCapture, UnknownFormat

_INSN = re.compile(r"^\s*/\*([0-9a-fA-F]{4,})\*/\s+(?P<text>[^;]*?)\s*;")
_PRED = re.compile(r"^@!?U?P[T0-7]\s+")
_FUNC_CUOBJ = re.compile(r"^\s*Function\s*:\s*(\S+)\s*$")
_FUNC_SECTION = re.compile(r"^\s*\.section\s+\"?\.text\.([^\s,\"]+)")
_FUNC_LABEL = re.compile(r"^\.text\.([^\s:]+):\s*$")
_ARCH = re.compile(r"(?:code for|arch\s*=|\.target)\s+(sm_\d+[a-z]?)")
_EF_SM = re.compile(r"EF_CUDA_SM(\d+)\b")
_RES_FUNC = re.compile(r"^\s*Function\s+([^\s:]+)\s*:\s*$")
_RES_VALS = re.compile(r"\b(REG|STACK|SHARED|LOCAL):(\d+)")




def parse_instruction(text: str) -> Optional[str]:
    """SASS instruction text (``@P0 LDG.E.128 R4, [R2.64]``) -> mnemonic with modifiers."""
    text = text.strip().lstrip("{").strip()
    text = _PRED.sub("", text)
    if not text:
        return None
    tok = text.split()[0]
    return tok if re.match(r"^[A-Z][A-Z0-9_]*(\.[A-Za-z0-9_]+)*$", tok) else None


def base_opcode(mnemonic: str) -> str:
    """``LDG.E.128`` -> ``LDG``."""
    return mnemonic.split(".", 1)[0]


def make_function(source: str, name: str, arch: Optional[str], lines: Iterable[str],
                  mangled: Optional[str] = None) -> SassFunction:
    """Build a SassFunction from raw instruction texts (one instruction each)."""
    insns = [m for m in (parse_instruction(t) for t in lines) if m]
    counts = Counter(base_opcode(m) for m in insns)
    return SassFunction(source=source, name=name, arch=arch, instructions=insns,
                             opcode_counts=dict(counts), mangled=mangled)


def _is_res_usage(text: str) -> bool:
    return "Resource usage:" in text or bool(re.search(r"REG:\d+\s+STACK:\d+", text))


def _is_sass(text: str) -> bool:
    return bool(re.search(r"/\*[0-9a-fA-F]{4,}\*/\s+\S", text)) and bool(
        re.search(r"Function\s*:|\.text\.|code for sm_|\.headerflags", text))


def sniff(path: Path, head: bytes) -> bool:
    if b"\x00" in head:
        return False
    text = head.decode("utf-8", "replace")
    # ptxas -v logs also mention functions; they never have REG:/instruction lines
    return _is_sass(text) or (_is_res_usage(text) and "REG:" in text)


def _read_text(path: Path, what: str) -> str:
    data = read_artifact_bytes(path, what)
    if b"\x00" in data[:65536]:
        raise UnknownFormat(path, f"binary data, not {what} text (a cubin? disassemble it with cuobjdump --dump-sass)")
    return data.decode("utf-8", "replace")


def _arch_of(line: str, cur: Optional[str]) -> Optional[str]:
    m = _ARCH.search(line)
    if m:
        return m.group(1)
    m = _EF_SM.search(line)
    if m and cur is None:
        return f"sm_{m.group(1)}"
    return cur


def load_sass(path: Path) -> list[SassFunction]:
    path = Path(path)
    text = _read_text(path, "SASS")
    if not _is_sass(text):
        raise UnknownFormat(path, "not cuobjdump --dump-sass or nvdisasm output (no 'Function :' / instruction lines)")
    funcs: list[tuple[str, Optional[str], list[str]]] = []
    arch: Optional[str] = None
    cur: Optional[list[str]] = None
    for line in text.splitlines():
        m = _INSN.match(line)
        if m:
            if cur is not None:
                cur.append(m.group("text"))
            continue
        arch = _arch_of(line, arch)
        m = _FUNC_CUOBJ.match(line) or _FUNC_SECTION.match(line)
        if m is None and _FUNC_LABEL.match(line):
            m = _FUNC_LABEL.match(line)
            if funcs and funcs[-1][0] == m.group(1):  # label right after its .section
                continue
        if m:
            cur = []
            funcs.append((m.group(1), arch, cur))
    funcs = [f for f in funcs if f[2]]
    if not funcs:
        raise EmptyCapture(path, "SASS dump holds no function with instructions")
    names = demangle_all([f[0] for f in funcs])
    return [make_function(str(path), names[n], a, ins, mangled=n) for n, a, ins in funcs]


def load_res_usage(path: Path) -> list[ResourceUsage]:
    path = Path(path)
    text = _read_text(path, "cuobjdump -res-usage")
    if not _is_res_usage(text):
        raise UnknownFormat(path, "not cuobjdump -res-usage output (no 'Resource usage:' / REG: lines)")
    found: list[tuple[str, Optional[str], dict[str, int]]] = []
    arch: Optional[str] = None
    pending: Optional[str] = None
    for line in text.splitlines():
        arch = _arch_of(line, arch) if ("arch" in line or "code for" in line) else arch
        m = _RES_FUNC.match(line)
        if m:
            pending = m.group(1)
            continue
        vals = dict((k, int(v)) for k, v in _RES_VALS.findall(line))
        if vals and pending is not None:
            found.append((pending, arch, vals))
            pending = None
    if not found:
        raise EmptyCapture(path, "resource usage lists no function (only 'Common' entries)")
    names = demangle_all([f[0] for f in found])
    return [ResourceUsage(source=str(path), name=names[n], mangled=n, registers=v.get("REG"),
                               stack_bytes=v.get("STACK"), shared_bytes=v.get("SHARED"),
                               local_bytes=v.get("LOCAL"), arch=a) for n, a, v in found]


def load(path: Path) -> list:
    """SASS text -> list[SassFunction]; res-usage text -> list[ResourceUsage]."""
    path = Path(path)
    text = _read_text(path, "SASS / res-usage")
    if _is_sass(text):
        return load_sass(path)
    if _is_res_usage(text):
        return load_res_usage(path)
    raise UnknownFormat(path, "neither SASS disassembly nor cuobjdump -res-usage output")
