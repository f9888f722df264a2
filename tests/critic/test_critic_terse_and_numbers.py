"""Rules of 2026-12-01 (form.py, arithmetic.py, number_check.py, unverified.py), each with a twin that must go the other
way: a terse note with no headings, labelled list items and a bold label in other words are read as parts; a metric
given as 84.7% where the capture holds 0.847% is refused (a percentage is not a fraction of it); '·' multiplies and
'64M' may be 2^26 in written arithmetic; 'N x 169.8 us' multiplies, while a ratio that misses the quotient of two
same-kind numbers of its sentence is refused; a time in a clause that names nothing ('(61.5 ms, set-up)') is
unverified, not checked against whichever timeline value is near it."""
from __future__ import annotations

from critic_case import answer, case  # noqa: F401 (the fixture)

from kernel_profiler.critic import parse_answer
from kernel_profiler.critic.arithmetic import chains, implicit_miss
from kernel_profiler.critic.form import fix_metric_direction
from kernel_profiler.critic.numbers import quantities

TERSE = """axpb_strided (contiguous fast path): done, at the DRAM roofline.

- 537.4 us/launch (ncu gpu__time_duration.sum); nsys: 13 launches
- DRAM 82.2% of peak = 1.074 GB read + 1.053 GB written in 537 us
- cause: each element is read once and written once, so the bytes set the time
- floor: 2.127 GB / 4.81 TB/s = 0.442 ms

nothing left in the kernel worth chasing (<20%); fuse it into its producer to remove the round trip.
"""

CHATTY = """Hi! Here is what I found.

**Bottleneck:** the kernel `scale_vec4` is limited by HBM bandwidth.

**Key numbers:**
- From `ncu.ncu-rep`: 531.0 us per launch at 4.00 TB/s.

**Arithmetic.** 2 x 64M x 4 B = 536.9 MB per pass, so the floor is 536.9 MB / 4.81 TB/s = 111.6 us.

**What I'd suggest:** leave it; `gpu__time_duration` stays near 0.5 ms.
"""


def test_a_terse_note_and_labels_in_other_words_are_read_as_parts():
    a = parse_answer(TERSE)
    assert a.bottleneck.startswith("axpb_strided") and len(a.evidence) == 2, (a.bottleneck, a.evidence)
    assert a.explanation.startswith("Cause: each element") and a.fix_text.startswith("nothing left"), a  # its label kept
    assert "2.127 GB / 4.81 TB/s" in a.explanation  # a labelled floor line ties the cause to the gap
    b = parse_answer(CHATTY)
    assert b.bottleneck.startswith("the kernel") and len(b.evidence) == 1, b
    assert b.explanation.startswith("2 x 64M") and b.fix_text.startswith("leave it"), b
    numbered = parse_answer("1. **Bottleneck** - slow.\n\n2. **Evidence** (nsys.sqlite)\n- 34.11 ms per copy\n- 7.87 GB/s\n\n"
                            "3. **Mechanism** - a pageable copy is staged by the CPU.\n\n4. **Fix** - pin it.")
    assert len(numbered.evidence) == 2, numbered.evidence


def test_written_arithmetic_reads_a_middle_dot_and_binary_multipliers():
    assert [s.ok for s in chains("2·8192³ / 1.381 ms = 796 TFLOP/s")] == [True]
    assert [s.ok for s in chains("8192³ / 1.381 ms = 796 TFLOP/s")] == [False]  # the factor 2 left out
    assert [s.ok for s in chains("2 x 64M x 4 B = 536.9 MB")] == [True]
    assert [s.ok for s in chains("2 x 64M x 4 B = 600 MB")] == [False]


def test_a_ratio_against_its_own_sentence_and_a_multiplier():
    s = "The GPU work per step is 6 x 169.8 us GEMMs + 7 x 15.5 us elementwise, about 1.13 ms."
    assert all(implicit_miss(s, q) is None for q in quantities(s))
    wrong = "Each launch waits 1.29 us, 2.6x the median kernel of 0.70 us."
    assert [implicit_miss(wrong, q) is not None for q in quantities(wrong)] == [False, True, False]
    right = "Each launch waits 1.29 us, 1.8x the median kernel of 0.70 us."
    assert all(implicit_miss(right, q) is None for q in quantities(right))


def test_a_direction_given_in_words():
    assert fix_metric_direction("Watch `sm__pipe_tensor_cycles_active` from 0% to a high share, FMA pipe down.") == \
        ("sm__pipe_tensor_cycles_active", "increase")


def test_a_percentage_is_not_the_fraction_the_metric_holds(case):
    c = case("tr_atomic_hist")
    metric = "lts__d_atomic_input_cycles_active.avg.pct_of_peak_sustained_elapsed"
    held = c.metrics("hist4")[metric]
    assert held < 5  # the L2 atomic units are busy under 1% of the time on average

    def text(v: str):
        return c.critique(answer(
            "`hist4` is limited by atomic contention: 64M atomic adds onto 4 bins serialize in L2.",
            [f"`{metric}` = {v}% (ncu.ncu-rep)",
             f"{c.metrics('hist4')['gpu__time_duration.sum'] / 1e6:.2f} ms per launch (`gpu__time_duration.sum`, ncu.ncu-rep)"],
            "Same-address atomics cannot proceed in parallel, so the kernel runs far from its DRAM floor.",
            "Privatize the bins per block; `gpu__time_duration.sum` should decrease."))
    ok = text(f"{held:.2f}")
    assert ok.checks["numbers"], ok.reasons
    shifted = text(f"{held * 100:.1f}")
    assert not shifted.checks["numbers"] and any(metric in r for r in shifted.reasons), shifted.reasons


def test_a_time_whose_clause_names_nothing_is_unverified(case):
    c = case("cu_divergence")
    m = c.metrics("branchy")
    us = m["gpu__time_duration.sum"] / 1e3

    def text(sentence: str):
        return c.critique(answer(
            "`branchy` is compute-bound: its warps diverge, so each issue slot does a fraction of its 32 lanes' work.",
            [f"kernel duration {us:.0f} us (`gpu__time_duration.sum`, ncu.ncu-rep)"],
            "The branch on the element's value sends lanes of one warp down two paths, so both paths issue for every "
            f"warp and the issue slots, not memory, bound it. {sentence}",
            "Partition the input so a warp takes one path; `gpu__time_duration.sum` should decrease."))
    aside = text(f"Two launches stand out (the first at {us * 1.4:.0f} us, a warm-up).")
    assert aside.checks["numbers"], aside.reasons
    assert any(n.unverified and n.written.startswith(f"{us * 1.4:.0f}") for n in aside.numbers), aside.numbers
    claimed = text(f"The kernel takes {us * 1.4:.0f} us.")
    assert not claimed.checks["numbers"], claimed.reasons
