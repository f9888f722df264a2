"""Answers read paragraph by paragraph: the parts an answer writes without headings (a chat reply, an email, a
commit message), in the answer's order (Bottleneck, Evidence, Mechanism, Fix) or by the role of each sentence."""
from __future__ import annotations

import re
from typing import Optional

from .numbers import scrub, sentences
from .roles import (BOUND as _BOUND, FIX_START as _FIX_START, VERDICT as _VERDICT, cites_a_measurement, opens_with_a_change,
                    says_what_to_do, verdict_of)

ORDER = ("bottleneck", "evidence", "mechanism", "fix")
# a leading number or bold label; a bold sentence ("**The program is host-bound by launch overhead.**") is no label
LABEL = re.compile(r"^(?:\d+[.)](?:[ \t]+|(?=\*\*|__)))?(?:(\*\*|__)(?![^*_\n]*?\s\S+\s\S+\s\S+[^*_\n]*?[.!]\1)[^*_\n]{1,60}?\1[ \t]*[.:]?[ \t]*)?")


def paragraphs(text: str) -> list[str]:
    """Prose paragraphs (blank-line separated; headings and tables left out), without a leading number or bold label."""
    out = []
    for p in re.split(r"\n[ \t]*\n", text or ""):
        p = p.strip()
        if re.fullmatch(r"#{1,6}[ \t]+[^\n]*", p) and _BOUND.search(p):
            p = p.lstrip("#").strip()  # "#### py_tensor_from_list — host-bound on list → tensor conversion": a verdict
        if p and not p.startswith(("#", "|", ">", "```")) and not re.fullmatch(r"(\*\*|__)[^\n]{1,100}\1", p):
            p = LABEL.sub("", p, count=1).strip()  # a title in bold, a quoted line of code: no part
            if p:
                out.append(p)
    return out


_SUBJECT = re.compile(r"\s*(?:re|fwd?|subject)\s*:[^\n]*$", re.I)  # "re: d2h_volume profile -- pretty clear-cut IMO"
_FOOTNOTE = re.compile(r"\s*\[\d{1,2}\]\s")


def unlabelled(text: str, first: Optional[str], found: dict[str, str]) -> dict[str, str]:
    """The parts written without a heading, read in the answer's order (Bottleneck, Evidence, Mechanism, Fix):
    before the first heading, the missing parts that precede it (the first paragraph is the bottleneck, the last
    missing part takes the rest); with no heading at all, at least four paragraphs: bottleneck, evidence, the
    mechanism (all middle paragraphs) and the fix (the last)."""
    paras = paragraphs(text)
    # a quoted question ("> what's slow in eager_lazy?") is what the answer replies to, not a part of it
    paras = [x for x in paras if "?" not in x or
             not all(line.lstrip().startswith(">") for line in x.splitlines() if line.strip())]
    notes = []  # "[1] ncu_raw.csv: ...": footnotes after the answer are its sources (evidence), never its fix
    while first is None and len(paras) > 1 and all(_FOOTNOTE.match(x) for x in paras[-1].splitlines() if x.strip()):
        notes.insert(0, paras.pop())
    if notes:
        out = unlabelled("\n\n".join(paras), first, found)
        return {**out, "evidence": "\n".join([out["evidence"]] + notes)} if out.get("evidence") else out
    subject = False
    if len(paras) >= (3 if first is None else 2) and len(re.findall(r"[A-Za-z]{3,}", paras[0])) < 15 and \
            not re.search(r"\d", scrub(paras[0])) and not _VERDICT.search(paras[0]) and \
            (_VERDICT.search(paras[1]) or _SUBJECT.match(paras[0])):
        subject = bool(_SUBJECT.match(paras[0]))
        paras = paras[1:]  # "Looked at the capture for this one.": a context line, not the verdict
    if first is None:
        if len(paras) == 1:  # one paragraph: its verdict, its measurements, and from "The fix is ..." on, the fix
            said = sentences(paras[0])
            at = next((i for i, x in enumerate(said) if i and (_FIX_START.match(x) or opens_with_a_change(x) and
                                                               any(cites_a_measurement(y) for y in said[:i]))), None)
            # (a change opens the fix only after a sentence that cites a measurement: its number and its source)
            if at is None and len(said) <= 2:  # one long sentence: "...; the one lever that remains is ...: keeping
                said = re.split(r"(?<=;)\s+", paras[0])  # x in bf16 would halve ...": its clauses
                at = next((i for i, x in enumerate(said) if i and says_what_to_do(x)), None)
            return _prose([" ".join(said[:at]), " ".join(said[at:])]) if at else {}
        if len(paras) < len(ORDER):
            return _prose(paras)
        at = next((i for i in range(2, len(paras)) if says_what_to_do(next(iter(sentences(paras[i])), ""))),
                  next((i for i in range(2, len(paras) - 1) if any(says_what_to_do(x) for x in sentences(paras[i]))),
                       len(paras) - 1))  # (else the paragraph that says it after its opening sentence, before a
        # closing remark: "The fp16 tensor cores are ... faster. So the change I'd make is ...")
        # the fix from the first paragraph (after the evidence) that says what to do: a caveat after it is part of it
        later = [x for p in paras[1:at] for x in sentences(p) if _VERDICT.search(x)]
        if not _VERDICT.search(paras[0]) and later and not says_what_to_do(next(iter(sentences(paras[0])), "")):  # "You asked whether ... Let's check.": the verdict comes
            # later ("That's the bottleneck: ..."); the opening paragraph is part of the reasoning (one that opens
            # with the change is the fix: read by sentence role below)
            bound = [x for x in later if _BOUND.search(x)]  # "..., a latency bound created by contention" before
            # "the dominant stall is ..., waiting on the shared-memory pipe"
            return {"bottleneck": (bound or later)[0].strip(), "evidence": paras[1],
                    "mechanism": "\n\n".join([paras[0]] + paras[2:at]), "fix": "\n\n".join(paras[at:])}
        return {"bottleneck": paras[0], "evidence": paras[1], "mechanism": "\n\n".join(paras[2:at]),
                "fix": "\n\n".join(paras[at:])}
    missing = [p for p in ORDER[:ORDER.index(first)] if p not in found]
    if len(paras) == 1 and {"evidence", "mechanism"} <= set(missing):
        # a chat reply's one paragraph before "Fix:": its verdict, its measured sentences, its reasons (a note's
        # lines, each one a statement: "excess DRAM traffic: ...", "nsys (...): ...", "=> ...")
        lines = [x for x in (paras[0] if subject else text).strip().splitlines() if x.strip()]  # (without a
        # subject line, "re: ...", set apart above)
        return {k: v for k, v in _prose((lines if len(lines) >= 3 else paras) + [""]).items() if k in missing}
    out: dict[str, str] = {}
    for i, part in enumerate(missing):
        if i < len(paras):
            out[part] = "\n\n".join(paras[i:]) if i == len(missing) - 1 else paras[i]
    return out


def _prose(paras: list[str]) -> dict[str, str]:
    """Two or three paragraphs of prose (a chat reply): the sentence that gives the verdict is the bottleneck, the
    sentences with numbers before the last paragraph are the evidence, they are the mechanism too, and the last
    paragraph is the fix."""
    if len(paras) < 2:
        return {}
    body = [x for p in paras[:-1] for x in sentences(p)]
    head = body[verdict_of(body)] if body else ""
    rest = [x for x in body if x is not head]
    measured = [x for x in rest if re.search(r"\d", x)] or [x for x in [head] if re.search(r"\d", scrub(x))]
    # (a blunt one-sentence verdict that carries its own numbers: "Launch overhead, full stop: 20,000 launches ...")
    if not head or not measured:
        return {}
    return {"bottleneck": head.strip(), "evidence": "\n".join(f"- {x.strip()}" for x in measured),
            "mechanism": "\n".join(x.strip() for x in rest) or head.strip(), "fix": paras[-1]}
