"""Numbers as written in an answer: value in base units, family, and the tolerance the writing implies.

A `Quantity` is a number with its unit ("326.8 us", "1.58 TB/s", "32-way", "49%"),
converted to base units (ns, byte, byte/s, flop/s, Hz; % kept as percent). Code spans,
metric names and file names are blanked out first (their digits are not quantities),
keeping positions so a number can be related to the words around it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

_NUM = (r"(?<![\w.])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?P<exp>[eE][-+]?\d+)?"
        r"(?:\s(?=[MG](?![A-Za-z]))|\s(?=k(?![A-Za-z])(?!\s*[=×x*,]))|\s(?=[KMG]i(?![A-Za-z]))|"
        r"\s(?=(?:thousand|million|billion|trillion)\b))?"
        r"(?P<mult>[KMG]i(?![A-Za-z])|[kKMG](?![A-Za-z])|(?:thousand|million|billion|trillion)\b)?")
# "14.7M"; "14.73 M"; "73 k" (a spaced K, or a k before "=", "x" or ",", is a dimension); "67.2 million"; "4 Mi floats"
TIME_UNITS = {"ns": 1.0, "nanoseconds": 1.0, "nsec": 1.0, "us": 1e3, "µs": 1e3, "μs": 1e3, "usec": 1e3,
              "microseconds": 1e3, "ms": 1e6, "msec": 1e6, "milliseconds": 1e6, "s": 1e9, "sec": 1e9,
              "second": 1e9, "seconds": 1e9}
_BYTE_PREFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
                "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}
COUNT_NOUNS = (r"warp-inst(?:ructions?)?|(?:warp[- ])?(?:stalls?|samples?)|ops|operations|sectors?|wavefronts?|requests?|registers?|regs?|blocks?|threads?|thr|warps?|launches|launch|kernels?|steps?|"
               r"SMs?|instructions?|instrs?|inst|conflicts?|way|banks?|cycles?|lanes?|iterations?|transactions?|"
               r"elements?|rows?|columns?|flops?|FLOPs?|GFLOPs?|atomics?|copies|calls?|passes|pass|waves?|CTAs?|"
               r"syncs|synchroni[sz]ations|"
               r"useful bytes?")  # "4 useful bytes" (of each sector)
_UNIT = (r"(?P<unit>"
         r"(?:[kKMGT]i?)?(?:B|bytes?)/s(?:ec)?|[kKMGTP]?FLOP/s|[kKMGTP]?FLOPS|TFLOPs|[kMGTP]FLOP|"
         r"(?:[kKMGT]i?)?(?:B|bytes?|byte)(?:/(?:sector|request|inst|thread|block|flop))?|"
         r"[kMG]?Hz|%|percent|x|×|"
         r"nanoseconds|microseconds|milliseconds|seconds?|nsec|usec|msec|sec|ns|us|µs|μs|ms|s|"
         rf"(?:{COUNT_NOUNS})(?:/\w+)?"
         r")(?![A-Za-z0-9])")
QTY = re.compile(_NUM + r"(?:\s?-?\s?)" + _UNIT)
# "2,097,152 global store sectors": a count noun after one or two qualifying words still says what is counted
QTY_QUALIFIED = re.compile(_NUM + r"\s+(?:(?!(?:of|per|in|at|and|or|to|the|so|each|every|a|an|that|which|with|for|from|as|is|are|by|than|then|if|it|its|"
                           r"we|on)\b)[a-z][a-z-]*\s+){1,2}"
                           rf"(?P<unit>(?:{COUNT_NOUNS}))(?![A-Za-z0-9])")
# "230 `cudaStreamSynchronize` calls": a count noun after a code span (blanked by `scrub`) still says what is counted
QTY_SPANNED = re.compile(_NUM + rf"\s{{3,}}(?P<unit>(?:{COUNT_NOUNS}))(?![A-Za-z0-9])")
# "10 cudaStreamSynchronize calls", "**832 cudaMemcpyAsync**": a count of calls of the API function it names
QTY_API = re.compile(_NUM + r"[ \t*_]+(?:cuda|cu|nccl)[A-Z]\w*[*_]*(?:\s+calls?\b)?")
BARE = re.compile(_NUM + r"(?![\w])(?!-(?:bit|bytes?|dimensional|D)\b)")  # "64-bit", "6-dimensional": a width, no count
_BACKTICK = re.compile(r"`[^`]*`")
METRIC_TOKEN = re.compile(r"\b[a-z0-9]+__[\w.]+(?:\s*[/+]\s*[a-z0-9]+__[\w.]+)*|\b(?:timeline|derived|sass)\.(?!(?:txt|log|csv|json)\b)[\w.+/]+")


def metric_tokens(text: str) -> set[str]:
    """The profiler metric names a text writes (in backticks or not), spaces around '/' and '+' removed."""
    return {t.replace(" ", "") for t in METRIC_TOKEN.findall(text.replace("`", " "))}


ARTIFACT_TOKEN = re.compile(r"[\w./-]+\.(?:ncu-rep|sqlite|nsys-rep|csv|json(?:\.gz)?|txt|log)\b")
# Identifiers with digits (kernel names, template arguments such as nvjet_sm90_tst_256x128) are names.
_IDENT = re.compile(r"\b[A-Za-z_]\w*\d\w*\b|\[\d+\](?:\[\d+\])*|\bsm_?\d+a?\b|\b[A-Z]+\d+\b|"
                    r"\b[a-z]+(?:Kind|Id|ID|Type|Flags)\s?[=:]?\s?\d+(?![\w.,])")
# (a table column's code: "copyKind 8", "srcKind=2", "deviceId 0")


@dataclass(frozen=True)
class Quantity:
    """A number as written, converted to base units, with the tolerance its writing implies."""

    written: str
    value: float  # base units: ns, byte, byte/s, flop/s, hz; % as percent; ratio/count raw
    family: str  # time | bytes | byte_rate | flop_rate | hz | pct | ratio | count
    tol: float  # absolute tolerance from the precision as written, in base units
    alt: Optional[float] = None  # KB/MB/GB read as KiB/MiB/GiB (writers mix them)
    unit: str = ""
    start: int = 0
    end: int = 0


def family_and_factor(unit: Optional[str]) -> tuple[str, float]:
    u = (unit or "").strip()
    if not u:
        return "count", 1.0
    if u in ("%", "percent"):
        return "pct", 1.0
    if u in ("x", "×", "ratio"):
        return "ratio", 1.0
    if u in TIME_UNITS:
        return "time", TIME_UNITS[u]
    m = re.fullmatch(r"([kKMGT]i?)?(?:B|bytes?|byte)/s(?:ec)?", u)
    if m:
        return "byte_rate", _BYTE_PREFIX[m.group(1) or ""]
    m = re.fullmatch(r"([kKMGTP])?FLOP(?:/s|S|s)", u) or re.fullmatch(r"([kKMGTP])?flop/s", u)
    if m:
        return "flop_rate", {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}[m.group(1) or ""]
    m = re.fullmatch(r"([kKMGT]i?)?(?:B|bytes?|byte)", u) or re.fullmatch(r"([kKMGT]i?)(?:B|bytes?|byte)/(?:block|CTA)", u)
    if m:  # "204.8 KB/block": the bytes of one block (a per-sector or per-request byte count is a ratio)
        return "bytes", _BYTE_PREFIX[m.group(1) or ""]
    m = re.fullmatch(r"([kMG])?Hz|hz", u)
    if m:
        return "hz", {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9}[(m.group(1) if m.lastindex else "") or ""]
    m = re.fullmatch(r"([kKMGTP])?FLOPs?|flops?", u)
    if m:
        return "count", {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}[(m.group(1) if m.lastindex else "") or ""]
    return "count", 1.0


_MULT = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12,
         "Ki": 2.0 ** 10, "Mi": 2.0 ** 20, "Gi": 2.0 ** 30}


def to_quantity(num: str, exp: Optional[str], mult: Optional[str], unit: Optional[str], start: int = 0,
                end: int = 0) -> Quantity:
    digits = num.replace(",", "")
    frac = digits.partition(".")[2]
    step = 10.0 ** (-len(frac)) if frac else 1.0
    scale = _MULT.get(mult or "", 1.0) * (10.0 ** int(exp[1:]) if exp else 1.0)
    fam, factor = family_and_factor(unit)
    v = float(digits) * scale * factor
    alt = None
    pm = re.match(r"([kKMGT])(?:B|byte)", unit or "")
    if pm:
        alt = v * 1.024 ** " KMGT".index(pm.group(1).upper())
    elif mult and len(mult) == 1 and fam == "count" and not frac and not exp:
        # "64K registers" may be 65,536; "64M floats" 2^26
        alt = v * 1.024 ** " KMG".index(mult.upper())
    word = f" {mult}" if mult and len(mult) > 1 else (mult or "")  # "67.2 million", "14.7M"
    return Quantity(written=f"{num}{exp or ''}{word}{(' ' + unit) if unit else ''}", value=v, family=fam,
                    tol=0.5 * step * scale * factor, alt=alt, unit=unit or "", start=start, end=end)


def _blank(m: re.Match) -> str:
    return " " * (m.end() - m.start())


def scrub(text: str) -> str:
    """Text with code spans, metric names, file names and identifiers blanked (same length, same positions)."""
    text = _BACKTICK.sub(_blank, text or "")
    text = METRIC_TOKEN.sub(_blank, text)
    text = ARTIFACT_TOKEN.sub(_blank, text)
    return _IDENT.sub(_blank, text)


# "124-183 us", "85-90%", "from 4.07 to 4.32 TB/s": the first number of a range carries the unit written after the second
_RANGE_HEAD = re.compile(_NUM + r"\s?(?:-|–|to)\s?$")
_OF_HEAD = re.compile(_NUM + r"\s(?:out\s)?of\s(?:the\s)?~?$")  # "58.2 of the 60.8 ms": a part in its whole's unit
_VS_HEAD = re.compile(_NUM + r"\s(?:vs\.?|versus|\+|and)\s~?$")  # "8.19 vs 8.18 ms", "11.21 + 6.16 ms": two values in one unit
# "~200 us", "about 220 us": an approximate number is read to APPROX_TOL of its value (or its written precision)
_APPROX = re.compile(r"(?:~|≈|\babout|\baround|\broughly|\bapproximately|\bapprox\.?|\bnearly|\balmost|\bsome)\s*$", re.I)
APPROX_TOL = 0.05
_EXPONENT = re.compile(r"\d\s*(?:\^|\*\*)\s*$")
# "2-byte loads", "16-byte vector accesses": an element's width, which names the data, no measurement
WIDTH = re.compile(r"(?:1|2|4|8|16)-bytes?\s+(?!(?:of|per|in|at|from|to|and|or)\b)[a-z]")


def _approx(q: Quantity, t: str) -> Quantity:
    if not _APPROX.search(t[max(0, q.start - 16):q.start]):
        return q
    return Quantity(q.written, q.value, q.family, max(q.tol, APPROX_TOL * abs(q.value)), q.alt, q.unit, q.start, q.end)


_BOLD_NUMBER = re.compile(r"(?<![\w*])\*\*([~≈]?\d[\d.,]*)\*\*(?![\d*])")  # "**12,400**" (not "2**20")


def quantities(text: str) -> list[Quantity]:
    """Every number that carries a unit in `text`, with its position: the first number of a range takes the unit
    written after the second; an approximate number ("~200 us") gets a wider tolerance."""
    t = _BOLD_NUMBER.sub(lambda m: f"  {m.group(1)}  ", scrub(text))  # "**12,400** kernel launches": emphasis
    # around a number does not part it from its unit
    out = [to_quantity(m["num"], m["exp"], m["mult"], m["unit"], m.start(), m.end()) for m in QTY.finditer(t)]
    taken = {q.start for q in out}
    for m in [*QTY_QUALIFIED.finditer(t), *QTY_SPANNED.finditer(t), *QTY_API.finditer(t)]:
        if m.start() not in taken and not any(q.start <= m.start() < q.end for q in out):
            unit = m.groupdict().get("unit") or "calls"
            out.append(to_quantity(m["num"], m["exp"], m["mult"], unit, m.start(), m.end()))
            taken.add(m.start())
    for q in list(out):
        before = t[max(0, q.start - 24):q.start]
        head = _RANGE_HEAD.search(before) or _OF_HEAD.search(before) or _VS_HEAD.search(before)
        if head and q.unit:
            start = q.start - (len(t[max(0, q.start - 24):q.start]) - head.start())
            if not any(x.start <= start < x.end for x in out):
                out.append(to_quantity(head["num"], head["exp"], head["mult"], q.unit, start, start + len(head["num"])))
    out = [q for q in out if not _EXPONENT.search(t[max(0, q.start - 8):q.start])]  # "8192^3 FLOP": 3 is a power
    return sorted((_approx(_noun(q, t), t) for q in out), key=lambda q: q.start)


# "204.5M warp instructions": a count noun that qualifies the next one ("warp", "block") is not what is counted
_NEXT_NOUN = re.compile(rf"\s+(?P<unit>(?:{COUNT_NOUNS}))(?![A-Za-z0-9])")


def _noun(q: Quantity, t: str) -> Quantity:
    m = _NEXT_NOUN.match(t, q.end)
    if not m or not re.fullmatch(COUNT_NOUNS, q.unit or "") or "-" in t[q.start:q.end]:
        return q  # "a 256-thread block" counts threads
    return Quantity(f"{q.written.rsplit(' ', 1)[0]} {m['unit']}", q.value, q.family, q.tol, q.alt, m["unit"], q.start, m.end())


def evidence_quantity(value: float, unit: Optional[str]) -> Quantity:
    """A structured evidence value (JSON answers): precision from its decimal digits."""
    r = repr(float(value))
    frac = r.partition(".")[2].rstrip("0") if "e" not in r else ""
    fam, factor = family_and_factor(unit)
    return Quantity(written=f"{value:g}{(' ' + unit) if unit else ''}", value=value * factor, family=fam,
                    tol=0.5 * 10.0 ** (-len(frac)) * factor if frac else 0.5 * factor, unit=unit or "")


_BLOCK_START = re.compile(r"^\s*(?:[-*+•|#>]|\d+[.)]\s)")


def sentences(text: str) -> list[str]:
    """Sentences; wrapped lines of one paragraph are joined, list items and table rows stay apart."""
    blocks: list[str] = []
    for line in (text or "").splitlines():
        if blocks and line.strip() and blocks[-1].strip() and not _BLOCK_START.match(line) \
                and not re.match(r"\s*[|#]", blocks[-1]):  # a wrapped list item or bold-label line continues
            blocks[-1] += " " + line.strip()
        else:
            blocks.append(line)
    return [s for b in blocks for s in _SENTENCE_END.split(b) if s.strip()]


# a sentence ends at . ; ! ? before a capital, a code span or a bracket, or before a lower-case word in a note
# written without capitals ("it's the `.cpu()`. every step ..."), but not after an abbreviation ("e.g. the", "vs. 4")
_SENTENCE_END = re.compile(r"(?<=[.;!?])\s+(?=[A-Z`(*])|(?<![ (]e\.g\.)(?<!i\.e\.)(?<!\bvs\.)(?<!\bcf\.)(?<!etc\.)"
                           r"(?<!\bno\.)(?<!approx\.)(?<!\bca\.)(?<!incl\.)(?<=[a-z)`%][.!?])\s+(?=[a-z]{2,})")
