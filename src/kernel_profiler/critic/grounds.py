"""What a rejection rests on: a measurement that contradicts the answer, or only what the critic could not confirm.

A check refuses an answer for one of two kinds of reason:
  contradicted   the captures measure something the answer gets wrong: its mechanism's signature is absent, its bound
                 disagrees with the timeline, a number written as a metric's value is not that value, a device ceiling
                 is presented as achieved, written arithmetic does not hold, its fix moves its metric the wrong way,
                 or the text addresses the reviewer;
  unconfirmed    the critic's reading found no support: a number its words do not bind to a value the captures hold
                 (the binding of words to a metric is the reader's inference), a causal chain, a fix's metric or
                 direction it did not find, a part it did not find.
A rejection with no contradicted reason is `unconfirmed`: a model reviewer, where one is available, settles it from
the tool results (agent.orchestrator); without one, the rejection stands.
"""
from __future__ import annotations

import re
from typing import Literal, Optional

from .fixes import A_SETTING, NO_DIRECTION, NO_METRIC, UNMEASURED
from .number_check import UNBOUND

Grounds = Literal["contradicted", "unconfirmed"]

# checks whose every reason is a reading the critic could not make
_READING_CHECKS = frozenset({"parts", "not_a_dump", "mechanism"})
# the numbers check's reasons that rest on binding a number to a metric through its sentence's words
_UNBOUND_NUMBER = re.compile(r"^The (?:number|bound) '[^']*' in the \w+ \('.*'\) (?:" + "|".join(map(re.escape, UNBOUND)) +
                             ")", re.S)
# the fix check's reasons that say what the reader did not find in the fix
_UNREAD_FIX = re.compile(re.escape(NO_METRIC) + "|" + re.escape(NO_DIRECTION) + r"|^The fix's metric '[^']*' (?:" +
                         re.escape(UNMEASURED) + "|" + re.escape(A_SETTING) + ")")


# what `critique` prints after REJECT
SAID = {"contradicted": " (contradicted by the captures)",
        "unconfirmed": " (unconfirmed: no measurement contradicts the answer, but the checks could not confirm what "
                       "follows; with a Claude key, `ask` has the model reviewer settle such a rejection)"}


def unconfirmed(check: str, reason: str) -> bool:
    """Whether one reason of a check says only that the critic could not confirm something."""
    if check in _READING_CHECKS:
        return True
    if check == "numbers":
        return bool(_UNBOUND_NUMBER.match(reason))
    if check == "fix":
        return bool(_UNREAD_FIX.match(reason))
    return False


def grounds(failed: dict[str, list[str]]) -> Optional[Grounds]:
    """What a verdict's rejection rests on (None for an acceptance)."""
    if not failed:
        return None
    return "unconfirmed" if all(unconfirmed(k, r) for k, rs in failed.items() for r in rs) else "contradicted"
