"""Signatures and bounds that check what the captures hold (signatures.py, checks' bound, fixes.py), on real H200
captures, each with a twin: extra DRAM passes need more than one kernel per step; a kernel whose SM is saturated
while DRAM idles is not memory-bound; the issue slots are a ceiling a near-peak kernel may sit at; a straggler claim
must blame the late rank; a host-bound program's fix is measured on its idle time, not on the kernels' counters;
"bound by its kernel" is a kernel bound the timeline can refuse."""
from __future__ import annotations

from critic_case import answer, case  # noqa: F401 (the fixture)

from test_critic_rank_rules import FIX, STRAGGLER, _ranks

SM = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
DRAM = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"


def _chain(c, bottleneck: str) -> str:
    t = c.dg.timeline
    return answer(bottleneck,
                  [f"{t.kernel_count} kernels in the {t.window_ns / 1e6:.2f} ms steady window of {t.steps} steps "
                   f"(nsys.sqlite)", f"GPU busy {t.busy_fraction:.1%} of the steady window (nsys.sqlite)"],
                  "Every intermediate is written to DRAM by one kernel and read back by the next, so the step moves "
                  "several times the bytes one fused pass needs and runs that many times its DRAM floor.",
                  "Fuse the chain into one kernel: `dram__bytes` per step should decrease several times.")


def test_extra_dram_passes_need_more_than_one_kernel_per_step(case):
    fused = case("py_fused_gelu")
    v = fused.critique(_chain(fused, "GELU runs as a chain of separate elementwise kernels: excess DRAM traffic."))
    assert v.mechanism == "excess_dram_traffic" and not v.checks["signature"], v.reasons
    assert any("one kernel per step" in r for r in v.reasons), v.reasons
    unfused = case("py_unfused_gelu")
    v = unfused.critique(_chain(unfused, "GELU runs as a chain of separate elementwise kernels: excess DRAM traffic."))
    assert v.checks["signature"], v.reasons


def _branchy(c, bottleneck: str) -> str:
    m = c.metrics("branchy")
    return answer(bottleneck, [f"SM throughput {m[SM]:.1f}% of peak (`{SM}`, ncu.ncu-rep)",
                               f"DRAM throughput {m[DRAM]:.1f}% of peak (`{DRAM}`, ncu.ncu-rep)"],
                  "Each element runs a long dependent fp32 loop, so the SM issues nearly every cycle while DRAM "
                  f"moves little: the kernel sits at {m[SM]:.1f}% of the SM's peak.",
                  "Leave it alone; kernel time `gpu__time_duration.sum` can only decrease by a few percent.")


def test_a_kernel_with_a_saturated_sm_and_idle_dram_is_not_memory_bound(case):
    c = case("cu_divergence_fixed")
    bad = c.critique(_branchy(c, "`branchy` is memory-bound."))
    assert not bad.checks["bound"] and any("SM is" in r for r in bad.reasons), bad.reasons
    ok = c.critique(_branchy(c, "`branchy` is compute-bound."))
    assert ok.checks["bound"], ok.reasons


def test_the_issue_ceiling_is_a_roofline_a_near_peak_kernel_may_sit_at(case):
    c = case("cu_local_array_fixed")  # 17x its bytes/FLOPs floor, but issuing 83% of cycles
    m = c.metrics("table_lookup")
    issue = "smsp__issue_active.avg.pct_of_peak_sustained_active"
    text = answer("`table_lookup` is done: it issues an instruction {:.0f}% of cycles, within ~20% of its issue "
                  "ceiling.".format(m[issue]),
                  [f"issue active {m[issue]:.1f}% (`{issue}`, ncu.ncu-rep)"],
                  "Every round is integer hashing, a shared-memory lookup and a store, so the SM issues an "
                  f"instruction {m[issue]:.1f}% of cycles: the issue slots, not memory, set its time.",
                  "Leave it; fewer instructions per round would move `smsp__inst_executed.sum` down a little.")
    v = c.critique(text)
    assert v.mechanism == "near_peak" and v.checks["signature"], v.reasons
    other = case("cu_histogram_fixed")  # 1.9x its floor and issuing ~22% of cycles: at no ceiling
    h = other.metrics("hist")
    v = other.critique(answer("`histogram` is done: it is close to its roofline. Leave it.",
                              [f"issue active {h[issue]:.1f}% (`{issue}`, ncu.ncu-rep)"],
                              "The kernel streams its input once, so its time is set by the bytes it must move "
                              "over the DRAM bandwidth.", "Leave it; `gpu__time_duration.sum` would decrease little."))
    assert v.mechanism == "near_peak" and not v.checks["signature"], v.reasons


def test_a_straggler_claim_must_blame_the_late_rank(case):
    c = case("mr_host_slow")
    late = max(c.dg.ranks, key=lambda r: r.collective_enter_lag_ns).rank
    waiting = min(c.dg.ranks, key=lambda r: r.collective_enter_lag_ns).rank
    bad = c.critique(_ranks(c, f"Rank {waiting} is the straggler: its all-reduce takes far longer.", STRAGGLER, FIX))
    assert not bad.checks["signature"] and any(f"blames rank {waiting}" in r for r in bad.reasons), bad.reasons
    ok = c.critique(_ranks(c, f"Rank {late} is the straggler: it enters each all-reduce late.", STRAGGLER, FIX))
    assert ok.checks["signature"], ok.reasons


def _sync(c, fix: str) -> str:
    t = c.dg.timeline
    return answer("Host-side synchronization after every op leaves the GPU idle between ops.",
                  [f"GPU busy {t.busy_fraction:.1%} of the {t.window_ns / 1e6:.2f} ms steady window (nsys.sqlite)"],
                  "Each synchronize empties the queue and the host waits for it before the next launch, so the GPU "
                  f"idles {1 - t.busy_fraction:.0%} of the window.", fix)


def test_a_host_bound_fix_is_measured_on_idle_time_not_on_kernel_counters(case):
    c = case("ho_py_sync_per_op")
    bad = c.critique(_sync(c, "Fuse the two elementwise ops: DRAM bytes per op decrease by half."))
    assert not bad.checks["fix"] and any("kernels' own work" in r for r in bad.reasons), bad.reasons
    ok = c.critique(_sync(c, "Synchronize once per step: the GPU busy fraction should increase toward 90%."))
    assert ok.checks["fix"], ok.reasons


def test_bound_by_its_kernel_is_a_kernel_bound(case):
    c = case("py_tiny_ops")
    t = c.dg.timeline
    v = c.critique(answer("The step is bound by its elementwise kernel.",
                          [f"GPU busy {t.busy_fraction:.1%} of the steady window (nsys.sqlite)"],
                          "The kernels dominate the step, so their time sets the step time.",
                          "Make the kernel faster: kernel time should decrease."))
    assert not v.checks["bound"], v.reasons
