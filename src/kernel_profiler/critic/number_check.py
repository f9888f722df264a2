"""The numbers check: every number of an answer is a measured value of what its words describe, a derivation (declared,
or written out in its sentence), or knowledge nothing contradicts (listed as unverified); a number the captures
contradict or a written result that does not hold is refused.
"""
from __future__ import annotations

from typing import Optional

from .. import metrics
from .answer import NumberAudit
from .arithmetic import Stated, chains, implicit, implicit_miss
from .concepts import GENERIC, metric_concepts, unit_concepts
from .context import Context
from .facts import Fact, Facts
from .form import metric_values
from .match import (Operand, Use, candidates, close, kernel_mentions, match_bound, match_derived, match_facts,
                    number_use, sentence_concepts)
from .numbers import METRIC_TOKEN, Quantity, evidence_quantity, quantities, sentences
from .stride import match_stride, stride_miss
from .unverified import bound_metric, contradiction



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
        ks = c.scope.allowed(f"{e.kernel or ''} {e.meaning}", c.facts)
        vals = [f for f in c.facts.by_metric[e.metric] if f.kernel is None or f.kernel in ks] or c.facts.by_metric[e.metric]
        qs = [q] + metric_values(e.meaning) + [st.result for st in chains(e.meaning) if st.ok]  # "a / b = 32"
        if all(f.family != q.family for f in vals) and _measures(q, ks, c.facts):
            qs += quantities(e.meaning)  # a terse line opening with another measurement gives the metric's value later
        if not any(close(f.value, v, t) for f in vals for x in qs for fam, v, t in candidates(x) if fam == f.family):
            near = min(vals, key=lambda f: abs(f.value - q.value))
            out.append(f"Evidence {e.metric} = {e.value:.6g}{' ' + e.unit if e.unit else ''} does not match the capture, "
                       f"which holds {near.value:.6g} ({near.artifact}): quote the number the artifact reports.")
    return out


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
        written_out = chains(s)
        written = next((st for st in written_out if st.result.start == q.start), None)  # 'A op B = q' in its sentence
        stated = _stated(s, q, written)
        if stated is not None and not c.strict[i]:
            c.audit.append(NumberAudit(written=q.written, where=where, derivation=stated))
            continue
        wrong = written if written is not None and not written.ok else None
        operand = written is None and any(q.start == o.start for st in written_out if st.ok for o in st.operands)
        miss = None if wrong is not None or c.strict[i] or operand else implicit_miss(s, q)
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
        bad = None if operand else contradiction(q, s, ks, c.facts, use, headline=c.strict[i],
                                                       evidence=where == "evidence") or \
            (None if c.strict[i] else stride_miss(q, cs, ks, c.facts))
        if bad is not None and bad.kernel is None and not kernel_mentions(s, c.facts) and _elsewhere(q, bad, c.facts):
            bad = None  # a program-level statistic missed, but the same statistic of one of its kernels: that kernel's
            # value in a clause that names no kernel, not an invention
        if c.strict[i] and bad is None and not operand and _pinned(q, toks, cs, ks, c.facts):
            c.audit.append(NumberAudit(written=q.written, where=where))
            described = ", ".join(sorted(cs - {"ratio"}))[:80] or "nothing it names"
            out.append(f"The number '{q.written}' in the {where} ('{s.strip()[:90]}') matches no measured value of "
                       f"what its line describes ({described}) for the kernel in question, nor a derivation of cited "
                       f"values: quote the value the artifact reports for that metric.")
            continue
        if bad is None and not use.bound:
            # knowledge (a ceiling, a size from the source), a prediction, or a value no capture measures: nothing
            # contradicts it, so it is listed as unverified, not refused
            c.audit.append(NumberAudit(written=q.written, where=where, unverified=True))
            continue
        c.audit.append(NumberAudit(written=q.written, where=where))
        if bad is not None:
            out.append(f"The number '{q.written}' in the {where} ('{s.strip()[:90]}') does not match the measured "
                       f"{bad.metric}, which the capture holds as {bad.value:.4g} ({bad.artifact}): quote the measured "
                       f"value.")
        else:  # an inequality ("well under 2 ms") that no measured value or derivation of cited values satisfies
            out.append(f"The bound '{q.written}' in the {where} ('{s.strip()[:90]}') holds for no measured value of "
                       f"what its sentence describes, nor for a derivation of cited values: check it.")
    return out


def _elsewhere(q: Quantity, bad: Fact, facts: Facts) -> bool:
    """Whether the number is the value of the contradicted fact's metric for some kernel (a clause naming no kernel)."""
    return any(close(f.value, v, t) for fam, v, t in candidates(q) for f in facts.by_metric.get(bad.metric, [])
               if f.family == fam)


def _stated(sentence: str, q: Quantity, written: Optional[Stated]) -> Optional[str]:
    """How the number follows from arithmetic written in its own sentence: the result of a chain that holds
    ("2.03 ms / 200 = 10.1 us"), or a ratio/product/difference of two of the sentence's numbers."""
    if written is not None and written.ok:
        return f"stated arithmetic '{written.text}'"
    how = implicit(sentence, q)
    return f"arithmetic on the sentence's numbers: {how}" if how else None


PIN_SPAN = 10.0  # a number its words tie to a kernel's metric lies within this factor of a value of it, or it is
# something else (a count of elements, a size from the source) that the captures do not hold


def _pinned(q: Quantity, tokens: set[str], concepts: frozenset[str], kernels: set[str], facts: Facts) -> bool:
    """Whether an evidence line names its metric, or its words name a metric the captures hold for the kernel in
    scope (a value of the same kind within PIN_SPAN of it), so that its cited number, matching none of the values, is
    wrong rather than unverifiable."""
    if any(t in facts.by_metric or metrics.lookup(t) is not None for t in tokens):
        return True  # a line naming a metric the captures or this tool define cites that metric's value
    specific = concepts - GENERIC - {"duration", "ratio"}
    for f in facts.items:
        if f.kernel is not None and kernels and f.kernel not in kernels:  # no kernel in scope: any kernel's metric
            continue
        if f.kernel is not None and specific & f.concepts and any(
                f.family == fam and v / PIN_SPAN <= abs(f.value) <= v * PIN_SPAN for fam, v, _ in candidates(q)):
            return True
    return False
