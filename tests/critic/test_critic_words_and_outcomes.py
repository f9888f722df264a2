"""Readings added after blind sets 40-43 (issue 10, items 3 and 4), each with a twin that goes the other way. Verdicts
on real H200 captures; the readers (pure functions of text) on the words themselves:
  - bound_words `_stated`: a verdict's bound is the first it names that it does not rule out ("latency-bound ..., not
    bandwidth-bound" is latency) (test_a_bound_named_to_rule_it_out_is_not_the_verdict);
  - direction.py: "or more generally" is no rise, "kernels per loop from 4000 to 1" and "the L2 atomic sector count
    to drop" name what moves, "262 K instead of ~67 M updates" is a fall, "XU util 93.8% -> ~0" is the XU pipe
    (test_fix_outcomes);
  - arithmetic.py: "= ~10%" is rounded freely (test_an_approximate_result);
  - use.py: a number in a premise ("Assuming cuBLAS reaches 50-70% ...") is no measurement (test_a_premise);
  - numbers.py: "204.8 KB/block" is bytes (test_bytes_per_block);
  - paragraphs.py `LABEL`: a bold sentence opening a paragraph is the verdict, not a label (test_a_bold_sentence);
  - form.py: "Appendix: the change" names the fix, "**Floor.**" explains a labelled verdict, and a terse note's fix
    runs from "fix →" to its end (test_section_names);
  - catalog.py: a CAS loop, contention on a few addresses, a host callback per kernel and a saturated conversion
    pipe are causes the claim reader knows (test_causes_in_plain_words);
  - fixes.py `_ADD_SYNC`: "after every `cudaLaunchHostFunc`, call `cudaStreamSynchronize`" adds a synchronization per
    launch (test_a_sync_after_every_call).
"""
from __future__ import annotations

from critic_case import case  # noqa: F401 (the fixture)

from kernel_profiler.answer import Answer
from kernel_profiler.critic.arithmetic import chains
from kernel_profiler.critic.claim import claimed_mechanism
from kernel_profiler.critic.direction import clause_direction, fix_metric_direction
from kernel_profiler.critic.wrong_way import _ADD_SYNC
from kernel_profiler.critic.form import parse_answer
from kernel_profiler.critic.numbers import family_and_factor, quantities
from kernel_profiler.critic.paragraphs import LABEL
from kernel_profiler.critic.use import number_use


def _chase(c, verdict: str):
    m = c.metrics("chase")
    return c.critique(
        f"- kernel: `chase`, {m['gpu__time_duration.sum'] / 1e3:.1f} us (ncu `gpu__time_duration.sum`)\n"
        f"- registers: {m['launch__registers_per_thread']:.0f}/thread -> `launch__occupancy_limit_registers` = "
        f"{m['launch__occupancy_limit_registers']:.0f} block/SM\n"
        f"- `sm__warps_active` {m['sm__warps_active.avg.pct_of_peak_sustained_active']:.1f}% of the SM's warp slots\n"
        f"- DRAM {m['gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed']:.1f}% of peak\n"
        f"- => {verdict}\n\n"
        "change:\n"
        "- move the work on the 160 live floats after the loop so the chase needs ~30 registers\n"
        f"- warps active {m['sm__warps_active.avg.pct_of_peak_sustained_active']:.0f}% -> ~90%; kernel "
        f"{m['gpu__time_duration.sum'] / 1e3:.0f} us -> ~150 us (estimate)\n")


def test_a_bound_named_to_rule_it_out_is_not_the_verdict(case):
    """`chase` is an occupancy-limited pointer chase: DRAM moves at 12% of peak. "latency-bound ..., not
    bandwidth-bound" states latency (before, the table's first pattern, memory, won over its negation); the twin
    that states memory-bound is refused by the DRAM measurement."""
    c = case("h5_reg_occupancy")
    latency = _chase(c, "latency-bound because occupancy is capped by registers, not bandwidth-bound")
    assert latency.checks["bound"], latency.reasons
    memory = _chase(c, "memory-bandwidth-bound, not latency-bound: occupancy is capped by registers")
    assert not memory.checks["bound"] and any("memory-bound, but DRAM moves" in r for r in memory.reasons), \
        memory.reasons


def test_fix_outcomes():
    more = fix_metric_direction("Replace the 4000 elementwise launches by one: `x.add_(4000.0)`, or more generally "
                                "batch the tensors. Expected: kernels per loop from 4000 to 1.")
    assert more == ("kernels per loop", "decrease"), more
    assert fix_metric_direction("Privatize the bins; expect the L2 atomic sector count to drop ~90x.") == \
        ("atomic sector count", "decrease")
    assert fix_metric_direction("Privatize: 4 atomic_adds per program (262 K instead of ~67 M updates); expect the "
                                "kernel time to fall.")[1] == "decrease"
    assert clause_direction(" resident warps (64 instead of 16 per SM)") == "increase"
    assert fix_metric_direction("Use float literals. XU util 93.8% -> ~0.") == ("XU pipe utilization", "decrease")


def test_an_approximate_result():
    assert all(s.ok for s in chains("lanes: 3.33/32 = ~10% SIMD efficiency."))
    assert not any(s.ok for s in chains("lanes: 3.33/32 = ~20% SIMD efficiency."))
    assert not any(s.ok for s in chains("lanes: 3.33/32 = 10% SIMD efficiency."))  # written as exact: 10.4%


def test_a_premise():
    s = "Assuming cuBLAS reaches 50-70% of the TF32 figure on this shape, the GEMM takes about 2 ms."
    q = next(q for q in quantities(s) if q.written.startswith("50"))
    assert number_use(s, q).predicted
    t = "ncu shows cuBLAS reaching 50% of the TF32 figure on this shape."
    assert not number_use(t, next(q for q in quantities(t) if q.value == 50)).predicted


def test_bytes_per_block():
    assert family_and_factor("KB/block") == ("bytes", 1e3)
    assert family_and_factor("B/sector")[0] == "count"  # useful bytes per sector: a ratio


def test_a_bold_sentence():
    assert LABEL.sub("", "**The program is host-bound by launch overhead.** 200 ops", count=1).startswith("**The")
    assert LABEL.sub("", "**Fix.** Pad the tile.", count=1) == "Pad the tile."
    assert LABEL.sub("", "**Change:** pad", count=1) == "pad"


def test_section_names():
    appendix = parse_answer(
        "# Executive summary\n\nThe histogram is bound by global atomic serialization, 17.2 ms per call.\n\n"
        "# Appendix: evidence\n\n1. `gpu__time_duration.sum` = 17.183 ms.\n2. DRAM 0.33% of peak.\n\n"
        "# Appendix: the change\n\nPrivatize the bins per block. Metric to watch: "
        "`lts__t_requests_srcunit_tex_op_red.sum` from 23M to ~4,224.\n")
    assert appendix.fix is not None and appendix.fix.direction == "decrease", appendix.fix_text
    floor = parse_answer(
        "| quantity | value |\n|---|---|\n| kernel time | 531.0 us |\n| DRAM throughput | 83.2% |\n\n"
        "**Floor.** The kernel must move 2.126 GB; at 4.814 TB/s that takes 0.442 ms, so 0.531 ms is 1.20x the "
        "floor because the loads and stores are fully coalesced and only DRAM limits them.\n\n"
        "**Bound:** near peak (memory roofline).\n\n**What to change:** not the kernel.\n")
    assert "1.20x the floor" in floor.explanation, floor.explanation
    terse = parse_answer(
        "legacy_stream, found it\n\nthe memsets go to the legacy default stream, so the kernels serialize\n\n"
        "receipts (nsys.sqlite):\n- 104 kernels, 128.3 us each, zero overlap\n- step median 1.11 ms\n\n"
        "so: latency-bound with low parallelism\n\n"
        "fix → put each memset on its kernel's stream\nexpect step 1.11 ms → ~0.15 ms (est.)\n\n"
        "(the FMA chain is a second-order thing)\n")
    assert terse.fix_text.startswith("fix → put each memset") and terse.fix.direction == "decrease", terse.fix_text


def _claim(text: str):
    return claimed_mechanism(Answer(bottleneck=text, evidence=[], explanation="", fix=None))


def test_causes_in_plain_words():
    assert _claim("it is serialization on four addresses: a latency bound created by contention") == \
        "atomic_contention"
    assert _claim("the GPU waits on a host callback after every kernel") == "host_sync"
    assert _claim("compute-bound, but not on math: the XU pipe (conversions) is saturated") == "instruction_bound"
    assert _claim("the loads are fully coalesced and DRAM is at 83% of peak: near peak") == "near_peak"


def test_a_sync_after_every_call():
    assert _ADD_SYNC.search("after every `cudaLaunchHostFunc`, call `cudaStreamSynchronize(stream)` so each "
                            "callback completes")
    assert not _ADD_SYNC.search("drop `cudaLaunchHostFunc` from the loop and synchronize once per step")


def _hist4(c, fix: str):
    m = c.metrics("hist4")
    return c.critique(
        f"1. hist4 takes {m['gpu__time_duration.sum'] / 1e6:.2f} ms and DRAM is idle "
        f"({m['gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed']:.2f} %), so it is not memory bound.\n"
        f"2. ncu reports a {m['derived__memory_l1_conflicts_shared_nway']:.0f}-way shared-memory bank conflict pattern "
        "(derived n-way) on the kernel's shared stores.\n"
        "3. Triton stages the block through shared memory for the atomic; with those conflicts every store is "
        "replayed many times, which is where the time goes.\n"
        f"4. Fix: {fix}\n")


def test_a_cause_the_fix_acts_on_is_the_claim(case):
    """claim._targeted: the verdict asserts no cause ("not memory bound"), the mechanism names bank conflicts and the
    fix sets out to remove them: the claim is bank conflicts, and the captures refute it (hist4's shared stores need
    ~1.1 wavefronts each: its time is the global atomics). Before, no claim was read and the answer was accepted. The
    twin's fix acts on the atomics, not on the conflicts: no claim is taken from the mechanism's mention."""
    c = case("tr_atomic_hist")
    pad = _hist4(c, "pad the staging buffer (BLOCK+32) to spread banks; conflicts should vanish and the kernel should "
                    "speed up ~10x.")
    assert pad.mechanism == "shared_bank_conflict" and not pad.checks["signature"], pad.reasons
    other = _hist4(c, "reduce per program first with tl.histogram, then 4 atomic adds per program; expect the "
                      "kernel time to fall ~50x.")
    assert other.mechanism != "shared_bank_conflict", other.mechanism


def _stream_scale(c, heading: str):
    m = c.metrics("stream_scale")
    return c.critique(
        f"## {heading}\n\n"
        "**Bottleneck.** The SMs, not memory: DRAM throughput is only "
        f"{m['gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed']:.1f} % of peak, so the memory system is "
        "clearly not the limiter; the kernel is held back by the per-element work on the SM.\n\n"
        f"**Numbers.** {m['gpu__time_duration.sum'] / 1e3:.1f} us per launch; DRAM "
        f"{m['gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed']:.1f} %; "
        f"{m['smsp__inst_executed.sum'] / 1e6:.1f} M warp instructions (`smsp__inst_executed.sum`).\n\n"
        "**Mechanism.** With memory idle, the time must be going into instruction execution: the grid-stride loop "
        "computes 64-bit indices and a multiply per element, and that instruction stream sets the pace.\n\n"
        "**Fix.** Use `float4` loads and a 32-bit index to cut the instruction count by ~4x; expect ~60 us.\n")


def test_a_heading_that_states_the_verdict(case):
    """form._HEADING_SAYS: "## Diagnosis: stream_scale is compute-bound" states the bottleneck; its bound is then held
    to the captures (the SM is ~4% busy while DRAM is busier). With a title that states nothing, the verdict's own
    words name no bound and the bound check has nothing to refuse."""
    c = case("cu_smem_occupancy")
    said = _stream_scale(c, "Diagnosis: stream_scale is compute-bound")
    assert not said.checks["bound"] and any("compute-bound, but its SM" in r for r in said.reasons), said.reasons
    title = _stream_scale(c, "Notes on stream_scale")
    assert title.checks["bound"], title.reasons


def test_a_sync_after_each_launch_and_unfused_kernels():
    """wrong_way._ADD_SYNC read "synchronize() after each launch" with no space before the noun (it never matched); and
    launch overhead's wrong way includes running fused work as separate kernels."""
    from kernel_profiler.catalog import CATALOG
    assert _ADD_SYNC.search("call torch.cuda.synchronize() after each launch")
    assert _ADD_SYNC.search("replace each `cudaLaunchHostFunc(stream, f)` by `cudaStreamSynchronize(stream); f();` "
                            "after every pass")
    assert not _ADD_SYNC.search("torch.cuda.synchronize() after every step")
    wrong = CATALOG["launch_overhead"].wrong_way[0]
    assert wrong.search("Disable Inductor fusion for the gate so the mul, sigmoid and add run as three separate kernels")
    assert not wrong.search("Let Inductor fuse the gate into one kernel")


def test_a_sixth_of_the_idle_time_is_a_cause(case):
    """signatures.IDLE_CAUSE_SHARE: on h8_py_mask_sync (ground truth host sync: a `.nonzero()` per row) the engine
    counts 18% of the idle gaps as sync waits and most of the rest as launch gaps; a sync claim stands (before, a
    quarter of the idle time was required and every such answer was refused). An allocator claim, with no idle time
    of its own there, stays refused."""
    from kernel_profiler.critic import facts_for
    from kernel_profiler.signatures import ABSENT, PRESENT, Measured, sig_idle_cause
    c = case("h8_py_mask_sync")
    tl = facts_for(c.arts, c.dg).timeline
    x = Measured(profile=None, roofline=None, sass_ops={}, spill=(0, 0), timeline=tl, name="", program={}, ranks=[])
    share = tl.idle_by_cause.get("host_sync", 0.0) / tl.idle_ns
    assert 0.15 <= share < 0.25, share  # the capture's split, as the engine measures it
    assert sig_idle_cause(x, "host_sync")[0] == PRESENT
    assert sig_idle_cause(x, "allocator")[0] == ABSENT


def _hgemm(c, extra: str):
    m = c.metrics("hgemm_fp32_fma")
    conflicts = m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"]
    waves = m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]
    return c.critique(
        "## Bottleneck\n`hgemm_fp32_fma` is held back by shared-memory bank conflicts on its A-tile loads.\n\n"
        "## Evidence\n"
        f"- `l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum` = {conflicts / 1e6:.1f}M of {waves / 1e6:.1f}M "
        "shared-load wavefronts\n"
        f"- `l1tex__throughput` {m['l1tex__throughput.avg.pct_of_peak_sustained_active']:.1f}% of peak; FMA pipe "
        f"{m['sm__pipe_fma_cycles_active.sum.pct_of_peak_sustained_active']:.1f}%\n"
        f"- {m['gpu__time_duration.sum'] / 1e6:.3f} ms per call (`gpu__time_duration.sum`)\n\n"
        "## Mechanism\nThe 128-bit shared loads of the A tile put lanes of a warp on the same banks, so every "
        f"conflict replays the wavefront and the LSU keeps the FMA pipe from its peak.{extra}\n\n"
        "## Fix\nPad the shared tiles by 4 floats per row. Expected: bank conflicts "
        f"{conflicts / 1e6:.0f}M -> ~0 and the kernel ~1.5x faster (estimate).\n")


def test_a_secondary_cause_of_an_fma_pipe_gemm(case):
    """checks._missed_tensor_cores: the engine finds `hgemm_fp32_fma` an FMA-pipe GEMM with no tensor-core
    instruction (fp16 inputs, tensor pipe 0%); its bank conflicts are real (40% of the wavefronts), but an answer that
    blames them and never names the tensor cores explains a small part of the gap, and is refused. The twin names
    the tensor-core path as the larger lever and is not refused for it."""
    c = case("h6_half_fma_gemm")
    banks = _hgemm(c, "")
    assert any("matrix product on the FMA pipe" in r for r in banks.reasons), banks.reasons
    both = _hgemm(c, " Beyond that, the fp16 inputs could run on the tensor cores (HMMA), the larger lever.")
    assert not any("matrix product on the FMA pipe" in r for r in both.reasons), both.reasons


def test_latency_with_the_issue_slots_busy(case):
    """checks._kernel_bound: a bare latency bound ("a classic memory-latency problem") for `axpb_strided`, whose SM
    issues an instruction ~66% of active cycles, is refused (its integer index math is the work); the same words for
    `chase` (issue ~2%) stand (test_a_bound_named_to_rule_it_out_is_not_the_verdict)."""
    c = case("h6_intdiv_index")
    m = c.metrics("axpb_strided")
    v = c.critique(
        "My read is that `axpb_strided` has a classic memory-latency problem. It takes "
        f"{m['gpu__time_duration.sum'] / 1e6:.2f} ms per launch and DRAM moves at only "
        f"{m['gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed']:.1f}% of its peak, so the memory system is "
        "starved of requests.\n\n"
        "The stall breakdown agrees: long scoreboard "
        f"{m['smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio']:.1f} cycles per issue.\n\n"
        "Because each thread has one load in flight, the kernel sits far from the DRAM roofline.\n\n"
        "What I would do: unroll the loop by 4 so each thread has four loads in flight; DRAM throughput should rise "
        "toward 60%.\n")
    assert not v.checks["bound"] and any("issues an instruction" in r for r in v.reasons), v.reasons
