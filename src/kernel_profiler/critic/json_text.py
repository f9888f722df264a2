"""An answer given as JSON: an Answer by its schema, or, failing that, the labelled text it is.

`answer_of_json` reads every shape kernel-profiler writes. People also paste their findings as a JSON object with
keys of their own ({"verdict": ..., "measured": {...}, "change": ...}). Such an object is no Answer, but its keys
are labels and its values the text under them: `as_labelled_text` makes each top-level key a bold label ("**Metric
to watch:** ...", the verdict's key first), a nested object or list the bullets under it ("- duration: 267.8 us"
for "duration_us": 267.8), and form.py reads that text like any other answer. The critic's checks then apply to
the same words and numbers the JSON holds.
"""
from __future__ import annotations

import json
import re
from typing import Any, Optional

from pydantic import ValidationError

from ..answer import Answer, Diagnosis
from .answer import AnswerFormatError

_FENCE = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.S)


def answer_of_json(body: str) -> Answer:
    """Answer JSON in any shape kernel-profiler writes: `analyze --json` (a Diagnosis), `ask --json` (an AskResult),
    the `submit_answer` input, or the pre-1.2 ask answer (read by Answer's legacy reader)."""
    try:
        data = json.loads(body)
    except ValueError as e:
        raise AnswerFormatError(f"the answer looks like JSON but does not parse ({e})") from e
    if not isinstance(data, dict):
        raise AnswerFormatError("the answer JSON must be an object (an Answer, as `analyze --json` or `ask --json` "
                                "print it)")
    if "primary" in data:
        try:
            return Diagnosis.model_validate(data).as_answer()
        except ValidationError:
            pass  # read as the Answer it holds at its top level
    if "bottleneck" not in data and isinstance(data.get("answer"), dict):
        data = data["answer"]  # `ask --json` before schema 1.2 nested the answer
    try:
        return Answer.model_validate(data)
    except ValidationError as e:
        raise AnswerFormatError(f"the answer JSON is not an Answer ({e.error_count()} errors, first: "
                                f"{'.'.join(str(x) for x in e.errors()[0]['loc'])} {e.errors()[0]['msg']})") from None


def unfence(text: str) -> str:
    """The text inside a ```json fence that wraps the whole text, or the one fenced object of a text whose prose
    around it is short (a preface line, no headings); the text itself otherwise."""
    body = text.strip()
    fence = _FENCE.fullmatch(body)
    if fence:
        return fence.group(1)
    fences = list(_FENCE.finditer(body))  # "Structured diagnosis for `x`:" then one fenced object: the object
    if len(fences) == 1 and fences[0].group(1).startswith("{") and \
            len(body) - len(fences[0].group(0)) <= _PREFACE and "#" not in body[:fences[0].start()]:
        return _with_note(fences[0].group(1), body[fences[0].end():].strip(), short=True)
    if len(fences) == 1 and fences[0].group(1).startswith("{") and "#" not in body and fences[0].start() <= _PREFACE:
        noted = _with_note(fences[0].group(1), body[fences[0].end():].strip())  # an object with a note after it,
        if noted != fences[0].group(1):  # no headings: the note is the object's reasoning, under its own key
            return noted
    return body


def _with_note(obj: str, after: str, short: bool = False) -> str:
    """The fenced object with the prose written after it as its "note" ("Short version: the histogram is ..."), when
    it has none and is no Answer; the object as it is otherwise. `short`: a few lines after it, read as its
    reasoning only when the object gives none of its own (else a caveat: "One caveat: the permutation ...")."""
    data = json_object(obj) if after else None
    if isinstance(data, dict) and "note" not in data and not {"bottleneck", "primary"} & set(data) and \
            not (short and any(_EXPLAINS.match(str(k)) and len(str(v).split()) >= 5 for k, v in data.items())):
        data["note"] = re.sub(r"^(?:\*\*)?note(?:\*\*)?\s*:\s*(?:\*\*)?", "", after, flags=re.I)
        return json.dumps(data)
    return obj


_EXPLAINS = re.compile(r"(?:mechanism|explanation|why|reason\w*|cause)$", re.I)
_PREFACE = 600  # characters of prose around a fenced JSON object that still leave the object the answer


def json_object(text: str) -> Optional[dict]:
    """The object of a text that is one JSON object (fenced or not); None for anything else."""
    body = unfence(text)
    if not body.startswith("{"):
        return None
    try:
        data = json.loads(body)
    except ValueError:
        try:  # JSON as people write it by hand: // comments, bare keys, trailing commas, lines wrapped in a string
            data = json.loads(_lenient(body), strict=False)
        except ValueError:
            return None
    return data if isinstance(data, dict) else None


def _uncommented(line: str) -> str:
    """The line without a // comment that starts outside a string."""
    for m in re.finditer(r"//", line):
        if line.count('"', 0, m.start()) % 2 == 0:
            return line[:m.start()].rstrip()
    return line


def _lenient(body: str) -> str:
    body = "\n".join(_uncommented(line) for line in body.splitlines())
    body = re.sub(r'([{,]\s*)([A-Za-z_][\w-]*)\s*:', r'\1"\2":', body)  # bare keys
    return re.sub(r",(\s*[}\]])", r"\1", body)  # trailing commas


_METRIC_KEY = re.compile(r"__|\.")  # "gpu__dram_throughput", "dram__bytes.sum": a metric's name, kept as written
# a unit carried by the key ("duration_us": 267.8), written after the value instead
_KEY_UNIT = re.compile(r"[_ ](us|ms|ns|s|pct|percent|gb|mb|kb|tb|gbps|tbps|gb_s|tb_s|tflops|gflops)$", re.I)
_UNITS = {"pct": "%", "percent": "%", "gb": "GB", "mb": "MB", "kb": "KB", "tb": "TB", "gbps": "GB/s", "tbps": "TB/s",
          "gb_s": "GB/s", "tb_s": "TB/s", "tflops": "TFLOP/s", "gflops": "GFLOP/s"}


def _label(key: Any) -> str:
    key = str(key).strip()
    if _METRIC_KEY.search(key):
        return f"`{key}`"
    words = re.sub(r"[_\s]+", " ", _KEY_UNIT.sub("", key)).strip()
    return words[:1].upper() + words[1:]


def _unit(key: Any, value: Any) -> str:
    m = _KEY_UNIT.search(str(key))
    if not m or isinstance(value, (dict, list, bool)) or not isinstance(value, (int, float)):
        return ""
    return " " + _UNITS.get(m.group(1).lower(), m.group(1))


def _inline(value: Any) -> str:
    if isinstance(value, dict) and _RECORD <= set(value) and isinstance(value["value"], (int, float)):
        rest = {k: v for k, v in value.items() if k not in _RECORD | {"unit", "artifact", "source"}}
        where = value.get("artifact") or value.get("source")  # {"metric": m, "value": 486.8, "unit": "us"}: m = 486.8 us
        return (f"`{value['metric']}` = {value['value']}{' ' + str(value['unit']) if value.get('unit') else ''}"
                + (f" ({where})" if where else "") + ("; " + _inline(rest) if rest else ""))
    if isinstance(value, dict):
        return "; ".join(f"{_label(k).lower()}: {_inline(v)}{_unit(k, v)}" for k, v in value.items())
    if isinstance(value, list):
        return "; ".join(_inline(v) for v in value)
    return "" if value is None else str(value)


_RECORD = {"metric", "value"}  # an evidence record: a metric and its value


def _bullets(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [f"- {'' if v else 'not '}{_label(k).lower()}" if isinstance(v, bool) else  # "near_peak": false
                f"- {_label(k).lower()}: {_inline(v)}{_unit(k, v)}" for k, v in value.items()]  # is a statement
    return [f"- {_inline(v)}" for v in value]


# a key that states the verdict: read first, before metadata keys that also read as one ("bound": "comms")
_VERDICT_KEY = re.compile(r"^(bottleneck|verdict|diagnosis|summary|tl;?dr)$", re.I)


def as_labelled_text(data: dict) -> str:
    """The object as Markdown: a bold label per key, its text after it or its bullets below it; the verdict first."""
    blocks = []
    for key, value in sorted(data.items(), key=lambda kv: not _VERDICT_KEY.match(str(kv[0]).strip())):
        if isinstance(value, (dict, list)) and value:
            blocks.append(f"**{_label(key)}:**\n" + "\n".join(_bullets(value)))
        elif isinstance(value, str) and _ID.fullmatch(value.strip()) and _ID_KEY.match(str(key)):  # "mechanism": "shared_bank_conflicts": an id
            blocks.append(f"**{_label(key)}:** {value.strip().replace('_', ' ')}.")  # in words, not code
        else:
            blocks.append(f"**{_label(key)}:** {_inline(value)}{_unit(key, value)}")
    return "\n\n".join(blocks) + "\n"


_ID = re.compile(r"[a-z]+(?:_[a-z0-9]+)+")
_ID_KEY = re.compile(r"(?:mechanism|bound|cause|limiter|category)s?$", re.I)
