"""A hypothesis log ("H1: ...  **Rejected**", "H3: ... **Accepted: latency-bound on scalar loads.**"): its verdict is
the one hypothesis it accepts, not the first it lists."""
from __future__ import annotations

import re
from typing import Optional

_HEAD = re.compile(r"^[ \t>#*_-]*(?:H\d{1,2}|Hypothesis\s*\d{1,2})\b|^[ \t]*#\d{1,2}\b", re.I | re.M)  # ("#3 ...")
# a log of numbered questions ("1. Is the occupancy cap still there? ... -> No.", "3. *Launch overhead?* ... **This is
# it.**"): its items are its hypotheses when two of them or more open with a question
_ITEM = re.compile(r"^[ \t]{0,3}\d{1,2}[.)][ \t]+", re.M)
_QUESTION = re.compile(r"[ \t]{0,3}\d{1,2}[.)][ \t]+[*_]{0,2}[^\n?]{2,80}\?")
_YES = re.compile(r"(?:\*\*|__)?\s*\b(?:accepted|confirmed|supported)\b\s*(?:\*\*|__)?\s*[:.!—–-]|✔\s*this is|"
                  r"\bthis is the (?:limiter|bottleneck|cause)\b|\bthis is it\b", re.I)


_ANSWERED_YES = re.compile(r"\s*(?:\*\*|__)?\s*(?:[—–-]+|->|→)?\s*(?:yes\b|✔|✓)", re.I)  # "**H3: not enough bytes in flight.** Yes. ..."


_BOLD_TITLE = re.compile(r"[ \t>#*_-]*?(?:\*\*|__)([^\n]*?)(?:\*\*|__)")  # "**H3: not enough bytes in flight.**"


def _after_title(block: str) -> str:
    """A hypothesis's text after its title (its bold part, else its first line)."""
    bold = _BOLD_TITLE.match(block)
    if bold:
        return block[bold.end():]
    question = _QUESTION.match(block)
    return block[question.end():] if question else block.split("\n", 1)[-1]  # ("3. Occupancy-bound? YES.")


def opens_a_hypothesis(text: str) -> bool:
    """Whether a part opens with a hypothesis of a log ("**H0 — global atomic contention ...**"), or is the log's
    title ("# Hypothesis log: py_sync_per_op")."""
    return bool(_HEAD.match((text or "").lstrip()) or _QUESTION.match(text or "") or _LOG_TITLE.match(text or "") or
                REJECTED.match(text or ""))


# a hypothesis's verdict that rules it out: "-> rejected", and a part that is only that ("Verdict: rejected." under each
# hypothesis, read by the layout as the answer's verdict)
REJECTED = re.compile(r"\W*(?:->|→|=>)?\s*(?:rejected|ruled out|refuted|disproved)\b", re.I)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_LOG_TITLE = re.compile(r"[\s#*_>-]*(?:hypothes[ie]s\s+log|hypothes[ie]s)\b[^\n.]{0,120}$", re.I)


def accepted_hypothesis(text: str) -> Optional[str]:
    """The verdict of a log of two or more hypotheses, the last one it accepts: its title and the sentence that
    accepts it ("H3 — memory latency with too few bytes in flight. Accepted: latency-bound on scalar loads."); None
    for any other text."""
    block = accepted_block(text)
    if block is None:
        return None
    bold = _BOLD_TITLE.match(block.strip())
    question = _QUESTION.match(block)
    quoted = _QUOTED_TITLE.match(block)
    title = bold.group(1) if bold else question.group(0) if question else quoted.group(1) if quoted else \
        block.strip().splitlines()[0]
    title = re.sub(r"[*_#>]", "", title).strip().replace("?", ".", 1)  # ("Launch overhead? ... This is it.": the
    # accepted question is its claim)
    found = _YES.search(block)
    rest = block[found.start():] if found else _after_title(block)
    said = re.sub(r"[*_]", "", rest).strip().splitlines()[0].strip()
    if found and len(re.findall(r"[A-Za-z]{3,}", said)) <= 2:  # "... because allow_tf32=False. ACCEPTED.": the
        closed = _SENTENCE_END.split(" ".join(block[:found.start()].split()))[-1]  # the sentence it closes
        said = f"{closed} {said}"
    return f"{title.rstrip('.')}. {said}"


_QUOTED_TITLE = re.compile(r"\s*#\d{1,2}\s+[\"“]([^\"”\n]{2,80})[\"”]")  # '#3 "the math path" - ...'


def accepted_block(text: str) -> Optional[str]:
    """The hypothesis a log of two or more accepts (the last, when it confirms several), whole; None for any other
    text."""
    starts = [m.start() for m in _HEAD.finditer(text or "")]
    if len(starts) < 2:
        starts = [m.start() for m in _ITEM.finditer(text or "")]
        if sum(bool(_QUESTION.match(text, a)) for a in starts) < 2:
            return None
    blocks = [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]
    yes = [b for b in blocks if _YES.search(b) or _ANSWERED_YES.match(_after_title(b))]
    return yes[-1] if yes else None  # ("H1: the planted cause is gone -> CONFIRMED" ... "H4: issue-bound ->
    # CONFIRMED": the log closes on the one it ends with)
