"""Rules of 2026-12-01 (third session), each with a twin that must go the other way, on real captures:
  - a lower register cap for a kernel that already spills moves it the wrong way; the same cap on a kernel that
    does not spill is a real occupancy fix;
  - more, smaller allocations per step move allocator churn the wrong way; allocating once does not;
  - a host-bound answer may name its cause in plain words (the bound check holds it to the timeline instead);
  - a table of measurements before the first heading is the evidence, '- expect:' notes belong to the fix;
  - an evidence line's headline takes its words from its own ';' segment, not from the next measurement's;
  - an approximate ratio ('~10x') may round by 20%, an exact one may not;
  - 'basically done' / "don't touch it" claim near peak; 'killed the X' rules X out;
  - fix metrics in shorthand: 'kernel 2.2 ms -> ~0.2 ms', 'XU% 93.8 -> ~0', a launch lag;
  - facts: each process's median time from a step's start to its first launch, a kernel's time per step;
  - ncu's CSV spelling 'unnamed>::f<unnamed>::T<...>' keys the kernel f in an anonymous namespace.
"""
from __future__ import annotations

from critic_case import answer, case  # noqa: F401 (the fixture)

from kernel_profiler.critic import facts_for, parse_answer
from kernel_profiler.critic.arithmetic import implicit_miss
from kernel_profiler.critic.claim import asserted_cause
from kernel_profiler.critic.direction import fix_metric_direction
from kernel_profiler.critic.numbers import quantities
from kernel_profiler.kernel_name import KernelName

_CAP = ("Lower the register cap further, `-maxrregcount=24`, so more warps fit per SM; achieved occupancy should "
        "rise and `gpu__time_duration.sum` decrease by ~1.5x.")


def test_a_lower_register_cap_is_the_wrong_way_only_for_a_kernel_that_spills(case):
    text = ("`{k}` is latency-bound: its loads are not hidden.",
            "Each thread waits on its loads and too few warps are resident to cover the latency, so the SM idles "
            "and the kernel runs far from its roofline floor.")
    spills = case("ho_register_spill").critique(answer(text[0].format(k="many_accumulators"), [], text[1], _CAP))
    assert not spills.checks["fix"] and any("already spills" in r for r in spills.reasons), spills.reasons
    clean = case("h5_reg_occupancy").critique(answer(text[0].format(k="chase"), [], text[1], _CAP))
    assert not any("already spills" in r for r in clean.reasons), clean.reasons


def test_more_smaller_allocations_per_step_are_the_wrong_way_for_allocator_churn(case):
    c = case("ot_cu_alloc_churn")
    head = "The program is host-bound on the allocator: cudaFree and cudaMalloc every repetition leave the GPU idle."
    mech = ("cudaFree cannot return before the kernel that used the buffer is done, so each launch waits for the "
            "allocator and the GPU sits idle between kernels.")
    split = c.critique(answer(head, [], mech, "Split the buffer: allocate and free four 64 MB chunks per repetition "
                                              "instead of one 256 MB buffer; GPU busy should increase to ~80%."))
    assert split.mechanism == "allocator_churn" and not split.checks["fix"], split.reasons
    once = c.critique(answer(head, [], mech, "Allocate the buffer once outside the loop and reuse it; GPU busy "
                                             "should increase to ~95%."))
    assert once.mechanism == "allocator_churn" and once.checks["fix"], once.reasons


def test_a_host_bound_answer_in_plain_words_is_held_to_the_timeline(case):
    head = "The program is host-bound: the CPU spends ~4.7 ms per step before each 0.16 ms launch."
    mech = ("The GPU has nothing queued while the CPU fills and sorts the batch, so 4.68 ms of every 4.85 ms step is "
            "host time with the GPU idle; a faster kernel cannot move the step.")
    fix = "Generate and sort the batch on the GPU; GPU busy should increase from 3% to above 50%."
    idle = case("cu_host_work").critique(answer(head, [], mech, fix))
    assert idle.checks["mechanism"] and idle.checks["not_a_dump"] and idle.checks["bound"], idle.reasons
    busy = case("cu_sgemm_fp32").critique(answer(head, [], mech, fix))
    assert not busy.checks["bound"], busy.reasons


def test_a_table_before_the_first_heading_is_the_evidence_and_expect_notes_are_the_fix():
    table = ("# hgemm: fp16 GEMM on CUDA cores\n\nThe product is compute-bound on the FP32 pipe.\n\n"
             "| evidence | value | where |\n|---|---|---|\n| kernel time | 3.869 ms | ncu |\n| FMA pipe | 55.6 % | ncu |\n\n"
             "Why: the kernel upconverts and does FFMA, so the FP32 pipe's ceiling alone means 2.05 ms.\n\n"
             "Change: call cuBLAS; tensor pipe active should increase.\n")
    assert [e.value for e in parse_answer(table).evidence] == [3.869, 55.6]
    without = table.replace("| kernel time | 3.869 ms | ncu |\n| FMA pipe | 55.6 % | ncu |\n", "")
    assert not parse_answer(without).evidence
    notes = ("damp -- notes\n\n- bound: compute, not memory\n- damp 2.198 ms (ncu gpu__time_duration.sum)\n"
             "- fix: float literals\n- expect: kernel 2.2 ms -> ~0.2 ms\n")
    a = parse_answer(notes)
    assert "2.2 ms -> ~0.2 ms" in a.fix_text and all("2.2 ms" not in e.meaning for e in a.evidence)


def test_an_evidence_headline_is_named_by_its_own_segment(case):
    c = case("h5_fp64_promotion")
    head = "`damp` is instruction-bound on the XU pipe converting float <-> double."
    mech = "Two F2F conversions per iteration keep the XU pipe busy, so the kernel runs 10x its FFMA floor."
    fix = "Use float literals; `sm__inst_executed_pipe_xu` should decrease to ~0."
    ok = c.critique(answer(head, ["XU pipe 93.8% (sm__inst_executed_pipe_xu); fp64 pipe 11.7%"], mech, fix))
    assert ok.checks["numbers"], ok.reasons
    off = c.critique(answer(head, ["XU pipe 73.8% (sm__inst_executed_pipe_xu); fp64 pipe 11.7%"], mech, fix))
    assert not off.checks["numbers"], off.reasons


def test_an_approximate_ratio_may_round_but_an_exact_one_may_not():
    s = "kernel 2.2 ms -> ~0.2 ms (~10x faster)"
    (q,) = [q for q in quantities(s) if q.family == "ratio"]
    assert implicit_miss(s, q) is None
    exact = "kernel 2.2 ms -> 0.2 ms (10x faster)"
    (q,) = [q for q in quantities(exact) if q.family == "ratio"]
    assert implicit_miss(exact, q) is not None


def test_done_words_claim_near_peak_and_a_killed_cause_is_ruled_out():
    assert asserted_cause("tl;dr class_sums is bandwidth-bound and basically done, don't touch it.") == "near_peak"
    assert asserted_cause("class_sums is bandwidth-bound and not done yet.") != "near_peak"
    assert asserted_cause("Register privatization killed the shared-atomic serialization.", mentions=False) is None
    assert asserted_cause("The shared-atomic serialization limits it.", mentions=False) == "atomic_contention"


def test_fix_metrics_in_shorthand():
    assert fix_metric_direction("expect: kernel 2.2 ms -> ~0.2 ms") == ("kernel time", "decrease")
    assert fix_metric_direction("expect: XU% 93.8 -> ~0") == ("XU pipe utilization", "decrease")
    assert fix_metric_direction("Rank 1's launch lag should go ~6 ms -> ~0.1 ms.")[1] == "decrease"


def test_first_launch_lag_and_kernel_time_per_step_are_facts(case):
    c = case("mr_host_slow")
    lags = sorted(x.value for x in facts_for(c.arts, c.dg).items if x.metric == "timeline.first_launch_lag_ns")
    assert len(lags) == 2 and lags[0] < 0.2e6 and 5.5e6 < lags[1] < 7e6, lags  # rank 0 ~0.085 ms, rank 1 ~6.1 ms
    g = case("h6_py_cat_grow")
    per_step = [x for x in facts_for(g.arts, g.dg).items if x.metric == "timeline.kernel_ns_per_step" and x.kernel
                and "CatArrayBatchedCopy" in x.kernel]
    assert per_step and abs(per_step[0].value - 2.139e6) < 0.01e6, per_step


def test_ncu_csv_unnamed_namespace_spelling_keeps_the_function_name():
    k = KernelName("void unnamed>::CatArrayBatchedCopy_vectorized<unnamed>::OpaqueType<2>, unsigned int, 2>(char *)")
    assert k.base == "CatArrayBatchedCopy_vectorized"
    assert KernelName("void at::native::<unnamed>::f<int>(int)").base == "f"


def test_a_synchronization_per_launch_is_the_wrong_way_for_a_host_bound_program(case):
    c = case("py_item_sync_fixed")
    head = "host-bound: the GPU is idle 27.5% of the steady window, waiting for the next launch."
    mech = ("The host runs its bookkeeping between launches, so the GPU waits for work and sits idle between the "
            "GEMMs for a quarter of the window.")
    blocking = c.critique(answer(head, [], mech, "Set `CUDA_LAUNCH_BLOCKING=1` so the host and GPU stay in lock-step; "
                                                 "the busy fraction should rise from 72.5% to ~90%."))
    assert any("synchronization per launch" in r for r in blocking.reasons), blocking.reasons
    graph = c.critique(answer(head, [], mech, "Capture the step in a CUDA graph; the busy fraction should rise from "
                                              "72.5% to ~90%."))
    assert not any("synchronization per launch" in r for r in graph.reasons), graph.reasons


def test_one_pipes_utilization_may_move_either_way_but_a_busy_fraction_rises():
    from kernel_profiler.critic.fixes import metric_direction
    assert metric_direction("sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active") is None
    assert metric_direction("XU pipe utilization") is None
    assert metric_direction("GPU busy fraction") == "increase"
    assert metric_direction("sm__pipe_tensor_cycles_active") == "increase"
