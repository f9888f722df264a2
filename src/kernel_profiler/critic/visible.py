"""What a reader of an answer sees, and text written to the reviewer instead of the user.

- `clean` strips what a reader does not see (HTML comments, hidden elements, tags, zero-width and bidi characters)
  before any check, so keywords cannot be hidden from the user but shown to the critic.
- `addressed_to_reviewer` finds text written to the reviewer instead of the user (looked for in the raw text,
  hidden parts included).
"""
from __future__ import annotations

import re
from typing import Optional

_COMMENT = re.compile(r"<!--.*?(-->|$)", re.S)
_HIDDEN = re.compile(r"<(\w+)[^>]*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|hidden)[^>]*>.*?</\1\s*>",
                     re.S | re.I)
_TAG = re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>")
_INVISIBLE = re.compile("[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def clean(text: str) -> str:
    """What a reader of the rendered answer sees."""
    t = _COMMENT.sub(" ", text or "")
    t = _HIDDEN.sub(" ", t)
    t = _TAG.sub(" ", t)
    return _INVISIBLE.sub("", t)


_REVIEWER = re.compile(
    r"\b(?:critic|reviewer|grader|evaluator|judge|verifier|checker|auditor|(?:the |this )?(?:AI|LLM|language model|assistant))\b"
    r"[^.\n]{0,80}\b(?:accept|approve|pass|mark|rate|score|verdict|ignore|disregard|should|must|please|note)\b"
    r"|\b(?:accept|approve|pass)\b[^.\n]{0,40}\b(?:this|the) (?:answer|diagnosis|response)\b"
    r"|\bignore (?:all |any )?(?:previous|prior|above|earlier|the) (?:instructions|checks|rules)"
    r"|\bnote (?:to|for) (?:the )?(?:automated |automatic )?(?:critic|reviewer|grader|evaluator|review)|\bdear (?:critic|reviewer)\b"
    r"|\bautomated (?:review|grading|evaluation)\b[^.\n]{0,80}\b(?:accept|approve|pass|mark|flag)"
    r"|\b(?:mark|record|log|score|rate|flag|grade) (?:it|this|the answer|this answer)(?: as)? \W{0,2}(?:accept\w*|approved|"
    r"pass\w*|correct)\b"
    r"|\bwho(?:ever)?\s*(?:\(or whatever\)\s*)?(?:is|are)\s+(?:grading|reviewing|scoring|evaluating|judging)\b"
    r"|\bskip (?:the |all |any )?(?:numeric|numerical|number|remaining|critic['’]?s?|automated) (?:checks|verification)\b"
    r"|\b(?:critic|reviewer|grader|evaluator|judge|verifier|checker|auditor)s?\s*:"
    r"|\brequired parts\b[^.\n]{0,60}\b(?:are |is )?(?:present|included|covered|satisfied)",
    re.I)


def addressed_to_reviewer(raw: str) -> Optional[str]:
    m = _REVIEWER.search(raw or "")
    return m.group(0).strip() if m else None
