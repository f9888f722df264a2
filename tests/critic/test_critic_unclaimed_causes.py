"""An answer that blames no catalogued cause outright is still held to the timeline (issue 10, item 2), on real H200
captures, with a twin that goes the other way:
  - bound_words.py transfer words: "the GPU waits for the copies to land" states a transfer bound, so the bound check
    refuses it on a GPU-busy capture (cu_sgemm_fp32) and passes it where copies fill the window (cu_pinned_copy):
    test_waiting_for_the_copies_is_a_transfer_bound.
"""
from __future__ import annotations

from critic_case import answer, case  # noqa: F401 (the fixture)

from kernel_profiler.critic import facts_for


def _busy(c) -> float:
    return next(f.value for f in facts_for(c.arts, c.dg).items if f.metric == "timeline.gpu_busy_fraction")


def _waits(c):
    return c.critique(answer(
        "Most of the step goes to moving data.",
        [f"GPU busy {100 * _busy(c):.1f}% of the steady window (nsys)"],
        "Every step moves the whole data set over PCIe, so the GPU waits for the copies to land before it can work.",
        "Keep the data resident on the GPU; the copy time should decrease several-fold."))


def test_waiting_for_the_copies_is_a_transfer_bound(case):
    busy = _waits(case("cu_sgemm_fp32"))
    assert not busy.checks["bound"] and any("transfer-bound" in r for r in busy.reasons), busy.reasons
    copies = _waits(case("cu_pinned_copy"))
    assert copies.checks["bound"], copies.reasons
