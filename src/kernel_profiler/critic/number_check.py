"""The numbers check: every number of an answer is a measured value of what its words describe, a derivation (declared,
or written out in its sentence), or knowledge nothing contradicts (listed as unverified); a number the captures
contradict or a written result that does not hold is refused.
"""
from __future__ import annotations

import re
from typing import Optional

from .. import metrics
from .answer import NumberAudit
from .arithmetic import Stated, chains, implicit, implicit_miss, listed_sum
from .concepts import API_NAME, GENERIC, LEVELS, metric_concepts, unit_concepts
from .clause import UNIT_SHARE, clause_words
from .context import Context
from .evidence_lines import numbers_of
from .facts import REL_TOL, Fact, Facts, api_base
from .form import metric_values
from .match import (STATISTICS, Operand, candidates, close, derived_values, is_ceiling, uncounted,
                    match_bound, match_derived, match_facts, names, number_use, sentence_concepts)
from .numbers import METRIC_TOKEN, WIDTH, Quantity, evidence_quantity, metric_tokens, quantities, scrub, sentences
from .scope import kernel_mentions
from .same_value import equal_elsewhere
from .stride import match_stride, stride_miss
from .use import Use
from .unverified import (IDEAL, PIN_SPAN, bound_metric, clause_of, contradiction, source_size, source_size_at,
                         written_at)



def _items(c: Context) -> list[tuple[str, str, Quantity, frozenset, set[str], set[str], Use]]:
    """(where, written-in, quantity, concepts, metric tokens, kernels in scope, use) for every number."""
    out = []
    c.strict = []
    for where, text, extra, item in c.described():
        # an evidence line's first number is the measurement it cites, unless its value is given apart (an agent's
        # JSON): then that value is the measurement and the line's text explains it
        headline = item is not None and _carries(item) and not _PREDICTION.match(scrub(text))  # "Expect X to
        # drop ~8x": a line that predicts cites no measurement as its headline (its numbers are read as prose)
        apart = item is not None and not _carries(item)  # the item's metric describes its value, not the other numbers
        for s in sentences(text):
            own = apart and sentence_concepts(s) - GENERIC  # of its meaning, unless their sentence names nothing
            concepts = sentence_concepts(s if own else extra + s)
            tokens = metric_tokens(s if own else extra + s)
            kernels = c.scope.allowed(extra + s, c.facts)  # an evidence line is about the kernel it names
            for q in quantities(s):
                if q.family == "ratio" and _SHAPE.match(s[q.end:]):
                    continue  # "1056 x 256", "8192 x 8192": a shape, not a ratio
                bound = bound_metric(s, q)  # "`launch__grid_size` = 132": the number is that metric's value
                cs, toks = concepts, tokens
                if headline and ";" in s:  # "XU 93.8% (metric); fp64 pipe 11.7%": the headline's own segment names it
                    seg = _segment(s, q)
                    cs = sentence_concepts(extra + seg)
                    toks = metric_tokens(extra + seg)
                near = "" if _KERNEL_COUNT.match(q.unit or "") else s[max(0, q.start - 40):q.end + 24]
                cs = clause_words(clause_of(s, q, aside=False), cs, near)  # ("64 `smooth` launches": kernels)
                out.append((where, s, q, metric_concepts(bound) if bound else cs, {bound} if bound else toks,
                            kernels, number_use(s, q)))
                c.strict.append(headline)
                headline = False
    for e in c.answer.evidence:
        q = evidence_quantity(e.value, e.unit)
        if _carries(e):
            continue  # the line's own text carries the number and is checked above
        at = written_at(e.meaning or "", e.value)
        if at is not None and source_size_at(e.meaning, at):
            continue  # "The 160 floats kept live ...": the code's size, which no capture measures
        text = f"{e.metric or ''} {e.meaning}"
        concepts = sentence_concepts(text)
        tokens = {e.metric} if e.metric else set()
        kernels = c.scope.allowed(f"{e.kernel or ''} {e.meaning}", c.facts) | ({k for k in c.facts.kernels
                                                                              if e.kernel and k in e.kernel.replace(' ', '')})
        out.append(("evidence", e.metric or e.meaning[:60], q, concepts, tokens, kernels, Use()))
        c.strict.append(True)
    return out


_PREDICTION = re.compile(r"^[\s*_>-]*(?:expect\w*|predict\w*|after the fix|projected|estimated)\b", re.I)
_KERNEL_COUNT = re.compile(r"(?:launch|launches|kernels?)$", re.I)


def _segment(sentence: str, q: Quantity) -> str:
    """The ';'-separated part of a sentence that holds the number."""
    a = sentence.rfind(";", 0, q.start) + 1
    b = sentence.find(";", q.end)
    return sentence[a:b if b >= 0 else len(sentence)]


_API_FUNCTION = re.compile(r"cuda[A-Z][a-z]|cu[A-Z][a-z]")


def _absent_api(q: Quantity, sentence: str, facts: Facts) -> Optional[str]:
    """The API function a number's clause gives it to, when the captures record API calls but none of that one."""
    if q.family != "time" or not any(m.startswith("api.") for m in facts.by_metric):
        return None  # a host time per call or in all calls (a size given with the function is the call's argument)
    for name in (a for a, _ in API_NAME.findall(clause_of(sentence, q))):  # CUDA API names (not framework ops)
        if not name or not _API_FUNCTION.match(name):
            continue  # cuBLAS, cuDNN: libraries, not functions of the API tables
        if not any(m.startswith(f"api.{api_base(name)}.") for m in facts.by_metric):
            return name
    return None


def _constant_share_miss(q: Quantity, concepts: frozenset[str], cited: list[Fact]) -> Optional[str]:
    """A share of an architectural unit the sentence names ("62.5% of each 32-byte sector is thrown away") that misses
    the one its cited value gives (1 - 4/32 = 87.5%): a wrong reading of that value, not knowledge."""
    if q.family != "pct":
        return None
    want = concepts | unit_concepts(q.unit) | {"ratio"}
    for val, v, t, how, operands in derived_values(q, want, cited, ()):
        if "architecture constant" in how:
            continue
        per_unit = [o for o in operands if metric_concepts(o) & _PER_UNIT]  # bytes per sector, lanes per warp, ...
        if per_unit and len(operands) == 2 and operands[1].startswith("warp size") and \
                abs(val - v) > max(t, REL_TOL * abs(val)) and abs(val - v) <= SHARE_MISS * abs(val):
            return f"{how} of {', '.join(operands)} gives {val * 100 if v <= 1 else val:.3g}"
    return None


SHARE_MISS = 0.4  # within this of the share its cited value gives: a wrong reading of it
# a number the sentence's words bind to a metric whose value it is not (the binding is the reader's inference, so such
# a refusal is `unconfirmed`: critic.grounds)
NO_VALUE = "matches no measured value of what its line describes"
NOT_THE_VALUE = "does not match the measured"
NO_BOUND = "holds for no measured value of what its sentence describes"
UNBOUND = (NO_VALUE, NOT_THE_VALUE, NO_BOUND)
_PER_UNIT = frozenset({"bytes_per_sector", "sectors_per_request", "divergence", "wavefronts"})
_SHAPE = re.compile(r"\s?\d")


def _carries(e) -> bool:
    """Whether an evidence line's text carries its own value (a Markdown line; a JSON item may give it apart)."""
    q = evidence_quantity(e.value, e.unit)
    return any(close(x.value, q.value, x.tol) or (x.family == "pct" and close(x.value / 100, q.value, q.tol))
               for x in quantities(e.meaning)) or \
        any(st.ok and st.operands[0].value == q.value for st in chains(e.meaning))  # "FLOP: 2*8192^3 = 1.0995e12
    # useful -> 793 TFLOP/s": the line works its value out, and its arithmetic is checked with the text


_MOVES = re.compile(r"[`\s)]*(?:(?:down|up|should|will|to (?:drop|fall|rise|go|halve|double)|decreas\w*|increas\w*)\b|↓|↑)",
                    re.I)


def _named_evidence(c: Context) -> list[str]:
    """A structured evidence value that names a metric the captures hold must be that metric's value."""
    out = []
    for e in c.answer.evidence:
        if not e.metric or e.metric not in c.facts.by_metric:
            continue
        if len(METRIC_TOKEN.findall(e.meaning.replace("`", " "))) > 1:
            continue  # a line naming several metrics (a ratio, two operands): its numbers are checked as prose
        if _MOVES.match(e.meaning[e.meaning.find(e.metric) + len(e.metric):] if e.metric in e.meaning else ""):
            continue  # "metric `smsp__inst_executed.sum` down": the fix's metric and its way, not a measurement
        q = evidence_quantity(e.value, e.unit)
        ks = c.scope.allowed(f"{e.kernel or ''} {e.meaning}", c.facts)
        vals = [f for f in c.facts.by_metric[e.metric] if f.kernel is None or f.kernel in ks] or list(c.facts.by_metric[e.metric])
        vals += [f for f in c.facts.by_metric.get(f"{e.metric}.share_of_samples", []) if f.kernel is None or f.kernel in ks]
        # (a sampled stall's count, or its share of the samples: "`..._stalled_wait`, ~72% of samples")
        if (e.unit or "").strip() in ("x", "×") and all(f.family != "ratio" for f in vals) and \
                not any(x.unit.strip() not in ("x", "×") for x in metric_values(e.meaning)[1:]):
            continue  # "expect `smsp__inst_executed.sum` to drop ~8x": a factor is no count's or time's value, and
            # no other number is written at the metric's name; the line's numbers are checked as prose
        qs = [q] + metric_values(e.meaning) + [st.result for st in chains(e.meaning) if st.ok]  # "a / b = 32"
        qs += [x for x in quantities(e.meaning) if bound_metric(e.meaning, x) == e.metric]  # "67,108,864 sectors
        # ..., and `..._bytes_per_sector_...ratio` is 4 bytes": the number written as the metric's value
        if all(f.family != q.family for f in vals) and _measures(q, ks, c.facts):
            qs += quantities(e.meaning)  # a terse line opening with another measurement gives the metric's value later
        if e.meaning.lstrip().startswith("|"):  # a table row's value cell may give several values: the metric its
            qs += numbers_of(e.meaning)  # source cell names is one of them
        if not any(close(f.value, v, t) for f in vals for x in qs for fam, v, t in candidates(x) if fam == f.family):
            near = min(vals, key=lambda f: abs(f.value - q.value))
            out.append(f"Evidence {e.metric} = {e.value:.6g}{' ' + e.unit if e.unit else ''} does not match the capture, "
                       f"which holds {near.value:.6g} ({near.artifact}): quote the number the artifact reports.")
    return out


def _bound_miss(c: Context, sentence: str, q: Quantity, kernels: set[str], use: Use) -> Optional[Fact]:
    """The measured value of the metric a number is written as the value of ("`metric` = 4.79 TB/s", "`metric`: 99.6%"),
    when the number is not it; None when it is, when the number is a predicted target, or when the captures hold that
    metric in no family of the number (a factor, a count of something else)."""
    name = bound_metric(sentence, q)
    if not name or use.predicted or use.bound or any(q.start == o.start for st in chains(sentence) for o in st.operands):
        return None  # "dram__bytes: 1.61 GB read + 1.23 GB written = 2.84 GB": an operand, not the metric's value
    fs = [f for m, g in c.facts.by_metric.items() if names(m, {name}) and not m.endswith(".peak_sustained") for f in g]
    fs = [f for f in fs if f.kernel is None or f.kernel in kernels]
    fams = {fam: (v, t) for fam, v, t in candidates(q)}
    fs = [f for f in fs if f.family in fams]
    if not fs or any(close(f.value, v, t) for f in fs for fam, v, t in candidates(q) if fam == f.family):
        return None
    return min(fs, key=lambda f: abs(f.value - fams[f.family][0]))


def _measures(q: Quantity, kernels: set[str], facts: Facts) -> bool:
    """Whether a number is some measured value of the captures (any metric) for the kernels in scope."""
    return any(f.family == fam and close(f.value, v, t) and (f.kernel is None or f.kernel in kernels)
               for fam, v, t in candidates(q) for f in facts.near(fam, v, t))


def check_numbers(c: Context) -> list[str]:
    named = _named_evidence(c)
    items = _items(c)
    found = [match_facts(q, cs, toks, ks, c.facts, use) for _, _, q, cs, toks, ks, use in items]
    matched: list[Optional[Fact]] = [fs[0] if fs else None for fs in found]
    cited = [f for fs in found for f in fs]
    for _, _, _, _, toks, ks, _ in items:
        cited += [f for t in toks for f in c.facts.named(t) if f.kernel is None or f.kernel in ks]
    derived: dict[int, tuple[str, list[str]]] = {}
    ops: list[Operand] = [_operand(st.result, sentence_concepts(s)) for _, text, _, _ in c.described()
                          for s in sentences(text) for st in chains(s) if st.ok]  # "2*4096*4096*2048 = 68.7 GFLOP":
    # a result worked out in the answer is a value later numbers may derive from ("-> 758 TFLOP/s")
    for _ in range(2):  # a number derived in one place is a cited value elsewhere (one level of chaining)
        for i, ((where, s, q, cs, toks, ks, use), f) in enumerate(zip(items, matched)):
            if f is not None or i in derived:
                continue
            prior = [o for o in ops if o.name != q.written]
            d = match_derived(q, cs, cited, use, prior) or match_bound(q, cs, toks, ks, c.facts, cited, use, prior) \
                or match_stride(q, cs, ks, c.facts)
            if d is not None:
                derived[i] = d
                ops.append(_operand(q, cs))
    out = list(named)
    for i, ((where, s, q, cs, toks, ks, use), f) in enumerate(zip(items, matched)):
        held = _bound_miss(c, s, q, ks, use) if where != "fix" else None
        if held is not None:  # "`dram__bytes.sum.per_second` = 4.79 TB/s": the value of the metric it is written as,
            # whatever else it happens to equal (the datasheet bandwidth, a ratio of two cited values)
            c.audit.append(NumberAudit(written=q.written, where=where))
            out.append(f"The number '{q.written}' in the {where} is written as the value of `{held.metric}`, which "
                       f"the capture holds as {held.value:.4g} ({held.artifact}): quote the measured value.")
            continue
        if f is not None:
            c.audit.append(NumberAudit(written=q.written, where=where, fact=f.describe(), derivation=f.derivation))
            continue
        if i in derived:
            c.audit.append(NumberAudit(written=q.written, where=where, derivation=derived[i][0], operands=derived[i][1]))
            continue
        if source_size(s, q) or WIDTH.match(scrub(s), q.start):  # "the 128-step loop": the code's size, which no
            # capture measures; "2-byte loads": the width of an element
            c.audit.append(NumberAudit(written=q.written, where=where, unverified=True))
            continue
        written_out = chains(s)
        written = next((st for st in written_out if st.result.start == q.start), None)  # 'A op B = q' in its sentence
        stated = _stated(s, q, written, cs)
        sizes = written is not None and written.ok and all(o.family == "count" and not o.unit for o in written.operands) \
            and bool(_WORK_UNIT.search(q.unit or ""))
        if stated is not None and (not c.strict[i] or s.lstrip().startswith("|") or sizes or listed_sum(s, q)):  # a table row may show
            # how its value is worked out in another cell ("| host time | 11.86 ms | 4096 calls x 2.895 us |"); a
            # product of the code's sizes ("2 x 32 x 256 x 256 x 9 x 56 x 56 = 118.4 GFLOP") is no measurement; a
            # total broken down into the parts that follow it ("~238 us (two GEMMs at ~90 us each, copy 21 us, ...)")
            c.audit.append(NumberAudit(written=q.written, where=where, derivation=stated))
            continue
        wrong = written if written is not None and not written.ok else None
        operand = written is None and any(q.start == o.start for st in written_out if st.ok for o in st.operands)
        miss = None if wrong is not None or c.strict[i] or operand else implicit_miss(s, q) or \
            _constant_share_miss(q, cs, cited)
        if miss is not None:
            c.audit.append(NumberAudit(written=q.written, where=where))
            out.append(f"The ratio '{q.written}' in the {where} ('{s.strip()[:90]}') is not the ratio of the values its "
                       f"sentence gives ({miss}): recompute it.")
            continue
        if wrong is not None:
            c.audit.append(NumberAudit(written=q.written, where=where))
            out.append(f"The number '{q.written}' in the {where} is the result of '{wrong.text}', which does not "
                       f"hold: recompute it from its operands.")
            continue
        absent = None if operand else _absent_api(q, s, c.facts)
        if absent is not None:
            c.audit.append(NumberAudit(written=q.written, where=where))
            out.append(f"The number '{q.written}' in the {where} is given for `{absent}`, which the captures record no "
                       f"call of: quote the function the timeline shows.")
            continue
        bad = None if operand else contradiction(q, s, ks, c.facts, use, headline=c.strict[i],
                                                       evidence=where == "evidence") or \
            (None if c.strict[i] else stride_miss(q, cs, ks, c.facts))
        if bad is not None and bad.kernel is None and _spans(s, q, bad):
            bad = None  # "1-4 us gaps" for a median gap of 3.2 us: a range that holds the program's statistic (the
            # ends of "each kernel takes 124-183 us" are the kernels' extremes, checked as such)
        if bad is not None and bad.kernel is None and not is_ceiling(bad) and not kernel_mentions(s, c.facts) and \
                _elsewhere(q, bad, c.facts):
            bad = None  # a program-level statistic missed, but the same statistic of one of its kernels: that kernel's
            # value in a clause that names no kernel, not an invention
        pinned = c.strict[i] and bad is None and not operand and not IDEAL.search(clause_of(s, q)) and \
            _pinned(q, toks, cs, ks, c.facts)
        same = equal_elsewhere(q, s, ks, c.facts, bad) if pinned or (bad is not None and not is_ceiling(bad)) else None
        if same is not None:  # the value of another metric of the kernel, in its own unit: a real number the words
            # describe loosely ("2.90 us per call" for the API's mean), not one made up
            said = bad.metric if bad is not None else "another metric"
            c.audit.append(NumberAudit(written=q.written, where=where, fact=same.describe(),
                                       derivation=f"equal in value and unit (its words suggested {said})"))
            continue
        if pinned:
            c.audit.append(NumberAudit(written=q.written, where=where))
            described = ", ".join(sorted(cs - {"ratio"}))[:80] or "nothing it names"
            out.append(f"The number '{q.written}' in the {where} ('{s.strip()[:90]}') {NO_VALUE} "
                       f"({described}) for the kernel in question, nor a derivation of cited "
                       f"values: quote the value the artifact reports for that metric.")
            continue
        if bad is None and (not use.bound or use.across):
            # knowledge (a ceiling, a size from the source), a prediction, or a value no capture measures: nothing
            # contradicts it, so it is listed as unverified, not refused
            c.audit.append(NumberAudit(written=q.written, where=where, unverified=True))
            continue
        c.audit.append(NumberAudit(written=q.written, where=where))
        if bad is not None and is_ceiling(bad) and close(bad.value, q.value, q.tol):
            out.append(f"The number '{q.written}' in the {where} ('{s.strip()[:90]}') is the device's ceiling "
                       f"{bad.metric} ({bad.artifact}), presented as measured or achieved: quote what the capture "
                       f"measures.")
        elif bad is not None:
            out.append(f"The number '{q.written}' in the {where} ('{s.strip()[:90]}') {NOT_THE_VALUE} "
                       f"{bad.metric}, which the capture holds as {bad.value:.4g} ({bad.artifact}): quote the measured "
                       f"value.")
        else:  # an inequality ("well under 2 ms") that no measured value or derivation of cited values satisfies
            out.append(f"The bound '{q.written}' in the {where} ('{s.strip()[:90]}') {NO_BOUND}, nor for a derivation of cited values: check it.")
    return out


def _operand(q: Quantity, concepts: frozenset) -> Operand:
    """A number of the answer as a value later derivations may use."""
    return Operand(q.written, abs(q.value) / (100.0 if q.family == "pct" else 1.0), concepts | unit_concepts(q.unit),
                   "ratio" if q.family == "pct" else q.family)


def _elsewhere(q: Quantity, bad: Fact, facts: Facts) -> bool:
    """Whether the number is the value of the contradicted fact's metric for some kernel (a clause naming no kernel)."""
    return any(close(f.value, v, t) for fam, v, t in candidates(q) for f in facts.by_metric.get(bad.metric, [])
               if f.family == fam)


_WORK_UNIT = re.compile(r"FLOP|flop|^[kKMGT]?i?B$|bytes?$")  # the size of the work: FLOPs or bytes


def _stated(sentence: str, q: Quantity, written: Optional[Stated], concepts: frozenset[str]) -> Optional[str]:
    """How the number follows from arithmetic written in its own sentence: the result of a chain that holds
    ("2.03 ms / 200 = 10.1 us"), or a ratio/product/difference of two of the sentence's numbers."""
    if written is not None and written.ok:
        return f"stated arithmetic '{written.text}'"
    if UNIT_SHARE in concepts and concepts & LEVELS:
        return None  # one memory level's share of its peak is measured: it matches that level's metric or nothing
    how = implicit(sentence, q, UNIT_SHARE in concepts)
    return f"arithmetic on the sentence's numbers: {how}" if how else None


_RANGE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s?(?:-|–|to)\s?(\d+(?:\.\d+)?)")


def _spans(sentence: str, q: Quantity, fact: Fact) -> bool:
    """Whether q is an end of a range written around it ("1-4 us", "85-90 %") that holds the fact's value."""
    plain = scrub(sentence)
    for m in _RANGE.finditer(plain):
        if m.start() <= q.start < m.end():
            written = float(plain[q.start:q.end].split()[0].rstrip("%").replace(",", "") or "nan") if \
                re.match(r"[\d.,]+", plain[q.start:q.end]) else None
            if not written:
                return False
            scale = q.value / written  # the unit of q, applied to both ends
            lo, hi = sorted((float(m.group(1)) * scale, float(m.group(2)) * scale))
            v = fact.value * (100.0 if q.family == "pct" and fact.family == "ratio" else 1.0)
            return lo <= v <= hi
    return False


def _pinned(q: Quantity, tokens: set[str], concepts: frozenset[str], kernels: set[str], facts: Facts) -> bool:
    """Whether an evidence line names its metric, or its words name a metric the captures hold for the kernel in
    scope (a value of the same kind within PIN_SPAN of it), so that its cited number, matching none of the values, is
    wrong rather than unverifiable."""
    if uncounted(q):
        return False  # "62 elements": a size of the problem, whatever metric the line names
    if any(metrics.lookup(t) is not None for t in tokens) or \
            (tokens and any(names(m, tokens) for m in facts.by_metric)):
        return True  # a line naming a metric this tool defines or the captures hold (in full, or without its suffix:
        # `sm__inst_executed_pipe_xu`) cites that metric's value
    specific = concepts - GENERIC - {"duration", "ratio"} - STATISTICS  # a statistic names no metric
    for f in facts.items:
        if f.kernel is not None and kernels and f.kernel not in kernels:  # no kernel in scope: any kernel's metric
            continue
        if f.kernel is not None and specific & f.concepts and any(
                f.family == fam and v / PIN_SPAN <= abs(f.value) <= v * PIN_SPAN for fam, v, _ in candidates(q)
                if not (q.family == "pct" and fam == "count")):
            return True
    return False
