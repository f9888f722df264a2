"""Notes with no headings: a first line (the verdict), a list of measurements, and the paragraphs after it
("saxpy (fixed), ncu:" then "- grid 16 ...", "=> latency-bound: ...", "fix: ..."); a plain "bound: host, ..." line
states the verdict."""
from __future__ import annotations

import re

from .evidence_lines import BULLET
from .paragraphs import LABEL
from .roles import ADDRESS, BOUND as _BOUND, FIX_START, VERDICT as _VERDICT, says_what_to_do


def terse(text: str) -> dict[str, str]:
    """A note with no headings: a first line (the bottleneck), a list of measurements (the evidence), and the
    paragraphs after it (the last one is the fix, any before it the mechanism)."""
    blocks = [b.strip() for b in re.split(r"\n[ \t]*\n", text or "") if b.strip()]
    if len(blocks) > 1 and "\n" not in blocks[0] and ADDRESS.match(blocks[0]):
        blocks = blocks[1:]  # "@perf-team re: the capture": addresses the note, gives no verdict
    lists = [i for i, b in enumerate(blocks) if sum(bool(BULLET.match(x)) for x in b.splitlines()) >= 2]
    labelled = bool(lists) and _BULLET_LABEL.match(blocks[lists[0]].splitlines()[0])  # "- bottleneck: ..." first
    lone = bool(lists) and not lists[0] and not BULLET.match(blocks[0].splitlines()[0])  # "verdict\n- ...\n- ..."
    if not lists or (len(blocks) < 2 and not labelled and not lone):
        return {}
    if lists[0] >= 2 and says_what_to_do(blocks[lists[0]].splitlines()[0]) and not labelled:
        return {}  # "What I would do:\n1. ...\n2. ..." after the verdict and the measurements: the list is the fix
    i = lists[0]
    head = [b for b in blocks[:i] if not b.startswith("#")] or blocks[:i] or [blocks[i].splitlines()[0]]
    # ("# mr_host_slow — summary" titles the note; the paragraph under it gives the verdict)
    body = blocks[i] if i or labelled else "\n".join(blocks[i].splitlines()[1:])
    after = blocks[i + 1:]
    out = {"bottleneck": LABEL.sub("", head[0], count=1).strip()}
    verdict = next((x for x in body.splitlines() if (_BOUND.search(x) or VERDICT_LABEL.match(x) and not BULLET.match(x))
                    and not _VERDICT.search(head[0])), None)
    if verdict is not None:  # "saxpy (fixed), ncu:" heads the note; "=> latency-bound: ..." is its verdict
        m = BULLET.match(verdict)
        out["bottleneck"] = re.sub(r"^\W*", "", m.group(1) if m else verdict).strip()
        if not _BOUND.search(verdict):  # "bound: host, ..." under "compile_tiny / steady state": the title names
            out["bottleneck"] = titled(head[0], out["bottleneck"])  # what the verdict is about
    if after:  # the fix runs from the block that opens with it ("fix → ...", "The fix is ...") to the end, a caveat
        at = next((j for j, b in enumerate(after) if FIX_START.match(b)), len(after) - 1)  # after it included
        out["fix"] = LABEL.sub("", "\n\n".join(after[at:]), count=1).strip()
        if after[:at]:
            out["mechanism"] = "\n\n".join(after[:at])
    rest = []
    last = None
    for line in body.splitlines():  # "- bottleneck: ...", "- cause: ...", "- change: ..." as labelled items
        m = _BULLET_LABEL.match(line)
        part = _BULLET_PARTS.get(m.group(1).lower()) if m else None
        if part is None and last is not None and line[:1].isspace() and line.strip() and not BULLET.match(line):
            out[last] += " " + line.strip()  # a labelled item wrapped onto the next, indented line
            continue
        last = part
        if part is None:
            rest.append(line)
        elif part == "bottleneck" and ((len(head) == 1 and not i) or head[0].lstrip().startswith("#")):
            out["bottleneck"] = line[m.end():].strip()
        else:
            said = line[m.end():].strip()
            if m.group(1).lower() == "cause":  # "- Cause: ... (uncoalesced), wasting DRAM bandwidth": a line that
                said = f"Cause: {said}"  # names the cause, kept with its label (claim.claimed_mechanism reads it)
            out[part] = (out.get(part, "") + "\n" + said).strip()
    out["evidence"] = "\n".join(rest)
    return out


VERDICT_LABEL = re.compile(r"^\W*(?:bound|verdict)\s*[:=]", re.I)  # "bound: host, launch overhead"


def titled(title: str, verdict: str) -> str:
    """A verdict line under the note's short title ("transpose_once — notes"), the title kept on a line of its own:
    it names what the verdict is about."""
    short = title.strip() and "\n" not in title.strip() and len(title.split()) <= 8
    return f"{title.strip()}\n{verdict}" if short else verdict
_BULLET_LABEL = re.compile(r"^\s*[-*+•]\s+(?:\*\*|__)?(bottleneck|bound|cause|why(?: it matters)?|mechanism|roofline|floor|gap|"
                           r"change|fix|expect(?:ed)?|expectation)"
                           r"\s*(?:\*\*|__)?\s*(?::|→|->|\.)\s*(?:\*\*|__)?\s*", re.I)  # "- **Fix.** ..."
_BULLET_PARTS = {"bottleneck": "bottleneck", "bound": "bottleneck", "cause": "mechanism", "why": "mechanism",
                 "why it matters": "mechanism", "mechanism": "mechanism", "roofline": "mechanism", "floor": "mechanism",
                 "gap": "mechanism", "change": "fix", "fix": "fix", "expect": "fix", "expected": "fix",
                 "expectation": "fix"}  # a roofline line ties the cause to the gap
