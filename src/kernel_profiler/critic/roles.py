"""Sentence roles: the four parts of an answer read from what each sentence does, for layouts that no label names.

A verdict sentence ("... is host-bound", "bound by the copy") is the bottleneck; sentences that say what to do
("pad the tile", "the fix is", "I'd switch") and the expected effect after them are the fix; every other sentence
is the reasoning (the mechanism), and those among them that cite numbers are the evidence. Used when the layout
leaves a part unnamed, never to overrule a part the answer labels.
"""
from __future__ import annotations

import re

from .evidence_lines import numbers_of
from .numbers import scrub, sentences

_BOUNDS_SPACED = (r"\b(?:memory|compute|latency|host|CPU|launch|transfer|copy|PCIe|DRAM|bandwidth|issue|instruction|"
                  r"math|GPU|kernel) bound\b")
BOUND = re.compile(_BOUNDS_SPACED + r"|-bound\b|\bbound (?:by|on)\b|limited by|\bbottleneck|\bdominat|"
                   r"(?<!not a )(?<!not an )(?<!\bno )\b(?:latency|bandwidth|occupancy|launch[- ]overhead|synchroni[sz]ation) "
                   r"(?:problem|issue)\b", re.I)
VERDICT = re.compile(BOUND.pattern + r"|short version|tl;?dr|bottom line|in short|bottleneck|"
                     r"\bwait(?:s|ing)? (?:for|on)\b|dominat|throttled by|\bis the (?:problem|cost|limit)\b|"
                     r"\bas slow as\b|\bsets? the (?:time|pace)\b|\bnear (?:the )?(?:peak|roofline)\b|"
                     r"\bat (?:the )?roofline\b|\bit'?s the\b|\bis (?:spent|lost) (?:in|on)\b|\bwhat (?:limits|is limiting) [\w`]+(?: [\w`]+)?(?: now)? (?:is|are)\b", re.I)
FIX_START = re.compile(r"\W*(?:the |my )?(?:fix|change|remedy|recommendation|solution)\b(?!\s+(?:did|worked|works|landed|held|has|had|was|removed|took|is (?:in|gone|done|working|confirmed)))|\W*(?:I['’]?d|I would|we should|"
                       r"you should|to fix|instead,)\b", re.I)
# a change as the subject of its sentence ("Replacing the expression with `gelu` computes it in one pass")
_CHANGE_NOUN = (r"^\W*(?:replacing|switching|fusing|batching|hoisting|padding|rewriting|pinning|capturing|privati[sz]ing|"
                r"preallocating|reusing)\b[^.;]{0,120}?\b(?:would|will|should|could|computes|removes|cuts|avoids|saves|"
                r"halves)\b")
# advice under a condition ("If this loop is real code, launch several steps before synchronizing")
_IF_THEN = (r"^\W*if\b[^.;]{3,120}?,\s*(?:(?:then|just|simply)\s+)?(?:use|switch|replace|fuse|batch|pin|move|remove|"
            r"drop|hoist|cache|pad|merge|reuse|preallocate|allocate|call|launch|capture|keep|upload|ship|send|convert|"
            r"cast|compile|overlap|split|raise|lower|reduce|skip|precompute|give|set|put|change|sort|group|rewrite)\b")
# a sentence that says what to do: an imperative first word, or a phrase that proposes a change
_DO = re.compile(r"^\W*(?:(?:first(?:ly)?|second(?:ly)?|third|then|next|also|finally|alternatively),?\s+)?"
                 r"(?:(?:fix|change|do|action|recommendation|next step|what to (?:change|do)|what I['’]?d (?:change|do))s?"
                 r"\W{0,3}[:—-]|(?:please\s+)?(?:use|switch|replace|fuse|"
                 r"batch|pin|move|remove|drop|hoist|cache|pad|merge|reuse|preallocate|allocate|call|build|feed|"
                 r"snapshot|clear|avoid|keep|launch|run it|make|let|try|enable|disable|rewrite|restructure|vectori[sz]e|"
                 r"transpose|swizzle|convert|cast|store|load|issue|overlap|stage|split|increase|decrease|raise|lower|"
                 r"reduce|stop|skip|precompute|warm|capture|coalesce|unroll|tile|give|set|put|change|go|map|assign|align|"
                 r"group|sort|reorder|rearrange|privati[sz]e|accumulate|combine|compute|inline|specialize|prefetch|"
                 r"double-buffer|free|copy|upload|download|schedule|add|introduce|mark|compile|wrap|delete|"
                 r"shrink|grow|widen|pack|fold|flatten|collapse|bucket|chunk|route|pass|read|write|index|"
                 r"query|loop|process|hand|bind|lock|preload|materiali[sz]e|reshape|permute|contiguous|choose|pick|select)\b"
                 r"(?!\s+(?:is|are|was|were|takes?|took|time|of|per|costs?|dominates?|overhead|count|latency|rate|active|slots?|"
                 r"config\w*|bound|cost|stats?|statistics)\b|-| ?[(.,;:/?]|\s+[—–]))|"
                 r"\b(?:the (?:fix|lever|change|remedy|cure|way out)\b(?!\s+(?:did|worked|works|landed|held|has|had|was|removed|took|is (?:in|gone|done|working|confirmed)))|\bnext step\b[^.;]{0,50}?\bis to\b|only lever|(?:only|one) (?:thing|lever|change|knob) (?:that )?"
                 r"(?:would|could|can|will|remains?|is left|left)\b|(?:fix|lever) is|(?:I['’]?d|I would)\b(?!\s+(?:rule|say|guess|note|think|argue|look|bet|call|not))|"
                 r"we should|you should|should (?:use|switch|replace|fuse|batch|pin|move|remove|pad|be (?:replaced|"
                 r"fused|moved|batched|pinned))|recommend|suggest|leave (?:it|the kernel)|"
                 r"nothing to (?:fix|change|gain)|no (?:kernel )?change|"
                 r"\b(?:only|best|simplest|cheapest|real|one) (?:way|option|route)\b[^.;]{0,40}?\bis to\b)|" +
                 _CHANGE_NOUN + r"|" + _IF_THEN, re.I)
# a sentence that states the expected effect of the change, after it
_EFFECT = re.compile(r"\b(?:expect\w*|should (?:go|fall|drop|rise|climb|halve|double|move|come|be|see|land|reach)|"
                     r"would (?:go|fall|drop|rise|halve|double|take|save|cut|bring)|will (?:go|fall|drop|rise|halve|"
                     r"double|move)|from [~≈]?[\d.,]+\s*\S* (?:to|→|->)|→|->|metric|speed-?up|estimate\w*)\b|→", re.I)
_SKIP = re.compile(r"^\s*(?:#|>|\|[\s:|-]*\|?\s*$|```)|^\s*(?:\*\*|__)[^\n]{1,100}(?:\*\*|__)[.:]?\s*$")


def opens_with_a_change(sentence: str) -> bool:
    """Whether a sentence opens with what to do ("Hoist the cudaMalloc ...", "Fix: ..."), not only mentions a fix."""
    m = _DO.search(scrub(sentence))
    return m is not None and m.start() == 0


def says_what_to_do(sentence: str) -> bool:
    """Whether a sentence proposes a change ("Pad the tile", "The fix is ...", "I'd switch ...")."""
    return bool(_DO.search(scrub(sentence)) or FIX_START.match(sentence))


# a line that addresses someone ("@perf-team re: the capture", "Hi Priya,"): no verdict
ADDRESS = re.compile(r"^\W*(?:@[\w-]+|(?:hi|hello|hey|dear|thanks|cheers)\b)", re.I)


def verdict_of(said: list[str]) -> int:
    """Which sentence gives the verdict: the first that names a bound, else a short first sentence ("launch
    overhead, pretty clear cut.") that addresses no one, else the first with a verdict's words ("waits on the
    copy"), else the first."""
    bound = next((i for i, x in enumerate(said)  # "X-bound" before "the dominant stall is"
                  if any(m.group(0).lower() != "dominat" for m in BOUND.finditer(x))), None)
    bound = bound if bound is not None else next((i for i, x in enumerate(said) if BOUND.search(x)), None)
    if bound is not None:
        return bound
    first = next((i for i, x in enumerate(said) if not ADDRESS.match(x)), 0)
    if said and len(re.findall(r"[A-Za-z]{2,}", scrub(said[first]))) <= 12:
        return first
    return next((i for i, x in enumerate(said) if VERDICT.search(x)), 0)


_SOURCE = re.compile(r"\b(?:ncu|nsys|nvtx|cupti|sqlite|profile[rd]?|capture[ds]?|trace|timeline|table|report(?:s|ed)?|"
                     r"measured|shows?|counts?|median|mean|average|per (?:launch|step|call))\b|__|\.(?:ncu-rep|sqlite|csv|json)",
                     re.I)


def cites_a_measurement(sentence: str) -> bool:
    """A sentence that cites a measurement: a number with its source ("per ncu", "nsys shows", a metric name, a
    statistic), or two numbers or more."""
    found = numbers_of(sentence)
    return bool(found) and (len(found) >= 2 or bool(_SOURCE.search(sentence)))


def units(text: str) -> list[str]:
    """The answer's sentences, list items and table rows, without headings, quoted lines or bold titles."""
    kept = "\n".join(line for line in (text or "").splitlines() if not _SKIP.match(line))
    return [re.sub(r"^\s*(?:[-*+•]|\d+[.)])\s+", "", s).strip() for s in sentences(kept) if s.strip()]


def read_roles(text: str) -> dict[str, str]:
    """The four parts by sentence role, or {} when the text has no verdict-and-numbers reading (fewer than three
    sentences, no sentence with a number besides the fix)."""
    said = units(text)
    if len(said) < 3:
        return {}
    start = next((i for i, x in enumerate(said) if _DO.search(scrub(x)) and (i or not VERDICT.search(x))), None)
    # ("near peak, leave it." first: the verdict, its advice a clause of it)
    fix: list[int] = []
    if start is not None:
        stop = start + 1
        while stop < len(said) and (_DO.search(scrub(said[stop])) or _EFFECT.search(said[stop]) or
                                    (start and not VERDICT.search(said[stop]))):
            stop += 1  # a fix at the end runs to the end; a fix that leads the answer runs until the verdict
        fix = list(range(start, stop))
    body = [i for i in range(len(said)) if i not in fix]
    if not body:
        return {}
    head = body[verdict_of([said[i] for i in body])]
    measured = [said[i] for i in body if i != head and cites_a_measurement(said[i])]
    if not measured:
        return {}
    out = {"bottleneck": said[head], "evidence": "\n".join(f"- {x}" for x in measured),
           "mechanism": " ".join(said[i] for i in body)}
    if fix:
        out["fix"] = " ".join(said[i] for i in fix)
    return out
