"""Matching a number of an answer to the fact it claims, or to a declared derivation of cited facts.

A number matches a fact only when
  - the value agrees within the rounding of what was written (and 2%),
  - the fact belongs to a kernel named in the same sentence, or to the kernel the answer is about,
    or to no kernel (timeline, device, program-level facts),
  - the fact is what the number is said to be: its concepts meet the words of the sentence or
    evidence line (`concepts.py`); a count noun written after the number ("132 blocks") must itself
    describe the fact; a device or datasheet ceiling matches only where the sentence speaks of a
    peak/ceiling, and of the math path it names.
Numbers that match no fact may still be derived (`DERIVATIONS`): the ratio or difference of two
cited facts, a per-launch/per-step division, or a fact against an architecture constant with the same
meaning (32 threads per warp, 32-byte sectors, ...). Every match records which fact or derivation it used.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Optional

from ..analysis.kernels import norm_key
from .concepts import metric_concepts, text_concepts, unit_concepts
from .facts import REL_TOL, Fact, Facts
from .numbers import METRIC_TOKEN, Quantity

PATHS = frozenset({"fp32", "tf32", "bf16", "fp16", "fp8", "fp64"})
# Architecture constants an answer may quote, with what they mean.
CONSTANTS: list[tuple[float, frozenset[str], str]] = [
    (32.0, frozenset("divergence block bank_conflict bytes_per_sector wavefronts sectors_per_request".split()),
     "warp size / bank count / sector bytes"),
    (4.0, frozenset("sectors_per_request bytes".split()), "sectors per request of coalesced 4-byte loads"),
    (1.0, frozenset("wavefronts bank_conflict sectors_per_request".split()), "one wavefront (conflict-free)"),
    (128.0, frozenset("bytes requests bytes_per_sector sectors_per_request".split()), "bytes per warp request"),
    (100.0, frozenset("peak share busy sol occupancy".split()), "100%"),
]
_STRICT_UNIT = re.compile(r"^[A-Za-z]")  # count nouns (not %, x, byte or time units) must describe the fact
_BYTE_OR_TIME = re.compile(r"^(?:[kKMGT]i?)?(?:B|bytes?)(?:/s)?$|^(ns|us|µs|μs|ms|s|sec|seconds?|[a-z]+seconds)$|"
                           r"FLOP|Hz$", re.I)


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
    if q.family == "count":
        return [(fam, v, t) for fam in ("count", "ratio", "pct", "bytes")]
    return [(q.family, v, t)]


def close(a: float, b: float, tol: float) -> bool:
    return abs(a - b) <= max(REL_TOL * max(abs(a), abs(b)), tol)


# ----------------------------------------------------------------------------- kernels in scope
_ELIDED = re.compile(r"([\w:<>,]{6,})…([\w:<>,]{4,})")


def kernel_mentions(text: str, facts: Facts) -> set[str]:
    """Kernels (norm keys) named in a text: by base name, by a long-enough part of the key, or elided (`head…tail`)."""
    out = set()
    low = text or ""
    if not low.strip():
        return out
    squeezed = low.replace(" ", "")
    words = set(re.findall(r"[\w:]+", low))
    elided = _ELIDED.findall(low)
    for key, base in facts.kernels.items():
        if len(base) >= 3 and base in words or (len(base) >= 3 and base in low and re.search(
                rf"(?<![\w]){re.escape(base)}(?![\w])", low)):
            out.add(key)
        elif len(key) >= 8 and key in squeezed:
            out.add(key)
        elif any(key.startswith(h.split("<")[0]) and t in key for h, t in elided):
            out.add(key)
    return out


@dataclass
class Scope:
    primary: set[str]  # the kernels the answer is about

    def allowed(self, sentence: str, facts: Facts) -> set[str]:
        return kernel_mentions(sentence, facts) | self.primary


def answer_scope(bottleneck: str, whole: str, named: Iterable[Optional[str]], facts: Facts) -> Scope:
    prim = kernel_mentions(bottleneck, facts)
    for n in named:
        if n:
            prim |= ({norm_key(n)} & set(facts.kernels)) or kernel_mentions(n, facts)
    if not prim:
        prim = kernel_mentions(whole, facts)
    if not prim and facts.diagnosis is not None and facts.diagnosis.primary.kernel:
        prim = {norm_key(facts.diagnosis.primary.kernel)}
    return Scope(primary={p for p in prim if p})


# ----------------------------------------------------------------------------- one number
def sentence_concepts(sentence: str) -> frozenset[str]:
    out = set(text_concepts(sentence))
    for tok in METRIC_TOKEN.findall(sentence.replace("`", " ")):
        out |= metric_concepts(tok)
    return frozenset(out)


def _is_ceiling(f: Fact) -> bool:
    return f.metric.startswith(("ceiling.", "device.fp", "device.tf", "device.bf", "device.dram")) or \
        f.metric.endswith("peak_sustained")


def _unit_fits(f: Fact, q: Quantity) -> bool:
    """A count noun after the number ("132 blocks") must describe the fact, whatever else the sentence says."""
    uc = unit_concepts(q.unit)
    return not (uc and _STRICT_UNIT.match(q.unit or "") and not _BYTE_OR_TIME.search(q.unit or "")) or bool(f.concepts & uc)


def _describes(f: Fact, q: Quantity, concepts: frozenset[str], tokens: set[str]) -> bool:
    if f.metric in tokens:
        return True
    uc = unit_concepts(q.unit)
    if not _unit_fits(f, q):
        return False
    if _is_ceiling(f):
        named = concepts & PATHS if f.family == "flop_rate" else frozenset()
        if "peak" not in concepts or (named and not (f.concepts & named)):
            return False
    return bool(f.concepts & (concepts | uc))


def match_fact(q: Quantity, concepts: frozenset[str], tokens: set[str], kernels: set[str],
               facts: Facts) -> Optional[Fact]:
    best = None
    for fam, v, t in candidates(q):
        for f in facts.near(fam, v, t):
            if f.kernel is not None and f.kernel not in kernels:
                continue
            if not close(f.value, v, t) or not _describes(f, q, concepts, tokens):
                continue
            if best is None or (best.derivation is not None and f.derivation is None):
                best = f
    return best


def match_derived(q: Quantity, concepts: frozenset[str], cited: list[Fact]) -> Optional[tuple[str, list[str]]]:
    """A declared derivation of cited facts (or of a fact and an architecture constant) that gives q."""
    want = concepts | unit_concepts(q.unit) | {"ratio"}
    for fam, v, t in candidates(q):
        for f in cited:
            if f.family == fam and close(f.value, v, t) and _unit_fits(f, q):
                return "the same value cited elsewhere in the answer", [f.metric]
    ops = [(f.metric, f.value, f.concepts, f.family, False) for f in cited]
    ops += [(name, v, cs, "count", True) for v, cs, name in CONSTANTS if cs & concepts]
    for fam, v, t in candidates(q):
        for a_name, a, ac, afam, a_const in ops:
            for b_name, b, bc, bfam, b_const in ops:
                if a_name == b_name or not b or (a_const and b_const) or not (ac & want) or not (bc & want):
                    continue  # both operands must be what the sentence speaks of
                same = afam == bfam or a_const or b_const
                if fam in ("ratio", "count", "pct") and same and close(a / b, v, t):
                    return "ratio of two cited values", [a_name, b_name]
                if fam in ("time", "bytes") and bfam == "count" and afam == fam and ({"launches", "steps"} & bc) \
                        and close(a / b, v, t):
                    return "per-launch/per-step division", [a_name, b_name]
                if afam == bfam == fam and not a_const and not b_const and a > b and close(a - b, v, t):
                    return "difference of two cited values", [a_name, b_name]
    for val, cs, name in CONSTANTS:
        if cs & concepts and any(close(val, v, t) for fam, v, t in candidates(q) if fam in ("count", "ratio", "pct")):
            return "architecture constant", [name]
    return None
