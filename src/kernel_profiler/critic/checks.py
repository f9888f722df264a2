"""The deterministic checks: pure functions of (answer, review context) returning one-line reasons.

  reviewer     no text addressed to the reviewer/critic (hidden parts included)
  parts        all four parts are present and non-empty
  numbers      every number matches the fact its sentence describes, or a declared derivation; a number in a hedged
               clause (a ceiling, a size from the source) is listed as unverified unless the captures contradict it
  mechanism    the mechanism is a causal chain: measurement -> cause -> gap to the roofline (or idle/copy time)
  not_a_dump   a list of counters without such a chain is not an answer
  signature    the claimed mechanism's signature is present in the captures (catalog.py, signatures.py)
  bound        the bound agrees with the timeline's steady-state verdict and with the kernel's memory throughput
  fix          the fix names a real metric moving toward the roofline, by a size the gap allows (fixes.py)
  replay_time  no ncu (replayed, serialized) kernel duration is quoted as program/step time
  ceilings     no achieved rate above its ceiling
  near_peak    a kernel at its roofline is not given an invented problem
  arithmetic   'A op B = C' written in the answer holds for its operands (arithmetic.py)
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from .. import catalog, signatures
from ..catalog import CATALOG, KERNEL_BOUNDS, NEAR_PEAK_GAP
from ..signatures import Measured
from .answer import Answer, NumberAudit
from .arithmetic import wrong_arithmetic
from .claim import blamed_rank, claimed_mechanism
from .fixes import at_roofline, check_fix, subject
from .facts import REL_TOL, Fact, Facts
from .form import addressed_to_reviewer, causal_chain, metric_values
from .concepts import metric_concepts, unit_concepts
from .match import (Operand, Scope, Use, answer_scope, candidates, close, kernel_mentions, match_bound, match_derived,
                    match_facts, number_use, sentence_concepts)
from .stride import match_stride
from .unverified import bound_metric, contradiction, hedged
from .numbers import METRIC_TOKEN, Quantity, evidence_quantity, quantities, scrub, sentences

DUMP_MIN_NUMBERS = 5  # evidence lines + numbers and metric names in the mechanism: beyond this, a list


@dataclass
class Context:
    """What one review works with: the facts, the scope of the answer, and what the checks found."""

    answer: Answer
    facts: Facts
    raw: str
    scope: Scope = field(default_factory=lambda: Scope(set()))
    claimed: Optional[str] = None
    audit: list[NumberAudit] = field(default_factory=list)
    signature: Optional[str] = None
    strict: list[bool] = field(default_factory=list)  # per number of `_items`: must match (an evidence headline)

    def texts(self) -> list[tuple[str, str]]:
        a = self.answer
        return [("bottleneck", a.bottleneck), ("mechanism", a.explanation)] + [("evidence", e.meaning) for e in a.evidence]

    def described(self) -> list[tuple[str, str, str]]:
        """(where, text, words that describe its numbers): an evidence line is described by its metric and kernel too."""
        a = self.answer
        return [("bottleneck", a.bottleneck, ""), ("mechanism", a.explanation, "")] + \
            [("evidence", e.meaning, f"{e.metric or ''} {e.kernel or ''} ") for e in a.evidence]




# ----------------------------------------------------------------------------- form
def check_reviewer(c: Context) -> list[str]:
    hit = addressed_to_reviewer(c.raw)
    return [f"The answer addresses the reviewer ('{hit[:80]}'): an answer speaks to the user about the program; "
            f"remove text meant for the critic."] if hit else []


def check_parts(c: Context) -> list[str]:
    a, out = c.answer, []
    for name, val in (("bottleneck", a.bottleneck), ("mechanism", a.explanation), ("fix", a.fix_text)):
        if name == "fix" and at_roofline(c):
            continue  # a kernel the captures put at its roofline: there is nothing to change
        if not (val or "").strip():
            out.append(f"The {name} part is missing: add a `## {name.capitalize()}` section.")
    if not a.evidence:
        out.append("The evidence part is missing: cite two or three measured numbers, each with its artifact.")
    return out


# ----------------------------------------------------------------------------- numbers
def _items(c: Context) -> list[tuple[str, str, Quantity, frozenset, set[str], set[str], Use]]:
    """(where, written-in, quantity, concepts, metric tokens, kernels in scope, use) for every number."""
    out = []
    c.strict = []
    for where, text, extra in c.described():
        headline = where == "evidence"  # an evidence line's first number is the measurement it cites
        for s in sentences(text):
            concepts = sentence_concepts(extra + s)
            tokens = {t.replace(" ", "") for t in METRIC_TOKEN.findall((extra + s).replace("`", " "))}
            kernels = c.scope.allowed(extra + s, c.facts)  # an evidence line is about the kernel it names
            for q in quantities(s):
                bound = bound_metric(s, q)  # "`launch__grid_size` = 132": the number is that metric's value
                out.append((where, s, q, metric_concepts(bound) if bound else concepts, {bound} if bound else tokens,
                            kernels, number_use(s, q)))
                c.strict.append(headline)
                headline = False
    for e in c.answer.evidence:
        q = evidence_quantity(e.value, e.unit)
        if any(close(x.value, q.value, x.tol) or (x.family == "pct" and close(x.value / 100, q.value, q.tol))
               for x in quantities(e.meaning)):
            continue  # the line's own text carries the number and is checked above
        text = f"{e.metric or ''} {e.meaning}"
        concepts = sentence_concepts(text)
        tokens = {e.metric} if e.metric else set()
        kernels = c.scope.allowed(f"{e.kernel or ''} {e.meaning}", c.facts) | ({k for k in c.facts.kernels
                                                                              if e.kernel and k in e.kernel.replace(' ', '')})
        out.append(("evidence", e.metric or e.meaning[:60], q, concepts, tokens, kernels, Use()))
        c.strict.append(True)
    return out


def _named_evidence(c: Context) -> list[str]:
    """A structured evidence value that names a metric the captures hold must be that metric's value."""
    out = []
    for e in c.answer.evidence:
        if not e.metric or e.metric not in c.facts.by_metric:
            continue
        if len(METRIC_TOKEN.findall(e.meaning.replace("`", " "))) > 1:
            continue  # a line naming several metrics (a ratio, two operands): its numbers are checked as prose
        q = evidence_quantity(e.value, e.unit)
        written = metric_values(e.meaning)
        qs = written if written and close(written[0].value, q.value, written[0].tol) else [q]
        ks = c.scope.allowed(f"{e.kernel or ''} {e.meaning}", c.facts)
        vals = [f for f in c.facts.by_metric[e.metric] if f.kernel is None or f.kernel in ks] or c.facts.by_metric[e.metric]
        if not any(close(f.value, v, t) for f in vals for x in qs for _, v, t in candidates(x)):
            near = min(vals, key=lambda f: abs(f.value - q.value))
            out.append(f"Evidence {e.metric} = {e.value:.6g}{' ' + e.unit if e.unit else ''} does not match the capture, "
                       f"which holds {near.value:.6g} ({near.artifact}): quote the number the artifact reports.")
    return out


def check_numbers(c: Context) -> list[str]:
    named = _named_evidence(c)
    items = _items(c)
    found = [match_facts(q, cs, toks, ks, c.facts, use) for _, _, q, cs, toks, ks, use in items]
    matched: list[Optional[Fact]] = [fs[0] if fs else None for fs in found]
    cited = [f for fs in found for f in fs]
    for _, _, _, _, toks, ks, _ in items:
        cited += [f for t in toks for f in c.facts.named(t) if f.kernel is None or f.kernel in ks]
    derived: dict[int, tuple[str, list[str]]] = {}
    ops: list[Operand] = []
    for _ in range(2):  # a number derived in one place is a cited value elsewhere (one level of chaining)
        for i, ((where, s, q, cs, toks, ks, use), f) in enumerate(zip(items, matched)):
            if f is not None or i in derived:
                continue
            prior = [o for o in ops if o.name != q.written]
            d = match_derived(q, cs, cited, use, prior) or match_bound(q, cs, toks, ks, c.facts, cited, use, prior) \
                or match_stride(q, cs, ks, c.facts)
            if d is not None:
                derived[i] = d
                ops.append(Operand(q.written, abs(q.value) / (100.0 if q.family == "pct" else 1.0),
                                   cs | unit_concepts(q.unit), "ratio" if q.family == "pct" else q.family))
    out = list(named)
    for i, ((where, s, q, cs, toks, ks, use), f) in enumerate(zip(items, matched)):
        if f is not None:
            c.audit.append(NumberAudit(written=q.written, where=where, fact=f.describe(), derivation=f.derivation))
            continue
        if i in derived:
            c.audit.append(NumberAudit(written=q.written, where=where, derivation=derived[i][0], operands=derived[i][1]))
            continue
        bad = None if c.strict[i] else contradiction(q, s, ks, c.facts, use)
        if not c.strict[i] and bad is None and not use.bound and hedged(s, q):
            # a ceiling, a limit, a size from the source: not presented as a measurement of the run; listed
            c.audit.append(NumberAudit(written=q.written, where=where, unverified=True))
            continue
        c.audit.append(NumberAudit(written=q.written, where=where))
        if bad is not None:
            out.append(f"The number '{q.written}' in the {where} ('{s.strip()[:90]}') does not match the measured "
                       f"{bad.metric}, which the capture holds as {bad.value:.4g} ({bad.artifact}): quote the measured "
                       f"value.")
            continue
        described = ", ".join(sorted(cs - {"ratio"}))[:80] or "nothing it names"
        out.append(f"The number '{q.written}' in the {where} ('{s.strip()[:90]}') matches no measured value of what "
                   f"its sentence describes ({described}) for the kernel in question, nor a derivation of cited "
                   f"values: quote the value the artifact reports for that metric.")
    return out


# ----------------------------------------------------------------------------- mechanism
def check_mechanism(c: Context) -> list[str]:
    a = c.answer
    if not (a.explanation or "").strip() or _is_dump(c):
        return []
    if _inconclusive(a):
        return []
    why = causal_chain(a.explanation, _causes(c))
    return [f"Mechanism: {why}. Say why the code causes the measured numbers and how far that keeps it from the "
            f"roofline (or what idle/copy time it explains)."] if why else []


# a cause the catalog has no id for, named in prose ("too few bytes in flight", "the barrier after each tile")
_OTHER_CAUSE = re.compile(r"\b(latenc\w*|in flight|barrier|dependen\w+|issue[sd]?|pipe(line)?s?|waves?|tail|serial\w*|"
                          r"contention|replay\w*|bandwidth|instructions?)\b", re.I)


def _causes(c: Context) -> list[str]:
    """The causes the answer names: its claim, else the catalogued ones its mechanism names, else a cause in words."""
    if c.claimed:
        return [c.claimed]
    text = scrub(c.answer.explanation or "")
    return catalog.claimed(text) or (["other"] if _OTHER_CAUSE.search(text) else [])


def _inconclusive(a: Answer) -> bool:
    return (a.bound == "inconclusive" or bool(re.search(r"cannot (yet )?(separate|tell|distinguish|decide)|inconclusive",
                                                        f"{a.bottleneck} {a.explanation}", re.I)))


def _is_dump(c: Context) -> bool:
    a = c.answer
    n = len(a.evidence) + len(quantities(a.explanation)) + len(METRIC_TOKEN.findall(a.explanation or ""))
    return n >= DUMP_MIN_NUMBERS and causal_chain(a.explanation, _causes(c)) is not None \
        and not _inconclusive(a)


def check_not_a_dump(c: Context) -> list[str]:
    if not (c.answer.explanation or "").strip() or not _is_dump(c):
        return []
    why = causal_chain(c.answer.explanation, _causes(c))
    return [f"The answer lists counters without a causal chain ({why}): keep the two or three numbers that establish "
            f"the bottleneck and explain measurement -> mechanism -> gap."]


def _measured(c: Context, key: Optional[str]) -> Measured:
    f = c.facts
    prof = f.profiles.get(key) if key else None
    return Measured(profile=prof, roofline=f.rooflines.get(key) if key else None,
                    sass_ops=f.sass_ops.get(key, {}) if key else {}, spill=f.spills.get(key, (0, 0)) if key else (0, 0),
                    timeline=f.timeline, name=prof.name if prof else (key or ""),
                    program={m: fs[0].value for m, fs in f.by_metric.items() if fs and fs[0].kernel is None},
                    ranks=list(f.diagnosis.ranks) if f.diagnosis is not None else [])


def check_signature(c: Context) -> list[str]:
    mid = c.claimed
    if mid is None or mid not in CATALOG:
        return []
    key = subject(c) if CATALOG[mid].scope == "kernel" else None
    status, txt = signatures.check(mid, _measured(c, key))
    c.signature = f"{mid}: {status}" + (f" ({txt})" if txt else "")
    if status == signatures.ABSENT:
        who = f"`{c.facts.kernels.get(key, key)}`" if key else "the program"
        return [f"The answer claims {mid.replace('_', ' ')}, but the captures contradict it for {who}: {txt}."]
    return _wrong_rank(c, mid) if status == signatures.PRESENT else []


def _wrong_rank(c: Context, mid: str) -> list[str]:
    """A straggler claim must blame the rank that enters the collectives late, not one that waits for it."""
    named = blamed_rank(c.answer.bottleneck)
    st = signatures.straggler(Measured(ranks=list(c.facts.diagnosis.ranks))) if c.facts.diagnosis else None
    if mid not in catalog.BLAMES_A_RANK or named is None or st is None or named == st[0].rank:
        return []
    return [f"The answer blames rank {named}, but rank {st[0].rank} is the one that enters each collective late "
            f"({st[2] / 1e6:.2f} ms after the first): rank {named}'s long collective is time spent waiting for it."]


_BOUND_WORDS = [("host", r"host[- ]bound|CPU[- ]bound|launch[- ]bound|python[- ]bound|dispatch[- ]bound|GPU (is |sits )?idle"),
                ("transfer", r"transfer[- ]bound|copy[- ]bound|PCIe[- ]bound|copies dominate"),
                ("memory", r"memory[- ](bandwidth[- ])?bound|bandwidth[- ]bound|DRAM[- ]bound"),
                ("compute", r"compute[- ]bound|math[- ]bound|FLOP[- ]bound|instruction[- ]bound"),
                ("latency", r"latency[- ]bound"),
                ("kernel", r"(?<!not )(?<!not a )kernel[- ]bound|(?<!not )GPU[- ]bound|"
                           r"bound by (?:its|the|a|one) [\w`]*\s?(?:GEMM |matmul )?kernel")]


def answer_bound(c: Context) -> Optional[str]:
    a = c.answer
    if a.bound:
        return a.bound
    for b, pat in _BOUND_WORDS:
        if re.search(pat, a.bottleneck or "", re.I):
            return b
    if c.claimed in CATALOG:
        return CATALOG[c.claimed].bounds[0]
    return None


def timeline_verdict(f: Facts) -> Optional[str]:
    """The engine's steady-state verdict on the timeline: host, transfer, startup, kernel (None without one)."""
    d, s = f.diagnosis, f.timeline
    v = getattr(s, "verdict", None) if s is not None else None
    if v:
        return v
    if s is None or d is None or not s.window_ns:
        return None
    if d.primary.mechanism == "startup_dominated":
        return "startup"
    if d.bound in ("host", "transfer") and d.primary.mechanism in catalog.HOST_MECHANISMS:
        return d.bound
    return "kernel"


def check_bound(c: Context) -> list[str]:
    b, v, s = answer_bound(c), timeline_verdict(c.facts), c.facts.timeline
    if b is None or v is None or s is None or b in ("inconclusive", "comms"):
        return []
    if b == "host" and len(c.facts.diagnosis.ranks if c.facts.diagnosis else []) >= 2:
        return _host_of_ranks(c)
    busy = f"GPU busy {s.busy_fraction:.0%} of the {s.window_ns / 1e6:.1f} ms steady window"
    if v in ("host", "transfer", "startup") and (b in KERNEL_BOUNDS or b == "kernel"):
        return [f"The answer calls it {b}-bound, but the timeline's steady state is {v}-bound ({busy}, copies "
                f"{s.copy_ns / max(s.window_ns, 1):.0%}): no kernel change can fix idle time; answer on the timeline."]
    if v == "kernel" and b in ("host", "transfer"):
        return [f"The answer calls it {b}-bound, but the timeline's steady state keeps the GPU busy ({busy}; copies "
                f"{s.copy_ns / max(s.window_ns, 1):.0%}): the dominant kernels are the cost, not the host."]
    if {v, b} == {"host", "transfer"}:
        return [f"The answer calls it {b}-bound, but the timeline says {v}-bound ({busy}, copies "
                f"{s.copy_ns / max(s.window_ns, 1):.0%})."]
    return _kernel_bound(c, b)


HOST_BUSY_MAX = 0.75  # a GPU that computes more of its step than this leaves no host time to blame (sig_host_idle)


def _host_of_ranks(c: Context) -> list[str]:
    """Several ranks: time a rank spends inside a collective waiting for a late peer is not work. A host claim stands
    when the last rank to enter the collectives computes (non-collective kernels) a small part of its step: its
    GPU waits for its host."""
    st = signatures.straggler(Measured(ranks=list(c.facts.diagnosis.ranks)))
    if st is None:
        return []
    last = st[0]
    if not last.compute_ns_per_step or not last.step_p50_ns:
        return []
    frac = last.compute_ns_per_step / last.step_p50_ns
    if frac <= HOST_BUSY_MAX:
        return []
    return [f"The answer calls it host-bound, but rank {last.rank}, the last to enter each collective, runs GPU "
            f"compute for {frac:.0%} of its {last.step_p50_ns / 1e6:.1f} ms step ({last.compute_ns_per_step / 1e6:.1f} "
            f"ms): its GPU work, not its host, is what the other ranks wait for."]


DRAM_PCT = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"
MEMORY_PCTS = ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
               "lts__throughput.avg.pct_of_peak_sustained_elapsed", "l1tex__throughput.avg.pct_of_peak_sustained_active")
MEMORY_MIN_PCT, MEMORY_LIMITS_PCT = 15.0, 70.0  # below: DRAM is not what limits it; above: DRAM is the limit
SM_PCT = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
SM_LIMITS_PCT, MEMORY_SATURATED_PCT = 80.0, 50.0  # an SM this busy with DRAM below half its peak is compute-limited


def _kernel_bound(c: Context, b: str) -> list[str]:
    """A kernel called memory-bound must move DRAM at a real fraction of its peak; one called compute- or
    latency-bound must not be streaming DRAM near its peak."""
    key = subject(c)
    fs = c.facts.named(DRAM_PCT, key) if key else []
    if not fs or b not in ("memory", "compute", "latency"):
        return []
    pct, who = fs[0].value, f"`{c.facts.kernels.get(key, key)}`"
    hierarchy = max([f.value for m in MEMORY_PCTS for f in c.facts.named(m, key)] + [pct])
    sm = max([f.value for f in c.facts.named(SM_PCT, key)], default=None)
    if b == "memory" and sm is not None and sm >= SM_LIMITS_PCT and pct < MEMORY_SATURATED_PCT:
        return [f"The answer calls {who} memory-bound, but its SM is {sm:.1f}% busy ({SM_PCT}) while DRAM moves at "
                f"{pct:.1f}% of peak: the SM's issue and pipes are the limit, not memory."]
    if b == "memory" and hierarchy < MEMORY_MIN_PCT:
        return [f"The answer calls {who} memory-bound, but no level of its memory hierarchy is busy: DRAM "
                f"{pct:.1f}% of peak, at most {hierarchy:.1f}% for L1/L2 ({', '.join(MEMORY_PCTS)}): memory is not "
                f"what limits it."]
    if b in ("compute", "latency") and pct >= MEMORY_LIMITS_PCT:
        return [f"The answer calls {who} {b}-bound, but it moves DRAM at {pct:.1f}% of peak ({DRAM_PCT}): "
                f"memory bandwidth is the limit."]
    return []


# ----------------------------------------------------------------------------- time and ceilings
_PROGRAM_TIME = re.compile(r"\b(program|application|app|wall[- ]?(clock)?|step time|per step|each step|per iteration|"
                           r"iteration time|end[- ]to[- ]end|the run|whole run|total time|run time|runtime)\b", re.I)


def check_replay_time(c: Context) -> list[str]:
    f, out = c.facts, []
    if not f.ncu_durations:
        return []
    for _, text in c.texts():
        for sent in (clause for s in sentences(text) for clause in re.split(r";\s+|\s+[—–]\s+", s)):
            if not _PROGRAM_TIME.search(sent):  # the program-time words must belong to the number's own clause
                continue
            for q in quantities(sent):
                if q.family != "time":
                    continue
                is_ncu = any(close(d, q.value, q.tol) for d in f.ncu_durations)
                # a value closer to a kernel's timeline statistic (its median launch) than to any ncu duration was
                # read from the timeline
                off_ncu = min(abs(d - q.value) for d in f.ncu_durations)
                is_prog = any(close(p, q.value, q.tol) for p in f.program_times) or any(
                    x.metric.startswith("timeline.kernel_") and abs(x.value - q.value) < off_ncu
                    for x in f.near("time", q.value, q.tol))
                if is_ncu and not is_prog:
                    ref = (f" (the timeline's step median is {min(f.program_times, key=lambda p: abs(p - q.value)) / 1e6:.4g} ms)"
                           if f.program_times else "")
                    out.append(f"'{q.written}' is an ncu kernel duration (replayed in isolation), quoted as program/"
                               f"step time{ref}: take program time from the timeline.")
    return out


def check_arithmetic(c: Context) -> list[str]:
    return [f"Arithmetic: {w}; recompute it from the measured values." for _, t in c.texts() for w in wrong_arithmetic(t)]


def check_ceilings(c: Context) -> list[str]:
    f, out = c.facts, []
    rs = [f.rooflines[k] for k in c.scope.primary if k in f.rooflines] or list(f.rooflines.values())
    bw = max((r.peak_bandwidth for r in rs), default=None)
    ceilings = [x.value for x in f.items if x.family in ("byte_rate", "flop_rate") and "peak" in x.concepts]
    for _, text in c.texts():
        for s in sentences(text):
            for q in quantities(s):
                if any(close(v, q.value, q.tol) for v in ceilings):
                    continue
                if q.family == "byte_rate" and bw and q.value > bw * (1 + REL_TOL) + q.tol:
                    out.append(f"'{q.written}' exceeds the device-memory ceiling of {bw / 1e12:.2f} TB/s: an achieved "
                               f"rate cannot pass its peak; recheck bytes and time.")
            for m in re.finditer(r"(\d+(?:\.\d+)?)\s?%\s+of\s+(the\s+|its\s+)?(peak|ceiling|roofline|hardware|bandwidth|"
                                 r"dram bandwidth|sol|speed[- ]of[- ]light)", scrub(s), re.I):
                if float(m.group(1)) > 100.0:
                    out.append(f"'{m.group(0)}' is above 100% of its ceiling: a bug in the numbers, not a measurement.")
    return out


def check_near_peak(c: Context) -> list[str]:
    if c.claimed in (None, "near_peak") or (c.claimed in CATALOG and CATALOG[c.claimed].scope == "program"):
        return []
    out = []
    for k in sorted(kernel_mentions(c.answer.bottleneck, c.facts) | c.scope.primary):
        r = c.facts.rooflines.get(k)
        if r is not None and r.stated_gap <= NEAR_PEAK_GAP:
            out.append(f"`{c.facts.kernels.get(k, k)}` runs near its roofline (duration/floor = {r.stated_gap:.2f}), so "
                       f"'{c.claimed}' cannot be what limits it: say it is done and point at the next-largest cost.")
    return out


CHECKS = {
    "reviewer": check_reviewer, "parts": check_parts, "numbers": check_numbers, "mechanism": check_mechanism,
    "not_a_dump": check_not_a_dump, "signature": check_signature, "bound": check_bound, "fix": check_fix,
    "replay_time": check_replay_time, "ceilings": check_ceilings, "near_peak": check_near_peak,
    "arithmetic": check_arithmetic,
}


def build_context(answer: Answer, facts: Facts, raw: str) -> Context:
    whole = " ".join([answer.bottleneck, answer.explanation] + [e.meaning for e in answer.evidence])
    scope = answer_scope(answer.bottleneck, whole, [answer.kernel], facts)
    return Context(answer=answer, facts=facts, raw=raw, scope=scope, claimed=claimed_mechanism(answer))
