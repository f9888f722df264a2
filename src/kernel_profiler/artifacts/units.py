"""The one place where profiler units are converted to base units.

Base units: time -> ``ns``; data -> ``byte``; clocks/frequencies -> ``hz``
(cycle/second); rates -> ``<quantity>/s``; ``%`` and plain counts (``inst``,
``sector``, ``cycle``, ``warp``...) are kept as they are.

ncu's ``.ncu-rep`` already stores base units (``ns``, ``byte``, ``byte/s``,
``hz``); its CSV pages print scaled units (``ms``, ``Mbyte``, ``Gbyte/s``,
``Ghz``, ``sector/us``, ``Kbyte/block``, ``%/Kbyte``). ncu's byte prefixes are
decimal (1 Kbyte = 1000 byte: checked against the .ncu-rep of the same capture);
binary ``KiB``/``MiB`` are accepted too. Quirk: ncu prints a per-byte value
scaled like a byte count (8190 ``%/byte`` in the report is 8.19 ``%/Kbyte`` in
the CSV), so a byte prefix in a denominator is undone the same way.
"""
from __future__ import annotations

import math
import re

# time as a quantity: base ns
_TIME_NS = {
    "ns": 1.0, "nsecond": 1.0, "nsec": 1.0,
    "us": 1e3, "usecond": 1e3, "usec": 1e3,
    "ms": 1e6, "msecond": 1e6, "msec": 1e6,
    "s": 1e9, "second": 1e9, "sec": 1e9,
}
# time as a rate denominator: size in seconds
_TIME_S = {k: v / 1e9 for k, v in _TIME_NS.items()}

_SI = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_BIN = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}

_BYTE_RE = re.compile(r"^(k|K|M|G|T|P|Ki|Mi|Gi|Ti)?(byte|bytes|B)$")
_HZ_RE = re.compile(r"^(k|K|M|G|T)?(hz|Hz|HZ)$")


def _scale(unit: str, *, denominator: bool) -> tuple[float, str]:
    """Size of one `unit` in base units, and the base unit's name."""
    if unit in _TIME_NS:
        return (_TIME_S[unit], "s") if denominator else (_TIME_NS[unit], "ns")
    m = _BYTE_RE.match(unit)
    if m:
        p = m.group(1) or ""
        return (_BIN[p] if p in _BIN else _SI[p]), "byte"
    m = _HZ_RE.match(unit)
    if m:
        return _SI[m.group(1) or ""], "hz"
    return 1.0, unit


def base_unit(unit: str | None) -> tuple[float, str]:
    """(factor, base unit) such that value_in_base = value * factor."""
    unit = (unit or "").strip()
    if not unit or unit == "%":
        return 1.0, unit
    if "/" in unit:
        num, _, den = unit.partition("/")
        fn, bn = _scale(num.strip(), denominator=False) if num.strip() else (1.0, "")
        fd, bd = _scale(den.strip(), denominator=True)
        if bd == "byte":
            # ncu scales a per-byte value the way it scales bytes: 8190 %/byte is
            # printed as 8.19 %/Kbyte (checked against the .ncu-rep). Undo that.
            fd = 1.0 / fd
        if bn in ("cycle", "cycles") and bd == "s":
            return fn / fd, "hz"
        return fn / fd, f"{bn}/{bd}"
    return _scale(unit, denominator=False)


def to_base(value: float, unit: str | None) -> tuple[float, str]:
    """Convert one value to base units: (value, base unit)."""
    factor, base = base_unit(unit)
    if factor == 1.0:
        return value, base
    v = value * factor
    # keep integral results integral (e.g. 1.709856 ms -> 1709856.0 ns, not ...855.9999)
    r = round(v)
    if r != 0 and math.isfinite(v) and abs(v - r) <= 1e-9 * abs(v):
        v = float(r)
    return v, base
