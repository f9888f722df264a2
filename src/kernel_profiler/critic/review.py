"""What the model reviewer (a second agent) receives: everything the investigation rested on.

`review_input` assembles, for the prompt template `prompts/critic.md.j2`:
  question      the user's question
  answer        the submitted answer (critic.Answer as JSON)
  tool_calls    every tool call of the investigation, with its arguments, in order
  results       the tool results (each truncated to `RESULT_CHARS`)
  findings      the engine's own findings on the same captures (bound, mechanism, kernel, bottleneck, evidence)
  audit         what the deterministic checks used: for every number, the fact or derivation it matched;
                the mechanism claimed and the measured signature behind it; which checks passed
  unconfirmed   for an answer the checks rejected only for what they could not confirm (critic.grounds), their
                reasons: the reviewer settles each from the tool results
The reviewer answers with a structured verdict (accept/reject + one reason per line); rejections go back
to the investigating agent as the submit_answer tool result and into the transcript.
"""
from __future__ import annotations

import json
from typing import Any, Optional

from ..answer import Diagnosis, Finding
from ..kernel_name import KernelName
from .answer import Verdict

RESULT_CHARS = 12_000
FINDINGS_SHOWN = 1
FACTS_SHOWN = 1  # metric names per kernel in the audit line (the prompt has a token budget)


def _finding(f: Finding) -> dict:
    # one line each (the numbers are in the tool results); the bottleneck only where it differs from the claim
    return {"bound": f.bound, "mechanism": f.mechanism, "kernel": KernelName(f.kernel).qualified if f.kernel else None,
            "share": f.share, "bottleneck": f.bottleneck}


def _short_fact(n) -> str:
    if n.unverified:
        return "unverified: not presented as a measurement the captures hold"
    if not n.fact:
        return f"{n.derivation} of {', '.join(n.operands)}" if n.derivation else "nothing"
    return n.fact.partition(" = ")[0]  # metric [kernel]: the value itself is in the tool results


def _by_kernel(facts: list[str]) -> list[str]:
    """'metric [kernel]' strings grouped as 'kernel: metric, metric' (program-level facts under 'program')."""
    groups: dict[str, set[str]] = {}
    for f in facts:
        metric, _, kern = f.partition(" [")
        groups.setdefault(kern.rstrip("]") or "program", set()).add(metric)
    return [f"{k}: {', '.join(sorted(v)[:FACTS_SHOWN])}" + (f" (+{len(v) - FACTS_SHOWN} more)" if len(v) > FACTS_SHOWN else "")
            for k, v in sorted(groups.items())]


def review_input(question: str, answer: dict, tool_calls: list[dict], results: list[dict],
                 diagnosis: Optional[Diagnosis], verdict: Optional[Verdict],
                 unconfirmed: Optional[list[str]] = None) -> dict[str, Any]:
    findings = [] if diagnosis is None else [_finding(f) for f in [diagnosis.primary, *diagnosis.secondary][:FINDINGS_SHOWN]]
    audit = None
    if verdict is not None:
        audit = {"checks": verdict.checks, "mechanism": verdict.mechanism, "signature": verdict.signature,
                 # derived numbers with their operands; direct matches as the (unique) facts they read
                 "numbers": [{"written": n.written, "where": n.where, "matched": _short_fact(n)} for n in verdict.numbers
                             if n.derivation and not n.fact or not n.fact],
                 "facts": _by_kernel([_short_fact(n) for n in verdict.numbers if n.fact])}
    return {
        "question": question,
        "answer": answer,
        "tool_calls": [{"name": c["name"], "input": json.dumps(c.get("input", {}), default=str)} for c in tool_calls],
        "results": [{"name": r["name"], "is_error": r["is_error"],
                     "content": (r["content"] if isinstance(r["content"], str)
                                 else json.dumps(r["content"], default=str))[:RESULT_CHARS]} for r in results],
        "findings": findings,
        "audit": audit,
        "unconfirmed": list(unconfirmed or []),
    }
