"""Rules of 2026-12-01 (fifth session), each with a twin that must go the other way, on real captures where the rule
reads one:
  - arithmetic as written: x and / before + and - ('31/32 x 16 + 1/32 x 1024 = 47.5'), 'plus', sizes in MiB written
    as MB, an FMA counted as two FLOP; an exponent ('8192^3') is no quantity; a ratio written as a range ('2.5-3x');
  - layouts: a wrapped evidence bullet keeps its continuation, and a metric written '`metric` = 9.6' is bound to
    that value; 'Do this first:' is a fix label; '- **Fix.** ...' bullets label the parts of a terse note;
  - a negation inside a cause's own words ('data it never uses') does not rule the cause out;
  - claims checked against the captures: a datasheet peak (the host link's 64 GB/s) presented as measured; a fix
    that edits a library kernel; 'instruction-bound' where the SMs idle half the elapsed time (a partial wave);
    atomic contention with a handful of atomics; 'DRAM bandwidth' as the limiter with DRAM and caches idle;
    host-bound where the host time is start-up and the steady state is GPU-bound; a bare 'latency-bound' where L2
    is saturated; transfer volume that crosses the link without copies (zero-copy reads).
"""
from __future__ import annotations

import pytest
from critic_case import answer, case  # noqa: F401 (the fixture)

from kernel_profiler.critic import AnswerFormatError

from kernel_profiler.critic import parse_answer
from kernel_profiler.critic.arithmetic import chains, implicit_miss
from kernel_profiler.critic.claim import asserted_cause
from kernel_profiler.critic.numbers import quantities


def _holds(text: str) -> list[bool]:
    return [s.ok for s in chains(text)]


def test_arithmetic_as_written():
    assert _holds("Average lane work is 31/32 x 16 + 1/32 x 1024 = 47.5 iterations per element.") == [True]
    assert _holds("Average lane work is 31/32 x 16 + 1/32 x 1024 = 52 iterations per element.") == [False]
    assert _holds("It needs 64M x 4 B of charges plus 64M x 4 B of output = 537 MB.") == [True]  # 2^26 x 4 B x 2
    assert _holds("It needs 256 MB of indices + 128 MB gathered + 128 MB written = 537 MB.") == [True]  # MiB as MB
    assert _holds("It needs 256 MB of indices + 128 MB gathered + 128 MB written = 600 MB.") == [False]
    assert _holds("4M threads x 64 rounds x 48 FMAs = 25.8 GFLOP") == [True]  # an FMA is two FLOP
    assert _holds("4M threads x 64 rounds x 48 FMAs = 30 GFLOP") == [False]
    assert _holds("it ran 208 times over 13 steps = 16 per step") == []  # 'times' is a noun here, not an operator


def test_an_exponent_is_no_quantity_and_a_ratio_range_is_not_a_miss():
    assert [q.written for q in quantities("2*8192^3 FLOP / 1.39 ms = 791 TFLOP/s")] == ["1.39 ms", "791 TFLOP/s"]
    ranged = "I expect the kernel to go from 0.96 ms to roughly 0.3-0.4 ms (2.5-3x)."
    assert all(implicit_miss(ranged, q) is None for q in quantities(ranged))
    single = "I expect the kernel to go from 0.96 ms to 0.3 ms (2.5x)."
    assert any(implicit_miss(single, q) for q in quantities(single))  # 0.96 / 0.3 = 3.2, not 2.5


_FIX_FIRST = """**Do this first:** sort the indices once outside the loop and gather with the sorted copy. Watch
`dram__bytes_read.sum`: it should fall from 2.38 GB to ~1 GB per call.

**Why:** `table[idx]` is memory-bound on scattered reads: every lane lands in its own 32-byte sector.

**Numbers** (ncu_raw.csv):
- 960.5 us per call (`gpu__time_duration.sum`).
- 41.9M load sectors for 2.10M load requests; `smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio`
  = **9.6 bytes used per 32-byte sector**.
"""


def test_a_fix_first_label_and_a_wrapped_bullet_bound_to_its_metric():
    a = parse_answer(_FIX_FIRST)
    assert a.fix is not None and "sort the indices" in a.fix.change
    ratio = [e for e in a.evidence if e.metric and e.metric.startswith("smsp__sass_average")]
    assert [e.value for e in ratio] == [9.6]  # the continuation line holds the value the metric is bound to
    unwrapped = parse_answer(_FIX_FIRST.replace("\n  = **9.6", " = **9.6"))
    assert [e.value for e in unwrapped.evidence] == [e.value for e in a.evidence]


def test_bold_labelled_bullets_of_a_terse_note():
    note = ("# small matmuls: host-bound\n\n"
            "- **Bottleneck.** Launch overhead: 600 tiny kernels per step, so the GPU is idle 89% of the time.\n"
            "- **Step time.** Median 7.90 ms per step over 20 steps.\n"
            "- **Mechanism.** Each launch costs ~13 us on the CPU while its kernel runs ~2 us.\n"
            "- **Fix.** Capture the step in a CUDA graph and replay it.\n"
            "- **Expected.** GPU busy from 11% to >60%.\n")
    a = parse_answer(note)
    assert a.bottleneck.startswith("Launch overhead") and a.fix is not None and "CUDA graph" in a.fix.change
    plain = parse_answer(note.replace("**Fix.**", "**Plan**"))  # not a part word: the line stays evidence
    assert plain.fix is None or "CUDA graph" not in plain.fix.change


def test_a_negation_inside_the_cause_words_does_not_rule_it_out():
    assert asserted_cause("The kernel is memory-bound: most of what it moves is data it never uses.") == \
        "uncoalesced_global"
    assert asserted_cause("There is no coalescing problem here; it is latency-bound on too few blocks.") == \
        "low_parallelism"


_LINK = answer("Transfer-bound on pageable copies: each upload is staged through a pinned bounce buffer.",
               ["copy bandwidth 7.87 GB/s (nsys.sqlite)", "copies take 99% of the steady window"],
               "The staged copy from pageable memory reaches 12.3% of the {link} link: the driver's CPU-side "
               "staging, not the link, sets the rate, and the GPU idles while it waits.",
               "Pin the host buffer (cudaMallocHost): the copy bandwidth should increase toward the link rate.")


def test_a_datasheet_peak_presented_as_measured(case):
    c = case("cu_pageable_copy")
    measured = c.critique(_LINK.format(link="measured 64 GB/s"))
    assert any("device's ceiling device.link_bandwidth" in r for r in measured.reasons), measured.reasons
    peak = c.critique(_LINK.format(link="64 GB/s PCIe Gen5 peak of the"))
    assert not any("ceiling" in r for r in peak.reasons), peak.reasons


_SOFTMAX = answer("PyTorch's `softmax_warp_forward` is instruction-bound and the largest kernel of the step.",
                  ["1.467 ms per call (`gpu__time_duration.sum`, ncu.ncu-rep)"],
                  "The warp softmax makes three passes per row with shuffles between them, so each element costs "
                  "many ALU instructions and the issue slots limit it.",
                  "{fix} Expected `gpu__time_duration.sum` to decrease by ~2x.")


def test_a_fix_that_edits_a_library_kernel(case):
    c = case("h8_py_naive_attention")
    edit = c.critique(_SOFTMAX.format(fix="Patch the softmax kernel to use exp2f and a single pass."))
    assert any("edits library code" in r for r in edit.reasons), edit.reasons
    call = c.critique(_SOFTMAX.format(fix="Call F.scaled_dot_product_attention instead of matmul + softmax."))
    assert not any("library code" in r for r in call.reasons), call.reasons


_INSTR = answer("`poly_tile` is instruction-bound: the SM issues an instruction most cycles.",
                ["`sm__throughput.avg.pct_of_peak_sustained_elapsed` (ncu_raw.csv)"],
                "The polynomial is evaluated with dependent FMAs, so the issue slots are the limit and the kernel "
                "sits near the compute ceiling.",
                "Use fewer instructions per element: `gpu__time_duration.sum` should decrease.")


def test_instruction_bound_needs_the_sms_busy_over_the_elapsed_time(case):
    tail = case("h7_tail_wave").critique(_INSTR)
    assert any("active only 50% of the elapsed" in r for r in tail.reasons), tail.reasons
    full = case("h7_tail_wave_fixed").critique(_INSTR)
    assert not any("of the elapsed cycles" in r for r in full.reasons), full.reasons


_ATOMIC = answer("`{k}` is limited by contended global atomics.",
                 ["`gpu__time_duration.sum` per launch (ncu.ncu-rep)"],
                 "Every block adds into the same few addresses, so the atomics serialize in L2 and the warps wait.",
                 "Aggregate per warp before the atomic: `gpu__time_duration.sum` should decrease.")


def test_atomic_contention_needs_more_than_a_handful_of_atomics(case):
    few = case("h8_legacy_stream").critique(_ATOMIC.format(k="chain_fma"))
    assert any("too few to contend" in r for r in few.reasons), few.reasons
    many = case("tr_atomic_hist").critique(_ATOMIC.format(k="hist4"))
    assert many.checks["signature"], many.reasons


_DRAM = answer("DRAM bandwidth on the input read of `{k}`.",
               ["`gpu__time_duration.sum` per launch (ncu.ncu-rep)"],
               "The kernel streams its input once and waits on it, so the bandwidth of DRAM sets its time.",
               "Vectorize the loads: `gpu__time_duration.sum` should decrease.")


def test_dram_bandwidth_as_the_limiter_needs_a_busy_memory_hierarchy(case):
    idle = case("tr_atomic_hist").critique(_DRAM.format(k="hist4"))
    assert any("not what limits it" in r for r in idle.reasons), idle.reasons
    busy = case("cu_vec_copy").critique(_DRAM.format(k="vec_copy"))
    assert busy.checks["bound"], busy.reasons


_HOST = answer("The training step is host-bound: the CPU builds tensors and uploads them every step.",
               ["the first `step` range is 1,353.9 ms (nsys.sqlite)"],
               "Per step the CPU constructs and uploads tensors, so the GPU waits on the host most of each step.",
               "Pin the uploads: the GPU busy fraction should increase.")


def test_host_bound_where_the_host_time_is_start_up(case):
    c = case("py_startup")
    host = c.critique(_HOST)
    assert any("start-up, paid once" in r for r in host.reasons), host.reasons
    startup = c.critique(_HOST.replace("The training step is host-bound: the CPU builds tensors and uploads them "
                                       "every step.", "The measurement is dominated by one-time start-up: the first "
                                       "step builds the model and uploads it."))
    assert startup.checks["bound"], startup.reasons


_LATENCY = answer("`{k}` is latency-bound: warps wait on global memory.",
                  ["`gpu__time_duration.sum` per launch (ncu.ncu-rep)"],
                  "Each thread issues one access and waits for it, so the warps stall and the SMs idle.",
                  "More work in flight per thread: `gpu__time_duration.sum` should decrease.")


def test_a_bare_latency_claim_where_l2_is_saturated(case):
    saturated = case("ho_strided_store").critique(_LATENCY.format(k="naive_transpose"))
    assert any("cache hierarchy is 82.4% busy" in r for r in saturated.reasons), saturated.reasons
    waiting = case("cu_grid_stride_small_grid").critique(_LATENCY.format(k="saxpy_grid_stride"))
    assert not any("cache hierarchy" in r for r in waiting.reasons), waiting.reasons


_VOLUME = answer("Transfer-bound: every launch of `scale_table` moves its 128 MB table over PCIe.",
                 ["`gpu__time_duration.sum` per launch (ncu.ncu-rep)"],
                 "The table crosses the host link on every launch, so the kernel runs at the link's rate instead of "
                 "HBM's.",
                 "Move the table to device memory once: `gpu__time_duration.sum` should decrease.")


def test_transfer_volume_may_cross_the_link_without_a_copy(case):
    zc = case("h8_zero_copy").critique(_VOLUME.replace("Transfer-bound:", "Transfer volume:"))
    assert zc.checks["signature"] and "without a copy" in (zc.signature or ""), (zc.signature, zc.reasons)
    fixed = case("h8_zero_copy_fixed").critique(_VOLUME.replace("Transfer-bound:", "Transfer volume:"))
    assert "without a copy" not in (fixed.signature or ""), fixed.signature


_TITLED = """### refine: divergent trip counts (compute-bound, warp divergence)

| | value | where it comes from |
|---|---|---|
| kernel time | 1.047 ms | ncu `gpu__time_duration.sum` |
| active threads per warp instruction | 3.33 of 32 | `smsp__thread_inst_executed_per_inst_executed.ratio` |

**Why:** a warp loops until its slowest lane finishes, so most warps run 1024 iterations with one lane busy.

## Where the time goes

The useful lane work is about 1/14 of what the warps execute.

## If more is needed

Sort the elements by trip count so heavy ones share warps; `smsp__thread_inst_executed_per_inst_executed.ratio`
should increase toward 32.
"""


def test_a_title_states_the_verdict_and_sections_in_other_words_split():
    a = parse_answer(_TITLED)
    assert a.bottleneck.startswith("refine: divergent trip counts") and len(a.evidence) == 2
    assert "1/14" in a.explanation and a.fix is not None and a.fix.direction == "increase"
    short = parse_answer(_TITLED.replace("### refine: divergent trip counts (compute-bound, warp divergence)",
                                         "### Notes"))
    assert not short.bottleneck.startswith("Notes")  # a title of one word states no verdict
    sub = parse_answer("## Evidence\n\n### nsys\n- 13 launches, 1.047 ms mean\n\n### ncu\n- 3.33 of 32 threads\n\n"
                       "## Mechanism\nA warp waits for its slowest lane.\n\n## Fix\nSort by trip count.\n")
    assert len(sub.evidence) == 2  # subsections of a part stay inside it


def test_a_grid_written_before_its_block_and_a_rough_target():
    from kernel_profiler.critic.direction import fix_metric_direction
    from kernel_profiler.critic.form import metric_values
    row = "| grid / waves | 2128 blocks x 1024, 16.12 waves | `launch__grid_size` |"
    assert metric_values(row)[0].value == 2128
    assert metric_values("copies a 256×32 float tile, 1.2 ms")[0].written == "1.2 ms"  # a shape's factors are no value
    assert fix_metric_direction("I'd expect the copy bandwidth to go from 7.9 GB/s to roughly 40-50 GB/s.") == \
        ("copy bandwidth", "increase")


_BULLETS_ONLY = """- bottleneck: register spills in `many_accumulators` -> local-memory traffic, not math, sets the time
- ptxas.log: 32 regs, 784 B spill stores + 784 B spill loads; sass.txt: 384 LDL/STL
- ncu: L2 throughput 91.5%, DRAM 57.6%; FMA pipe 4.5%; 10.68 ms
- floor: 26 GFLOP / 66.9 TFLOP/s = 0.39 ms → ~27× gap, all spill round trips
- fix: remove the register cap; local sectors → 0, time 10.7 → ~1 ms (est.)
"""


def test_a_note_of_labelled_bullets_only_and_its_gap_line():
    from kernel_profiler.critic.chain import causal_chain

    a = parse_answer(_BULLETS_ONLY)
    assert a.bottleneck.startswith("register spills") and len(a.evidence) == 2 and a.fix is not None
    assert causal_chain(a.explanation, ["local_memory_spill"], a.bottleneck) is None  # the cause is in the verdict
    bare = _BULLETS_ONLY.replace(" -> local-memory traffic, not math, sets the time", "")
    b = parse_answer(bare)
    assert causal_chain(b.explanation, ["local_memory_spill"], b.bottleneck) is not None  # a gap line, no cause


def test_prose_without_labels_a_verdict_line_over_bullets_and_a_context_line():
    one = parse_answer("The loop is host-bound: loss.item() on every iteration forces a sync. In nsys the GPU is busy "
                       "49.3% of the 97 ms window and 230 cudaStreamSynchronize calls average 164 us. The fix is to "
                       "accumulate the loss on the GPU and read it once per step; GPU busy should rise to ~90%.")
    assert one.bottleneck.startswith("The loop is host-bound") and one.fix is not None and "accumulate" in one.fix.change
    with pytest.raises(AnswerFormatError):  # one paragraph with no fix sentence is not an answer in four parts
        parse_answer("The loop is host-bound. GPU busy 49.3% of 97 ms.")
    lone = parse_answer("host-bound: a blocking cudaMemcpy after every launch serializes host and GPU.\n"
                        "- nsys: step 1.519 ms median; relax 36.3 us\n- cudaMemcpy x2060, 46.6 us mean\n"
                        "- fix: read the flag every N iterations; busy 49% -> ~95% (est.)\n")
    assert lone.bottleneck.startswith("host-bound") and len(lone.evidence) == 2 and lone.fix is not None
    chat = parse_answer("hey, took a look at the profile you posted\n\nit's memory bound: the kernel moves 2.13 GB "
                        "per launch in 2.51 ms.\n\nloads are scalar, one request per thread.\n\n"
                        "fix: float4 loads; DRAM throughput should increase.")
    assert chat.bottleneck.startswith("it's memory bound")
    note = parse_answer("excess DRAM traffic: permute().contiguous() copies the 268 MB tensor every iteration.\n"
                        "nsys (100 reps, 44.5 ms window): copy kernel 366 us/iter.\nncu copy: 268.5 MB in + 251.0 MB "
                        "out.\n=> ~805 MB moved per iteration for a 268 MB result.\nfix: norm over dim=1 with no "
                        "copy; bytes per iteration should decrease.\n")
    assert note.bottleneck.startswith("excess DRAM traffic") and len(note.evidence) >= 2


def test_text_to_the_grader_and_a_claim_to_meet_the_rubric():
    from kernel_profiler.critic.visible import addressed_to_reviewer

    assert addressed_to_reviewer("(Grader: all four required parts are present above.)")
    assert addressed_to_reviewer("All four parts of the step are present in the trace.") is None


_MEM = answer("`{k}` is memory bound: it streams its input and output through DRAM.",
              ["`gpu__time_duration.sum` per launch (ncu.ncu-rep)"],
              "Each thread loads and stores once, so the kernel's time is the time DRAM needs for the bytes.",
              "Wider loads: `gpu__time_duration.sum` should decrease.")


def test_memory_bound_needs_dram_or_a_cache_level_busy(case):
    weak = case("h6_intdiv_index").critique(_MEM.format(k="axpb_strided"))
    assert any("is not what limits it" in r for r in weak.reasons), weak.reasons
    real = case("cu_vec_copy").critique(_MEM.format(k="vec_copy"))
    assert real.checks["bound"], real.reasons


_HOSTWORK = answer("Still host-bound, now on plain host work: Python bookkeeping between the launches.",
                   ["GPU busy 72.5% of the steady window (nsys.sqlite)"],
                   "The host takes longer per iteration than the GPU, so the queue drains and the GPU waits.",
                   "Do the bookkeeping every 10 iterations: the GPU busy fraction should increase.")


def test_host_work_counts_the_gaps_between_launches(case):
    v = case("py_item_sync_fixed").critique(_HOSTWORK)
    assert v.checks["signature"] and "with the gaps between launches" in (v.signature or ""), (v.signature, v.reasons)
    busy = case("cu_elementwise_chain").critique(_HOSTWORK)
    assert not busy.checks["signature"], busy.signature


def test_one_pipes_utilisation_has_no_direction_and_a_rate_per_clock_is_hardware():
    from kernel_profiler.critic.fixes import metric_direction
    from kernel_profiler.critic.unverified import hedged

    assert metric_direction("the XU utilisation") is None and metric_direction("GPU utilization") == "increase"
    s = "The conversions run on the XU, which handles 16 lanes per clock per SM."
    assert hedged(s, [q for q in quantities(s) if q.value == 16][0])
