"""Evidence lines of an answer: the numbers a line cites, the value its metric is bound to, and the lines of an
evidence section (bullets with their wrapped continuations, table rows, or sentences)."""
from __future__ import annotations

import re
from typing import Optional

from ..answer import Evidence
from .arithmetic import chains
from .numbers import (ARTIFACT_TOKEN, BARE, METRIC_TOKEN, Quantity, family_and_factor, quantities, scrub, sentences,
                      to_quantity)

BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+(.*)$")


def numbers_of(line: str) -> list[Quantity]:
    """Numbers of a line in order: with their unit where one is written (`quantities`: ranges, count nouns), else bare."""
    with_unit = quantities(line)
    taken = [(q.start, q.end) for q in with_unit]
    bare = [to_quantity(m["num"], m["exp"], m["mult"], _pair_unit(m, with_unit), m.start(), m.end())
            for m in BARE.finditer(scrub(line)) if not any(a <= m.start() < b for a, b in taken)]
    return sorted(with_unit + bare, key=lambda q: q.start)


def _pair_unit(m: re.Match, with_unit: list[Quantity]) -> Optional[str]:
    """The unit of a pair's second value, for its first ("medians 15.560 / 15.559 ms": both milliseconds), when the
    two are alike (within 3x): a pair of readings, not a division."""
    after = next((q for q in with_unit if q.start > m.end()), None)
    if after is None or not after.unit or not re.fullmatch(r"\s*/\s*", m.string[m.end():after.start]) or \
            family_and_factor(after.unit)[0] not in ("time", "bytes", "pct"):
        return None
    first = to_quantity(m["num"], m["exp"], m["mult"], after.unit, m.start(), m.end())
    return after.unit if after.value and 1 / 3 <= first.value / after.value <= 3 else None


_SHAPE_FACTOR = re.compile(r"\s?[x×]?\s?\d+(?![\d.]|,\d)(?!\s?(?:[kKMGT]i?B\b|bytes?|[mun]?s\b|µs|%))")  # "256×32 float"
_SHAPE_FACTOR_BEFORE = re.compile(r"(?<![\d.])\d+\s?[x×]\s?$")


def _headline(line: str, nums: list[Quantity]) -> Quantity:
    """The value an evidence line cites: its first number, or, for a ratio of two metrics, the result of the
    arithmetic that number starts (`sectors / requests = 67,108,864 / 2,097,152 = 32`)."""
    metric = METRIC_TOKEN.search(line.replace("`", " "))
    for st in chains(line) if metric and "/" in metric.group(0) else ():  # a ratio of two metrics, worked out
        if st.ok and st.operands[0].start == nums[0].start:
            return next((q for q in nums if q.start == st.result.start), nums[0])
    cell = _value_cell(line)  # "| useful bytes per 32-B sector | 4.0 | `metric` |": the value column's number
    if cell is not None:
        first = next((q for q in nums if q.start >= cell), None)
        if first is not None:
            return first
    t = scrub(line)  # "copies a 256×32 float tile ...": the factors of a shape are no measurement
    def factor(q: Quantity) -> bool:
        if q.unit and q.unit not in ("x", "×") and family_and_factor(q.unit)[0] == "count":
            return False  # "2128 blocks x 1024": the counted grid, then the block
        times = q.unit in ("x", "×") or re.match(r"\s?[x×]", t[q.end:])
        return bool(times and _SHAPE_FACTOR.match(t, q.end) and "." not in q.written) or \
            bool(_SHAPE_FACTOR_BEFORE.search(t[:q.start]) and not q.unit and "." not in q.written)
    return next((q for q in nums if not factor(q)), nums[0])


def _value_cell(line: str) -> Optional[int]:
    """Where the first cell after a table row's label that opens with a number starts, or None (not a table row)."""
    if not line.lstrip().startswith("|"):
        return None
    at = line.index("|") + 1
    for i, cell in enumerate(line[at:].split("|")):
        if i and re.match(r"\s*[*~≈]*\s*\d", cell):
            return at + len(cell) - len(cell.lstrip())
        at += len(cell) + 1
    return None


_ATTRIBUTE = re.compile(r"\d+-(?=[A-Za-z])")  # "32-byte sector", "128-bit load": a size that names a thing


def metric_values(line: str) -> list[Quantity]:
    """The numbers of an evidence line that may be its metric's value: the first one, and the one written at the
    metric's name: right after it (`metric` = 4) and right before it with only words between (4 useful bytes
    (`metric`), **56.0 us** (`metric`), 928 us by ncu's `metric`)."""
    metric_m = METRIC_TOKEN.search(line.replace("`", " "))
    scrubbed = scrub(line)
    nums = numbers_of(line)
    if not nums:
        return []
    picked = [_headline(line, nums)]
    if metric_m:
        a, b = metric_m.span()
        after = [q for q in nums if q.start >= b and re.fullmatch(r"[\s)\]*:=~,]*", scrubbed[b:q.start])]
        worded = _ATTRIBUTE.sub(lambda m: "n" * len(m.group(0)), scrubbed)  # "per 32-byte sector": words
        before = [q for q in nums if q.end <= a and not _ATTRIBUTE.match(scrubbed, q.start) and
                  re.fullmatch(r"[*\s]*[A-Za-z/ ,'’-]{0,30}?[\s(\[*]*", worded[q.end:a])]  # "**56.0 us** (`metric`)",
        # "4.0 bytes used per sector, `metric`", "928 us by ncu's `metric`", "4.0 bytes used per 32-byte sector (`m`)"
        picked += after[:1] + before[-1:]  # "10 warp instructions (`metric`), 2.08 us": the one before, too
    return picked


_SUM_WRAP = re.compile(r"^[ \t]+\+\s+~?\d")


def parse_evidence(section: str) -> list[Evidence]:
    lines: list[str] = []
    for line in section.splitlines():
        m = BULLET.match(line)
        if m and lines and _SUM_WRAP.match(line) and not re.search(r"[.;:!?]\s*$", lines[-1]):
            lines[-1] += " " + line.strip()  # "...: 1,610.7 MB read\n  + 1,230.8 MB written = 2.84 GB": a sum
        elif m:  # wrapped at its plus sign, not a nested bullet
            lines.append(m.group(1))
        elif lines and line.startswith((" ", "\t")) and line.strip():  # a wrapped bullet continues
            lines[-1] += " " + line.strip()
    if not lines and section.strip():  # a table's rows, or a paragraph's sentences
        rows = [line for line in section.splitlines() if line.strip().startswith("|") and not line.strip().startswith("|--")]
        lines = rows or sentences(section)
    out = []
    for line in lines:
        metric_m = METRIC_TOKEN.search(line.replace("`", " "))
        art_m = ARTIFACT_TOKEN.search(line)
        nums = numbers_of(line)
        if not nums:
            continue
        value_q = _headline(line, nums)  # the line's value (`metric_values` adds the one written at the metric's name)
        if metric_m:  # "41.9M sectors for 2.10M requests; `metric` = 9.6 bytes": the metric is bound to its own value
            bound = re.match(r"[\s`)\]*]*(?:=|:)[\s*~]*", line[metric_m.end():])
            value_q = next((q for q in nums if bound and q.start == metric_m.end() + bound.end()), value_q)
        unit = value_q.unit or None
        raw = value_q.value / family_and_factor(unit)[1]  # the number as written, in its own unit
        kern = re.search(r"`([A-Za-z_]\w*)(?:\(|`)", line)
        out.append(Evidence(metric=metric_m.group(0).replace(" ", "") if metric_m else None, value=raw,
                                unit=unit, artifact=art_m.group(0) if art_m else None,
                                kernel=kern.group(1) if kern else None, meaning=line.strip()))
    return out
