"""Readings found in the sixteenth session (issue 10), on real H200 captures, each with a twin the critic refuses:
  - numbers: 0 is 0 in any unit; "537.44 us" opening a line is no list item "537."; "warp instr" counts
    instructions; each rank's own launches of a kernel (mean, median, count) are facts; the launch-to-launch period
    of a kernel launched once per step is one; "10 cudaStreamSynchronize calls" counts that function's calls;
  - fixes: "half the bytes", "-> ~0", "≫ 0" say which way; "double buffering" says none; "UVM migrations" and "the
    XU pipe" name what moves; a "- **Metric:**" bullet after the fix is the fix's;
  - claims: a JSON `"near_peak": false` claims no near peak; "the conversion-rate limit" is instruction issue, not
    the roofline; "culprit = scattered global access" asserts its cause; a pipe named as the compute limit must be
    busy (the FP64 pipe at 12% beside an XU pipe at 94% is not it);
  - layouts: a hypothesis log numbered "#1", "#2" is judged on the one it accepts; a near-peak verdict may give its
    planted cause's absence in arrow notation.
"""
from __future__ import annotations

from critic_case import (  # noqa: F401 (case: the fixture)
    accepted as _accepted, answer, answer_text as _text, case, refused_for as _refused_for)

from kernel_profiler.critic import parse_answer
from kernel_profiler.critic.claim import claimed_mechanism
from kernel_profiler.critic.direction import fix_metric_direction
from kernel_profiler.critic.facts import gather_facts
from kernel_profiler.critic.hypotheses import accepted_hypothesis
from kernel_profiler.critic.match import candidates
from kernel_profiler.critic.scope import kernel_mentions
from kernel_profiler.critic.numbers import evidence_quantity, quantities
from kernel_profiler.critic.paragraphs import LABEL


def test_zero_is_zero_in_any_unit(case):
    c = case("h8_zero_copy_fixed")
    text = _text("blind58", "b58_zc_prose")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("`pcie__read_bytes.sum.per_second` = 0", "`pcie__read_bytes.sum.per_second` = 3"))
    assert _refused_for(wrong, "pcie__read_bytes.sum.per_second"), wrong.reasons
    assert ("byte_rate", 0.0) in {(fam, v) for fam, v, _ in candidates(evidence_quantity(0.0, None))}
    assert "byte_rate" not in {fam for fam, _, _ in candidates(evidence_quantity(3.0, None))}


def test_a_number_opening_a_line_is_no_list_item_and_warp_instr_counts_instructions(case):
    c = case("h6_intdiv_index_fixed")
    terse = _text("blind58", "b58_div_terse")
    assert _accepted(c.critique(terse)), c.critique(terse).reasons
    assert LABEL.match("537.44 us | DRAM 82.2%").end() == 0  # (it was read as "44 us" after a list item "537.")
    assert LABEL.match("2. **Fix:** pad").end() == len("2. **Fix:** ")
    summary = _text("blind58", "b58_div_exec")
    assert _accepted(c.critique(summary)), c.critique(summary).reasons
    assert [q.unit for q in quantities("35.83M warp instr / 2.10M")] == ["instr"]
    wrong = c.critique(summary.replace("Instructions per float4: 35.83M warp instr", "Instructions per float4: 45.83M warp instr"))
    assert _refused_for(wrong, "45.83M"), wrong.reasons


def test_fixes_in_other_words_say_what_moves_and_which_way(case):
    assert fix_metric_direction("run the activation in bf16 (half the bytes). The metric that should move is DRAM "
                                "bytes per step.") == ("DRAM bytes", "decrease")
    assert fix_metric_direction("keep one (or two, for double buffering) 32 MB pinned buffers. host time in "
                                "cudaHostAlloc per step -> ~0.") == ("host time", "decrease")
    assert fix_metric_direction("keep two for double buffering.")[1] is None  # a kind of buffering, no rise
    assert fix_metric_direction("UVM migrations per step -> 0; one 64 MB copy") == ("UVM migrations per step", "decrease")
    assert fix_metric_direction("expect tensor pipe active ≫ 0 and each GEMM to drop from ~21 ms to a few ms") == \
        ("tensor pipe active", "increase")
    assert fix_metric_direction("you should see the XU pipe drop to ~0 and the FMA pipe become the busy one.") == \
        ("XU pipe", "decrease")
    c = case("py_fused_gelu")
    text = _text("blind58", "b58_gelu_chat")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    c = case("h6_pinned_churn")
    text = _text("blind58", "b58_churn_bullets")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    assert "-> ~0" in parse_answer(text).fix.change  # the "- **Metric:**" bullet after "- **Fix:**"
    c = case("h8_managed_touch")
    text = _text("blind58", "b58_managed_table")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("UVM migrations per step -> 0", "UVM migrations per step -> 80,000"))
    assert wrong.verdict == "reject", wrong.reasons


def test_each_ranks_own_kernel_statistics_are_facts(case):
    c = case("mr_uneven")
    text = _text("blind59", "b59_mru_slack")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("averages **10.26 ms**", "averages **6.26 ms**"))
    assert _refused_for(wrong, "'6.26 ms'"), wrong.reasons
    facts = gather_facts(c.arts, c.dg)
    assert {f.value for f in facts.by_metric["timeline.rank_launches"]} >= {198.0, 396.0}
    assert any(k.startswith("nvjet_") for k in kernel_mentions("nvjet avg duration", facts))
    assert not kernel_mentions("an elementwise copy", facts)  # a word of English names no kernel by its prefix


def test_a_kernels_launch_period_is_a_fact(case):
    c = case("h6_py_cudnn_autotune")
    text = _text("blind59", "b59_h6_tf32")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("pointwise kernel\nis 2.61 ms (median)", "pointwise kernel\nis 3.61 ms (median)")
                       .replace("pointwise kernel is 2.61 ms (median)", "pointwise kernel is 3.61 ms (median)"))
    assert _refused_for(wrong, "'3.61 ms'"), wrong.reasons


def test_an_api_functions_call_count_is_checked(case):
    assert [(q.written, q.value) for q in quantities("nsys shows **10 cudaStreamSynchronize** calls")] == \
        [("10 calls", 10.0)]
    c = case("h8_py_mask_sync")
    wrong = c.critique(_text("blind59", "b59_h8_counts"))
    assert _refused_for(wrong, "'10 calls'"), wrong.reasons


def test_a_json_false_claims_nothing(case):
    c = case("ho_py_torch_softmax")
    text = _text("blind59", "b59_sm_json")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace('"near_peak": false', '"near_peak": true'))
    assert _refused_for(wrong, "claims near peak"), wrong.reasons


def test_a_pipe_named_as_the_limit_must_be_busy(case):
    c = case("h5_fp64_promotion")
    right = c.critique(_text("blind59", "b59_h5_chat"))  # "running at the conversion-rate limit, ~94% of it"
    assert _accepted(right), right.reasons
    assert claimed_mechanism(parse_answer("## Bottleneck\nThe kernel is running at the conversion-rate limit.\n\n"
                                          "## Evidence\n- x\n\n## Mechanism\nm\n\n## Fix\nf\n")) == "instruction_bound"
    wrong = c.critique(_text("blind59", "b59_h5_dfma"))
    assert _refused_for(wrong, "names the FP64 pipe"), wrong.reasons


def test_a_culprit_is_asserted(case):
    c = case("h5_shuffle_rowsum_fixed")
    wrong = c.critique(_text("blind58", "b58_rowsum_uncoal"))
    assert _refused_for(wrong, "claims uncoalesced global"), wrong.reasons


def test_a_log_numbered_with_hashes_is_judged_on_its_accepted_hypothesis():
    text = _text("blind59", "b59_h6_hyp")
    said = accepted_hypothesis(text)
    assert said.startswith("the math path.") and "allow_tf32=False" in said, said
    assert claimed_mechanism(parse_answer(text)) == "no_tensor_cores"
    assert claimed_mechanism(parse_answer(text.replace("allow_tf32=False. ACCEPTED.", "allow_tf32=False. REJECTED."))) \
        != "no_tensor_cores"  # no hypothesis accepted: no verdict taken from the log


# ----------------------------------------------------------------------------- blind60+61 (read from 02:37 UTC)
def test_a_range_that_holds_the_measured_value_is_no_contradiction(case):
    c = case("py_host_work")
    text = _text("blind61", "b61_hostwork_gpusort")
    assert _accepted(c.critique(text)), c.critique(text).reasons  # "1-4 us gaps" around a 3.2 us median gap
    wrong = c.critique(text.replace("with 1-4 us gaps", "with 4-5 us gaps"))  # a range that misses 3.2 us
    assert _refused_for(wrong, "'4 us'"), wrong.reasons
    assert [q.unit for q in quantities("21 regs limiter, stalls: long_scoreboard")] == ["regs"]


def test_a_range_of_results_is_no_one_chain_and_from_to_reads_exponents(case):
    c = case("ho_small_grid_compute")
    text = _text("blind61", "b61_smallgrid_grid")  # "69.8 us (ncu) / 50.8 us (nsys) = 8-11x"
    assert _accepted(c.critique(text)), c.critique(text).reasons
    assert fix_metric_direction("smsp__inst_executed.sum from 7.83e8 to roughly 8e7 (~10x fewer)") == \
        ("smsp__inst_executed.sum", "decrease")


def test_what_limits_it_now_is_the_verdict_and_dont_touch_leaves_it(case):
    c = case("h5_fp64_promotion_fixed")
    text = _text("blind60", "b60_damp_unroll")  # "## Status of the fix" (event sync mentioned), "## What limits it now"
    assert parse_answer(text).bottleneck.startswith("Instruction issue"), parse_answer(text).bottleneck
    assert _accepted(c.critique(text)), c.critique(text).reasons
    c = case("ot_py_gemm_bf16")
    text = _text("blind61", "b61_otgemm_slack")  # "**don't touch the matmul** ... expect per-GEMM time to stay ~1.4 ms"
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("**don't touch the matmul**", "**tune the matmul**"))
    assert wrong.verdict == "reject", wrong.reasons


def test_double_math_for_an_fp32_kernel_and_fewer_warps_for_a_latency_bound_one_move_the_wrong_way(case):
    c = case("h5_fp64_promotion_fixed")
    wrong = c.critique(_text("blind60", "b60_damp_double"))
    assert _refused_for(wrong, "moves an FP32 kernel's math to double"), wrong.reasons
    c = case("cu_smem_occupancy_fixed")
    wrong = c.critique(_text("blind60", "b60_smem_morelds"))
    assert _refused_for(wrong, "leaves fewer warps resident"), wrong.reasons
    right = c.critique(_text("blind60", "b60_smem_float4"))
    assert not any("fewer warps" in r for r in right.reasons), right.reasons


def test_a_list_of_keywords_is_no_answer(case):
    c = case("h6_intdiv_index_fixed")
    wrong = c.critique(_text("blind61", "b61_intdiv_stuffed"))
    assert _refused_for(wrong, "list of keywords"), wrong.reasons
    terse = c.critique(_text("blind58", "b58_div_terse"))  # a clipped note of the same kernel keeps its sentences
    assert _accepted(terse), terse.reasons


def test_fewer_warps_to_give_a_spilling_kernel_registers_is_no_wrong_way(case):
    c = case("cu_local_array")
    text = answer("`smooth_local` is memory-bound on local-memory traffic: its stack array spills.",
                  ["ptxas reports a stack frame (ptxas.log)"],
                  "The per-thread array lives in local memory because it is indexed at run time.",
                  "Cap occupancy at 4 blocks per SM with __launch_bounds__ so each thread gets more registers and the "
                  "spills go away; local-memory traffic should fall.")
    assert not any("fewer warps" in r for r in c.critique(text).reasons), c.critique(text).reasons
