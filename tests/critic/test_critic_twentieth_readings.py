"""Readings of the twentieth session (issue 10), on real H200 captures, each with a twin the critic refuses: a number
whose words point at one metric but whose value is, in its own unit, another measured value of the kernel or the
program is real and described loosely, so it is matched to the value it equals, not refused as made up. Only where
chance equality is unlikely: a time, bytes or a rate, or a count written to three significant figures; never a share
(a kernel holds hundreds of them), a device attribute or a peak, nor a time given for each call of an API function its
words name, nor a value of another memory level or API function than the one its words name. And "poor global load
efficiency" (nvprof's gld_efficiency: useful bytes per byte moved) is a claim of uncoalesced access, checked against
the sectors each request takes.
"""
from __future__ import annotations

from critic_case import (  # noqa: F401 (case: the fixture)
    accepted as _accepted, answer_text as _text, case, refused_for as _refused_for)

from kernel_profiler.critic import gather_facts
from kernel_profiler.critic.claim import asserted_cause
from kernel_profiler.critic.numbers import quantities
from kernel_profiler.critic.same_value import equal_elsewhere


def test_a_time_equal_to_another_measured_time_is_matched_to_it(case):
    c = case("h7_memset_many")
    text = _text("blind30", "b30_memset_postmortem")  # "| host API time per call | 2.90 µs avg |": the memset call's
    v = c.critique(text)  # mean, which its words read as the kernels' mean
    assert _accepted(v), v.reasons
    audit = next(n for n in v.numbers if n.written.startswith("2.90"))
    assert "cudaMemsetAsync" in (audit.fact or "") and "its words suggested" in (audit.derivation or ""), audit
    wrong = c.critique(text.replace("2.90 µs avg", "3.40 µs avg"))  # equal to nothing the captures hold
    assert _refused_for(wrong, "3.40"), wrong.reasons


def test_a_count_to_three_figures_equal_to_another_counter_is_matched(case):
    c = case("h5_reg_occupancy")
    text = _text("blind13", "b13_reg_headings")  # "75.9 of 81.6 cycles": 81.6 is the warp latency per issue
    assert _accepted(c.critique(text)), c.critique(text).reasons
    wrong = c.critique(text.replace("75.9 of 81.6 cycles", "75.9 of 84.6 cycles"))
    assert _refused_for(wrong, "84.6"), wrong.reasons


def test_a_per_call_time_of_a_named_function_stays_that_functions(case):
    c = case("ho_py_sync_per_op")  # 112 us is the timeline's launch-overhead idle, not the synchronize call's time
    v = c.critique(_text("blind29", "b29_syncop_fab"))
    assert _refused_for(v, "112 us"), v.reasons


def test_shares_and_small_counts_are_never_matched_by_value_alone(case):
    c = case("h5_reg_occupancy")
    pool = gather_facts(c.arts, c.dg)
    kernels = set(pool.kernels)
    share = next(f for f in pool.items if f.family == "pct" and f.kernel and f.value > 1)
    q = quantities(f"{share.value:.1f}% of something")[0]
    assert equal_elsewhere(q, "x", kernels, pool, None) is None, share  # a share: too dense to tell
    small = next(f for f in pool.items if f.family == "count" and f.kernel and 2 <= f.value <= 64 and
                 f.value == int(f.value))
    q = quantities(f"{int(small.value)} blocks")[0]
    assert equal_elsewhere(q, "x", kernels, pool, None) is None, small  # two figures: equal by chance too often


def test_poor_load_efficiency_is_a_claim_of_uncoalesced_access(case):
    assert asserted_cause("row_sums is DRAM-bound with poor global load efficiency.") == "uncoalesced_global"
    assert asserted_cause("row_sums is DRAM-bound: the loads stream at full width.") != "uncoalesced_global"
    c = case("ho_smem_stride_reduce")  # its real number (12.4 warps per issue) no longer hides the wrong claim: the
    v = c.critique(_text("blind35", "b35_smem_global"))  # global loads take 4 sectors per request, fully coalesced
    assert _refused_for(v, "uncoalesced global"), v.reasons


def test_a_value_of_another_memory_level_is_not_the_level_named(case):
    c = case("cu_sgemm_fp32")
    pool = gather_facts(c.arts, c.dg)
    l1 = next(f for f in pool.by_metric["l1tex__m_xbar2l1tex_read_bytes.sum.per_second"] if f.kernel)  # L2 -> L1
    said = f"{l1.value / 1e12:.3f} TB/s"
    for words, level_named in ((f"DRAM delivers {said} to the SMs.", "DRAM"), (f"L1 receives {said}.", "L1"),
                               (f"The loads stream {said} to the SMs.", None)):
        q = next(x for x in quantities(words) if x.family == "byte_rate")
        got = equal_elsewhere(q, words, set(pool.kernels), pool, None)
        if level_named == "DRAM":  # L1's rate, said of DRAM: the level named is the level it must be of
            assert got is None, (words, got)
        else:
            assert got is not None and got.value == l1.value, (words, got)
    text = _text("blind61", "b61_sgemm_tf32")  # "16.9 GB read": DRAM's read bytes, its words naming no level
    assert _accepted(c.critique(text.replace("16.9 GB read through L2", "16.9 GB read"))), text
