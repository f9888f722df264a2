"""Readings found in the nineteenth session (issue 10), chosen by class over the false rejects left in the sets read
so far (not one answer at a time), on real H200 captures, most with a twin the critic refuses:
  - claims: one-time work the text sets aside ("that's one-time", "Not steady state; reported apart", "happens
    exactly once", "-> Rejected as the steady-state answer", "the only memcpy is the one-time upload") is not
    blamed, nor one-time work a step repeats ("turns a one-time cost into the steady state"); a cause followed by "that's where the remaining
    time goes" is asserted, however long the metric name between them; an atomic named as one step of the code
    ("followed by a dependent shared atomic") or counted per block is not a claim of contention;
  - numbers: a size of the problem ("131,072 rows", "62 elements") is no measurement any capture contradicts; the
    best the work could do ("the fastest it could possibly go is ... ≈ 106 us") is a model's number, not a
    measured time; a value cut rather than rounded (39.96 us written "39 us") is that value.
"""
from __future__ import annotations

from critic_case import (  # noqa: F401 (case: the fixture)
    accepted as _accepted, answer_text as _text, case, refused_for as _refused_for)

from kernel_profiler.critic.claim import asserted_cause


def test_one_time_work_the_text_sets_aside_is_not_blamed(case):
    c = case("h6_py_cudnn_autotune")
    text = _text("blind30", "b30_cudnn_checklist")  # "Separated one-time work. ... Not steady state; reported apart."
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("✅ **Separated one-time work.**", "✅ **One-time work dominates the run.**"))
    assert _refused_for(wrong, "blames start-up"), wrong.reasons
    c = case("h8_zero_copy_fixed")
    text = _text("blind27", "b27_zc_stream")  # "the only memcpy in the capture is the one-time ... upload"
    assert _accepted(c.critique(text)), c.critique(text).reasons


def test_set_aside_one_time_work_in_words():
    assert asserted_cause("It's not the autotuning, that's one-time. The convs run in FP32 without tensor cores.") \
        == "no_tensor_cores"
    assert asserted_cause("The upload happens exactly once, before the loop. Launch overhead limits the loop.") \
        == "launch_overhead"
    log = ('H1: the whole run is dominated by JIT compilation before the first launch.\n-> Rejected as the '
           'steady-state answer.')
    assert asserted_cause(log) != "startup_dominated"
    assert asserted_cause("H1: the whole run is dominated by JIT compilation before the first launch.") == \
        "startup_dominated"  # the same hypothesis, not rejected
    repeated = "Doing that per step turns a one-time set-up cost into the steady state, and the GPU waits for it."
    assert asserted_cause(repeated) != "startup_dominated"
    assert asserted_cause("The one-time set-up cost dominates the run.") == "startup_dominated"
    assert asserted_cause("Every step pays the one-time start-up cost of loading cuBLAS.", mentions=False) == \
        "startup_dominated"  # paid every step, but named as start-up: the claim the timeline then checks


def test_a_cause_is_asserted_by_where_the_time_goes_past_a_metric_name(case):
    long_name = "shared-memory bank conflicts (`l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum`)"
    said = f"ncu also reports 263,162 {long_name}, and I think that's where the remaining time goes."
    assert asserted_cause(said, mentions=False) == "shared_bank_conflict"
    assert asserted_cause(f"ncu also reports 263,162 {long_name}.", mentions=False) is None
    c = case("cu_softmax_fixed")  # the claim is now read, and refused for what the capture measures, not for a size
    v = c.critique(_text("blind43", "b43_fixed_banks"))
    assert _refused_for(v, "shared bank conflict"), v.reasons
    assert not any("131,072 rows" in r for r in v.reasons), v.reasons


def test_the_best_the_work_could_do_is_no_measured_time(case):
    c = case("py_fused_gelu")
    text = _text("blind37", "b37_gelu_cr")  # "the fastest it could possibly go is 0.512 / 4.81 ≈ 106 us"
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("the fastest it could possibly go is", "the kernel takes"))  # as measured
    assert _refused_for(wrong, "106 us"), wrong.reasons


def test_a_value_cut_not_rounded_is_that_value(case):
    c = case("cu_local_array_fixed")
    text = _text("blind13", "b13_localfix_table")  # the kernel's 190 MB "would take 39 us" (floor 39.96 us)
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("would take 39 us", "would take 33 us"))
    assert _refused_for(wrong, "33 us"), wrong.reasons


def test_an_atomic_named_as_a_step_of_the_code_is_no_contention(case):
    assert asserted_cause("Each thread issues one LDG followed by a dependent shared atomic, so few bytes are in "
                          "flight.") != "atomic_contention"
    assert asserted_cause("Each thread has one load outstanding before its shared atomic.") != "atomic_contention"
    assert asserted_cause("The global atomics serialize on the same four bins.") == "atomic_contention"
    c = case("cu_histogram_fixed")
    text = _text("blind2", "b2_acc_histfix")  # "global atomics are down to one reduction per block"
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("scalar 4-byte loads in a one-wave grid-stride loop keep too few bytes in flight",
                                    "contention on the same few bins serializes the global atomics"))
    assert _refused_for(wrong, "claims atomic contention"), wrong.reasons
