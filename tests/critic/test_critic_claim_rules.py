"""Rules of critic/unverified.py and the kernel-bound check, each on a real H200 capture with a twin that must fail:
a number written as a metric's value is that metric's; a kernel called memory-bound must keep some level of
its memory hierarchy busy (and one called compute/latency-bound must not stream DRAM near its peak); a cause
named to rule it out is not the claim; a hedged number (a ceiling from knowledge) is listed as unverified,
while the same number presented as the run's measurement is checked and refused."""
from __future__ import annotations

from critic_case import answer, case  # noqa: F401 (the fixture)

from kernel_profiler.answer import Answer
from kernel_profiler.critic.claim import claimed_mechanism

DRAM = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"


def _small_grid(c, bottleneck: str, grid_line: str):
    m = c.metrics("iterate")
    return c.critique(answer(
        bottleneck,
        [grid_line, f"DRAM throughput {m[DRAM]:.2f}% of peak (`{DRAM}`, ncu.ncu-rep)"],
        "Because so few blocks are launched, most SMs have no work, so the kernel runs far from the compute "
        "roofline: the busy SMs wait on their dependent FMA chains while the idle SMs add nothing.",
        "Launch more blocks; `launch__grid_size` should increase to at least the SM count."))


def test_a_number_written_as_a_metric_value_is_that_metric(case):
    c = case("ho_small_grid_compute")
    m = c.metrics("iterate")
    grid, sms = int(m["launch__grid_size"]), int(m["launch__sm_count"])
    ok = _small_grid(c, "`iterate` is latency-bound: too few blocks.",
                     f"`launch__grid_size` = {grid} blocks on `launch__sm_count` = {sms} SMs (ncu.ncu-rep)")
    assert ok.checks["numbers"], ok.reasons
    bad = _small_grid(c, "`iterate` is latency-bound: too few blocks.",
                      f"`launch__grid_size` = {sms} blocks on `launch__sm_count` = {sms} SMs (ncu.ncu-rep)")
    assert not bad.checks["numbers"], bad.reasons  # the SM count, written as the grid size
    assert any(f"'{sms} blocks'" in r for r in bad.reasons), bad.reasons


def test_memory_bound_needs_a_busy_memory_hierarchy(case):
    c = case("ho_small_grid_compute")
    grid = int(c.metrics("iterate")["launch__grid_size"])
    line = f"`launch__grid_size` = {grid} blocks (ncu.ncu-rep)"
    bad = _small_grid(c, "`iterate` is memory-bound.", line)
    assert not bad.checks["bound"], bad.reasons
    assert any("memory-bound" in r and "memory hierarchy" in r for r in bad.reasons), bad.reasons
    ok = _small_grid(c, "`iterate` is latency-bound: too few blocks.", line)
    assert ok.checks["bound"], ok.reasons


def test_compute_bound_is_refused_for_a_kernel_streaming_dram(case):
    c = case("cu_vec_copy")
    m = c.metrics("scale_vec4")
    assert m[DRAM] >= 70

    def text(bound: str) -> str:
        return answer(f"`scale_vec4` is {bound}.", [f"DRAM throughput {m[DRAM]:.1f}% of peak (`{DRAM}`, ncu.ncu-rep)"],
                      "It streams each element once, so its time is the bytes over the DRAM bandwidth: it sits on "
                      "the memory roofline with no gap left.", "Leave the kernel alone; move fewer bytes per call: "
                      "`dram__bytes` should decrease.")
    bad = c.critique(text("compute-bound"))
    assert not bad.checks["bound"], bad.reasons
    ok = c.critique(text("memory-bound"))
    assert ok.checks["bound"], ok.reasons


def test_a_cause_named_to_rule_it_out_is_not_the_claim():
    def claim(bottleneck: str, mechanism: str = "") -> str | None:
        return claimed_mechanism(Answer(bottleneck=bottleneck, explanation=mechanism, fix=None))

    assert claim("The transpose is limited by shared-memory bank conflicts.") == "shared_bank_conflict"
    gone = claim("The padded transpose is DRAM-bound at 75% of peak; the bank conflicts are gone.")
    assert gone != "shared_bank_conflict"
    assert claim("Not limited by bank conflicts.", "Shared-memory bank conflicts serialize the tile loads.") \
        == "shared_bank_conflict"


def test_a_hedged_ceiling_is_unverified_and_a_claimed_measurement_is_checked(case):
    c = case("cu_pageable_copy")

    def text(sentence: str) -> str:
        return answer("The steady state is transfer-bound on pageable host-to-device copies.",
                      [f"GPU busy {c.dg.timeline.busy_fraction:.0%} of the steady window (nsys.sqlite)"],
                      "Pageable memory is staged through a driver buffer, so each copy is limited by that extra "
                      f"host copy rather than by the link. {sentence}",
                      "Allocate the host buffer pinned; the copy time should decrease.")
    hedged = c.critique(text("The link's practical ceiling is about 50 GB/s."))
    assert hedged.checks["numbers"], hedged.reasons
    assert any(n.unverified and n.written.startswith("50") for n in hedged.numbers), hedged.numbers
    measured = c.critique(text("The copies run at 50 GB/s."))
    assert not measured.checks["numbers"], measured.reasons
