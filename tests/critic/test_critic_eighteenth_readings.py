"""Readings found in the eighteenth session (issue 10), on real H200 captures, most with a twin the critic refuses:
  - numbers: "eight 16-block kernels, 128 blocks in total" is the blocks a step launches; a total broken down into
    the parts listed after it is their sum; what a change "buys" is the gap; a line may work its value out
    ("FLOP: 2*8192^3 = 1.0995e12"), and a result worked out is an operand later ("-> 758 TFLOP/s"), an arrow no
    bound; "**12,400** kernel launches in the steady window" is that count however far off; a statistic or an API
    named beside another time is that time's; a size written beside a term of a sum is no operand;
  - claims: a "**Bound:**" label below a summary that says "the GPU idles" is the verdict; a cause the text says
    is gone is not claimed by the words that describe its fix, nor a cost its own sentence rules out; a quoted
    reflex is no verdict; "on one core", "waiting for the CPU" are host work;
  - fixes: "down by well over 10x" falls; device copies moved to host memory, fewer blocks for a kernel whose
    warps wait on their loads at half of DRAM's peak, and pageable copies cut into slices are the wrong way;
  - layouts: a "re:" subject line is no verdict, nor "I'd leave this kernel alone" a change; numbered steps after
    "...:" are the fix's, not evidence; prose after a JSON object is its note; ncu time is program time only
    where its own clause (or what its parenthesis glosses) says so.
"""
from __future__ import annotations

from critic_case import (  # noqa: F401 (case: the fixture)
    accepted as _accepted, answer_text as _text, case, refused_for as _refused_for)

from kernel_profiler.critic.arithmetic import listed_sum
from kernel_profiler.critic.match import number_use, sentence_concepts
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


# ----------------------------------------------------------------------------- blind70 and blind71 (read this session)
def test_what_a_change_buys_is_the_gap_and_a_line_may_work_its_value_out(case):
    c = case("cu_cublas_bf16")
    text = _text("blind70", "b70_cublas_roof")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    assert "gap" in sentence_concepts("nothing inside it buys more than ~7%")  # what a change buys: the gap
    text = _text("blind70", "b70_cublas_terse")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("2*8192^3 = 1.0995e12", "2*8192^3 = 1.3995e12"))
    assert _refused_for(wrong, "1.3995e12"), wrong.reasons


def test_down_by_well_over_is_a_fall_and_an_arrow_is_no_bound(case):
    from kernel_profiler.critic.direction import fix_metric_direction
    assert fix_metric_direction("`smsp__inst_executed.sum` down by well over 10x")[1] == "decrease"
    assert fix_metric_direction("tensor-pipe active well above 30.7%")[1] == "increase"
    c = case("h6_intdiv_index")
    text = _text("blind70", "b70_intdiv_issue")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    c = case("py_item_sync")
    text = _text("blind70", "b70_item_log")  # "= 68.7 GFLOP -> 758 TFLOP/s": the worked-out FLOPs over the median
    assert _accepted(c.critique(text)), c.critique(text).reasons
    s = "Each is 2*4096*4096*2048 = 68.7 GFLOP -> 758 TFLOP/s."
    assert [number_use(s, q).bound for q in quantities(s)] == [None, None]  # an arrow, not "greater than"
    assert [number_use("gain <= 7% here", q).bound for q in quantities("gain <= 7% here")] == ["upper"]


def test_a_clause_of_its_own_says_what_time_a_number_is(case):
    c = case("cu_local_array")
    text = _text("blind71", "b71_local_bold")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("against 15.49 ms measured", "against a step time of 15.49 ms"))
    assert _refused_for(wrong, "ncu kernel duration"), wrong.reasons


def test_a_cause_ruled_out_is_not_claimed_by_the_words_of_its_fix(case):
    c = case("h6_smem_float_atomic_fixed")
    text = _text("blind71", "b71_h6_prose")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("The contention that this kernel was built to show is gone.",
                                    "Atomic contention on the class sums still limits this kernel."))
    assert _refused_for(wrong, "atomic contention"), wrong.reasons


def test_a_quoted_reflex_is_no_verdict(case):
    c = case("h7_aos_field")
    text = _text("blind71", "b71_aos_chat")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace('the reflex is "memory-bound, at the roofline, nothing to do". But look at',
                                    "it is memory-bound, at the roofline, nothing to do. Look at"))
    assert _refused_for(wrong, "near peak"), wrong.reasons


def test_steps_of_a_change_are_no_evidence_and_a_small_sync_cost_is_no_claim(case):
    c = case("cu_host_work")
    text = _text("blind71", "b71_hostw_chat")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    c = case("py_host_work")
    text = _text("blind70", "b70_hostwork_slack")  # "the np.sort ... on one core", "waiting for the CPU sort"
    assert _accepted(c.critique(text)), c.critique(text).reasons


def test_counts_over_a_named_span_are_that_count(case):
    assert [q.written for q in quantities("**12,400** kernel launches in the steady window")] == ["12,400 launches"]
    assert [q.unit for q in quantities("(**4,600** syncs in the capture, avg 16.4 us)")] == ["syncs", "us"]
    assert quantities("2**20 threads") == []  # a power, not emphasis: "2" is no count of threads
    c = case("py_item_sync")
    wrong = c.critique(_text("blind70", "b70_item_invented"))
    assert not _accepted(wrong), wrong.reasons


def test_device_copies_moved_to_host_memory_and_fewer_blocks_for_waiting_loads_are_the_wrong_way(case):
    c = case("h5_d2d_snapshot")
    wrong = c.critique(_text("blind70", "b70_d2d_hostsnap"))
    assert _refused_for(wrong, "into host memory"), wrong.reasons
    c = case("cu_elementwise_fused")
    wrong = c.critique(_text("blind71", "b71_fused_grid"))
    assert _refused_for(wrong, "fewer than the 1056"), wrong.reasons


def test_a_leave_it_opening_is_the_verdict_and_a_subject_line_is_none(case):
    c = case("cu_vec_copy")
    text = _text("blind24", "b24_vec_leave")  # "I'd leave this kernel alone." under a "Re: ..." subject line
    assert _accepted(c.critique(text)), c.critique(text).reasons
    c = case("ho_py_d2h_volume")
    wrong = c.critique(_text("blind70", "b70_d2h_pageable"))  # its verdict is the prose under the subject line
    assert wrong.mechanism == "pageable_transfer" and _refused_for(wrong, "pageable"), wrong.reasons


def test_emphasis_around_a_number_and_the_time_an_api_call_takes(case):
    assert quantities("Top stall: **short_scoreboard at 21.8** warps per issue.") == []  # the bold holds words
    c = case("h6_smem_float_atomic")
    text = _text("blind20", "b20_atom_review")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    c = case("ho_py_sync_per_op")  # "400 `cudaDeviceSynchronize` calls at 112 us each": the count leaves the call
    wrong = c.critique(_text("blind29", "b29_syncop_fab"))  # its time
    assert _refused_for(wrong, "112 us"), wrong.reasons
    c = case("cu_sync_loop")  # "~20 us bookkeeping + ~7 us launch (`cudaLaunchKernel` avg 7.1 us)": not the call's
    text = _text("blind71", "b71_sync_slack")
    assert _accepted(c.critique(text)), c.critique(text).reasons


def test_a_size_beside_a_term_of_a_sum_and_a_note_after_a_json_object(case):
    c = case("h8_py_naive_attention")
    text = _text("blind71", "b71_attn_hyp")  # "clone memcpy DtoD 1.07 GB 0.507 ms + ... = 3.95 ms"
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("1.476 ms = 3.95 ms", "1.476 ms = 4.45 ms"))
    assert _refused_for(wrong, "4.45 ms"), wrong.reasons
    c = case("tr_atomic_hist")
    text = _text("blind71", "b71_hist_json")  # its reasoning is the prose after the object
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text[:text.index("Short version:")])
    assert _refused_for(wrong, "causal chain"), wrong.reasons


def test_pageable_copies_cut_into_slices_are_the_wrong_way(case):
    c = case("ho_py_numpy_upload")
    wrong = c.critique(_text("blind49", "b49_np_chunks"))
    assert _refused_for(wrong, "the wrong way"), wrong.reasons


def test_a_metric_labelled_apart_moves_toward_its_roofline(case):
    from kernel_profiler.critic.direction import fix_metric_direction
    assert fix_metric_direction("fp8 inputs would roughly double the tensor ceiling. Metric: step time; the tensor "
                                "pipe % should stay where it is.") == ("step time", "decrease")
    assert fix_metric_direction("Metric: step time, it will double.") == ("step time", "increase")  # its own words
    c = case("py_gemm_bf16")
    text = _text("blind67", "b67_gemm_chat")
    assert _accepted(c.critique(text)), c.critique(text).reasons
