"""Tool results as a model reads them: the same facts in fewer tokens.

The transcript keeps every tool result whole; only the copy sent to a language model is compacted:
  * compact JSON (no spaces), null / empty fields left out;
  * floats rounded to SIG_DIGITS significant digits (the critic matches cited numbers within 2%, so a number
    copied from a compacted result still checks against the captures);
  * a kernel's full (demangled) name is shown at its first mention in the conversation, its short key after;
    a capture's absolute path likewise, then its file name;
  * a block repeated from earlier (the roofline inside a finding, a timeline row listed twice) is replaced by a
    reference to where it was first shown;
  * each result is capped at RESULT_CHARS characters, far under the token budget of a whole diagnosis;
  * the reviewer's copy (`Compactor(drop=STEERING_KEYS)`) leaves out what only steers the investigation (the next
    step, how a capture was read, ncu launch planning): it judges the answer against the measurements.
`Compactor` is stateful over one conversation and deterministic, so the same history always compacts to the
same text (the prompt-cache prefix stays stable from one request to the next).
"""
from __future__ import annotations

import json
import math
from typing import Any

from ..kernel_name import KernelName

SIG_DIGITS = 4
RESULT_CHARS = 6_000  # ~1.5-2k tokens: one result never eats a diagnosis's budget (15k input tokens)
_MIN_DEDUP_KEYS = 6  # only blocks this large (a roofline, a finding) are replaced by a reference
# Keys of the tools' outputs that tell the investigator what to do next or how a capture was read, not what was
# measured (timeline.next_step/launches/mode, kernel_profile.note/sass_available).
STEERING_KEYS = frozenset({"next_step", "launches", "mode", "note", "sass_available"})


def round_sig(x: float, digits: int = SIG_DIGITS) -> float | int:
    """`x` rounded to `digits` significant digits; an integral result is returned as int (1709856.0 -> 1710000)."""
    if not math.isfinite(x):
        return x
    if x == 0:
        return 0
    r = round(x, digits - 1 - int(math.floor(math.log10(abs(x)))))
    return int(r) if float(r).is_integer() and abs(r) < 2**53 else r


def _is_kernel_name(s: str) -> bool:
    return len(s) > 24 and ("(" in s or "<" in s) and KernelName(s).qualified != s


def _is_path(s: str) -> bool:
    return len(s) > 24 and s.startswith("/") and "/" in s[1:] and " " not in s


class Compactor:
    """Compacts the tool results of one conversation, in order."""

    def __init__(self, drop: frozenset[str] = frozenset()) -> None:
        self.drop = drop  # keys left out wherever they occur
        self.named: set[str] = set()  # kernel names already shown in full
        self.blocks: dict[str, str] = {}  # canonical JSON of a block -> where it was first shown

    def __call__(self, tool: str, content: Any) -> str:
        slim = self._walk(content, tool)
        text = json.dumps(slim, separators=(",", ":"), ensure_ascii=False, default=str) \
            if not isinstance(slim, str) else slim
        if len(text) > RESULT_CHARS:
            text = text[:RESULT_CHARS] + f"...[cut: {len(text) - RESULT_CHARS} more characters]"
        return text

    def _walk(self, v: Any, path: str) -> Any:
        if isinstance(v, bool) or v is None or isinstance(v, int):
            return v
        if isinstance(v, float):
            return round_sig(v)
        if isinstance(v, str):
            if _is_kernel_name(v):
                if v in self.named:
                    return KernelName(v).qualified
                self.named.add(v)
            elif _is_path(v):  # a capture's path: in full once, then its file name
                if v in self.named:
                    return v.rsplit("/", 1)[1]
                self.named.add(v)
            return v
        if isinstance(v, list):
            return [self._walk(x, f"{path}[{i}]") for i, x in enumerate(v)]
        if isinstance(v, dict):
            if len(v) >= _MIN_DEDUP_KEYS:
                key = json.dumps(v, sort_keys=True, default=str)
                if key in self.blocks:
                    return f"(same as {self.blocks[key]})"
                self.blocks[key] = path
            out = {}
            for k, x in v.items():
                if x is None or x == [] or x == {} or x == "" or k in self.drop:
                    continue
                out[k] = self._walk(x, f"{path}.{k}")
            # a kernel row's `key` repeats its name's short form: drop it once the name is known
            if isinstance(out.get("key"), str) and isinstance(v.get("name"), str) and out["key"] == KernelName(v["name"]).qualified:
                out.pop("key")
            return out
        return v
