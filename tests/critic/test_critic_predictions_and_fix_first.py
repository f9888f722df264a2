"""Rules of 2026-12-01 (commit c6aec80), each with a twin that must go the other way, on real captures where the
rule reads one:
  - the target of a predicted move ('from ~X ms to roughly Y ms', 'X -> ~Y') is no measurement; 'could only reach'
    a ceiling is its reference;
  - an answer that leads with the change reads its opening as the fix; with four paragraphs or more the fix starts
    at the first paragraph that says what to do; a 'What I would do:' list is the fix;
  - the gap may be stated by the fix; 'SM-active fraction' and 'DtoH GB/s' are metrics, 'during a step' is not;
  - a refused library edit is no edit; a cause inside 'Once ..., ' is not the claim; 'far from compute-bound'
    asserts no bound;
  - splitting a pageable copy into more copies is its wrong way; '8 blocks of 1024 threads' is a grid, 'over 16
    blocks' is not.
"""
from __future__ import annotations

from critic_case import answer, case  # noqa: F401 (the fixture)

from kernel_profiler.critic import facts_for, parse_answer
from kernel_profiler.critic.chain import causal_chain
from kernel_profiler.critic.claim import asserted_cause
from kernel_profiler.critic.direction import fix_metric_direction
from kernel_profiler.critic.match import is_ceiling, number_use
from kernel_profiler.critic.numbers import quantities
from kernel_profiler.critic.unverified import contradiction


def _sgemm(case):
    c = case("cu_sgemm_fp32")
    return c, facts_for(c.arts, c.dg), c.metrics("sgemm_tiled")


def _contradicted(facts, sentence: str, i: int):
    q = quantities(sentence)[i]
    return contradiction(q, sentence, {"sgemm_tiled"}, facts, number_use(sentence, q))


def test_the_target_of_a_predicted_move_is_no_measurement(case):
    """'from ~X ms to roughly Y ms' and 'X ms -> ~Y ms': Y is a prediction, not contradicted by the measured time; the
    same Y stated as the time is, and so is a 'from' value written wrong."""
    _, facts, m = _sgemm(case)
    ms = m["gpu__time_duration.sum"] / 1e6
    target = f"{ms * 0.6:.1f} ms"
    for s in (f"The sgemm_tiled kernel time should go from ~{ms:.1f} ms to roughly {target}.",
              f"The sgemm_tiled kernel time: {ms:.1f}ms -> ~{target}."):
        assert number_use(s, quantities(s)[1]).predicted, s
        assert _contradicted(facts, s, 0) is None and _contradicted(facts, s, 1) is None, s
    assert _contradicted(facts, f"The sgemm_tiled kernel time is {target}.", 0) is not None  # stated: measured
    wrong = f"The sgemm_tiled kernel time should go from ~{ms * 0.6:.1f} ms to roughly {ms * 0.3:.1f} ms."
    assert _contradicted(facts, wrong, 0) is not None and _contradicted(facts, wrong, 1) is None


def test_a_ceiling_that_could_only_be_reached_is_a_reference(case):
    """'even a perfect FFMA kernel could only reach ~67 TFLOP/s' quotes the FP32 ceiling as a reference; 'the kernel
    achieves' the same number presents the datasheet ceiling as achieved."""
    _, facts, _ = _sgemm(case)
    peak = next(f for f in facts.items if f.metric == "ceiling.fp32")
    rate = f"{peak.value / 1e12:.0f} TFLOP/s"
    ref = f"Even a perfect FFMA kernel could only reach ~{rate} on this GPU."
    use = number_use(ref, quantities(ref)[0])
    assert use.reference and not use.achieved, use
    assert _contradicted(facts, ref, 0) is None
    got = f"The sgemm_tiled kernel achieves {rate}."
    assert number_use(got, quantities(got)[0]).achieved
    bad = _contradicted(facts, got, 0)
    assert bad is not None and is_ceiling(bad) and "fp32" in bad.metric, bad


def _churn(case):
    """An allocator-churn answer's sentences, its numbers read from the capture."""
    c = case("ot_cu_alloc_churn")
    facts = {f.metric: f.value for f in facts_for(c.arts, c.dg).items if f.kernel is None}
    busy, calls = facts["timeline.gpu_busy_fraction"] * 100, facts["api.cudaFree.calls"]
    free_us = facts["api.cudaFree.median_ns"] / 1e3
    return {
        "calls": calls, "busy": busy, "free_us": free_us,
        "do": "Hoist the `cudaMalloc`/`cudaFree` pair out of the loop: allocate the buffer once before the first "
              "repetition and reuse it.",
        "verdict": "The program is host-bound: the GPU waits on the allocator between kernels.",
        "measured": f"nsys shows {calls:.0f} `cudaFree` calls with a median of {free_us:.0f} us each, and the GPU "
                    f"busy only {busy:.0f}% of the window.",
        "why": "Each `cudaFree` synchronises the device and each `cudaMalloc` blocks the host, so no kernel is queued "
               "while they run and the GPU idles.",
        "caveat": "The first repetition still pays one allocation; only the steady state gets faster.",
    }


def test_an_answer_that_leads_with_the_change_reads_its_opening_as_the_fix(case):
    """Four paragraphs opening with 'Hoist ...: ...': the opening is the fix and the first sentence naming a bound
    the bottleneck (the caveat in the last paragraph explains); an opening verdict is not moved."""
    s = _churn(case)
    lead = parse_answer("\n\n".join([s["do"], s["measured"], s["verdict"] + " " + s["why"], s["caveat"]]))
    assert lead.fix_text == s["do"] and lead.bottleneck == s["verdict"], lead
    assert s["caveat"] in lead.explanation, lead
    plain = parse_answer("\n\n".join([s["verdict"], s["measured"], s["why"], s["do"]]))
    assert plain.bottleneck == s["verdict"] and plain.fix_text == s["do"], plain


def test_with_four_paragraphs_the_fix_starts_at_the_first_that_says_what_to_do(case):
    """Paragraphs verdict, measurements, mechanism, the change, a caveat: the fix is the change and its caveat (not
    the caveat alone); 'What I'd rule out: ...' says what not to blame and does not start the fix."""
    s = _churn(case)
    a = parse_answer("\n\n".join([s["verdict"], s["measured"], s["why"], s["do"], s["caveat"]]))
    assert a.fix_text == s["do"] + "\n\n" + s["caveat"] and a.explanation == s["why"], a
    rule_out = "What I'd rule out: the `scale` kernel itself, which finishes long before the next allocation returns."
    b = parse_answer("\n\n".join([s["verdict"], s["measured"], rule_out, s["why"], s["do"], s["caveat"]]))
    assert b.fix_text == s["do"] + "\n\n" + s["caveat"], b
    assert rule_out in b.explanation and s["why"] in b.explanation, b


def test_a_what_i_would_do_list_is_the_fix(case):
    """verdict, a paragraph of measurements, then 'What I would do:\\n1. ...\\n2. ...' (its items with numbers): the
    list is the fix, not the evidence; a numbered list of measurements in the same place is the evidence."""
    s = _churn(case)
    calls, busy = s["calls"], s["busy"]
    todo = (f"What I would do:\n1. Allocate the buffer once before the first repetition and reuse it; the {calls:.0f} "
            f"`cudaFree` calls go away.\n2. If sizes vary, use `cudaMallocAsync` with a pool; GPU busy should rise "
            f"from {busy:.0f}% to over 90%.")
    a = parse_answer("\n\n".join([s["verdict"], s["measured"] + " " + s["why"], todo]))
    assert a.fix_text == todo and a.fix.direction == "increase", a
    assert [e.meaning for e in a.evidence] == [s["measured"]], a
    shown = (f"What nsys shows:\n1. {calls:.0f} `cudaFree` calls, median {s['free_us']:.0f} us each.\n"
             f"2. GPU busy {busy:.0f}% of the window.")
    b = parse_answer("\n\n".join([s["verdict"], s["why"], shown, s["do"]]))
    assert len(b.evidence) == 2 and b.fix_text == s["do"], b


def test_the_gap_may_be_stated_by_the_fix(case):
    """A pageable-copy mechanism that names the cause but no gap is tied to it by a fix that says how far the copies
    are from what pinned memory gives ('tens of GB/s instead of 1.7 GB/s, so the ~156 ms per step ...'); without
    that fix it is 'not tied to the gap'."""
    c = case("h6_py_d2h_pageable")
    facts = {f.metric: f.value for f in facts_for(c.arts, c.dg).items if f.kernel is None}
    gbs, step = facts["timeline.host_copy_bandwidth"] / 1e9, facts["timeline.steady_step_median_ns"] / 1e6
    verdict = "The loop is transfer-bound on its device-to-host copies."
    mech = ("Each `.cpu()` copy lands in pageable host memory, so the driver stages it through its own pinned buffer "
            "one chunk at a time and the host copies every chunk again.")
    fix = (f"Copy into a pinned buffer with non_blocking=True: pinned copies run at tens of GB/s instead of "
           f"{gbs:.1f} GB/s, so the ~{step:.0f} ms per step should become a few ms.")
    assert causal_chain(mech, ["pageable_transfer"], verdict, fix) is None
    assert "not tied to the gap" in (causal_chain(mech, ["pageable_transfer"], verdict) or "")


def test_active_fractions_and_dtoh_rates_are_metrics_during_a_step_is_not(case):
    """'SM-active fraction during a step' names the fraction, not the step; 'DtoH GB/s' and a tensor-pipe metric
    moving from ~0% to a high fraction rise (those two already held before c6aec80; only the first is its rule)."""
    c = case("h6_py_d2h_pageable")
    gbs = {f.metric: f.value for f in facts_for(c.arts, c.dg).items if f.kernel is None}[
        "timeline.host_copy_bandwidth"] / 1e9
    assert fix_metric_direction("Overlap the copies with compute; SM-active fraction during a step to go from ~12 % "
                                "to ~80 %.") == ("SM-active fraction", "increase")
    assert fix_metric_direction("Overlap the copies with compute; SM-active fraction during a step to go from ~80 % "
                                "to ~12 %.") == ("SM-active fraction", "decrease")
    assert fix_metric_direction(f"Pin the host buffer; DtoH GB/s should go from ~{gbs:.1f} to tens.")[1] == "increase"
    assert fix_metric_direction("Use bf16 inputs so cuBLAS picks a tensor-core kernel: "
                                "`sm__pipe_tensor_cycles_active` from ~0% to a high fraction.")[1] == "increase"


_GATHER = "`index_elementwise_kernel` is memory-bound: the gather reads rows at random."
_SCATTERED = ("Neighbouring threads read rows far apart, so each warp load splits into many sectors and DRAM "
              "bandwidth is spent on bytes nobody uses.")


def test_a_refused_library_edit_is_no_edit(case):
    """'(we don't edit ATen)' refuses the edit; 'patch ATen's gather kernel' on the ATen gather kernel is one."""
    c = case("h5_py_random_gather")
    kept = c.critique(answer(_GATHER, [], _SCATTERED, "Sort the indices before the gather so neighbouring threads "
                                                      "read neighbouring rows (we don't edit ATen); DRAM bytes should "
                                                      "decrease."))
    assert not any("edits library code" in r for r in kept.reasons), kept.reasons
    edit = c.critique(answer(_GATHER, [], _SCATTERED, "Patch ATen's gather kernel to prefetch the rows into shared "
                                                      "memory; DRAM bytes should decrease."))
    assert any("edits library code" in r for r in edit.reasons), edit.reasons


def test_a_cause_inside_once_is_not_the_claim():
    """'Once cuBLAS is initialised, <cause>, ...' sets a condition apart; the same words as a main clause assert the
    cause."""
    main = "Every step pays the one-time start-up cost of loading cuBLAS."
    assert asserted_cause(main, mentions=False) is not None
    assert asserted_cause("Once cuBLAS is initialised, " + main[0].lower() + main[1:], mentions=False) is None


_MATH = "The step takes most of its time outside the kernel's math."
_FIX = "Generate the batch on the GPU; GPU busy should increase."


def test_far_from_compute_bound_asserts_no_bound(case):
    """'The kernel is far from compute-bound' in the mechanism asserts no bound (no bound refusal on a host-bound
    capture); 'The kernel is compute-bound' does."""
    c = case("cu_host_work")
    far = c.critique(answer(_MATH, [], "The kernel is far from compute-bound: each launch runs its FMA loop briefly, "
                                       "so the step is not as long as its math.", _FIX))
    assert far.checks["bound"] and not any("compute-bound" in r for r in far.reasons), far.reasons
    said = c.critique(answer(_MATH, [], "The kernel is compute-bound: each launch runs its FMA loop briefly, so the "
                                        "step is as long as its math.", _FIX))
    assert not said.checks["bound"] and any("calls it compute-bound" in r for r in said.reasons), said.reasons


def test_splitting_a_pageable_copy_is_its_wrong_way(case):
    """On a pageable-copy capture, more and smaller copies are refused; pinning the host buffer is not."""
    c = case("cu_pageable_copy")
    head = "The program is transfer-bound: every upload copies from pageable host memory."
    mech = ("Each `cudaMemcpy` from pageable memory is staged through the driver's pinned buffer, so it runs at a "
            "fraction of the link bandwidth and the GPU waits.")
    split = c.critique(answer(head, [], mech, "Split the upload into 4,096 chunks and issue each with "
                                              "`cudaMemcpyAsync`; copy time should decrease."))
    assert not split.checks["fix"] and any("the wrong way" in r for r in split.reasons), split.reasons
    pin = c.critique(answer(head, [], mech, "Pin the host buffer with `cudaMallocHost`; copy time should decrease."))
    assert pin.checks["fix"] and not any("the wrong way" in r for r in pin.reasons), pin.reasons


def test_blocks_of_threads_is_a_grid_over_blocks_is_not(case):
    """'launch 8 blocks of 1024 threads' is a grid of 8, fewer than a too-few-blocks kernel's; 'split each item over
    16 blocks' is no grid (fewer than 133 as written), while 'launch 16 blocks' is."""
    c = case("cu_grid_stride_small_grid")
    grid = int(c.metrics("saxpy_grid_stride")["launch__grid_size"])
    head = "`saxpy_grid_stride` is latency-bound: too few blocks to fill the GPU."
    mech = "The grid has fewer blocks than SMs, so most SMs sit idle while a few loop over the whole array."
    few = c.critique(answer(head, [], mech, f"Launch {grid // 2} blocks of 1024 threads so each thread does more "
                                            f"work; kernel time should decrease."))
    assert not few.checks["fix"] and any(f"fewer than the {grid}" in r for r in few.reasons), few.reasons
    t = case("h7_tail_wave")
    tile = int(t.metrics("poly_tile")["launch__grid_size"])
    assert 16 < tile
    head = "`poly_tile` is latency-bound: too few blocks to fill the GPU, the last wave runs one block."
    mech = f"The grid has {tile} blocks, so the second wave runs one block while the other SMs idle."
    over = t.critique(answer(head, [], mech, "Split each item over 16 blocks so the waves balance; kernel time "
                                             "should decrease."))
    assert not any("fewer than the" in r for r in over.reasons), over.reasons
    launch = t.critique(answer(head, [], mech, "Launch 16 blocks so the waves balance; kernel time should decrease."))
    assert any(f"fewer than the {tile}" in r for r in launch.reasons), launch.reasons
