"""Arithmetic written out in an answer is recomputed: a result that does not follow from its operands is a made-up
number, whatever fact it happens to equal; a result that does follow is a derivation the reader can check.

  chains   "2.13 GB / 4.81 TB/s = 442 us", "132 SMs x 128 FMA/clk x 2 x 1.98 GHz = 66.9 TFLOP/s",
           "2 × 8192³ = 1.10 TFLOP per GEMM / 21.44 ms = 51.3 TFLOP/s" (a result may start the next chain);
           operands may carry words ("132 SMs"), powers ("2^20", "8192³") and units.
  implicit a number equal to a ratio, quotient, product or difference of two other numbers of its sentence
           ("the window is 33.1 ms for 3999 adds, 8.28 us each"): arithmetic the writer did not spell out.

Values are compared in SI units (s, byte, byte/s, FLOP/s, Hz; % as a fraction). A result is refused only when it is
off by more than its rounding at every power of 1000 (a unit the writer mixes up is not a wrong sum).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from .numbers import _NUM, APPROX_TOL, BARE, Quantity, quantities, scrub, sentences, to_quantity

TOL = 0.03
_SUPER = {"²": 2, "³": 3, "⁴": 4}
_POWER = re.compile(r"^\s*(?:\^\s*|\*\*\s*)(\d+)")
_SUPERSCRIPT = re.compile(r"(?<![\w.])(\d+)([²³⁴])")
_WORD = r"[^\W\d_][\w/.'’-]*"
_OP = re.compile(rf"^\s*(?:{_WORD}\s+){{0,3}}?(?:\([^()=\d]{{1,60}}\)\s+)?(x|×|·|⋅|\*|/|\+|-|−|–|plus|minus)\s+(?:~\s*)?"
                 rf"(?:{_WORD}\s+){{0,3}}$|^(/)$"  # "132 SMs (TARGET_INFO_GPU.smCount) x 128 lanes": a source named
                 rf"|^\s*(?:{_WORD}\s+){{0,3}}?(×|·|⋅|\*)\s*$")
_EQ = re.compile(rf"^\s*(?:{_WORD}\s+){{0,4}}?(?:\([^()=]*\)\s*)?(?:=|≈)\s*(?:\*\*)?~?\s*$")  # "= **32**"
_HEAD = re.compile(_NUM)
_TIMES = ("x", "×", "·", "⋅", "*")
_WORD_OPS = {"plus": "+", "minus": "-"}
_TIMES_UNIT = re.compile(r"^\s+(?:~\s*)?\d")  # "3 x 16.8 MB": the x after 3 is the operator, not a ratio unit


@dataclass(frozen=True)
class Operand:
    q: Quantity
    si: float  # value in SI units (time in s; % as a fraction)
    start: int
    end: int


@dataclass(frozen=True)
class Stated:
    """One 'A op B ... = R' of a sentence: its result, whether it holds, and the text."""

    result: Quantity
    operands: tuple[Quantity, ...]
    ok: bool
    text: str


# what a family measures, as powers of seconds and bytes (a FLOP or a count of anything is dimensionless)
_DIMS = {"time": (1, 0), "bytes": (0, 1), "byte_rate": (-1, 1), "flop_rate": (-1, 0), "hz": (-1, 0)}


def _dims(q: Quantity) -> tuple[int, int]:
    return _DIMS.get(q.family, (0, 0))


def _combine(a: tuple[int, int], op: str, b: tuple[int, int]) -> Optional[tuple[int, int]]:
    if op in _TIMES:
        return a[0] + b[0], a[1] + b[1]
    if op == "/":
        return a[0] - b[0], a[1] - b[1]
    return a if a == b or b == (0, 0) else None  # a sum of unlike things is no arithmetic


def _si(q: Quantity) -> float:
    if q.family == "time":
        return q.value / 1e9
    if q.family == "pct":
        return q.value / 100.0
    return q.value


def _operands(sentence: str) -> list[Operand]:
    """The numbers of a sentence, with powers folded in ("2^20 threads" is one operand of 1,048,576 threads)."""
    t = scrub(sentence)
    qs = quantities(sentence)
    bare = [to_quantity(m["num"], m["exp"], m["mult"], None, m.start(), m.end()) for m in BARE.finditer(t)
            if not any(q.start <= m.start() < q.end for q in qs)]
    powers = [Quantity(m.group(0), float(m.group(1)) ** _SUPER[m.group(2)], "count", 0.0, None, "", m.start(), m.end())
              for m in _SUPERSCRIPT.finditer(t)]
    nums = sorted(qs + bare + powers, key=lambda q: q.start)
    nums = [q for q in nums if not any(a <= q.start < b for a, b in _sizes_before_times(t))]
    out: list[Operand] = []
    skip = -1
    for i, q in enumerate(nums):
        if i <= skip:
            continue
        if q.unit in ("x", "×") and _TIMES_UNIT.match(t[q.end:q.end + 4]):
            head = to_quantity(*_HEAD.match(t, q.start).group("num", "exp", "mult"), None)
            q = Quantity(head.written, head.value, "count", head.tol, None, "", q.start, t.index(q.unit, q.start))
        p = _POWER.match(t[q.end:q.end + 6]) if not q.unit else None
        if p and p.group(1) and i + 1 < len(nums) and nums[i + 1].start >= q.end:
            nxt = nums[i + 1]
            power = float(nxt.written.split()[0].replace(",", "")) if nxt.written[:1].isdigit() else 0.0
            v = q.value ** power if power < 64 else q.value
            fold = Quantity(f"{q.written}^{nxt.written}", v, nxt.family if nxt.unit else "count", 0.0, None,
                            nxt.unit, q.start, nxt.end)
            out.append(Operand(fold, _si(fold), q.start, nxt.end))
            skip = i + 1
            continue
        out.append(Operand(q, _si(q), q.start, q.end))
    return out


def _rel_tol(q: Quantity) -> float:
    """The relative rounding of a written number; a whole number ("2 x", "1024 FMA") is taken as exact."""
    if "." not in q.written.split()[0] and not q.written.rstrip().endswith(("k", "K", "M", "G")):
        return 0.0
    return q.tol / max(abs(q.value), 1e-30)


def agrees(written: Quantity, got: float, tol: float = TOL) -> bool:
    """Whether a written result equals `got` (SI) within its rounding, at some power of 1000 (or as a percent)."""
    if got == 0:
        return False
    ratio = _si(written) / got
    tol = max(tol, _rel_tol(written))
    return any(abs(ratio / 1000.0 ** k - 1) <= tol for k in range(-5, 6)) or \
        (written.family != "pct" and abs(ratio / 100 - 1) <= tol)


def _apply(a: float, op: str, b: float) -> Optional[float]:
    if op in ("+",):
        return a + b
    if op in ("-", "−", "–"):
        return a - b
    if op in _TIMES:
        return a * b
    return a / b if b else None


def _evaluate(terms: list[Operand], ops: list[str]) -> tuple[Optional[float], Optional[tuple[int, int]]]:
    """The value and dimensions of 'a op b op c ...' with x and / before + and - ("31/32 x 16 + 1/32 x 1024")."""
    groups: list[tuple[str, float, Optional[tuple[int, int]]]] = []
    sign, acc, dims = "+", terms[0].si, _dims(terms[0].q)
    for op, t in zip(ops, terms[1:]):
        if op in _TIMES or op == "/":
            got = _apply(acc, op, t.si)
            if got is None:
                return None, None
            acc, dims = got, (_combine(dims, op, _dims(t.q)) if dims is not None else None)
        else:
            groups.append((sign, acc, dims))
            sign, acc, dims = op, t.si, _dims(t.q)
    groups.append((sign, acc, dims))
    total, out = 0.0, groups[0][2]
    for sign, v, d in groups:
        total += v if sign == "+" else -v
        out = _combine(out, "+", d) if out is not None and d is not None else None
    return total, out


def _op(gap: str) -> Optional[str]:
    m = _OP.match(gap)
    if not m:
        return None
    op = m.group(1) or m.group(2) or m.group(3)
    return _WORD_OPS.get(op.lower(), op)


_SIZE_BEFORE_TIME = re.compile(r"(?<![\w.])\d[\d.,]*\s?(?:[kKMGT]i?B|bytes)\s+(?=~?\d[\d.,]*\s?(?:ns|us|µs|ms|s)\b)")


def _sizes_before_times(t: str) -> list[tuple[int, int]]:
    """Spans of sizes written right before a time ("clone memcpy DtoD 1.07 GB 0.507 ms"): what a term moves, no
    operand of the sum it is in."""
    return [m.span() for m in _SIZE_BEFORE_TIME.finditer(t)]


def chains(sentence: str) -> list[Stated]:
    """Every written 'A op B (op C ...) = R' of one sentence, recomputed with x and / before + and -."""
    t = scrub(sentence)
    for a, b in _sizes_before_times(t):
        t = t[:a] + " " * (b - a) + t[b:]
    ops = _operands(sentence)
    out: list[Stated] = []
    i = 0
    while i < len(ops):
        tol, j, kinds, between = _rel_tol(ops[i].q), i, set(), []
        while j + 1 < len(ops):
            op = _op(t[ops[j].end:ops[j + 1].start])
            if op is None:
                break
            kinds.add("add" if op in "+-−–" else "mul")
            between.append(op)
            tol += _rel_tol(ops[j + 1].q)
            j += 1
        terms = [o.q for o in ops[i:j + 1]]
        tail = re.search(r"(?:\bx|×|\*|/|\+)\s*$", t[ops[i - 1].end if i else 0:ops[i].start])  # "(... 32 threads) x
        if len(terms) >= 2 and j + 1 < len(ops) and _EQ.match(t[ops[j].end:ops[j + 1].start]) and not tail:  # 200 ..."
            r = ops[j + 1]
            if re.match(r"\s*(?:x|×|\*|/)\s*~?\d", t[r.end:]):  # "64M in + 64M out = 2 x 268.4 MB = 536.9 MB": the
                i = j + 1  # result is itself a product, checked as the chain it starts
                continue
            if re.match(r"\s?[-–]\s?\d", t[r.end:]):  # "69.8 us (ncu) / 50.8 us (nsys) = 8-11x": a range of
                i = j + 1  # results, each from its own division; no one chain to check
                continue
            acc, dims = _evaluate(ops[i:j + 1], between)
            if acc is None or (terms[0].family == "pct" and "mul" in kinds):
                i = j + 1
                continue  # "40% x 3" reads as a share of something unwritten
            if dims != _dims(r.q):
                i = j + 1  # "8192 x 8192 fp32 = 268 MB": a factor left unwritten (4 bytes); nothing to check
                continue
            if kinds == {"mul"} and "/" not in t[ops[i].start:ops[j].end] and \
                    all(abs(q.value) >= 2 for q in terms) and abs(r.q.value) * 10 < min(abs(q.value) for q in terms):
                i = j + 1  # "grid 264 x 1024 = 2 blocks per SM": a shape, then what it comes to; no product
                continue
            approx = APPROX_TOL if re.search(r"[~≈]", t[ops[j].end:r.start]) else 0.0  # "= ~10%": rounded freely
            ok = _agrees_any(_same_unit(ops[i:j + 1], kinds, r), between, r.q, TOL + tol + approx,
                             t[ops[i].start:r.end])
            out.append(Stated(r.q, tuple(terms), ok, t[ops[i].start:r.end].strip()))
            i = j + 1  # the result may start the next chain
            continue
        i = j + 1 if j > i else i + 1
    return out


def _same_unit(terms: list[Operand], kinds: set[str], result: Operand) -> list[Operand]:
    """The terms of a sum, a bare number among them read in the unit of its result ("ew_scale 176us + ew_add 180 +
    ... = ~944us": each term is microseconds)."""
    shown = re.match(r"\d[\d,]*(?:\.\d+)?", result.q.written)
    if kinds != {"add"} or not result.q.unit or not shown or not any(o.q.unit for o in terms):
        return terms
    scale = result.si / (float(shown.group(0).replace(",", "")) or 1.0)
    return [o if o.q.unit or o.q.family != "count" else Operand(o.q, o.q.value * scale, o.start, o.end) for o in terms]


_BINARY = {"k": 1.024, "K": 1.024, "M": 1.024 ** 2, "G": 1.024 ** 3}


def _binary(o: Operand) -> Operand:
    """'64M' read as 2^26: a count written with K, M or G may mean 2^10, 2^20 or 2^30; '256 MB' may mean MiB."""
    if o.q.alt and o.q.family == "bytes":
        return Operand(o.q, o.si * o.q.alt / o.q.value, o.start, o.end)
    w = o.q.written.split()[0]
    if w[-1:] in _BINARY and w[:-1].replace(".", "").replace(",", "").isdigit():
        return Operand(o.q, o.si * _BINARY[w[-1]], o.start, o.end)
    return o


def _agrees_any(terms: list[Operand], between: list[str], result: Quantity, tol: float, text: str) -> bool:
    """Whether the result holds as written, with K/M/G counts read as powers of two, or with an FMA counted as the
    two floating-point operations it is ('4M threads x 64 rounds x 48 FMAs = 25.8 GFLOP')."""
    fma = bool(re.search(r"\bFMA", text)) and bool(re.search(r"FLOP", result.unit, re.I))
    warps = bool(re.search(r"thread", text, re.I)) and bool(re.match(r"warps?\b", result.unit, re.I))  # "8 x 256-thread
    for ts in (terms, [_binary(o) for o in terms]):  # blocks = 64 warps/SM": threads counted in warps of 32
        got = _evaluate(ts, between)[0]
        if got is not None and (agrees(result, got, tol) or (fma and agrees(result, 2 * got, tol)) or
                                (warps and agrees(result, got / 32, tol))):
            return True
        if got is not None and result.family == "pct" and between == ["/"] and 0 < abs(got - 1) < 0.5 and \
                agrees(result, abs(got - 1), tol):  # "counted vs useful 1.1167/1.0995 = 1.6% extra": the excess
            return True
    return False


def wrong_arithmetic(text: str) -> list[str]:
    """Each written chain of the text whose result is not what its operands give."""
    return [f"'{s.text}' does not hold: the operands do not give {s.result.written}"
            for sent in sentences(text) for s in chains(sent) if not s.ok]


def implicit(sentence: str, q: Quantity, unit_share: bool = False) -> Optional[str]:
    """How `q` follows from two other numbers of its sentence (their ratio, quotient, product, difference, or a
    share's complement), or None. `unit_share`: q is a unit's share of its peak, never a ratio of two amounts."""
    others = [o for o in _operands(sentence) if not (o.start <= q.start < o.end) and o.si]
    target = _si(q)
    if not target:
        return None
    listed = listed_sum(sentence, q)
    if listed is not None:
        return listed
    for a in others:
        for b in others:
            if a is b:
                continue
            same = a.q.family == b.q.family
            if unit_share and a.q.family in ("bytes", "count"):
                continue
            tries = [(x.si / y.si, "ratio") for x, y in [(a, b), (_binary(a), b), (a, _binary(b))]] \
                if same or q.family in ("time", "bytes", "byte_rate", "flop_rate") else []  # "1 GiB -> 16 MB (64x)"
            if same:
                tries += [(a.si - b.si, "difference"), (a.si + b.si, "sum"), (1 - a.si / b.si, "complement")]
            tries.append((a.si * b.si, "product"))
            for v, how in tries:
                if v and v > 0 and _close(target, v, q):
                    return f"{how} of {a.q.written} and {b.q.written} written in the same sentence"
    return None


def listed_sum(sentence: str, q: Quantity) -> Optional[str]:
    """`q` as the sum of the parts listed after it in its sentence ("~238 us (the two GEMMs at ~90 us each, plus the
    copy 21 us, pow 15 us, ...)"), a part counted as often as the words before it say ("two ... at 90 us each"): a
    total the writer broke down, not a measurement of its own. None when it is not that sum, or fewer than three
    parts (two are `implicit`'s) are listed."""
    if q.family not in ("time", "bytes"):
        return None
    t = scrub(sentence)
    parts = [o for o in _operands(sentence) if o.start >= q.end and o.q.family == q.family]
    if len(parts) < 2:
        return None
    total, written, last = 0.0, [], q.end
    for o in parts:
        n = _times_each(t[last:o.start], t[o.end:o.end + 8])
        total += n * o.si
        written.append(f"{n} x {o.q.written}" if n > 1 else o.q.written)
        last = o.end
    if len(written) + sum(w.count(" x ") for w in written) < 3 or not _close(_si(q), total, q):
        return None
    return f"sum of the parts listed after it ({' + '.join(written)})"


_COUNT_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "eight": 8, "both": 2}
_EACH = re.compile(r"^\s*(?:each|apiece|per (?:launch|call|kernel))\b", re.I)
_COUNT_BEFORE = re.compile(r"\b(two|three|four|five|six|eight|both|\d)\b(?!.*\b(?:two|three|four|five|six|eight|both|\d)\b)",
                           re.I)


def _times_each(before: str, after: str) -> int:
    """How many times a listed part counts: "the two GEMMs at ~90 us each" twice, "copy 21 us" once."""
    m = _COUNT_BEFORE.search(before)
    if not m or not _EACH.match(after):
        return 1
    w = m.group(1).lower()
    return _COUNT_WORDS.get(w) or int(w)


def implicit_miss(sentence: str, q: Quantity, within: float = 0.5) -> Optional[str]:
    """A ratio ("5.1x") that misses, by less than `within`, the quotient of two numbers of one kind written in its own
    sentence ("1.29 ms / 1000 launches = 1.29 us per launch, 1.8x the median kernel of 710 ns"): arithmetic the
    writer got wrong. None when the ratio holds for some pair, or is near none."""
    if q.family != "ratio" or implicit(sentence, q) or _TIMES_UNIT.match(scrub(sentence)[q.end:q.end + 4]):
        return None  # "6 x 169.8 us": the x multiplies
    target = _si(q)
    others = [o for o in _operands(sentence) if not (o.start <= q.start < o.end) and o.si]
    t = scrub(sentence)
    approx = _APPROX.search(t[max(0, q.start - 12):q.start]) or \
        _IN_RANGE.search(t[max(0, q.start - 8):q.start]) or _RANGE_TAIL.match(t, q.end)  # "(~10x)", "(2.5-3x)"
    pairs = [(a, b, a.si / b.si) for a in others for b in others
             if a is not b and a.q.family == b.q.family and a.q.family in _DIMS and target and a.si > b.si]
    if approx and any(abs(target / v - 1) <= APPROX_TOL for _, _, v in pairs):
        return None
    if _AT_LEAST.match(t, q.end) or _AT_LEAST_BEFORE.search(t[max(0, q.start - 14):q.start]):
        if any(v >= target * (1 - APPROX_TOL) for _, _, v in pairs):  # "~10x+" for 3.87 ms -> 0.3 ms: at least 10x
            return None
    for a, b, v in pairs:
        if abs(target / v - 1) <= within:
            return f"{a.q.written} / {b.q.written} = {v:.3g}"
    return None


_AT_LEAST = re.compile(r"\+|\s?or (?:more|better)\b")  # "10x+", "10x or more"
_AT_LEAST_BEFORE = re.compile(r"(?:>|≥|>=|\bat least|\bover|\bmore than)\s*~?\s*$", re.I)
_APPROX = re.compile(r"(~|≈|\babout|\broughly|\baround|\bnearly|\balmost|\bsome|\bclose to|\bapprox\w*\.?)\s*$", re.I)
_IN_RANGE = re.compile(r"\d\s?(?:-|–|to)\s?$")
_RANGE_TAIL = re.compile(r"\s?(?:-|–|to)\s?\d")
APPROX_TOL = 0.2  # a ratio written as approximate ("~10x" for 2.2 ms -> ~0.2 ms) may round by this much


def _close(target: float, v: float, q: Quantity) -> bool:
    tol = max(TOL, _rel_tol(q))
    return abs(target / v - 1) <= tol or (q.family == "pct" and abs(target * 100 / v - 1) <= tol)
