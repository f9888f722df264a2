"""Rules of 2026-12-01 (fourth session), each with a twin that must go the other way, on real captures:
  - the layouts people write: plain labels in other words ('Numbers:', "What I'd do:", 'Expected:'), dash labels
    ('Fix — ...'), a part word with a period ('Change. ...'), a letter's greeting and sign-off, bold labels with
    code in them; one plain label alone in a chat reply is a sentence of it, not a layout;
  - numbers: '14.73 M' (a spaced multiplier), the result of the arithmetic an evidence line starts
    ('a / b = 67,108,864 / 2,097,152 = 32'), 'avg', hit rates, a copy kind's mean duration, bytes never read as a
    count of sectors, a shape before what it comes to ('grid 264 x 1024 = 2 blocks per SM');
  - a JSON evidence item's metric describes its value, not the other numbers of its meaning;
  - fixes: the move an 'Expected' sentence predicts wins over a side effect; a launch setting that is the change
    gives way to the metric it moves; a rate of work ('tokens per second') rises; one cache's throughput has no
    direction; a metric measured as 0 cannot fall; synchronizing 'early and often' is a sync per launch;
  - claims checked against the captures: local memory blamed on register pressure where the compiler spills
    nothing; uncoalesced access blamed on the side that moves a small share of the DRAM bytes.
"""
from __future__ import annotations

import json

from critic_case import answer, case  # noqa: F401 (the fixture)

from kernel_profiler.critic import parse_answer
from kernel_profiler.critic.arithmetic import chains
from kernel_profiler.critic.direction import fix_metric_direction
from kernel_profiler.critic.form import metric_values
from kernel_profiler.critic.numbers import quantities

_CHAT = """So I went through the nsys capture, and this one is clear-cut: each step spends almost all of its time
in a host-to-device copy from pageable memory, and that copy only runs at about 8.5 GB/s.

The numbers: the steady window is 322 ms in total, and 317.8 ms of it is HtoD memcpy (98.6%). Each step moves 268 MB,
so that is 31.8 ms per copy, 8.45 GB/s.

Why it's slow: a pageable buffer can't be DMA'd directly. The driver copies it chunk by chunk into a pinned
staging buffer with the CPU, so the copy runs at CPU memcpy speed and blocks the host.

What I'd do: pin the tensor once, outside the loop, and copy with non_blocking=True. I'd expect the HtoD bandwidth
to go from 8.5 GB/s to 40-50 GB/s (estimate)."""


def test_plain_labels_in_other_words_are_the_layout_when_they_name_two_parts():
    a = parse_answer(_CHAT)
    assert len(a.evidence) >= 2 and "staging buffer" in a.explanation and a.fix is not None
    assert (a.fix.metric, a.fix.direction) == ("HtoD bandwidth", "increase")
    one = parse_answer(_CHAT.replace("Why it's slow: ", "").replace("What I'd do: ", ""))
    assert one.fix is not None and "pin the tensor" in one.fix.change  # one label: the paragraphs, in order
    assert "The numbers:" not in one.bottleneck


def test_dash_and_period_labels_and_a_letter_frame():
    dash = parse_answer("Bottleneck — host synchronization: the loop synchronizes after every op.\n\n"
                        "Evidence — nsys (37.97 ms window): GPU busy 34.9%; 200 cudaDeviceSynchronize calls.\n\n"
                        "Mechanism — the GPU waits for the host after each op, so it idles two thirds of the time.\n\n"
                        "Fix — remove the per-op synchronize. Expected: busy fraction up from 35% to >90%.")
    assert dash.fix is not None and (dash.fix.metric, dash.fix.direction) == ("busy fraction", "increase")
    assert "37.97 ms" in dash.evidence[0].meaning  # the label is the word before the dash
    period = parse_answer("Bottleneck. The loop is host-bound.\n\nEvidence. GPU busy 72.5% of the window.\n\n"
                          "Mechanism. The host is slower than the GPU per iteration.\n\n"
                          "Change. Move the bookkeeping off the loop; GPU busy should rise to ~95%.")
    assert period.fix is not None and period.fix.direction == "increase"
    letter = parse_answer("Subject: Re: slow loop\n\nHi Priya,\n\nShort version: the GPU idles behind `.item()`.\n\n"
                          "Numbers: GPU busy 49.3%.\n\nSuggested change: drop the per-iteration `.item()`; busy "
                          "fraction should go up to ~75%.\n\nBest,\nAna")
    assert letter.bottleneck.startswith("the GPU idles") and "Ana" not in letter.fix.change


def test_bold_labels_with_code_and_measurements_under_the_bottleneck():
    a = parse_answer("**Bottleneck:** 32-way bank conflicts in `row_sums`.\n\n**Measured (ncu, `row_sums`):**\n"
                     "- `l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum` = **14.73 M**\n"
                     "- `gpu__time_duration.sum` = 125.6 us\n\n**Why:** the tile is [256][32] floats.\n\n"
                     "**Fix:** pad to [256][33]; bank conflicts -> ~0.")
    assert [e.metric for e in a.evidence][:1] == ["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"]
    assert abs(a.evidence[0].value - 14.73e6) < 1  # '14.73 M': the multiplier after a space
    assert quantities("3 K tiles") == []  # 'K' after a space is a dimension, not a thousand


def test_an_evidence_line_cites_the_result_of_the_arithmetic_it_starts():
    line = "`a__x.sum` / `a__y.sum` = 67,108,864 / 2,097,152 = **32 sectors per request**"
    assert metric_values(line)[0].written == "32 sectors"
    assert not chains("grid 264 x 1024 = 2 blocks per SM")  # a shape, then what it comes to
    assert [s.ok for s in chains("3 x 16.8 MB = 5.03 MB")] == [False]  # a wrong product stays wrong


def test_measured_words_read_numbers_the_way_they_are_written(case):
    c = case("cu_local_array")
    head, mech = ("`table_lookup` is bound by local-memory traffic from its run-time indexed stack array.",
                  "The 128-byte array is indexed at run time, so it lives on the stack and every access is a local "
                  "load or store through L1/L2; that traffic keeps the kernel ~4.8x from its memory floor.")
    fix = "Index the table from shared memory instead; local-memory sectors should decrease to ~0."
    ok = c.critique(answer(head, ["L2 hit 97% (`lts__t_sector_hit_rate.pct` is 97.4, ncu.ncu-rep)"], mech, fix))
    assert ok.checks["numbers"], ok.reasons
    bad = c.critique(answer(head, ["L2 hit 90% (ncu.ncu-rep)"], mech, fix))
    assert not bad.checks["numbers"], bad.reasons


def test_a_json_item_s_metric_describes_its_value_not_the_other_numbers_of_its_meaning(case):
    c = case("cu_sync_loop")
    item = {"metric": "cudaMemcpy mean duration", "value": 46.6, "unit": "us", "artifact": "nsys.sqlite",
            "meaning": "2,060 blocking calls; the 4 B copy itself is 1.4 us, the rest is waiting for the kernel"}
    doc = {"bound": "host", "mechanism": "host_sync", "kernel": "relax",
           "bottleneck": "A blocking 4-byte cudaMemcpy after every relax launch serializes host and GPU.",
           "evidence": [{"metric": "timeline.gpu_busy_fraction", "value": 0.494, "unit": "ratio",
                         "artifact": "nsys.sqlite", "meaning": "GPU busy over the steady window"}, item],
           "explanation": "Because the copy blocks, nothing is queued while the host does its bookkeeping and "
                          "launch, so the GPU idles half of every iteration: all of the gap is serialization.",
           "fix": {"change": "Check the flag every 100 iterations.", "metric": "timeline.gpu_busy_fraction",
                   "direction": "increase", "expected": "0.49 -> ~0.95"}}
    ok = c.critique(json.dumps(doc))
    assert ok.checks["numbers"], ok.reasons
    item["meaning"] = item["meaning"].replace("1.4 us", "2.9 us")
    bad = c.critique(json.dumps(doc))
    assert not bad.checks["numbers"], bad.reasons


def test_the_expected_move_wins_over_a_side_effect_and_a_setting_gives_way():
    fix = ("Remove `-maxrregcount=32`. Occupancy drops from 8 to ~3 blocks/SM, which is fine.\n\n**Expected:** local "
           "sectors (`l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum`) from 1.4e9 → 0, kernel 10.7 ms -> ~1 ms.")
    assert fix_metric_direction(fix) == ("l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", "decrease")
    assert fix_metric_direction("Occupancy drops from 8 to ~3 blocks/SM.") == ("Occupancy", "decrease")
    assert fix_metric_direction("`launch__grid_size` 16 -> 4,096, DRAM throughput 5.5% -> ~70%") == \
        ("DRAM throughput", "increase")
    assert fix_metric_direction("`launch__grid_size` 16 -> 4,096") == ("launch__grid_size", "increase")


def test_fix_directions_of_rates_caches_and_metrics_at_zero(case):
    c = case("cu_grid_stride_small_grid")
    head, mech = ("`saxpy_grid_stride` is latency-bound: 16 blocks on 132 SMs.",
                  "Only 16 of the 132 SMs get a block, so most of the GPU idles and the few warps cannot keep "
                  "enough loads in flight: the kernel runs far from its DRAM floor.")
    zero = c.critique(answer(head, [], mech, "Launch 264+ blocks; expect "
                                             "`l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum` to go down."))
    assert not zero.checks["fix"] and any("measure it as 0" in r for r in zero.reasons), zero.reasons
    time = c.critique(answer(head, [], mech, "Launch 264+ blocks; expect `gpu__time_duration.sum` to go down ~5x."))
    assert time.checks["fix"], time.reasons
    t = case("tr_strided")
    head, mech = ("`gather_transpose` is bound by uncoalesced global loads: 32 sectors per request.",
                  "Each warp's 32 loads touch 32 different sectors, so 28 of every 32 bytes moved are wasted and "
                  "the kernel runs several times from its DRAM floor.")
    l2 = t.critique(answer(head, [], mech, "Read rows and write columns through a shared tile; "
                                           "`lts__throughput` should decrease and the kernel time with it."))
    assert l2.checks["fix"], l2.reasons
    dram = t.critique(answer(head, [], mech, "Read rows and write columns through a shared tile; "
                                             "`dram__bytes_read.sum` should increase."))
    assert not dram.checks["fix"], dram.reasons


def test_synchronizing_early_and_often_is_a_sync_per_launch(case):
    c = case("py_item_sync")
    head, mech = ("The loop is host-bound on `loss.item()` every iteration.",
                  "The `.item()` call blocks the host until the GPU drains, so the host's bookkeeping runs with "
                  "an empty queue and the GPU idles half of each iteration.")
    often = c.critique(answer(head, [], mech, "Synchronize early and often: call `torch.cuda.synchronize()` right "
                                              "after each of the two matmuls; GPU busy should increase."))
    assert not often.checks["fix"], often.reasons
    once = c.critique(answer(head, [], mech, "Call `.item()` once per step; GPU busy should increase to ~75%."))
    assert once.checks["fix"], once.reasons


def test_register_pressure_is_refuted_where_the_compiler_spills_nothing(case):
    head = "`{k}` spills registers to local memory because of register pressure."
    mech = ("The kernel needs more live values than the register budget allows, so every spill and reload is a "
            "local-memory access through L1/L2, which keeps the kernel far from its floor.")
    fix = "Compile with `-maxrregcount=64`; local-memory sectors should decrease to ~0."
    stack = case("cu_local_array").critique(answer(head.format(k="table_lookup"), [], mech, fix))
    assert not stack.checks["signature"] and any("spills nothing" in r for r in stack.reasons), stack.reasons
    spill = case("ho_register_spill").critique(answer(head.format(k="many_accumulators"), [], mech, fix))
    assert not any("spills nothing" in r for r in spill.reasons), spill.reasons


def test_uncoalesced_access_on_a_side_that_moves_few_dram_bytes_sets_no_limit(case):
    head = "`{k}` is bound by uncoalesced global access: 4 useful bytes per 32-byte sector."
    mech = ("Each warp touches a sector per lane, so most bytes moved are wasted and the kernel runs far from its "
            "DRAM floor.")
    fix = "Coalesce the accesses; sectors per request should decrease and the kernel time with it."
    stores = case("h5_shuffle_rowsum_fixed").critique(answer(head.format(k="row_sums"), [], mech, fix))
    assert not stores.checks["signature"] and any("of the DRAM bytes" in r for r in stores.reasons), stores.reasons
    loads = case("tr_strided").critique(answer(head.format(k="gather_transpose"), [], mech, fix))
    assert loads.checks["signature"], loads.reasons  # the strided loads carry the bytes


def test_a_kernel_s_bound_is_held_to_its_counters_without_a_timeline(captures):
    from kernel_profiler.critic import critique_text
    ncu = [captures.path("cu_divergence", "ncu.ncu-rep")]
    mech = ("Every warp holds all 8 rules, so each instruction issues with a few lanes enabled and the SM spends its "
            "issue slots on masked work: the kernel runs ~9x from its FP32 floor.")
    fix = "Group threads by rule (rule = warp index & 7); `gpu__time_duration.sum` should decrease ~7x."
    memory = critique_text(answer("`branchy` is memory-bound: its loads miss L2 and the SMs wait on DRAM.", [], mech,
                                  fix), ncu)
    assert not memory.checks["bound"] and any("SM is" in r for r in memory.reasons), memory.reasons
    issue = critique_text(answer("`branchy` is compute-bound on divergent warps.", [], mech, fix), ncu)
    assert issue.checks["bound"], issue.reasons


def test_start_up_is_the_answer_only_where_the_steady_state_does_not_repeat_another_cost(case):
    head = "The program is dominated by one-time start-up: imports, the CUDA context and building the inputs."
    mech = ("The process spends seconds before its first kernel, and that start-up dwarfs the few milliseconds of "
            "steps that follow, so the run's wall time is set by one-time work.")
    fix = "Pay the start-up once in a long-lived process; the step time should decrease relative to the wall time."
    steady = case("h6_py_tensor_from_list").critique(answer(head, [], mech, fix))
    assert not steady.checks["bound"] and any("paid once" in r for r in steady.reasons), steady.reasons
    startup = case("py_startup").critique(answer(head, [], mech, fix))
    assert not any("paid once" in r for r in startup.reasons), startup.reasons


def test_heat_is_refused_where_the_clock_is_held_by_power(case):
    c = case("telemetry")
    ev = ["SM clock 1485 MHz median while busy against 1980 MHz maximum (`telemetry_gemm.json`)"]
    fix = "Nothing to change in the code; the SM clock should stay ~1485 MHz under this limit."
    heat = c.critique(answer("The GEMM runs on throttled clocks: thermal throttling.", ev,
                             "The die heats up under the tensor-core load and the GPU lowers its clock; every MHz "
                             "lost is tensor throughput lost, 25% here.", fix))
    assert any("power reasons only" in r for r in heat.reasons), heat.reasons
    power = c.critique(answer("The GEMM runs on throttled clocks: the board's power cap.", ev,
                              "The tensor cores draw the board to its power limit and the driver lowers the clock "
                              "until power fits: every MHz lost is tensor throughput lost, 25% here.", fix))
    assert not any("power reasons only" in r for r in power.reasons), power.reasons


def test_a_cause_stated_in_the_verdict_completes_a_mechanism_that_works_out_the_rest():
    from kernel_profiler.critic.chain import causal_chain
    mech = ("sass.txt has F2F.F64.F32, DFMA, F2F.F32.F64 for each of the 8 unrolled iterations: 8.59e9 conversions at "
            "16 per clock per SM take 2.06 ms, 94% of the kernel.")
    verdict = "damp spends its time converting float<->double, and the XU pipe that runs them is 93.8% busy."
    assert causal_chain(mech, ["instruction_bound"], verdict) is None
    assert causal_chain(mech, ["instruction_bound"], "damp: 2.198 ms per launch.") is not None


def test_count_nouns_shape_factors_and_binary_multiples_are_read_as_written():
    from kernel_profiler.critic.match import candidates
    from kernel_profiler.critic.numbers import to_quantity
    assert quantities("204.5M warp instructions")[0].unit == "instructions"  # what is counted is the last noun
    assert quantities("132 blocks on 132 SMs")[0].unit == "blocks"
    assert metric_values("The kernel copies a 256×32 float tile: 14.7M bank conflicts")[0].written.startswith("14.7M")
    assert metric_values("- 3 x 16.8 MB = 50.3 MB")[0].written == "3 x"  # a product of a count and a size: no shape
    assert quantities("the 64K register file")[0].alt == 65536 and quantities("64 registers")[0].alt is None
    assert "pct" not in {fam for fam, _, _ in candidates(to_quantity("4.29", "e9", None, None))}
    assert "pct" in {fam for fam, _, _ in candidates(to_quantity("42", None, None, None))}


def test_a_transfer_bound_fix_measured_on_a_minor_kernel_cannot_move_the_step(case):
    c = case("ho_py_numpy_upload")
    head = "The step is transfer-bound on a pageable host-to-device copy of the numpy array."
    mech = ("A pageable source is staged through a pinned bounce buffer by the CPU, so the copy runs at CPU memcpy "
            "speed and takes nearly all of the step while the GPU waits.")
    kernel = c.critique(answer(head, [], mech, "Use a tree reduction for the sum: expect `reduce_kernel` time to go "
                                               "down from 35.7 us to about 15 us and the step time with it."))
    assert not kernel.checks["fix"] and any("cannot move the step" in r for r in kernel.reasons), kernel.reasons
    pinned = c.critique(answer(head, [], mech, "Copy from a pinned buffer: expect the step time to go down ~4x; "
                                               "`reduce_kernel` stays as it is."))
    assert not any("cannot move the step" in r for r in pinned.reasons), pinned.reasons
