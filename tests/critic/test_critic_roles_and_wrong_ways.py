"""Rules of 2026-12-01 (commits 0a489f1 and 2b1c99c), each with a twin that must go the other way, on real captures
where the rule reads one:
  - one paragraph read by sentence role (verdict, measured sentences, what to do); numbered 'N) Label —' and
    'N. Label:' lines are labels;
  - sentences may start lower-case (not after 'e.g.' / 'vs.'); '67.2 million' is a quantity; a move 'from 0.5 ms to
    8 us' compares in one unit;
  - a time that names no statistic is not held to the longest/shortest launch, nor contradicted between them;
  - a bottleneck that names no bound takes the bound its mechanism asserts; 'signature of' asserts a cause;
  - the measured cause's wrong ways (disabling the caching allocator, mapping more host memory, splitting calls),
    a register cap at half the registers a kernel uses, a smaller grid for a too-few-blocks kernel.
"""
from __future__ import annotations

import pytest
from critic_case import answer, case  # noqa: F401 (the fixture)

from kernel_profiler.critic import AnswerFormatError, facts_for, parse_answer
from kernel_profiler.critic.claim import asserted_cause
from kernel_profiler.critic.direction import clause_direction, fix_metric_direction
from kernel_profiler.critic.facts import REL_TOL
from kernel_profiler.critic.match import Use
from kernel_profiler.critic.numbers import quantities, sentences
from kernel_profiler.critic.unverified import contradiction

BPS = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"


def _softmax(case):
    """The four sentences of a softmax answer, its numbers read from the capture."""
    c = case("cu_softmax_naive")
    m = c.metrics("softmax_rows")
    bps, us = m[BPS], m["gpu__time_duration.sum"] / 1e3
    return c, bps, {
        "verdict": "`softmax_rows` is memory-bound on uncoalesced global loads.",
        "measured": f"ncu shows {bps:.0f} useful bytes per 32-byte sector and {us:.1f} us per launch.",
        "why": "Adjacent lanes read different rows, so every warp load splits into many sectors.",
        "do": f"Map consecutive threads to consecutive columns; bytes per sector should go up from {bps:.0f} to 32."}


def test_one_paragraph_is_read_by_sentence_role(case):
    """One paragraph: the verdict sentence is the bottleneck, the measured sentences the evidence, the sentence that
    says what to do (and its effect) the fix, wherever it stands; without it there is no fix; a sentence is evidence
    by role only with a number and its source, or two numbers."""
    c, bps, s = _softmax(case)
    for text in (f"{s['verdict']} {s['measured']} {s['why']} {s['do']}",
                 f"{s['do']} {s['verdict']} {s['measured']} {s['why']}"):  # fix first
        a = parse_answer(text)
        assert a.bottleneck == s["verdict"] and [e.value for e in a.evidence] == [round(bps)], a
        assert a.fix_text == s["do"] and a.fix.direction == "increase", a
    no_fix = c.critique(f"{s['verdict']} {s['measured']} {s['why']}")
    assert any("fix part is missing" in r for r in no_fix.reasons), no_fix.reasons
    sourced = parse_answer(f"{s['verdict']} ncu shows {bps:.0f} useful bytes per sector. {s['why']} {s['do']}")
    assert [e.value for e in sourced.evidence] == [round(bps)]
    two = parse_answer(f"{s['verdict']} It gets {bps:.0f} useful bytes of every 32. {s['why']} {s['do']}")
    assert two.evidence and two.fix_text == s["do"]
    with pytest.raises(AnswerFormatError):  # one number, no source: no measured sentence, no reading
        parse_answer(f"{s['verdict']} It gets {bps:.0f} useful bytes per sector. {s['why']} {s['do']}")


def test_numbered_labels_are_parts(case):
    """'1) Bottleneck — ...' and '3. Why it costs 8x: ...' are labels; a numbered line whose words name no part is
    not one (it stays in the part before it)."""
    _, bps, s = _softmax(case)
    text = (f"1) Bottleneck — {s['verdict']}\n2) Evidence — {s['measured']}\n3. Why it costs 8x: {s['why']}\n"
            f"4. Fix: {s['do']}\n")
    a = parse_answer(text)
    assert a.bottleneck == s["verdict"] and a.explanation == s["why"] and a.fix_text == s["do"], a
    assert [e.value for e in a.evidence] == [round(bps)], a
    side = parse_answer(text.replace("3. Why it costs 8x:", "3. Side note, it costs 8x;"))
    assert side.explanation != s["why"], side


def test_a_sentence_may_start_lower_case_but_not_after_an_abbreviation():
    """A note without capitals splits at '. every'; 'e.g. the' and 'vs. 64' end no sentence."""
    assert sentences("The loop is host-bound: it's the `.cpu()`. every step waits on the copy.") == \
        ["The loop is host-bound: it's the `.cpu()`.", "every step waits on the copy."]
    assert len(sentences("Use a larger tile, e.g. the 128x128 one, vs. 64 now.")) == 1


def test_a_count_in_words_is_a_quantity():
    """'67.2 million store sectors' is 6.72e7 sectors, '1.2 billion' 1.2e9; without the word it is 67.2."""
    assert [(q.value, q.family) for q in quantities("67.2 million store sectors")] == [(67.2e6, "count")]
    assert [q.value for q in quantities("1.2 billion instructions")] == [1.2e9]
    assert [q.value for q in quantities("67.2 store sectors")] == [67.2]


def test_a_move_compares_in_one_unit():
    """'from ~0.5 ms to roughly 8 µs' and 'from 1 GiB down to 16 MB' fall; the same digits in one unit rise."""
    assert clause_direction("the copy goes from ~0.5 ms to roughly 8 µs") == "decrease"
    assert fix_metric_direction("the copy time should go from ~0.5 ms to roughly 8 us")[1] == "decrease"
    assert clause_direction("the copy goes from ~0.5 ms to roughly 8 ms") == "increase"
    assert clause_direction("the footprint goes from 1 GiB down to 16 MB") == "decrease"
    assert clause_direction("the footprint goes from 16 MB up to 1 GiB") == "increase"
    assert clause_direction("bandwidth 6.5 GB/s -> ~45 GB/s") == "increase"
    assert clause_direction("bandwidth 6.5 GB/s -> ~45 MB/s") == "decrease"


def test_a_time_naming_no_statistic_is_held_to_no_extreme_and_not_within_the_spread(case):
    """A kernel time that names no statistic is not the shortest launch (a value just under it is no rounding of it,
    though 'the shortest launch' so written is), and is not contradicted between the shortest and longest launch
    ('the mean launch' so written is); outside that range it still is."""
    c = case("h6_py_cudnn_autotune")
    facts = facts_for(c.arts, c.dg)
    conv = "implicit_convolve_sgemm<float,float,128"  # the one with ten launches, one of them slow
    st = {x.metric: x for x in facts.items
          if x.kernel and x.kernel.startswith(conv) and x.metric.startswith("timeline.kernel_")}
    lo, hi, mean = (st[f"timeline.kernel_{s}_ns"].value for s in ("min", "max", "mean"))
    assert hi > 2 * mean  # a wide spread: one slow launch
    kernel = st["timeline.kernel_min_ns"].kernel

    def bad(sentence: str):
        return contradiction(quantities(sentence)[0], sentence, {kernel}, facts, Use())

    near_min = f"{lo * (1 - 0.75 * REL_TOL) / 1e6:.3f} ms"  # a rounding of the shortest launch, below every launch
    assert bad(f"The shortest implicit_convolve_sgemm launch takes {near_min}.") is None
    off = bad(f"Each implicit_convolve_sgemm launch takes {near_min}.")
    assert off is not None and off.metric in ("timeline.kernel_median_ns", "timeline.kernel_mean_ns"), off
    between = f"{mean * 1.5 / 1e6:.2f} ms"  # some launch takes it; no statistic is it (and it is near enough the mean
    # to be read as a wrong mean without the spread)
    assert bad(f"Each implicit_convolve_sgemm launch takes {between}.") is None
    named = bad(f"The mean implicit_convolve_sgemm launch takes {between}.")  # a statistic named: held to it
    assert named is not None and named.metric == "timeline.kernel_mean_ns", named
    assert bad(f"Each implicit_convolve_sgemm launch takes {lo * 0.7 / 1e6:.2f} ms.") is not None  # below the range


_MATH = "The step takes most of its time outside the kernel's math."
_FIX = "Generate the batch on the GPU; GPU busy should increase."


def test_a_bottleneck_naming_no_bound_takes_the_bound_its_mechanism_asserts(case):
    """'The kernel is compute-bound: ...' in the mechanism is the answer's bound (refused on a host-bound capture);
    'The kernel is not compute-bound' asserts no bound."""
    c = case("cu_host_work")
    said = c.critique(answer(_MATH, [], "The kernel is compute-bound: each launch runs its FMA loop at the issue rate, "
                                        "so the step is as long as its math.", _FIX))
    assert said.mechanism is None and not said.checks["bound"], said.reasons
    assert any("calls it compute-bound" in r for r in said.reasons), said.reasons
    negated = c.critique(answer(_MATH, [], "The kernel is not compute-bound: each launch runs its FMA loop briefly, "
                                           "so the step is not as long as its math.", _FIX))
    assert negated.checks["bound"] and not any("compute-bound" in r for r in negated.reasons), negated.reasons


def test_signature_of_asserts_a_cause():
    """'the signature of a pageable transfer' asserts it in a mechanism; a mere mention does not."""
    assert asserted_cause("Every upload crawls at 6 GB/s, the signature of a pageable transfer.",
                          mentions=False) == "pageable_transfer"
    assert asserted_cause("Every upload crawls at 6 GB/s, next to a pageable transfer.", mentions=False) is None


_IDLE = "The program is host-bound: the GPU sits idle between the step's kernels."
_QUEUE = "Between kernels the host is busy in the runtime and nothing is queued, so the GPU waits."


@pytest.mark.parametrize("name, head, mech, wrong, right", [
    ("h7_py_empty_cache", _IDLE, _QUEUE,
     "Set `PYTORCH_NO_CUDA_MEMORY_CACHING=1` so memory is returned at once; GPU busy should increase.",
     "Remove the `empty_cache()` call from the loop; GPU busy should increase."),
    ("ot_cu_alloc_churn", _IDLE, _QUEUE,
     "Keep calling `empty_cache()` after every op to keep the pool small; GPU busy should increase.",
     "Remove the `empty_cache()` call from the loop; GPU busy should increase."),
    ("h8_zero_copy", "`scale_table` is memory-bound.",
     "Each launch reads its table through the host link, so the kernel waits on the reads.",
     "Allocate `out` with `cudaHostAlloc(..., cudaHostAllocMapped)` too; kernel time should decrease.",
     "Copy the table to device memory once before the loop; kernel time should decrease."),
    ("h7_memset_many", _IDLE, _QUEUE, "Split each memset into four smaller ones; GPU busy should increase.",
     "Issue one memset for the whole pool instead of one per buffer; GPU busy should increase."),
], ids=["no_caching_allocator", "empty_cache_after_every_op", "map_more_host_memory", "split_memsets"])
def test_the_measured_causes_wrong_ways_apply_when_the_answer_claims_no_cause(case, name, head, mech, wrong, right):
    """The captures' cause (allocator churn, zero-copy reads, launch overhead) refuses its wrong ways even when the
    answer names no cause; the right change is not refused."""
    c = case(name)
    bad = c.critique(answer(head, [], mech, wrong))
    assert bad.mechanism is None and not bad.checks["fix"], bad.reasons
    assert any("the wrong way" in r for r in bad.reasons), bad.reasons
    good = c.critique(answer(head, [], mech, right))
    assert good.checks["fix"] and not any("the wrong way" in r for r in good.reasons), good.reasons


def test_a_register_cap_at_half_the_registers_is_the_wrong_way(case):
    """'__launch_bounds__(1024, 1)' (64 registers) or '-maxrregcount=64' for a kernel using twice that or more spills;
    '-maxrregcount=128' does not squeeze it."""
    c = case("h5_reg_occupancy")
    regs = c.metrics("chase")["launch__registers_per_thread"]
    assert 2 * 64 <= regs < 2 * 128
    head = "`chase` is latency-bound: too few warps are resident to hide its dependent loads."
    mech = "Each thread holds many live registers, so few warps fit per SM and the loads are not hidden."
    for cap in ("Add `__launch_bounds__(1024, 1)`", "Compile with `-maxrregcount=64`"):
        r = c.critique(answer(head, [], mech, f"{cap} so more warps fit; achieved occupancy should increase."))
        assert not r.checks["fix"] and any(f"uses {regs:g}" in x for x in r.reasons), r.reasons
    ok = c.critique(answer(head, [], mech, "Compile with `-maxrregcount=128` so more warps fit; achieved occupancy "
                                           "should increase."))
    assert not any("caps registers" in x for x in ok.reasons), ok.reasons


def test_a_smaller_grid_is_the_wrong_way_for_too_few_blocks(case):
    """A too-few-blocks kernel whose fix launches fewer blocks than ncu's grid is refused; more blocks are not, and
    the grid a fix ends with ('over 16 blocks (2,128 blocks)') is the one compared."""
    c = case("cu_grid_stride_small_grid")
    m = c.metrics("saxpy_grid_stride")
    grid, sms = int(m["launch__grid_size"]), int(m["device__attribute_multiprocessor_count"])
    head = "`saxpy_grid_stride` is latency-bound: too few blocks to fill the GPU."
    mech = "The grid has fewer blocks than SMs, so most SMs sit idle while a few loop over the whole array."
    fewer = c.critique(answer(head, [], mech, f"Launch {grid // 2} blocks so each does more work; kernel time "
                                              f"should decrease."))
    assert not fewer.checks["fix"] and any(f"fewer than the {grid}" in r for r in fewer.reasons), fewer.reasons
    more = c.critique(answer(head, [], mech, f"Launch {2 * sms} blocks (two per SM); kernel time should decrease."))
    assert more.checks["fix"] and not any("fewer than the" in r for r in more.reasons), more.reasons
    t = case("h7_tail_wave")
    tile = int(t.metrics("poly_tile")["launch__grid_size"])
    head = "`poly_tile` is latency-bound: too few blocks to fill the GPU, the last wave runs one block."
    mech = f"The grid has {tile} blocks for {sms} SMs, so the second wave runs one block while the other SMs idle."
    split = t.critique(answer(head, [], mech, f"Split each item over 16 blocks ({16 * tile:,} blocks) so the waves "
                                              f"balance; kernel time should decrease."))
    assert split.checks["fix"] and not any("fewer than the" in r for r in split.reasons), split.reasons
    half = t.critique(answer(head, [], mech, f"Launch {tile // 2} blocks so the waves balance; kernel time should "
                                             f"decrease."))
    assert any(f"fewer than the {tile}" in r for r in half.reasons), half.reasons
