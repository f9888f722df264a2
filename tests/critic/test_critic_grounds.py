"""What a rejection rests on (critic.grounds): a measurement that contradicts the answer, or only what the checks
could not confirm. Verdicts on the engine's own answer about a real H200 capture (cu_transpose_conflict), each changed
in one part: the unchanged answer is accepted, so each rejection below is the change's."""
from __future__ import annotations

import pytest

from critic_case import case  # noqa: F401 (the fixture)

from kernel_profiler.critic import critique
from kernel_profiler.critic.fixes import NO_DIRECTION, NO_METRIC
from kernel_profiler.critic.grounds import grounds, unconfirmed


@pytest.fixture(scope="module")
def transpose(case):
    c = case("cu_transpose_conflict")
    assert critique(c.dg.as_answer(), c.arts, c.dg).verdict == "accept"  # the baseline every change departs from
    return c


def _changed(c, **parts):
    a = c.dg.as_answer().model_copy(deep=True)
    for k, v in parts.items():
        if k.startswith("fix_"):
            setattr(a.fix, k[4:], v)
        else:
            setattr(a, k, v)
    return critique(a, c.arts, c.dg)


def test_a_fix_whose_metric_and_direction_the_checks_do_not_find_is_unconfirmed(transpose):
    v = _changed(transpose, fix_metric=None, fix_direction=None, fix_expected="",
                 fix_change="Pad the shared tile to 33 columns.")
    assert v.verdict == "reject" and v.grounds == "unconfirmed"
    assert v.failed == {"fix": [NO_METRIC, NO_DIRECTION]}


def test_a_number_its_words_bind_to_another_value_is_unconfirmed(transpose):
    v = _changed(transpose, explanation=transpose.dg.explanation + " The kernel takes 9.99 ms per launch.")
    assert v.verdict == "reject" and v.grounds == "unconfirmed", v.reasons
    assert list(v.failed) == ["numbers"] and "9.99 ms" in v.failed["numbers"][0]


def test_a_claim_the_counters_and_the_timeline_contradict_is_contradicted(transpose):
    v = _changed(transpose, bound="host", mechanism="host_sync",
                 bottleneck="The program is host-bound: it synchronizes after every launch.")
    assert v.verdict == "reject" and v.grounds == "contradicted"
    assert {"signature", "bound"} <= set(v.failed)


def test_a_contradiction_outweighs_what_was_not_confirmed(transpose):
    v = _changed(transpose, bound="host", mechanism="host_sync", fix_metric=None, fix_direction=None,
                 fix_expected="", fix_change="Pad the shared tile to 33 columns.",
                 bottleneck="The program is host-bound: it synchronizes after every launch.")
    assert v.grounds == "contradicted" and "fix" in v.failed


def test_the_value_written_for_a_named_metric_and_injected_text_are_contradictions():
    assert not unconfirmed("numbers", "The number '4.79 TB/s' in the evidence is written as the value of "
                                      "`dram__bytes.sum.per_second`, which the capture holds as 2.7e+12 (ncu.ncu-rep): "
                                      "quote the measured value.")
    assert not unconfirmed("numbers", "Evidence gpu__time_duration.sum = 1.2 ms does not match the capture, which "
                                      "holds 0.9 (ncu reports): quote the number the artifact reports.")
    assert not unconfirmed("reviewer", "The answer addresses the reviewer ('dear critic'): ...")
    assert not unconfirmed("fix", "The fix says 'dram__bytes.sum' will increase, but toward the roofline it moves the "
                                  "other way (decrease): a fix of the cause it names cannot make it rise.")
    assert unconfirmed("not_a_dump", "The answer lists counters without a causal chain (...)")
    assert unconfirmed("fix", "The fix's metric 'foo' is nothing the captures measure: name a measured metric")


def test_an_acceptance_has_no_grounds():
    assert grounds({}) is None
    assert grounds({"parts": ["The fix part is missing: add a `## Fix` section."]}) == "unconfirmed"
    assert grounds({"parts": ["The fix part is missing."], "bound": ["The answer calls it host-bound, but ..."]}) == \
        "contradicted"
