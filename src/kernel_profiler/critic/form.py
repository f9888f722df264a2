"""The form of an answer: parsing into four parts.

- `parse_answer` reads Answer JSON (any shape kernel-profiler writes) or Markdown with `## Bottleneck`, `**Bottleneck:**`,
  `1. Bottleneck:` or plain `Bottleneck:` headings, labels in other words, and the parts a layout leaves unlabelled.
- `read_by_role` reads Markdown a second way: every part from what each sentence does (roles.py), whatever the layout.
- What a reader sees (`clean`, `addressed_to_reviewer`) is in visible.py; the causal chain in chain.py.
"""
from __future__ import annotations

import re
from typing import Optional

from ..answer import Answer, Fix
from .answer import AnswerFormatError
from .evidence_lines import BULLET, metric_values, numbers_of, parse_evidence  # noqa: F401 (metric_values re-exported)
from .numbers import scrub, sentences
from .direction import fix_metric_direction
from .json_text import answer_of_json, as_labelled_text, json_object, unfence
from .visible import addressed_to_reviewer, clean  # noqa: F401 (re-exported)
from .hypotheses import accepted_block, accepted_hypothesis, opens_a_hypothesis
from .notes import VERDICT_LABEL, terse, titled
from .paragraphs import ORDER, paragraphs, unlabelled
from .proposal import last_proposal
from .roles import BOUND as _BOUND, VERDICT as _VERDICT, opens_with_a_change, read_roles, says_what_to_do

# ----------------------------------------------------------------------------- parsing
_PART = (r"(bottleneck|evidence|mechanism|(?:the )?fix|(?:the )?change(?: to make)?|recommendations?|numbers|measurements|"
         r"why|root cause|cause|short version|tl;?dr|expected(?: (?:effect|impact|result|gain|speed-?up))?)")
_KEYS = [("bottleneck", re.compile(r"^(bottleneck|bound\s*(?:and|&)\s*mechanism|short (version|answer)|tl;?dr|(?:executive |management )?summary|verdict|what limits|bottom line|"
                                   r"diagnosis|status|conclusion|the answer|answer|limiter|the (problem|limit)|problem|"
                                   r"headline|in (short|brief)|what'?s (slow|wrong|limiting)|remaining (?:bottleneck|limit\w*)|"
                                   r"limiting factor)", re.I)),
         ("evidence", re.compile(r"^(evidence|numbers|measurements?|measured|data|proof|observations?|findings|"
                                 r"what (the )?(profiles?|captures?|numbers|traces?|timeline|ncu|nsys|profiler|counters)s? "
                                 r"(show|say)s?|what I (looked at|measured|saw|found|checked)|"
                                 r"key (numbers|measurements|evidence|data)|the numbers|kernel \(|timeline \(|trace \(|"
                                 r"(?:the )?(?:planted |original |old )?(?:problem|bug|issue|fix)\b.{0,30}\b(?:is gone|worked|held))",
                                 re.I)),
         ("mechanism", re.compile(r"^(mechanism|why|root cause|cause|explanation|how it works|analysis|reasoning|"
                                  r"what'?s (going on|happening)|what is (going on|happening)|where (the )?time goes)", re.I))]
# a heading in other words ("**What the profiles show**", "## Why this is the ceiling"): a line of its own
_FREE_HEADING = re.compile(r"^[ \t]{0,3}(?:#{1,6}[ \t]*(?P<h>[^\n]{1,60}?)|(?:\*\*|__)(?P<b>[^*_\n]{1,60}?)(?:\*\*|__))[ \t]*:?[ \t]*$",
                           re.M)
_FIX_WORDS = re.compile(r"^(\w+ )?(fix(?:es)?|changes?)\b|^(expect\w*|recommend\w*|what to (do|change)|next steps?|suggest\w*|action|"
                        r"what I['’]?d (suggest|do|change|recommend)|how to (fix|speed)|expected|plan|remed|proposal|"
                        r"options?\b|do this\b|try this\b|to ?do\b|(my )?(advice|suggestion)|"
                        r"what (I would|we should|you should|should change)|(what|metrics?) to (watch|expect|measure)|"
                        r"metrics?\s*(?:/|and|&)\s*direction|"
                        r"(corrective|remedial|follow-?up|recommended|proposed|suggested|next) (actions?|steps?|changes?|"
                        r"fix(es)?|experiments?|patch(es)?)|action items?|mitigations?|remediation|treatment|cure|the plan|"
                        r"what to try|(what )?(\w+ ){0,2}(is|are|am) going to (try|do|change))", re.I)
# a bold label in other words with its text on the same line ("**Key numbers:** ...", "**What I'd suggest:** ...")
_BOLD_LABEL = re.compile(r"^[ \t]{0,3}(?:\d+[.)][ \t]*|[-*+•][ \t]+)?(?:\*\*|__)(?P<w>(?:[^*_\n:`]|`[^`\n]{1,40}`){1,60}?)[ \t]*:?[ \t]*(?:\*\*|__)[ \t]*:?[ \t]*",
                         re.M)
# a plain label in other words opening a line, its text after the colon
_PLAIN_LABEL = re.compile(r"^[ \t]{0,3}(?:\d+[.)][ \t]*)?(?P<w>[A-Za-z][^:\n]{0,100}?)[ \t]*:(?:[ \t]+(?=\S)|[ \t]*$)", re.M)
# a review's tag opening a line or bullet ("- [fix] Move the build out of `step()`")
_TAG_LABEL = re.compile(r"^[ \t]{0,3}(?:[-*+•][ \t]+)?\[(?P<w>[A-Za-z][\w '’-]{1,30})\][ \t]*:?[ \t]*(?=\S)", re.M)
_DASH = re.compile(r"\s(?:—|–|--)\s")
_SECTION_PREFIX = re.compile(r"^(?:appendix|part|section)\b\s*[\w.]{0,3}\s*[:—–-]\s*", re.I)  # "Appendix: the change"
_DASH_LABEL = re.compile(r"^[ \t]{0,3}(?:\d+[.)][ \t]*)?(?P<w>[A-Za-z][\w '’]{0,40}?)[ \t]+(?:—|–|--)[ \t]+(?=\S)", re.M)
_HEADING = re.compile(
    r"^[ \t]{0,3}(?:#{1,6}[ \t]*)?(?:\d+[.)][ \t]*)?(?:\*\*|__)?[ \t]*(?:\d+[.)][ \t]*)?" + _PART +
    r"[ \t]*(?:\*\*|__)?[ \t]*(?:\([^)\n]*\))?[ \t]*[.:]?[ \t]*(?:\*\*|__)?[ \t]*[.:]?[ \t]*(?=\S|$)", re.I | re.M)


def _key(word: str) -> str:
    w = word.strip().lower()
    return next((k for k, pat in _KEYS if pat.match(w)), "fix")


def _part_of(words: str) -> Optional[str]:
    """The part a label in other words names ("Short version" -> bottleneck, "What I'd do" -> fix, "Appendix: the
    change" -> fix), or None."""
    words = _SECTION_PREFIX.sub("", words).strip().rstrip(".:").strip()
    return next((k for k, pat in _KEYS if pat.match(words)), "fix" if _FIX_WORDS.match(words) else None)


def _free_headings(text: str) -> list[tuple[int, int, str]]:
    """(start, end, part) of headings written in other words, on a line of their own or as a bold label."""
    out = []
    for m in _BOLD_LABEL.finditer(text):
        words = m.group("w").strip()
        part = _part_of(words) or ("bottleneck" if re.fullmatch(r"(?:the )?bound", words.rstrip(".:"), re.I) else None)
        # "**Bound:** memory": the verdict (a plain "bound: host." opens a terse note's line, see _terse)
        if re.match(r"[ \t]*[-*+•][ \t]+", m.group(0)) and not re.search(r"[:.][ \t]*(?:\*\*|__)|(?:\*\*|__)[ \t]*:", m.group(0)):
            continue  # "- **Kernel median 736 ns** (...)": a bullet's emphasis; "- **Fix:** ...", "- **Change.**" label it
        if len(words.split()) <= 8 and (part is not None or re.fullmatch(r"[A-Z][\w '’-]*[.:]?", words.rstrip(".:"))):
            out.append((m.start(), m.end(), part or "other"))  # "**Arithmetic.**": a section of its own
    taken = {a for a, _, _ in out}
    labels = sorted([*_PLAIN_LABEL.finditer(text), *_DASH_LABEL.finditer(text), *_TAG_LABEL.finditer(text)],
                    key=lambda m: m.start())
    plain: list[tuple[int, int, str]] = []
    for m in labels:  # "What I'd do: pin the tensor ...", "What I looked at (nsys): ...", "Fix — remove the ..."
        if m.start() in taken or any(a <= m.start() < b for a, b, _ in out + plain):
            continue  # (a numbered line read both as "N. Label:" and "N) Label —" is one label)
        dash = _DASH.search(m.group("w"))  # "Evidence — nsys, 20 steps (37.97 ms): ...": the label
        words = m.group("w")[:dash.start() if dash else None].split("(")[0].strip()
        part = _part_of(words)
        end = m.start("w") + dash.end() if dash and not m.group("w")[:dash.start()].count("(") else m.end()  # is one word
        if part is not None and len(words.split()) <= 6:
            plain.append((m.start(), end, part))
    if len({p for _, _, p in plain}) >= 2:  # labels in other words are the layout only when they name two parts;
        out += plain  # one "The numbers: ..." in a chat reply is a sentence of it
        taken |= {a for a, _, _ in plain}
    top = min((len(m.group(0).lstrip()) - len(m.group(0).lstrip().lstrip("#")) for m in _FREE_HEADING.finditer(text)
               if m.group("h") and _part_of(m.group("h").strip().rstrip(":"))), default=1)
    for m in _FREE_HEADING.finditer(text):
        if m.start() in taken:
            continue
        part = _part_of((m.group("h") or m.group("b") or "").strip().rstrip(":"))
        level = len(m.group(0).lstrip()) - len(m.group(0).lstrip().lstrip("#"))
        if part is not None or (m.group("h") and level <= top):  # "## Where the time goes": a section of its own,
            out.append((m.start(), m.end(), part or "other"))  # unless it is a subsection of a part ("### nsys")
    return out + _sibling_bullets(text, out)


_BULLET_LINE = re.compile(r"^([ \t]*)[-*+•][ \t]+", re.M)


def _sibling_bullets(text: str, heads: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """In a list of labelled bullets ("- **Limiter:** ...", "- **Fix:** ..."), a bullet of the same list without a
    label is a section in other words: it does not belong to the labelled bullet before it."""
    starts = {a for a, _, _ in heads}
    bullets = list(_BULLET_LINE.finditer(text))
    parts = {a for a, _, p in heads if p != "other"}  # the bullets labelled with a part's name
    labelled = {len(m.group(1)) for m in bullets if m.start() in parts}
    return [(m.start(), m.end(), "other") for m in bullets
            if len(m.group(1)) in labelled and m.start() not in starts]


def parse_answer(text: str) -> Answer:
    """An Answer from JSON (analyze --json, ask --json, submit_answer input) or a Markdown four-part answer (after
    `clean`)."""
    if not isinstance(text, str) or not text.strip():
        raise AnswerFormatError("the answer is empty: give Diagnosis JSON or Markdown with ## Bottleneck, "
                                "## Evidence, ## Mechanism and ## Fix")
    body = unfence(text)
    if body.startswith("{"):
        try:
            return answer_of_json(body)
        except AnswerFormatError as e:  # JSON with keys of its own: its labelled text, if that reads as four parts
            data = json_object(body)
            if data is None:
                raise
            try:
                return _parse_markdown(clean(as_labelled_text(data)))
            except AnswerFormatError:
                raise e from None
    return _parse_markdown(clean(text))


# the fix's bold label after a sentence on the same line ("... essentially done. **Change:** leave it."): a new part
_INLINE_LABEL = re.compile(r"(?<=[.!?])[ \t]+(?=(?:\*\*|__)(?:the )?(?:change|fix)"
                           r"[^*_\n]{0,30}?:?(?:\*\*|__))", re.I)


def _line_is_heading(text: str, m: re.Match) -> bool:
    """A heading is a whole line (`## Fix`) or a label followed by a colon or emphasis (`**Fix:** ...`)."""
    line_end = text.find("\n", m.start())
    line = text[m.start(): len(text) if line_end < 0 else line_end]
    head = m.group(0).strip()
    if head.startswith("#") or head.endswith(":") or \
            re.search(r"(\*\*|__)[.:]?(\s*\([^)\n]*\))?[.:]?$", head) and re.match(r"(\d+[.)]\s*)?(\*\*|__)", head):
        return True
    if head.endswith(".") and re.match(r"\d+[.)]\s*(\*\*|__)?\s*\w", head):  # "3. Mechanism." (a numbered part)
        return True
    if re.fullmatch(_PART + r"\.", head, re.I):  # "Fix. Load and store float4 ...", "Change. Take the ..."
        return True
    return line.strip().lower().strip("*_ ").rstrip(":.") == m.group(1).lower()


_GREETING = re.compile(r"\A\s*(?:(?:subject|to|from|cc):[^\n]*\n\s*)*(?:(?:hi|hello|hey|dear)\b[^\n]{0,40},?[ \t]*\n)?", re.I)
_SIGN_OFF = re.compile(r"\n\s*\n[ \t]*(?:best|thanks|thank you|cheers|regards|kind regards|best regards|--)\b[^\n]{0,30}"
                       r"(?:\n[^\n]{0,40}){0,2}\s*\Z", re.I)


def _unframe(text: str) -> str:
    """A letter's frame (subject line, greeting, sign-off) is no part of the answer."""
    return _SIGN_OFF.sub("", _GREETING.sub("", text, count=1), count=1)


_CHECKBOX = re.compile(r"^([ \t]*[-*+][ \t]+)\[[ xX]\][ \t]*", re.M)  # "- [x] **Bound:** host": a checklist item


_HEADING_SAYS = re.compile(r"[ \t]{0,3}#{1,6}[ \t]*[A-Za-z][\w '’-]{0,30}:[ \t]*(\S[^\n]{3,})$")  # "## Verdict: near peak"
_EXPLAINS = re.compile(r"(?:the )?(?:floor|roofline|arithmetic|math|gap|ceiling)s?|speed[- ]of[- ]light", re.I)
_FIX_TAIL = re.compile(r"^[\s#*_\d.)+•-]*(?:metrics?|outcome|predict\w*|verif\w*|validat\w*|success|result|target|"
                       r"what (?:should|will) (?:move|change))\b", re.I)
_WEAK_VERDICT = re.compile(r"status|summary|tl;?dr|short version|in (?:short|brief)|headline", re.I)
_STRONG_VERDICT = re.compile(r"what(?:'s| is)? (?:limits|limiting)|bottleneck|limiter|remaining (?:bottleneck|limit)|"
                             r"verdict|limiting factor", re.I)
_APPENDIX = re.compile(r"[\s#*_]*appendix\b", re.I)
_FENCE = re.compile(r"^[ \t]*```.*?^[ \t]*```", re.M | re.S)


def _parse_markdown(text: str) -> Answer:
    text = _INLINE_LABEL.sub("\n\n", _CHECKBOX.sub(r"\1", _unframe(text)))
    found = [(m.start(), m.end(), _key(m.group(1))) for m in _HEADING.finditer(text) if _line_is_heading(text, m)]
    taken = {a for a, _, _ in found}
    heads = sorted(found + [h for h in _free_headings(text) if h[0] not in taken])
    fences = [m.span() for m in _FENCE.finditer(text)]  # "# or: a.bfloat16() @ b" in a code block is no heading
    heads = [h for h in heads if not any(a < h[0] < b for a, b in fences)]
    heads = [(a, b, "fix") if part == "other" and i and heads[i - 1][2] == "fix" and _FIX_TAIL.search(text[a:b]) else
             (a, b, part) for i, (a, b, part) in enumerate(heads)]  # "**Change:** ..." then "**Metric:** ...": the
    # metric that should move, told after the change, is the fix's
    heads = [h for i, h in enumerate(heads) if not (h[2] == "other" and i and heads[i - 1][2] != "other" and
                                                     not text[heads[i - 1][1]:h[0]].strip())]
    # "## What's limiting X" then "**Register spilling.** ...": the label opens the part's text
    if any(p == "bottleneck" for _, _, p in heads):  # "**Floor.** ..." before "**Bound:** ...": the roofline
        heads = [(a, b, "mechanism") if p == "other" and _EXPLAINS.fullmatch(text[a:b].strip(" \t\n#*_:.")) else (a, b, p)
                 for a, b, p in heads]  # arithmetic explains the verdict the answer labels
    while heads and heads[0][2] == "other":  # a label in other words before any part ("**Context:**") starts nothing
        heads = heads[1:]
    last_other = text[heads[-1][1]:].strip() if heads and heads[-1][2] == "other" and len(heads) > 1 else ""
    sections: dict[str, str] = {}
    titled: dict[str, str] = {}
    verdicts = []  # (heading, body) of each part read as the bottleneck
    for i, (start, end, part) in enumerate(heads):
        stop = heads[i + 1][0] if i + 1 < len(heads) else len(text)
        body = text[end:stop].strip()
        if part == "bottleneck" and body:
            verdicts.append((text[start:end], body))
        said = _HEADING_SAYS.match(text[start:end])
        if said and part != "other":  # "## Diagnosis: stream_scale is compute-bound": the heading states the part
            titled.setdefault(part, said.group(1).strip())
        if not sections.get(part):  # the first heading of a part with text under it ("# Diagnosis" titles nothing)
            sections[part] = body
        elif part in ("fix", "mechanism", "other") and body:  # "Fix: ..." then "Expected: ...": one fix in two labelled lines;
            sections[part] += "\n\n" + body  # "**Duration:** ...", "**Memory:** ...": sections in other words
    strong = [b for h, b in verdicts[1:] if _STRONG_VERDICT.search(h) and not _APPENDIX.match(h)]  # "**Appendix B:
    # what limits it now**" under an executive summary: the appendix backs the summary's verdict
    if verdicts and strong and _WEAK_VERDICT.search(verdicts[0][0]) and not _STRONG_VERDICT.search(verdicts[0][0]):
        # "## Status of the fix" then "## What limits it now": the limit is the verdict, the status its evidence
        sections["evidence"] = (verdicts[0][1] + "\n\n" + sections.get("evidence", "")).strip()
        sections["bottleneck"] = strong[0]
    for part, said in titled.items():
        if said not in sections.get(part, ""):
            sections[part] = (said.rstrip(".") + ". " + sections.get(part, "")).strip()
    sections.update(unlabelled(text[:heads[0][0]] if heads else text, heads[0][2] if heads else None, sections))
    if "evidence" not in sections:  # a table of measurements under another part, else before the first heading
        for part, body in list(sections.items()) + [(None, text)]:
            rows = [line for line in body.splitlines() if line.strip().startswith("|")]
            if len(rows) >= 3:
                sections["evidence"] = "\n".join(rows)
                if part is not None:
                    sections[part] = "\n".join(line for line in body.splitlines() if not line.strip().startswith("|"))
                break
    if not sections.get("fix") and _FIX_HINT.search(last_other):
        sections["fix"] = last_other  # "**What's left:** ... could push DRAM to 85%": the last section says what to do
    title = _TITLE.match(text[:heads[0][0]] if heads else "")
    verdict_head = next((h for h in re.findall(r"^#{1,6}[ \t]+([^\n]+)", text, re.M) if _BOUND.search(h)), None)
    if not sections.get("bottleneck") and verdict_head:  # "## Steady state: ..., memory-bound on uncoalesced loads"
        sections["bottleneck"] = verdict_head.strip()  # under "# ot_py_triton_jit: steady state vs one-time"
    elif not sections.get("bottleneck") and title and len((title.group(1) or title.group(2)).split()) >= 4:
        sections["bottleneck"] = (title.group(1) or title.group(2)).strip()  # "### refine: divergent trip counts"
    other = sections.pop("other", "")
    if other:  # a section in other words ("**Arithmetic.**", "**Gap to the roofline:**") after the first part explains
        why = sections.get("mechanism") or _explaining(sections.get("bottleneck", ""))  # "**Bound:** compute. The
        # HMMA pipe is busy 93% ...": without a mechanism part, the verdict's own explanation is the mechanism's start
        sections["mechanism"] = (why + "\n\n" + other).strip()
    if other and not sections.get("evidence") and len([x for x in sentences(other) if numbers_of(x)]) >= 2:
        sections["evidence"] = other  # "**Duration:** 143.6 us ...", "**Memory:** ...": measurements in other words
    if not heads:
        sections.update(terse(text))
    else:
        _fill(sections)
    said = len(re.findall(r"[A-Za-z]{3,}", scrub(sections.get("mechanism", ""))))
    if sections.get("evidence") and said < 10 and \
            len(re.findall(r"[A-Za-z]{3,}", sections["evidence"])) >= 25:  # a terse note explains inside its verdict
        sections["mechanism"] = "\n".join(sections.get(p, "") for p in ("bottleneck", "mechanism", "evidence")).strip()
        # and its evidence lines ("indexed by hash -> lives on the stack"), its mechanism line only closes the gap
    _fix_first(sections)
    head = sections.get("bottleneck", "")
    hypothesis = accepted_hypothesis(text) if opens_a_hypothesis(head) or "?" in scrub(head) else None  # (a question
    # read as the verdict: the log's answer is)
    if hypothesis:  # a log that opens with a hypothesis it rejects: its verdict is the one it accepts
        mech = sections.get("mechanism", "")
        if mech.strip() in (head.strip(), "") or opens_a_hypothesis(mech):  # and a log read as paragraphs: its title is no
            sections["mechanism"] = accepted_block(text) or ""  # mechanism, the hypothesis it accepts explains
        sections["bottleneck"] = hypothesis
    if not all(sections.get(p, "").strip() for p in ORDER) or not numbers_of(sections.get("evidence", "")):
        by_role = read_roles(text)  # a part the layout leaves unnamed (or evidence without a number): read by role
        for part, body in by_role.items():
            if not sections.get(part, "").strip() or (part == "evidence" and not numbers_of(sections.get(part, ""))):
                sections[part] = body
    if sections and not sections.get("fix", "").strip():  # "- The ask: launch one program per block ... Expect DRAM
        found = last_proposal(text)  # throughput to climb from 5.5 % to roughly 70 %": a fix under a label of its own
        if found:
            sections["fix"] = found[0]
    if not sections:
        raise AnswerFormatError("the answer has none of the headings Bottleneck, Evidence, Mechanism, Fix "
                                "(as ## headings, **bold:** labels or plain 'Label:' lines), is not JSON, and has "
                                f"fewer than {len(ORDER)} paragraphs to read in that order")
    return _answer_of(sections)


def _answer_of(sections: dict[str, str]) -> Answer:
    """The Answer of the four parts read from a text."""
    fix = sections.get("fix", "")
    metric, direction = fix_metric_direction(fix)
    kern = re.search(r"`([A-Za-z_][\w:<>]*)", sections.get("bottleneck", ""))
    return Answer(kernel=kern.group(1) if kern else None, bottleneck=sections.get("bottleneck", ""),
                  evidence=parse_evidence(sections.get("evidence", "")), explanation=sections.get("mechanism", ""),
                  fix=Fix(change=fix, metric=metric, direction=direction) if fix.strip() else None)


def read_by_role(text: str) -> Optional[Answer]:
    """A second reading of a Markdown answer: the four parts from what each sentence does, whatever its layout says
    (roles.py); other JSON is read as its labelled text. None for an Answer's JSON (read by its schema only) and for
    a text that reading cannot split into four parts."""
    if not isinstance(text, str):
        return None
    if text.strip().startswith(("{", "```")):
        data = json_object(text)
        if data is None or _is_answer(text):
            return None
        text = as_labelled_text(data)
    sections = read_roles(_CHECKBOX.sub(r"\1", _unframe(clean(text))))
    if not all(sections.get(p, "").strip() for p in ORDER):
        return None
    return _answer_of(sections)


def _is_answer(text: str) -> bool:
    try:
        return bool(answer_of_json(unfence(text)))
    except AnswerFormatError:
        return False


def _explaining(bottleneck: str) -> str:
    """What a bottleneck part says after its verdict sentence (empty for a one-sentence verdict)."""
    said = sentences(bottleneck)
    return " ".join(said[1:]) if len(said) > 1 else ""


_FIX_HINT = re.compile(r"\b(should|could|would|expect\w*|I['’]?d|recommend\w*|leave it|switch|replace|use)\b", re.I)
_TITLE = re.compile(r"\s*(?:#{1,6}[ \t]+([^\n]+)|\*\*([^\n]+?)\*\*\.?)[ \t]*\n")  # a title line before the parts


def _fix_first(sections: dict[str, str]) -> None:
    """An answer that leads with the change ("Hoist the cudaMalloc out of the loop: ..."): the opening read as the
    bottleneck says what to do and gives no verdict; it is the fix, a later part that proposes nothing (a caveat, the
    roofline arithmetic) explains, and the verdict is the first sentence elsewhere that names the bound."""
    head = sections.get("bottleneck", "")
    first = next(iter(sentences(head)), "")
    if not first or not opens_with_a_change(first) or _VERDICT.search(first) or _LEAVE_IT.search(first):
        return  # ("I'd leave this kernel alone.": the verdict that it is done, not a change)
    fix = sections.get("fix", "")
    if fix and any(says_what_to_do(x) for x in sentences(fix)[:1]):
        return  # the answer has a fix of its own: the opening is advice before the verdict, not the fix
    rest = [x for p in ("evidence", "mechanism") for x in sentences(sections.get(p, ""))]
    verdict = next((x for x in rest if _BOUND.search(x)), "")
    sections["fix"] = head
    if fix:
        sections["mechanism"] = (sections.get("mechanism", "") + "\n\n" + fix).strip()
    sections["bottleneck"] = re.sub(r"^\s*(?:[-*+•]|\d+[.)])\s+", "", verdict).strip()


_LEAVE_IT = re.compile(r"\bleave (?:it|this|that|the)(?: [\w`]+){0,2} (?:alone|as it is|as is)\b", re.I)


def _fill(sections: dict[str, str]) -> None:
    """Parts a labelled answer leaves unlabelled, read from the parts it labels: a bottleneck of several paragraphs
    (its first sentence the verdict, its paragraphs the measurements and the reasons); measurement bullets under
    the mechanism ("Why: ... - ncu: grid 24 x 512 ..."), the evidence; a mechanism whose first sentence states the
    verdict, the bottleneck."""
    paras = paragraphs(sections.get("bottleneck", ""))
    if len(paras) >= 2 and not sections.get("evidence") and not sections.get("mechanism"):
        sections["bottleneck"] = next(iter(sentences(paras[0])), paras[0])
        sections["evidence"] = sections["mechanism"] = "\n\n".join(paras)
        listed = [i > 0 and paras[i - 1].rstrip().endswith(":") and any(BULLET.match(x) for x in p.splitlines())
                  for i, p in enumerate(paras)]  # a list announced by "...has to get off the critical path:"
        prose = [x for p, lst in zip(paras, listed) if not lst for x in sentences(p) if numbers_of(x)]
        if len(prose) >= 2 and any(listed):  # "1. Move it to the GPU ...", "2. If it must ..." after the
            sections["evidence"] = "\n".join(f"- {x.strip()}" for x in prose)  # measured prose: steps of the
            # change, not the measurements
    mech = sections.get("mechanism", "")
    if not sections.get("evidence"):
        rows = [line for part in ("bottleneck", "mechanism") for line in sections.get(part, "").splitlines()
                if BULLET.match(line) and numbers_of(line)] or \
            [x for x in sentences(mech) if len(numbers_of(x)) >= 2]  # a paragraph of reasons that cites its numbers
        if len(rows) >= 2:
            sections["evidence"] = "\n".join(rows)
    if not sections.get("bottleneck") and mech:
        first = next(iter(sentences(mech)), "")
        if _VERDICT.search(first):
            sections["bottleneck"] = first
    if not _VERDICT.search(sections.get("bottleneck", "")):  # "compile_tiny / steady state" titles the note;
        for part in ("evidence", "mechanism"):  # "bound: host, launch overhead (...)" among its lines is the verdict
            lines = sections.get(part, "").splitlines()
            at = next((i for i, x in enumerate(lines) if VERDICT_LABEL.match(x)), None)
            if at is not None:
                sections["bottleneck"] = titled(sections.get("bottleneck", ""), lines[at].strip())
                sections[part] = "\n".join(lines[:at] + lines[at + 1:])
                break
    if not sections.get("bottleneck"):  # "So the kernel is instruction-bound on shuffles, ..." among the findings
        said = [x for part in ("evidence", "mechanism") for x in sentences(sections.get(part, ""))]
        sections["bottleneck"] = next((x.strip(" -*") for x in said if _VERDICT.search(x)), "")
