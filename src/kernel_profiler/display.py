"""Numbers for people: the one place every renderer formats them (kernel names: kernel_name.py).

Every quantity kernel-profiler holds is in a base unit (artifacts/units.py):
``ns``, ``byte``, ``byte/s``, ``flop``, ``flop/s``, ``hz``, ``%``, ``ratio``
or a count of something (``instructions``, ``sector/request``, ...).
`quantity(value, unit)` scales it to a readable prefix (ns -> µs/ms/s, bytes
-> KB/MB/GB, byte/s -> GB/s/TB/s, flop/s -> TFLOP/s) and keeps 4 significant
digits: enough for a reader (and the critic) to trace the number back to the
capture, few enough to read. Byte prefixes are decimal, as ncu's are.
Never prints scientific notation or a float's full repr.
"""
from __future__ import annotations

import math
from typing import Optional

SIG = 4  # significant digits of a displayed quantity

_SCALES = {
    "ns": [(1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns")],
    "byte": [(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "KB"), (1.0, "B")],
    "byte/s": [(1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "KB/s"), (1.0, "B/s")],
    "flop": [(1e15, "PFLOP"), (1e12, "TFLOP"), (1e9, "GFLOP"), (1e6, "MFLOP"), (1.0, "FLOP")],
    "flop/s": [(1e15, "PFLOP/s"), (1e12, "TFLOP/s"), (1e9, "GFLOP/s"), (1e6, "MFLOP/s"), (1.0, "FLOP/s")],
    "hz": [(1e9, "GHz"), (1e6, "MHz"), (1e3, "kHz"), (1.0, "Hz")],
}
_ALIASES = {"bytes": "byte", "B": "byte", "flops": "flop", "FLOP": "flop", "Hz": "hz", "cycle/s": "hz",
            "B/s": "byte/s", "bytes/s": "byte/s", "FLOP/s": "flop/s", "us": "ns*1e3", "ms": "ns*1e6", "s": "ns*1e9"}
# Count nouns printed in the plural when the value is not 1 (first word of a compound unit).
_PLURAL = {"byte": "bytes", "sector": "sectors", "request": "requests", "instruction": "instructions",
           "inst": "inst", "block": "blocks", "thread": "threads", "warp": "warps", "cycle": "cycles",
           "wavefront": "wavefronts", "launch": "launches", "kernel": "kernels", "register": "registers",
           "transaction": "transactions", "conflict": "conflicts", "step": "steps", "copy": "copies",
           "SM": "SMs", "element": "elements", "rank": "ranks", "sample": "samples"}


def number(x: float, sig: int = SIG) -> str:
    """`x` with at most `sig` significant digits, thousands separators, no exponent, no trailing zeros."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if x == 0:
        return "0"
    a = abs(x)
    if a >= 10 ** (sig - 1):  # as many integer digits as the significant digits allow, or more
        return f"{x:,.0f}"
    decimals = sig - 1 - math.floor(math.log10(a))
    if a < 1e-3:  # tiny: keep `sig` significant digits anyway, still without an exponent
        decimals = min(decimals, 12)
    s = f"{x:.{max(decimals, 0)}f}"
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


_SINGULAR = {v: k for k, v in _PLURAL.items()}


def _plural(unit: str, value: float) -> str:
    """The count noun agreeing with the value: '1 instruction', '63 instructions', '4 bytes/sector'."""
    head, sep, tail = unit.partition("/")
    if not head:
        return unit
    if value == 1:
        return _SINGULAR.get(head, head) + sep + tail
    return _PLURAL.get(head, head) + sep + tail


def quantity(value: Optional[float], unit: Optional[str], sig: int = SIG) -> str:
    """A value in a base unit, scaled to a readable prefix: '1.71 ms', '1.265 GB', '4.812 TB/s', '36.34%'."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    u = (unit or "").strip()
    u = _ALIASES.get(u, u)
    if u.startswith("ns*"):
        value, u = value * float(u[3:]), "ns"
    if u in _SCALES:
        for scale, label in _SCALES[u]:
            if abs(value) >= scale:
                return f"{number(value / scale, sig)} {label}"
        return f"{number(value / _SCALES[u][-1][0], sig)} {_SCALES[u][-1][1]}"
    if u == "%":
        return f"{number(value, 3 if abs(value) < 100 else sig)}%"
    if u == "ratio":
        if 0 <= value <= 1:
            return fraction(value)
        return times(value)
    if u in ("", "count"):
        return number(value, sig) if value != int(value) else f"{int(value):,}"
    v = f"{int(value):,}" if value == int(value) and abs(value) < 1e15 else number(value, sig)
    return f"{v} {_plural(u, value)}"


def duration(ns: Optional[float]) -> str:
    return quantity(ns, "ns")


def size(n_bytes: Optional[float]) -> str:
    return quantity(n_bytes, "byte")


def bandwidth(bytes_per_s: Optional[float]) -> str:
    return quantity(bytes_per_s, "byte/s")


def flop_rate(flops_per_s: Optional[float]) -> str:
    return quantity(flops_per_s, "flop/s")


def fraction(x: Optional[float]) -> str:
    """A fraction of 1 as a percentage: 0.3634 -> '36.3%', 0.994 -> '99.4%', 1.0 -> '100%'."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    p = 100.0 * x
    if p == 0 or p >= 99.95 and p <= 100.0:
        return f"{p:.0f}%"
    return f"{number(p, 3)}%"


def times(g: Optional[float]) -> str:
    """A multiple: 6.507 -> '6.51x', 370.4 -> '370x', 1234.5 -> '1,235x'."""
    if g is None or (isinstance(g, float) and math.isnan(g)):
        return "n/a"
    return f"{number(g, 3)}x"


def ellipsize(text: str, width: int) -> str:
    """`text` cut to `width` characters with an ellipsis in the middle (never silently)."""
    if len(text) <= width:
        return text
    half = (width - 1) // 2
    return text[:half] + "…" + text[-(width - 1 - half):]
