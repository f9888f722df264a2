"""Readings found in the seventeenth session (issue 10), on real H200 captures, each with a twin the critic refuses:
  - numbers: "4096 ops/clk/SM" is a per-clock peak; "2-byte loads" is an element's width; a statistic ("median")
    belongs to its own clause; "its GEMMs" names the capture's one GEMM kernel; "8 x 256-thread blocks = 64
    warps/SM" counts threads in warps; "1024 copies" is never a byte count; "58.2 of the 60.8 ms" is in ms; a
    program's copy time per step is a fact; a line labelled "(estimate):" predicts its numbers;
  - claims: a "**Bound: latency ...**" label is the verdict whatever the sentence after it says of idle units; the
    download volume is a cause; the latency of dependent loads is a limit, not the roofline; time in a collective
    waits for the straggler the answer names; DRAM blamed at 4.5% of its peak is refused; kernels a program-level
    verdict blames must carry a real share of the window's kernel time; a terse note that links its numbers in
    arrows is no keyword list;
  - fixes: unpinning a pinned download is the wrong way; "GPU busy -> ~98 %, loop 24.3 ms -> ~13.5 ms" gives the
    busy fraction no fall; "copy ns per step" and "step median" name what moves; "2.03 ms → tens of
    microseconds" falls;
  - layouts: an appendix headed "what limits it now" backs the executive summary's verdict.
"""
from __future__ import annotations

from critic_case import (  # noqa: F401 (case: the fixture)
    accepted as _accepted, answer_text as _text, case, refused_for as _refused_for)

from kernel_profiler.critic.direction import fix_metric_direction
from kernel_profiler.critic.numbers import WIDTH, quantities


def test_a_per_clock_rate_is_a_peak_and_an_element_width_no_measurement(case):
    c = case("h8_py_bf16_odd_k")
    text = _text("blind62", "b62_oddk_table")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("(`hgmma`, 4096 ops/clk/SM)", "(`hgmma`, 4608 ops/clk/SM)"))
    assert _refused_for(wrong, "4608"), wrong.reasons
    assert WIDTH.match("2-byte loads") and WIDTH.match("16-byte vector accesses")
    assert not WIDTH.match("2-byte of") and not WIDTH.match("512-byte copies")


def test_a_statistic_belongs_to_its_clause_and_gemms_name_the_gemm(case):
    c = case("mr_uneven")
    text = _text("blind63", "b63_mr_slack")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("its GEMMs are ~1.53 ms", "its GEMMs are ~1.83 ms"))
    assert _refused_for(wrong, "1.83 ms"), wrong.reasons


def test_time_in_a_collective_waits_for_the_straggler_the_answer_names(case):
    c = case("mr_uneven")
    text = _text("blind66", "b66_mr_prose")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("Rank 1 is the straggler. ", ""))  # then it blames the wait in the all-reduce
    assert _refused_for(wrong, "comms wait"), wrong.reasons
    wrong = c.critique(_text("blind63", "b63_mr_rank0"))  # "So the straggler is rank 0": the rank that waits
    assert _refused_for(wrong, "blames rank 0"), wrong.reasons


def test_a_bound_label_is_the_verdict(case):
    c = case("tr_atomic_hist")
    text = _text("blind62", "b62_trhist_contention")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("**Bound: latency / atomic contention.**", "**Bound: host.**"))
    assert _refused_for(wrong, "host-bound"), wrong.reasons


def test_the_download_volume_is_a_cause_and_unpinning_it_the_wrong_way(case):
    c = case("ho_py_d2h_volume")
    text = _text("blind62", "b62_d2hvol_volume")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(_text("blind62", "b62_d2hvol_unpin"))
    assert _refused_for(wrong, "the wrong way"), wrong.reasons


def test_threads_count_in_warps_and_an_appendix_backs_the_summary(case):
    c = case("h5_reg_occupancy_fixed")
    text = _text("blind63", "b63_chase_latency")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("blocks = 64 warps/SM", "blocks = 48 warps/SM"))
    assert _refused_for(wrong, "48 warps"), wrong.reasons


def test_a_target_without_a_value_ends_its_clause(case):
    assert fix_metric_direction("what should move: allocator idle 11 ms -> ~0, GPU busy -> ~98 %, loop 24.3 ms -> "
                                "~13.5 ms") == ("allocator idle", "decrease")
    c = case("ot_cu_alloc_churn")
    text = _text("blind63", "b63_alloc_slack")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("allocator idle 11 ms -> ~0, GPU busy -> ~98 %", "GPU busy 54.8 % -> ~30 %"))
    assert _refused_for(wrong, "GPU busy"), wrong.reasons


def test_dram_blamed_at_a_few_percent_of_its_peak_is_refused(case):
    c = case("h8_py_bf16_odd_k")
    wrong = c.critique(_text("blind62", "b62_oddk_dram"))
    assert _refused_for(wrong, "blames DRAM bandwidth"), wrong.reasons


def test_blamed_kernels_must_carry_the_programs_gpu_time(case):
    c = case("h8_py_naive_attention")
    wrong = c.critique(_text("blind63", "b63_attn_gemm"))
    assert _refused_for(wrong, "of the steady window's kernel time"), wrong.reasons
    for right in ("b63_attn_sdpa", "b63_attn_hyp"):
        v = c.critique(_text("blind63", right))
        assert not any("steady window's kernel time" in r for r in v.reasons), v.reasons


def test_counts_are_no_bytes_and_a_part_takes_its_wholes_unit(case):
    assert [q.unit for q in quantities("copies are 58.2 of the 60.8 ms steady window")] == ["ms", "ms"]
    c = case("h5_py_small_uploads")
    text = _text("blind66", "b66_uploads_headings")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("1024 copies ≈ 1.0 ms", "1024 copies ≈ 2.0 ms"))
    assert _refused_for(wrong, "2.0 ms"), wrong.reasons
    c = case("cu_pinned_copy")
    text = _text("blind66", "b66_pin_slack")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("58.2 of the 60.8 ms", "52.2 of the 60.8 ms"))
    assert _refused_for(wrong, "52.2"), wrong.reasons


def test_a_terse_note_in_arrows_is_no_keyword_list(case):
    c = case("ho_strided_store")
    text = _text("blind66", "b66_strided_terse")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("->", ","))  # the same words with nothing linking them
    assert _refused_for(wrong, "list of keywords"), wrong.reasons


def test_a_step_median_names_what_moves_and_an_estimate_label_heads_its_line(case):
    metric, direction = fix_metric_direction("Metric: nsys step median should fall ~6-8x.")
    assert "step median" in metric and direction == "decrease"
    assert fix_metric_direction("step median 2.03 ms → tens of microseconds") == ("step median", "decrease")
    assert fix_metric_direction("kernel time from 3 us to tens of milliseconds") == ("kernel time", "increase")
    c = case("py_fused_gelu")
    text = _text("blind67", "b67_gelu_exec")
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("- bf16 variant (estimate): 268 MB", "- bf16 variant: 268 MB"))
    assert _refused_for(wrong, "65 us"), wrong.reasons
