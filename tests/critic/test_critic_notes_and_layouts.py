"""Readings found in the fourteenth session (issue 10), on real H200 captures, each with a twin the critic refuses:
  - layouts: a plain "bound: host, ..." line under a note's title; a note addressed to a channel ("@perf-team");
    a heading that states the verdict; a part's bold label after a sentence on the same line; a hypothesis log whose
    verdict is the hypothesis it accepts; a JSON mechanism id in snake case; a sum wrapped at its plus sign;
  - the chain: a terse note's cause on an evidence line; "->" relates two numbers;
  - numbers: a bare term of a sum in its result's unit; "15.560 / 15.559 ms" both milliseconds; "256 thr",
    "34,071 warp-inst"; the one kernel profiled is the answer's subject; "a 14 µs kernel" is no program time;
    "metric `X` down" is the fix's, not a measurement;
  - bounds: compute-bound needs a busy SM over the kernel's elapsed time; a level's "active" rate is read over the
    elapsed time; a tensor-core kernel by its name has tensor cores;
  - words: unfused chains, Python waits, idle SMs, "it's the copy", "must not be mistaken for the steady state".
"""
from __future__ import annotations

import pytest

from critic_case import answer_text as _text, case, refused_for as _refused_for  # noqa: F401 (case: the fixture)

from kernel_profiler import catalog
from kernel_profiler.critic import critique_text, parse_answer
from kernel_profiler.critic.arithmetic import chains
from kernel_profiler.critic.chain import causal_chain
from kernel_profiler.critic.claim import claimed_mechanism
from kernel_profiler.critic.evidence_lines import numbers_of, parse_evidence
from kernel_profiler.critic.hypotheses import accepted_hypothesis
from kernel_profiler.critic.numbers import quantities


def test_a_bound_line_under_a_notes_title(case):
    c = case("h7_py_compile_tiny")
    text = _text("blind50", "b50_ctiny_terse")
    a = parse_answer(text)
    assert a.bottleneck.startswith("compile_tiny / steady state\nbound: host, launch overhead"), a.bottleneck
    assert c.critique(text).verdict == "accept", c.critique(text).reasons
    wrong = c.critique(text.replace("bound: host, launch overhead (per-call Python+Dynamo path), not the kernel",
                                    "bound: memory, the Triton kernel streams DRAM at its limit"))
    assert _refused_for(wrong, "host-bound"), wrong.reasons


def test_a_note_addressed_to_a_channel(case):
    c = case("ho_py_d2h_volume")
    text = _text("blind39", "b39_d2h_slack")
    assert parse_answer(text).bottleneck == "it's the D2H copy, full stop."
    assert c.critique(text).verdict == "accept", c.critique(text).reasons
    wrong = c.critique(text.replace("it's the D2H copy, full stop.", "it's the kernel, full stop: memory-bound."))
    assert wrong.verdict == "reject", wrong.reasons


def test_a_heading_that_states_the_verdict(case):
    c = case("h6_py_tensor_from_list")
    text = _text("blind39", "b39_list_table")
    assert "host-bound on list" in parse_answer(text).bottleneck
    assert c.critique(text).verdict == "accept", c.critique(text).reasons
    wrong = c.critique(text.replace("host-bound on list → tensor conversion", "memory-bound on the GEMM"))
    assert _refused_for(wrong, "memory-bound"), wrong.reasons


def test_a_part_label_after_a_sentence_and_a_fix_metric_with_its_way(case):
    c = case("cu_divergence_fixed")
    text = _text("blind53", "b53_div_hyp")
    a = parse_answer(text)
    assert a.fix is not None and a.fix.change.startswith("leave it") and a.fix.direction == "decrease"
    assert "**Change:**" not in a.bottleneck
    assert c.critique(text).verdict == "accept", c.critique(text).reasons
    # the measured count written wrong is still refused
    wrong = c.critique(text.replace("206.3 M warp instructions", "296.3 M warp instructions"))
    assert wrong.verdict == "reject", wrong.reasons


def test_a_hypothesis_log_is_judged_on_the_hypothesis_it_accepts(case):
    text = _text("blind53", "b53_hist_hyp")
    assert accepted_hypothesis(text).startswith("H3 — memory latency with too few bytes in flight. Accepted")
    assert accepted_hypothesis(text.replace("**Accepted:", "**Rejected:")) is None
    c = case("cu_histogram_fixed")
    assert c.critique(text).verdict == "accept", c.critique(text).reasons
    # the planted problem accepted instead: the contention it claims is gone from the captures
    flipped = text.replace("is still there.**", "is still there.** **Accepted: this is the limiter.**") \
        .replace("**Accepted: latency-bound on scalar loads.**", "**Rejected.**")
    wrong = c.critique(flipped)
    assert _refused_for(wrong, "atomic"), wrong.reasons


def test_a_snake_case_mechanism_id_in_json(case):
    c = case("cu_histogram_fixed")
    text = _text("blind53", "b53_hist_banks")  # blames bank conflicts the captures do not have
    assert claimed_mechanism(parse_answer(text)) == "shared_bank_conflict"
    assert _refused_for(c.critique(text), "shared bank conflict"), c.critique(text).reasons


def test_a_sum_wrapped_at_its_plus_sign():
    ev = parse_evidence("- DRAM bytes (`dram__bytes_read.sum` + `dram__bytes_write.sum`): 1,610.7 MB read\n"
                        "  + 1,230.8 MB written = **2.84 GB per step**.\n- step median 963 us (nsys)")
    assert len(ev) == 2 and "1,230.8 MB written" in ev[0].meaning
    nested = parse_evidence("- DRAM bytes: 1,610.7 MB read.\n  + 1,230.8 MB written\n- step median 963 us")
    assert len(nested) == 3  # a line that ends its sentence: the next "+ ..." is a bullet of its own


def test_a_bare_term_of_a_sum_in_its_results_unit():
    said = "per step: ew_scale 176us + ew_add 180 + ew_tanh 186 + ew_mul 225 + ew_sub 176 = ~944us"
    assert all(s.ok for s in chains(said)) and chains(said)
    assert not any(s.ok for s in chains(said.replace("~944us", "~1200us")))


def test_a_pair_of_readings_shares_its_unit():
    first = numbers_of("medians 15.560 / 15.559 ms")[0]
    assert first.family == "time" and abs(first.value - 15.56e6) < 1e3
    assert numbers_of("10 / 500 ms")[0].family == "count"  # 50x apart: a division, not a pair
    assert [q.unit for q in quantities("256 thr and 34,071 warp-inst")] == ["thr", "warp-inst"]


def test_counts_in_short_units(case):
    c = case("ot_py_gemm_fp32")
    text = _text("blind53", "b53_gemm_table")
    assert c.critique(text).verdict == "accept", c.critique(text).reasons
    wrong = c.critique(text.replace("grid 32×64, 256 thr", "grid 32×64, 384 thr"))
    assert _refused_for(wrong, "'384"), wrong.reasons
    s = case("h6_smem_float_atomic_fixed")
    notes = _text("blind53", "b53_smemfix_notes")
    assert s.critique(notes).verdict == "accept", s.critique(notes).reasons
    assert s.critique(notes.replace("34,071 warp-inst", "44,071 warp-inst")).verdict == "reject"


def test_the_one_profiled_kernel_and_a_kernels_own_time(case):
    c = case("cu_grid_stride_fixed")  # sass.txt lists the binary's other kernels; ncu profiled one
    text = _text("blind53", "b53_grid_left")
    assert c.critique(text).verdict == "accept", c.critique(text).reasons
    wrong = c.critique(text.replace("| 14.27 µs |", "| 16.27 µs |"))
    assert _refused_for(wrong, "16.27"), wrong.reasons
    assert "a 14 µs kernel spends" in text  # beside "per iteration": a kernel's time, said so
    step = c.critique(text.replace("the step (17.8 µs) is dominated", "the step time (14.27 µs) is dominated"))
    assert _refused_for(step, "ncu kernel duration"), step.reasons


def test_a_terse_notes_cause_on_an_evidence_line():
    mech = "16 CTAs are 16 SMs' worth of loads in flight out of the 132 SMs the memory system has to draw requests from."
    ev = "stalls: long_scoreboard = 92.5% of the pc samples -> each of the 64 warps waits on its own loads."
    verdict = "bound: latency, low parallelism (grid too small), ~12x off the DRAM floor"
    assert causal_chain(mech, ["low_parallelism"], verdict, "", ev) is None
    assert "names no cause" in causal_chain(mech, ["low_parallelism"], verdict, "", "stalls: long_scoreboard = 92.5%.")


def test_compute_bound_needs_a_busy_sm(case):
    c = case("h8_legacy_stream")
    text = _text("blind34", "b34_legacy_compute")  # chain_fma runs on 16 of 132 SMs
    assert _refused_for(c.critique(text), "busy over the kernel's time"), c.critique(text).reasons
    ok = case("ot_py_gemm_fp32")  # an FFMA GEMM at 77% of its FP32 ceiling is compute-bound
    assert ok.critique(_text("blind53", "b53_gemm_table")).checks["bound"]


def test_an_active_rate_read_over_the_elapsed_time(captures):
    paths = [captures.path("cu_tiny_launches", n) for n in ("ncu_raw.csv", "ncu.ncu-rep")]  # the kernel's profile only
    text = _text("blind29", "b29_tiny_membound")  # l1tex 97% of active cycles: one warp on one SM for 2 us
    v = critique_text(text, paths)
    assert _refused_for(v, "no level of its memory hierarchy is half busy"), v.reasons


def test_a_tensor_core_kernel_by_its_name(case):
    c = case("py_item_sync_fixed")  # nsys only: no tensor-pipe counter, but an nvjet kernel
    text = _text("blind16", "b16_item_tc")
    assert _refused_for(c.critique(text), "tensor-core kernel by its name"), c.critique(text).reasons


@pytest.mark.parametrize("said, cause", [
    ("five separate grid-stride kernels, each streaming t through HBM", "excess_dram_traffic"),
    ("the intermediates round-trip through HBM four times", "excess_dram_traffic"),
    ("the GPU is mostly waiting for Python", "host_work"),
    ("sixteen SMs get one block each and the other 116 have nothing to run", "low_parallelism"),
    ("it's the D2H copy, full stop", "transfer_volume"),
])
def test_words_of_causes(said, cause):
    assert cause in catalog.claimed(said)


def test_a_fused_kernel_is_no_unfused_chain(case):
    assert "excess_dram_traffic" not in catalog.claimed("the repeated work is one fused Triton kernel near its roofline")
    assert "excess_dram_traffic" in catalog.claimed("fuse the three kernels into one")
    c = case("hot_py_compile_pointwise")
    text = _text("blind53", "b53_comp_bold")
    assert c.critique(text).verdict == "accept", c.critique(text).reasons
    wrong = c.critique(text.replace("and must not be mistaken for the steady state", "and they dominate this run"))
    assert _refused_for(wrong, "start-up"), wrong.reasons


def test_a_fix_that_splits_a_streaming_kernel(case):
    from kernel_profiler.critic.wrong_way import _UNFUSE
    assert not _UNFUSE.search("fuse the three kernels into one") and _UNFUSE.search("split it into three kernels")
    c = case("py_fused_gelu")  # the fused GELU moves DRAM at ~86% of peak
    text = _text("blind53", "b53_gelu_unfuse")
    assert _refused_for(c.critique(text), "splits a kernel that moves DRAM"), c.critique(text).reasons


def test_a_product_with_its_sources_named_between_factors():
    said = ("The FP32 ceiling of this GPU is 132 SMs (TARGET_INFO_GPU.smCount) x 128 FP32 lanes x 2 FLOP x 1.98 GHz "
            "(TARGET_INFO_GPU.clockRate) = 66.9 TFLOP/s.")
    assert [s.ok for s in chains(said)] == [True]
    assert [s.ok for s in chains(said.replace("66.9", "76.9"))] == [False]


def test_a_width_is_no_count_and_a_sample_total_is_the_samples(case):
    assert [q.written for q in numbers_of("runtime 64-bit `/` in a 6-dimensional index over 64 blocks")] == \
        ["64 blocks"]
    c = case("cu_elementwise_fused")  # 19,112 long-scoreboard samples of 21,565
    text = _text("blind55", "b55_ew_inflight")
    assert c.critique(text).verdict == "accept", c.critique(text).reasons
    wrong = c.critique(text.replace("of the 21,565 sampled", "of the 23,565 sampled"))
    assert _refused_for(wrong, "23,565"), wrong.reasons


def test_a_latency_limit_is_no_roofline(case):
    c = case("h5_reg_occupancy_fixed")  # the pointer chase, at 1.98x its DRAM floor: limited by its hops
    text = _text("blind15", "b15_regfix_latency")
    assert "at the limit of **its own dependency chain**" in text
    assert c.critique(text).verdict == "accept", c.critique(text).reasons
    wrong = c.critique(text.replace("at the limit of **its own dependency chain**", "at its DRAM roofline"))
    assert _refused_for(wrong, "duration / roofline floor"), wrong.reasons


def test_many_small_copies_each_with_its_sync_are_a_per_call_cost(case):
    """h5_py_small_uploads: 1,024 pageable 4 KB `.to("cuda")` per step, each ending in its own stream sync (the suite's
    ground truth: launch overhead, a per-call cost). A sync the code adds per launch (cu_sync_loop) is not that."""
    c = case("h5_py_small_uploads")
    text = _text("blind22", "b22_up_review")
    assert c.critique(text).verdict == "accept", c.critique(text).reasons
    v = case("cu_sync_loop").critique(_text("blind16", "b16_sync_launch"))
    assert _refused_for(v, "launch overhead"), v.reasons


def test_bound_labels_in_other_words(case):
    """"bound: GPU kernel" on a note's line, and a JSON "bound" key read back as the bare word "compute", state a
    kernel bound the timeline refutes when copies or host time fill the steady window."""
    d = case("h6_py_d2h_pageable")
    text = _text("blind55", "b55_d2h_kernel")
    assert _refused_for(d.critique(text), "kernel-bound"), d.critique(text).reasons
    h = case("cu_host_work")
    text = _text("blind54", "b54_chost_kernel")
    assert _refused_for(h.critique(text), "compute-bound"), h.critique(text).reasons
    right = _text("blind54", "b54_chost_sort")  # host-bound, its fix's metric written `gpu_busy_fraction`
    assert h.critique(right).verdict == "accept", h.critique(right).reasons


def test_a_sync_added_in_every_iteration(case):
    c = case("py_item_sync_fixed")
    text = _text("blind54", "b54_sync_again")
    assert _refused_for(c.critique(text), "adds a synchronization per launch"), c.critique(text).reasons


def test_a_cause_line_of_a_note_names_the_claim(case):
    """blind41's b41_smem_coalesce: "- Cause: ... each warp's loads are split over many sectors (uncoalesced), wasting
    DRAM bandwidth" names its cause on a line labelled as one; the tile fill's loads use every byte of their sectors."""
    text = _text("blind41", "b41_smem_coalesce")
    assert claimed_mechanism(parse_answer(text)) == "uncoalesced_global"
    c = case("ho_smem_stride_reduce")
    assert _refused_for(c.critique(text), "useful bytes per 32-byte global sector"), c.critique(text).reasons
    assert claimed_mechanism(parse_answer(text.replace("- Cause: the fill loop", "- Note: the fill loop"))) is None


def test_a_fused_op_named_is_no_claim_of_fusion():
    for said in ("PyTorch's fused GELU", "what's left after the fusion", "one fused Triton kernel"):
        assert "excess_dram_traffic" not in catalog.claimed(said), said
    for said in ("fuse the five kernels", "the ops are not fused", "the chain should be fused into one kernel"):
        assert "excess_dram_traffic" in catalog.claimed(said), said


def test_a_hypothesis_answered_yes():
    text = _text("blind50", "b50_aos_hyp")  # "**H0: the AoS uncoalescing is still there.** No. ..." first
    assert accepted_hypothesis(text).startswith("H3: not enough bytes in flight (memory latency). Yes.")
    assert parse_answer(text).bottleneck.startswith("H3: not enough bytes in flight")
