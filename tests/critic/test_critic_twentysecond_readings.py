"""Readings of the twenty-second session (issue 10), on real H200 captures, each with a twin the critic refuses.

The bound: an answer that states the timeline's bound in so many words ("=> host-bound.", "bound: host (launch
overhead)") is not refused for a bound read from its other sentences; a bound it only names as what the kernel
"should be", a hypothesis it calls secondary, and "no occupancy/latency problem" state none. A fix's direction: a count
with its scale letter ("23.06M -> <=262k"), an order of magnitude in any unit ("26 GB -> tens of MB"); a metric the fix
says is "not a problem to chase" is not what it moves; "not the kernel (it is cuBLAS)" leaves the kernel alone. A log
whose layout reads "Verdict: rejected." as the verdict closes on the hypothesis it confirms. "11.21 + 6.16 ms": both
values in milliseconds.
"""
from __future__ import annotations

from critic_case import (  # noqa: F401 (case: the fixture)
    accepted as _accepted, answer_text as _text, case, refused_for as _refused_for)

from kernel_profiler.critic.bound_words import _stated, affirms
from kernel_profiler.critic.direction import clause_direction, fix_metric_direction
from kernel_profiler.critic.numbers import quantities


def test_the_timeline_bound_stated_in_words():
    assert affirms("=> host-bound. the host itself computes ~4.7 ms/step", "host")
    assert affirms("bound: host (launch/dispatch overhead). each call does ~0.9 us of GPU work", "host")
    assert affirms("the kernel is memory-bound at 83% of DRAM peak", "kernel")  # a kernel verdict: any kernel bound
    assert not affirms("H2 host/launch-bound? — secondary. GPU busy 79.9%", "host")
    assert not affirms("it is not host-bound: the GPU is busy", "host")
    assert not affirms("the GPU sits idle between launches", "host")  # describes, states no bound
    assert not affirms("=> host-bound.", "transfer")


def test_what_a_kernel_should_be_and_a_problem_it_has_not_are_no_bound():
    assert _stated("so a kernel that should be FMA-bound is memory-bound on traffic it creates itself") == "memory"
    assert _stated("a kernel that is FMA-bound on its accumulators") == "compute"
    assert _stated("warps active 96%. no occupancy/latency problem left to chase. DRAM bandwidth-bound.") == "memory"
    assert _stated("warps active 96%: a latency problem, then DRAM bandwidth-bound.") == "latency"


def test_an_answer_that_says_host_bound_is_read_as_host_bound(case):
    c = case("cu_host_work")
    text = _text("blind76", "b76_host_notes")  # notes whose kernel line ends "fine, leave it."
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("=> host-bound.", "=> kernel at its roofline."))
    assert _refused_for(wrong, "host-bound"), wrong.reasons


def test_a_kernel_that_should_be_fma_bound(case):
    c = case("ho_register_spill")
    text = _text("blind76", "b76_spill_exec")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("a kernel that should be FMA-bound is memory-bound", "the kernel is FMA-bound"))
    assert _refused_for(wrong, "compute-bound"), wrong.reasons


def test_scale_letters_and_orders_of_magnitude_in_a_move():
    assert clause_direction(" 23.06M -> <=262k; hot-slice atomic input 79.6% -> ~0") == "decrease"
    assert clause_direction(" 262k -> 23.06M") == "increase"
    assert fix_metric_direction("`dram__bytes_write.sum` 26 GB → tens of MB") == ("dram__bytes_write.sum", "decrease")
    assert fix_metric_direction("`dram__bytes_write.sum` 26 MB → tens of GB") == ("dram__bytes_write.sum", "increase")


def test_a_metric_set_aside_is_not_the_one_that_moves():
    fix = ("At the call site the remaining levers are to do less of this product per step. Low `sm__warps_active` "
           "(14.8%) is not a problem to chase: one CTA per SM by design.")
    assert fix_metric_direction(fix)[0] != "sm__warps_active"
    assert fix_metric_direction(fix.replace(" is not a problem to chase: one CTA per SM by design", " should fall"))[0] \
        == "sm__warps_active"


def test_not_the_kernel_leaves_a_library_gemm_alone(case):
    c = case("py_gemm_bf16")
    text = _text("blind77", "b77_gemm_table")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("not the kernel (it is cuBLAS; no library edits). ", ""))
    assert _refused_for(wrong, "direction"), wrong.reasons


def test_a_log_with_a_verdict_under_each_hypothesis(case):
    c = case("h6_intdiv_index")
    text = _text("blind77", "b77_intdiv_hyp")  # "Verdict: rejected." under H1-H3, "Verdict: CONFIRMED." under H4
    assert _accepted(c.critique(text)), c.critique(text).reasons
    first, rest = text.split("Verdict: rejected.", 1)  # H1 (DRAM-bound at 17.6% of peak) confirmed instead
    wrong = c.critique(first + "Verdict: CONFIRMED. Memory bandwidth sets the time." +
                       rest.replace("Verdict: CONFIRMED.", "Verdict: rejected."))
    assert not _accepted(wrong), wrong.reasons


def test_two_values_added_in_one_unit():
    got = [(q.written, q.unit) for q in quantities("`gemvx` kernels 11.21 + 6.16 ms, cutlass 4.01 ms")]
    assert got[:2] == [("11.21 ms", "ms"), ("6.16 ms", "ms")]
    assert [q.unit for q in quantities("11 + 1 = 12 launches, 6.16 ms")][:1] != ["ms"]


def test_a_kernel_bound_stated_in_words_that_its_counters_allow(case):
    c = case("ot_py_triton_jit")
    text = _text("blind32", "b32_jit_sceptic")  # quotes the "latency-bound" it argues against, then states its own
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("memory-bound on an uncoalesced", "suffering from an uncoalesced"))
    assert _refused_for(wrong, "latency-bound"), wrong.reasons


def test_start_up_the_answer_sets_aside_is_not_its_claim(case):
    c = case("h7_py_compile_tiny")
    text = _text("blind76", "b76_compile_chatty")  # "dominated by compile time ... it's not what limits the loop"
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("it's not what limits the loop", "it's what limits the run"))
    assert _refused_for(wrong, "start-up"), wrong.reasons


def test_a_kernel_fix_for_a_program_that_idles(case):
    c = case("ot_cu_alloc_churn")  # host-bound on cudaMalloc/cudaFree in the loop; the answer claims no cause the
    text = _text("blind77", "b77_churn_kernel")  # critic reads and predicts a DRAM throughput rise
    wrong = c.critique(text)
    assert _refused_for(wrong, "a faster kernel leaves the idle time"), wrong.reasons
    busy_first = text.replace("metric: dram__bytes.sum.per_second up", "metric: GPU busy fraction up, "
                              "dram__bytes.sum.per_second up")  # measured first on the timeline
    assert busy_first != text and not _refused_for(c.critique(busy_first), "a faster kernel leaves the idle time")


def test_near_peak_kernels_in_a_program_of_extra_passes(case):
    c = case("py_unfused_gelu")  # eight elementwise kernels, each near its DRAM floor: the chain is the waste
    text = _text("blind77", "b77_gelu_nearpeak")  # "near-peak workload ... I wouldn't touch the kernels"
    wrong = c.critique(text)
    assert _refused_for(wrong, "extra passes"), wrong.reasons
    fused = text.replace("run the activation in bf16 (`x.to(torch.bfloat16)` first)",
                         "fuse the eight ops into one kernel (torch.compile, or F.gelu with approximate='tanh')")
    assert fused != text and not _refused_for(c.critique(fused), "extra passes")
