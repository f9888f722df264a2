"""Matching a number of an answer to the fact it claims, or to a declared derivation of cited facts.

A number matches a fact only when
  - the value agrees within the rounding of what was written (and 2%),
  - the fact belongs to a kernel named in the same sentence, or to the kernel the answer is about,
    or to no kernel (timeline, device, program-level facts),
  - the fact is what the number is said to be: its concepts meet the words of the sentence or
    evidence line (`concepts.py`); a count noun written after the number ("132 blocks") must itself
    describe the fact; a device or datasheet ceiling matches only where the sentence speaks of a
    peak/ceiling, and of the math path it names.
Numbers that match no fact may still be derived (`derivations`): the ratio, product or difference of
two cited values, a per-launch/per-step division, the time a cited amount takes at a cited rate or
ceiling (bytes / bandwidth, FLOPs / FLOP rate), the complement of a cited share, the events per second
of a cited time, or a cited value against an architecture constant of the declared table (`CONSTANTS`:
32 lanes per warp, 32 banks of 4 bytes, 32-byte sectors, ...). A number derived in one sentence is a
cited value for the next. A ceiling (datasheet or peak-sustained rate) matches only a number used as
a reference ("of 4.81 TB/s", "at 4.81 TB/s", "peak"), never one presented as achieved ("achieves 989
TFLOP/s"). Every match records which fact or derivation it used.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Optional

from .clause import API_CLAUSE, UNIT_SHARE
from .concepts import LEVELS, metric_concepts, text_concepts, unit_concepts
from .facts import REL_TOL, Fact, Facts
from .numbers import METRIC_TOKEN, Quantity
from .use import Use, number_use  # noqa: F401 (number_use re-exported)

PATHS = frozenset({"fp32", "tf32", "bf16", "fp16", "fp8", "fp64"})
# Architecture constants an answer may quote (all NVIDIA GPUs since Volta), with what they mean: a number
# equal to one, or a cited value multiplied/divided by one, is accepted where its sentence speaks of that thing.
CONSTANTS: list[tuple[float, frozenset[str], str]] = [
    (32.0, frozenset("divergence block bank_conflict bytes_per_sector wavefronts sectors_per_request".split()),
     "warp size / bank count / sector bytes"),
    (4.0, frozenset("sectors_per_request bytes bank_conflict".split()), "4-byte word: bank width; sectors per request of coalesced 4-byte loads"),
    (1.0, frozenset("wavefronts bank_conflict sectors_per_request".split()), "one wavefront (conflict-free)"),
    (128.0, frozenset("bytes requests bytes_per_sector sectors_per_request bank_conflict".split()),
     "bytes per warp request of 4-byte words = one row of 32 banks x 4 bytes = one cache line"),
    (16.0, frozenset("bank_conflict wavefronts".split()), "bytes per lane of a 128-bit (LDS.128/float4) access"),
    (100.0, frozenset("peak share busy sol occupancy".split()), "100%"),
]
_STRICT_UNIT = re.compile(r"^[A-Za-z]")  # count nouns (not %, x, byte or time units) must describe the fact
_BYTE_OR_TIME = re.compile(r"^(?:[kKMGT]i?)?(?:B|bytes?)(?:/s)?$|^(ns|us|µs|μs|ms|s|sec|seconds?|[a-z]+seconds)$|"
                           r"FLOP|Hz$", re.I)



BOUND_SPAN = 10.0  # a bound is informative: the value that satisfies it lies within this factor of it


def _within_bound(value: float, bound_value: float, kind: str) -> bool:
    if kind == "upper":
        return bound_value / BOUND_SPAN <= value <= bound_value * (1 + REL_TOL)
    return bound_value * (1 - REL_TOL) <= value <= bound_value * BOUND_SPAN


def match_bound(q: Quantity, concepts: frozenset[str], tokens: set[str], kernels: set[str], facts: Facts,
                cited: list[Fact], use: Use, derived: Iterable[Operand] = ()) -> Optional[tuple[str, list[str]]]:
    """An inequality ("under 2%", "well under 1 ms") holds for a fact its sentence describes, or for a declared
    derivation of cited values, lying within `BOUND_SPAN` of the bound."""
    if use.bound is None:
        return None
    want = concepts | unit_concepts(q.unit) | {"ratio"}
    for fam, v, _ in candidates(q):
        for f in facts.by_family.get(fam, []):
            if (f.kernel is None or f.kernel in kernels) and _within_bound(f.value, v, use.bound) \
                    and describes(f, q, concepts, tokens, use):
                return f"{use.bound} bound on {f.metric} = {f.value:.4g}", [f.metric]
    ops = [Operand.of(f) for f in cited] + list(derived)
    for fam, val, how, operands in derivations(want, ops):
        for cf, v, _ in candidates(q):
            if _fam_fits(fam, cf, how, q.family) and _within_bound(val, v, use.bound):
                return f"{use.bound} bound on {how} = {val:.4g}", operands
    return None


@dataclass
class Match:
    written: str
    where: str
    fact: Optional[str] = None  # Fact.describe() of the matched fact
    derivation: Optional[str] = None  # the declared derivation, when derived
    operands: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.fact is not None or self.derivation is not None


def candidates(q: Quantity) -> list[tuple[str, float, float]]:
    """(fact family, value, tolerance) alternatives a quantity may match."""
    v, t = abs(q.value), q.tol
    if q.family == "pct":
        return [("pct", v, t), ("ratio", v / 100, t / 100), ("count", v, t)]
    if q.family == "ratio":
        return [("ratio", v, t), ("count", v, t)]
    if q.family == "bytes":
        out = [("bytes", v, t), ("count", v, t)]
        if q.alt:
            out += [("bytes", q.alt, t * q.alt / max(v, 1e-30)), ("count", q.alt, t * q.alt / max(v, 1e-30))]
        return out
    if q.family == "count" and v == 0:
        return [(fam, 0.0, t) for fam in _FAMILIES]  # "`pcie__read_bytes.sum.per_second` = 0": nothing, in any unit
    if q.family == "count":
        return [(fam, v, t) for fam in ("count", "ratio", "pct", "bytes") if fam != "pct" or v <= 100.0] + \
            ([("count", q.alt, t * q.alt / max(v, 1e-30))] if q.alt else [])
    return [(q.family, v, t)]


_FAMILIES = ("count", "ratio", "pct", "bytes", "byte_rate", "flop_rate", "time", "hz")


def close(a: float, b: float, tol: float) -> bool:
    return abs(a - b) <= max(REL_TOL * max(abs(a), abs(b)), tol)


# ----------------------------------------------------------------------------- one number
def sentence_concepts(sentence: str) -> frozenset[str]:
    out = set(text_concepts(sentence))
    for tok in METRIC_TOKEN.findall(sentence.replace("`", " ")):
        out |= metric_concepts(tok) | {"metric:" + tok.replace(" ", "")}  # a metric named is an operand it speaks of
    return frozenset(out)


def is_ceiling(f: Fact) -> bool:
    return f.metric.startswith(("ceiling.", "device.fp", "device.tf", "device.bf", "device.dram", "device.link")) or \
        f.metric.endswith("peak_sustained")


def counts(q: Quantity) -> bool:
    """Whether the number is written with a count noun ("132 blocks", "255 registers"), not a byte or time unit."""
    return bool(_STRICT_UNIT.match(q.unit or "")) and not _BYTE_OR_TIME.search(q.unit or "")


# what the problem is made of ("62 elements", "4096 rows", "131,072 rows"): a size of the work, which no profiler counts
_UNCOUNTED = re.compile(r"^(?:elements?|rows?|columns?|cols?|tiles?|floats?|doubles?|values?|items?|entries|tokens?|"
                        r"heads?|layers?|batch(?:es)?|products?|chunks?|pixels?|channels?|images?|samples?|points?|"
                        r"particles?|nodes?|terms?)$", re.I)


def uncounted(q: Quantity) -> bool:
    """Whether the number counts a thing of the problem, not of the run (no capture measures it)."""
    return bool(_UNCOUNTED.match(q.unit or ""))


def _unit_fits(f: Fact, q: Quantity) -> bool:
    """A count noun after the number ("132 blocks") must describe the fact, whatever else the sentence says."""
    uc = unit_concepts(q.unit)
    return not (uc and _STRICT_UNIT.match(q.unit or "") and not _BYTE_OR_TIME.search(q.unit or "")) or bool(f.concepts & uc)


# Concepts that single out one thing among its kind: a fact carrying one matches only a sentence naming it
# (a spill-byte count is not a stack size; one API call's statistics are not another's).
QUALIFIERS = frozenset({"stack", "spill"})
STATISTICS = frozenset({"stat_median", "stat_mean", "stat_max", "stat_min"})


def _qualified(f: Fact, concepts: frozenset[str]) -> bool:
    need = {c for c in f.concepts if c in QUALIFIERS or c.startswith("api:")}
    if API_CLAUSE in concepts and not need and f.family in ("count", "time"):
        return False  # a count or time in a clause naming an API function is that function's, not a kernel count
    named = concepts & STATISTICS  # a sentence that names a statistic speaks of that one ("median", not the mean)
    return need <= concepts and not (named and f.concepts & STATISTICS and not f.concepts & named)


def _bytes_fit(f: Fact, q: Quantity) -> bool:
    """A number written in bytes matches a byte count, never a count of something else (255 registers); a count of
    things ("1024 copies") is never a byte count or a time."""
    if counts(q) and f.family in ("bytes", "time", "byte_rate"):
        return False
    return q.family != "bytes" or f.family == "bytes" or \
        bool(f.concepts & {"bytes", "dram_bytes", "shared_mem", "local"} and not f.concepts & {"sectors", "requests", "wavefronts"})


def ceiling_fits(f: Fact, concepts: frozenset[str], use: Use) -> bool:
    """A ceiling is quoted as a reference or a peak, never as what the program achieves."""
    if not is_ceiling(f):
        return True
    if use.achieved:
        return False
    named = concepts & PATHS if f.family == "flop_rate" else frozenset()
    return ("peak" in concepts or use.reference) and not (named and not (f.concepts & named))


def names(metric: str, tokens: set[str]) -> bool:
    """Whether the metric tokens name the metric: in full, or without its rollup suffix
    (`sm__inst_executed_pipe_xu` for `sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active`)."""
    return metric in tokens or any(metric.startswith(t + ".") for t in tokens if "." not in t)


def _level_fits(f: Fact, concepts: frozenset[str]) -> bool:
    """A measure of one memory level (DRAM, L2, L1) is not what words naming only other levels describe, nor is
    a share of peak that belongs to no level (the memory system's busiest unit, the SM, the roofline)."""
    named, own = concepts & LEVELS, f.concepts & LEVELS
    if named and not own:
        return "sol" not in f.concepts
    return not (named and own) or bool(named & own)


def describes(f: Fact, q: Quantity, concepts: frozenset[str], tokens: set[str], use: Use = Use()) -> bool:
    if names(f.metric, tokens):
        return not use.achieved or not is_ceiling(f)
    uc = unit_concepts(q.unit)
    if not _unit_fits(f, q) or not _bytes_fit(f, q) or not _qualified(f, concepts) or not _level_fits(f, concepts):
        return False
    if not ceiling_fits(f, concepts | uc, use):  # "4096 ops/clk": a per-clock rate is a peak by its unit
        return False
    return bool(f.concepts & (concepts | uc))


def match_facts(q: Quantity, concepts: frozenset[str], tokens: set[str], kernels: set[str],
                facts: Facts, use: Use = Use()) -> list[Fact]:
    """The facts a number may be, best first: the closest fact wins (a value read as is before a derived one, the
    unit as written before its alternative); facts as close as the best are its equals (the same value read by two
    API functions' call counts, say) and are all cited."""
    ranked = []
    for i, (fam, v, t) in enumerate(candidates(q)):
        for f in facts.near(fam, v, t):
            if f.kernel is not None and f.kernel not in kernels:
                continue
            if not close(f.value, v, t) or not describes(f, q, concepts, tokens, use):
                continue
            ranked.append(((not names(f.metric, tokens), round(abs(f.value - v) / max(abs(v), 1e-30), 3),
                            f.derivation is not None, i), f))
    ranked.sort(key=lambda x: x[0])
    return [f for r, f in ranked if r[:3] == ranked[0][0][:3]]


def match_fact(q: Quantity, concepts: frozenset[str], tokens: set[str], kernels: set[str],
               facts: Facts, use: Use = Use()) -> Optional[Fact]:
    best = match_facts(q, concepts, tokens, kernels, facts, use)
    return best[0] if best else None


@dataclass(frozen=True)
class Operand:
    """A value a derivation may use: a cited fact, a number derived earlier in the answer, or a constant."""

    name: str
    value: float
    concepts: frozenset
    family: str
    constant: bool = False
    ceiling: bool = False

    @classmethod
    def of(cls, f: Fact) -> "Operand":
        return cls(f.metric, f.value, f.concepts | {"metric:" + f.metric}, f.family, ceiling=is_ceiling(f))


_PERCENT = "100%"
_RATE_OF = {"byte_rate": "bytes", "flop_rate": "count"}  # a rate and the amount it moves per second


def _share_pair(a: Operand, b: Operand, concepts: frozenset[str]) -> bool:
    """Whether a/b may be a unit's share of its peak, where the number's clause calls it one (`UNIT_SHARE`): a rate
    over its ceiling (or a floor over a duration), never bytes over bytes, and both of the memory level it names."""
    if UNIT_SHARE not in concepts:
        return True
    named = concepts & LEVELS
    return a.family not in ("bytes", "count") and (not named or a.constant or b.constant or
                                                   bool(named & a.concepts & b.concepts))


def derivations(concepts: frozenset[str], ops: list[Operand]) -> Iterable[tuple[str, float, str, list[str]]]:
    """(family, value, derivation, operands) of every declared derivation of the operands the sentence speaks of."""
    consts = [Operand(name, v, cs, "count", constant=True) for v, cs, name in CONSTANTS if cs & concepts]
    usable = [o for o in ops if o.concepts & concepts] + consts
    for a in usable:
        for b in usable:
            if a is b or not b.value or (a.constant and b.constant) or _PERCENT in (a.name, b.name):
                continue  # 100% is a scale, not an operand: a count over 100 is no measurement
            same = a.family == b.family or a.constant or b.constant
            if same and _share_pair(a, b, concepts):
                r = a.value / b.value
                yield "ratio", r, "ratio of two cited values", [a.name, b.name]
                if r < 1:
                    yield "ratio", 1 - r, "complement of a ratio of two cited values (1 - a/b)", [a.name, b.name]
            if b.constant and a.family == "count":
                yield "count", a.value * b.value, "cited value x architecture constant", [a.name, b.name]
            if a.family in ("time", "bytes") and b.family == "count" and not b.constant and {"launches", "steps"} & b.concepts:
                yield a.family, a.value / b.value, "per-launch/per-step division", [a.name, b.name]
            if a.family == b.family and not a.constant and not b.constant and a.value > b.value:
                yield a.family, a.value - b.value, "difference of two cited values", [a.name, b.name]
            if a.family == b.family == "bytes" and not a.ceiling and not b.ceiling:
                yield a.family, a.value + b.value, "sum of two cited values", [a.name, b.name]
            if b.family in _RATE_OF and a.family == _RATE_OF[b.family] and not a.constant and \
                    (b.family == "byte_rate" or "flops" in a.concepts):
                yield "time", a.value / b.value * 1e9, "time at a cited rate or ceiling (amount / rate)", [a.name, b.name]
    for a in usable:  # one operand, of what the sentence speaks of
        if a.constant:
            continue
        if a.family in ("pct", "ratio") and not a.ceiling:
            full = 100.0 if a.family == "pct" else 1.0
            if a.value <= full:
                yield a.family, full - a.value, "complement of a cited share", [a.name]
        if a.family == "time" and a.value > 0:
            yield "count", 1e9 / a.value, "events per second of a cited time (1 / time)", [a.name]
    for o in consts:
        yield "count", o.value, "architecture constant", [o.name]


def match_derived(q: Quantity, concepts: frozenset[str], cited: list[Fact], use: Use = Use(),
                  derived: Iterable[Operand] = ()) -> Optional[tuple[str, list[str]]]:
    """A declared derivation of cited facts (or of a fact and an architecture constant) that gives q."""
    want = concepts | unit_concepts(q.unit) | {"ratio"}
    for fam, v, t in candidates(q):
        for f in cited:
            if f.family == fam and close(f.value, v, t) and _unit_fits(f, q) and ceiling_fits(f, want, use) \
                    and _qualified(f, want) and _level_fits(f, want):
                return "the same value cited elsewhere in the answer", [f.metric]
    for val, v, t, how, operands in derived_values(q, want, cited, derived):
        if close(val, v, t):
            return how, operands
    return None


def derived_values(q: Quantity, want: frozenset[str], cited: list[Fact], derived: Iterable[Operand]):
    """(value, q in the derivation's family, its tolerance, how, operands) of each declared derivation q may be."""
    cands = candidates(q)
    for fam, val, how, operands in derivations(want, [Operand.of(f) for f in cited] + list(derived)):
        for cf, v, t in cands:
            if _fam_fits(fam, cf, how, q.family):
                yield val, v, t, how, operands


def _fam_fits(derived_family: str, candidate_family: str, how: str, written: str = "") -> bool:
    """A derived value fits a number of the family it is read as; a number written with a unit of bytes, time or a
    rate is never a dimensionless ratio of two values."""
    if derived_family == "ratio" and written in _DIMENSIONED:
        return False
    if derived_family in ("ratio", "count"):
        return candidate_family in ("ratio", "count")
    return derived_family == candidate_family


_DIMENSIONED = frozenset({"bytes", "time", "byte_rate", "flop_rate", "hz"})
