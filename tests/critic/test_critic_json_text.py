"""An answer pasted as JSON with keys of its own (issue 10, item 4: robust to form) is read as the labelled text it
is, and judged like any other: the right answer about cu_transpose_conflict (a real H200 capture) passes, the same
JSON with a wrong cause or a number the capture does not hold is refused, and JSON that says nothing readable is
still refused as unreadable. An Answer's own JSON is read by its schema only.
"""
from __future__ import annotations

import json

import pytest
from critic_case import answer, case  # noqa: F401 (the fixture)

from kernel_profiler.critic import AnswerFormatError, parse_answer
from kernel_profiler.critic.form import read_by_role
from kernel_profiler.critic.json_text import as_labelled_text

WF = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
INST = "smsp__sass_inst_executed_op_shared_ld.sum"


def _pasted(c, cause: str, per: float | None = None) -> str:
    m = c.metrics("transpose_tile")
    per = per or m[WF] / m[INST]
    return "```json\n" + json.dumps({
        "kernel": "transpose_tile",
        "verdict": f"transpose_tile is limited by {cause}",
        "measured": {"duration_us": round(m["gpu__time_duration.sum"] / 1e3, 1),
                     "wavefronts per shared load": f"{per:.2f} ({WF} / {INST})",
                     "dram_throughput_pct": round(m["gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"], 1)},
        "why": f"the tile is read by column, so a warp's 32 addresses fall in one bank and every shared load is split "
               f"into {per:.0f} serialized wavefronts; the kernel waits on shared memory instead of streaming DRAM, "
               "which keeps it far from its memory floor",
        "change": "pad the tile to float[32][33]",
        "metric_to_watch": f"{WF} / {INST} should drop from {per:.0f} to about 1",
    }, indent=2) + "\n```\n"


def test_json_with_keys_of_its_own(case):
    c = case("cu_transpose_conflict")
    ok = c.critique(_pasted(c, "32-way shared-memory bank conflicts"))
    assert ok.verdict == "accept", ok.reasons
    assert any(n.written.startswith(f"{c.metrics('transpose_tile')['gpu__time_duration.sum'] / 1e3:.1f}")
               and n.fact for n in ok.numbers)  # the key's unit ("duration_us") is read with its value
    wrong = c.critique(_pasted(c, "uncoalesced global memory access"))
    assert wrong.verdict == "reject" and not wrong.checks["signature"]
    made_up = c.critique(_pasted(c, "16-way shared-memory bank conflicts", per=16.0))  # half the measured 32
    assert made_up.verdict == "reject" and not made_up.checks["numbers"]


def test_labelled_text_of_a_json_object():
    text = as_labelled_text({"verdict": "memory-bound", "measured": {"duration_us": 267.8, "gpu__dram_throughput": 83.5},
                             "floor": ["223 us"]})
    assert "**Verdict:** memory-bound" in text
    assert "- duration: 267.8 us" in text and "- `gpu__dram_throughput`: 83.5" in text  # a metric's name kept
    assert "**Floor:**\n- 223 us" in text
    first = as_labelled_text({"bound": "comms", "bottleneck": "rank 1 is the straggler"})
    assert first.startswith("**Bottleneck:** rank 1")  # the verdict's key first, metadata after it


def test_what_stays_unreadable_or_schema_bound():
    with pytest.raises(AnswerFormatError, match="not an Answer"):
        parse_answer('{"foo": 1}')  # one label that names no part: the schema's error is the message
    own = json.dumps({"bottleneck": "k is memory-bound", "evidence": [], "explanation": "", "fix": None})
    assert read_by_role(own) is None  # valid Answer JSON: no second reading of it as text


def test_a_label_says_what_its_number_is(case):
    """"- kernel duration: 211.0 us (ncu)": the words before the colon describe the number (unverified.py `_clause`);
    read without them, the number named nothing and a made-up kernel time passed as unverified."""
    c = case("cu_transpose_conflict")
    m = c.metrics("transpose_tile")
    per = m[WF] / m[INST]

    def with_duration(us: float):
        return c.critique(answer(
            "`transpose_tile` is limited by 32-way shared-memory bank conflicts.",
            [f"kernel duration: {us:.1f} us (ncu)", f"wavefronts per shared load: {per:.2f} ({WF} / {INST})"],
            f"The tile is read by column, so a warp's 32 addresses fall in one bank and every shared load is split "
            f"into {per:.0f} serialized wavefronts; the kernel waits on shared memory instead of streaming DRAM, "
            "which keeps it far from its memory floor.",
            f"Pad the tile to float[32][33]: {WF} / {INST} should drop from {per:.0f} to about 1."))
    assert with_duration(m["gpu__time_duration.sum"] / 1e3).verdict == "accept"
    made_up = with_duration(211.0)
    assert made_up.verdict == "reject" and not made_up.checks["numbers"]
