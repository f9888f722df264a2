"""Readings of the twenty-first session (issue 10), on real H200 captures, each with a twin the critic refuses.

A fix's direction read in more of the ways experts write it: a move to a bound ("2.7 ms -> below 0.1 ms"), a move to
nothing ("should take UVM migrations to ~0"), a target alone ("busy -> ~97%", its direction the way from the value the
captures measure for what its words name), the kernel's time written after "the kernel around", "bytes-per-sector";
"that's expected" is no prediction. A fix the layout puts elsewhere (a closing paragraph that proposes the change and
says which metric moves) is read where it is. A hypothesis log closes on the last hypothesis it confirms; "The fix
worked" reports, it proposes nothing. Arithmetic: an excess written as a percent ("1.1167/1.0995 = 1.6% extra") and a
result that is itself a product ("= 2 x 268.4 MB = 536.9 MB"). Causes in other words: "death by a thousand launches",
"bound by the shuffle traffic", "traffic it doesn't need", a cause named only in the title.
"""
from __future__ import annotations

from critic_case import (  # noqa: F401 (case: the fixture)
    accepted as _accepted, answer_text as _text, case, refused_for as _refused_for)

from kernel_profiler.critic.arithmetic import chains
from kernel_profiler.critic.claim import asserted_cause
from kernel_profiler.critic.direction import clause_direction, fix_metric_direction
from kernel_profiler.critic.hypotheses import accepted_hypothesis
from kernel_profiler.critic.roles import says_what_to_do


def test_a_move_to_a_bound_or_to_nothing_has_a_direction():
    assert clause_direction("`gpu__time_duration.sum` 2.7 ms -> below 0.1 ms (estimate)") == "decrease"
    assert clause_direction("DRAM throughput 0.8% -> well over 50%") == "increase"
    assert clause_direction("should take UVM migrations to ~0") == "decrease"
    assert clause_direction("the error stays close to zero") is None  # where it is, not where it goes
    assert clause_direction("memory use goes up to 40 GB") == "increase" and clause_direction("up to 0") is None


def test_what_is_expected_is_a_prediction_and_that_is_expected_is_not():
    metric, direction = fix_metric_direction(
        "Batch the calls.\n\nwhat should move: kernel launches 5000 -> 1, GPU busy 1.46% -> near 100%. kernel time per "
        "launch will go *up* (bigger tensor), that's expected and fine.")
    assert (metric, direction) == ("launches", "decrease")
    assert fix_metric_direction("You should see bytes-per-sector on loads go from 4 to 32.") == \
        ("bytes per sector", "increase")


def test_a_target_alone_is_read_against_the_measured_value(case):
    c = case("cu_sync_loop_fixed")
    text = _text("blind72", "b72_sync_fixed_slack")  # "(busy → ~97%, est.)": the capture's busy fraction is 93.7%
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("busy → ~97%", "busy → ~60%"))  # a target below the measured value: busy falls
    assert _refused_for(wrong, "busy"), wrong.reasons


def test_a_report_that_the_fix_worked_proposes_nothing(case):
    c = case("h5_fp64_promotion_fixed")  # no labels; it opens "The fix did what it was meant to do": a report, so the
    text = _text("blind75", "b75_fp64_prose")  # verdict is read from its own words, the change from the last paragraph
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("should drop from 204.5M to ~155M", "should rise from 204.5M to ~255M")
                       .replace("with DRAM throughput rising from 22.5% toward 80%", "with DRAM throughput falling"))
    assert _refused_for(wrong, "smsp__inst_executed.sum"), wrong.reasons
    assert says_what_to_do("First, unroll the 128-iteration loop completely.")
    assert not says_what_to_do("The fix did what it was meant to do, and the kernel has moved to the next wall.")


def test_a_hypothesis_log_closes_on_the_last_hypothesis_it_confirms():
    log = ('H1. "The local-memory table is gone." -> CONFIRMED.\n    ptxas: 0 bytes stack frame.\n\n'
           'H2. "Now it is memory bound." -> REJECTED. DRAM 5.66%.\n\n'
           'H3. "It is instruction-issue bound on integer work." -> CONFIRMED.\n    issue active 83.0%.\n')
    assert accepted_hypothesis(log).startswith("H3")
    one = log.replace('work." -> CONFIRMED', 'work." -> REJECTED')  # one hypothesis left confirmed
    assert accepted_hypothesis(one).startswith("H1")


def test_an_excess_in_percent_and_a_result_that_is_a_product():
    assert [s.ok for s in chains("counted vs useful 1.1167/1.0995 = 1.6% extra")] == [True]
    assert [s.ok for s in chains("counted vs useful 1.1167/1.0995 = 2.6% extra")] == [False]
    assert [s.ok for s in chains("a = 50/200 = 75%")] == [False]  # no excess reading far from a ratio of 1
    got = chains("Ideal traffic: 64M fp32 in + 64M fp32 out = 2 x 268.4 MB = 536.9 MB.")
    assert [(s.text, s.ok) for s in got] == [("2 x 268.4 MB = 536.9 MB", True)]
    assert [s.ok for s in chains("Ideal traffic: 64M fp32 in + 64M fp32 out = 2 x 268.4 MB = 636.9 MB.")] == [False]


def test_causes_in_other_words(case):
    assert asserted_cause("this one is the classic death by a thousand launches situation") == "launch_overhead"
    assert asserted_cause("bound by the shuffle traffic through the LSU/MIO pipe") == "instruction_bound"
    assert asserted_cause("it is dominated by passes over a score matrix that should never exist in DRAM") == \
        "excess_dram_traffic"
    assert asserted_cause("it is dominated by passes over a score matrix that lives in DRAM") is None
    c = case("h5_shuffle_rowsum")  # "# `row_sums`: bound by the shuffle traffic ..." names the cause in its title only
    text = _text("blind73", "b73_shfl_floor")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    c = case("h6_half_fma_gemm")  # "## Bound and mechanism" is the verdict's heading
    text = _text("blind74", "b74_hgemm_tc")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("0% -> >80%", "0.0004% -> 0%"))  # the tensor pipe cannot fall from where it is
    assert wrong.verdict == "reject", wrong.reasons


def test_a_fix_under_a_label_of_its_own_is_the_fix(case):
    c = case("tr_low_parallelism")
    text = _text("blind32", "b32_trlow_slide")  # "- The ask: launch one program per 1024-element block ... Expect DRAM
    assert _accepted(c.critique(text)), c.critique(text).reasons  # throughput to climb from 5.5 % to roughly 70 %+"
    wrong = c.critique(text.replace("climb from 5.5 % to roughly\n  70 %+", "fall from 5.5 % to roughly\n  2 %"))
    assert _refused_for(wrong, "DRAM throughput"), wrong.reasons


def test_a_verdict_the_layout_puts_elsewhere_is_the_claim(case):
    c = case("h8_managed_touch")  # "that's the bottleneck imo: allocator cost on the managed buffer." in the fix:
    v = c.critique(_text("blind75", "b75_um_malloc"))  # the claim is allocator churn, which the timeline refutes
    assert _refused_for(v, "allocator churn"), v.reasons
    text = _text("blind75", "b75_um_prose")  # "allocated with cudaMallocManaged": managed memory, no allocator claim
    assert _accepted(c.critique(text)), c.critique(text).reasons
    assert asserted_cause("The buffer comes from cudaMallocManaged and migrates on every touch.") != "allocator_churn"
    assert asserted_cause("re: why is `py_sync_per_op` slow — it's the syncs, not the GPU") == "host_sync"


def test_fixes_that_undo_the_cure(case):
    c = case("cu_transpose_fixed")  # "go back to a clean `__shared__ float tile[32][32]`": the 32-way conflict again
    v = c.critique(_text("blind72", "b72_tr_fixed_unpad"))
    assert _refused_for(v, "bank conflicts the wrong way"), v.reasons
    text = _text("blind37", "b37_tr_bold")  # "If it climbs back toward ~32, someone removed the pad.": a warning
    assert _accepted(c.critique(text)), c.critique(text).reasons
    c = case("h6_smem_float_atomic")  # every thread's atomicAdd straight to 4 global words: contention GPU-wide
    v = c.critique(_text("blind73", "b73_atom_global"))
    assert _refused_for(v, "the wrong way"), v.reasons


def test_leave_it_proposes_nothing_and_not_the_bottleneck_claims_nothing(case):
    c = case("py_gemm_bf16")  # no fix part; "the kernel is at its roofline: **leave it**. The only remaining levers
    text = _text("blind74", "b74_gemm_exec")  # are at the call site (less or lower-precision work)": no move of
    assert _accepted(c.critique(text)), c.critique(text).reasons  # GPU busy is proposed
    assert asserted_cause("## Appendix D — one-time work") == "startup_dominated"  # the words name start-up; the
    assert asserted_cause("## Appendix D — one-time work (not the bottleneck)") is None  # sentence sets it aside
    c = case("h7_py_permute_copy")  # (a reading moved into asserted_cause by the twenty-second session): no claim
    text = _text("blind56", "b56_permute_exec")
    assert _accepted(c.critique(text)), c.critique(text).reasons
