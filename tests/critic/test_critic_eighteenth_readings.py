"""Readings found in the eighteenth session (issue 10), on real H200 captures, each with a twin the critic refuses:
  - numbers: "eight 16-block kernels, 128 blocks in total" is the blocks a step launches; a total broken down into
    the parts listed after it ("~238 us (the two GEMMs at ~90 us each, plus ...)") is their sum;
  - claims: a "**Bound:** latency" label further down is the verdict over a summary that says "the GPU idles".
"""
from __future__ import annotations

from critic_case import (  # noqa: F401 (case: the fixture)
    accepted as _accepted, answer_text as _text, case, refused_for as _refused_for)

from kernel_profiler.critic.arithmetic import listed_sum
from kernel_profiler.critic.numbers import quantities


def test_the_blocks_of_a_step_are_its_kernels_grids_times_their_launches(case):
    c = case("h8_legacy_stream")
    text = _text("blind50", "b50_legacy_heads")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("128 blocks in total", "160 blocks in total"))
    assert _refused_for(wrong, "160 blocks"), wrong.reasons


def test_a_bound_label_below_the_summary_is_the_verdict(case):
    c = case("h8_legacy_stream")
    text = _text("blind66", "b66_legacy_exec")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("**Bound:** latency (low parallelism, forced serialisation).",
                                    "**Bound:** host (the CPU cannot keep up)."))
    assert _refused_for(wrong, "host-bound"), wrong.reasons


def _sum(sentence: str, written: str):
    q = next(q for q in quantities(sentence) if q.written.startswith(written))
    return listed_sum(sentence, q)


def test_a_total_is_the_sum_of_the_parts_listed_after_it():
    s = ("The GPU work in one iteration is only ~238 us (the two GEMMs at ~90 us each, plus the copy 21 us, pow "
         "15 us, mean reduce 12 us, mul 8 us, add 1 us).")
    assert _sum(s, "238") is not None and "2 x 90" in _sum(s, "238")
    assert _sum(s.replace("~238 us", "~330 us"), "330") is None  # the parts give 237 us
    assert _sum(s.replace("at ~90 us each", "at ~90 us"), "238") is None  # each GEMM once: 147 us
    assert _sum("kernels take 30 us (10 us and 20 us)", "30") is None  # two parts: the pair rule's, not this one's
