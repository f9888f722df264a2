"""Two readings found in blind46/47 after their fresh score (issue 10, items 2 and 3), each with a twin that goes the
other way:
  - checks.check_bound: copies that already run at the link's speed are a transfer verdict ("the upload is simply a
    lot of bytes for the link"), not a kernel at its roofline (py_pinned_copy, a real H200 capture: copies fill 97% of
    the steady window at 55.4 GB/s from pinned memory); a kernel said to be at its roofline there is still refused;
  - direction.py: "by more than ~7%" sizes a move and "start-up" is a noun; neither says which way a metric goes.
"""
from __future__ import annotations

from critic_case import answer, case  # noqa: F401 (the fixture)

from kernel_profiler.critic.direction import fix_metric_direction


def _pinned(c, verdict: str):
    tl = c.dg.timeline
    return c.critique(answer(
        verdict,
        [f"copies take {tl.copy_ns / tl.window_ns:.0%} of the {tl.window_ns / 1e6:.2f} ms steady window (nsys)",
         f"GPU busy {tl.busy_fraction:.1%} of the steady window (nsys)"],
        "The copies already come from pinned memory and run at link speed, so pinning or async tricks have nothing "
        "more to give: the step is the volume moved over the link, and no kernel change shortens it.",
        "Move fewer bytes per step (keep the tensor resident on the GPU, or send bf16): `timeline.copy_fraction` "
        "should drop in proportion to the bytes no longer moved."))


def test_copies_at_the_link_speed(case):
    c = case("py_pinned_copy")
    link = _pinned(c, "The per-step upload is already done the right way (pinned, non_blocking): it runs at the "
                      "link's speed, and it is simply a lot of bytes for the link.")
    assert link.checks["bound"], link.reasons
    kernel = _pinned(c, "The elementwise kernel is already at its roofline: there is nothing left to gain in it.")
    assert not kernel.checks["bound"]


def test_sizes_and_nouns_are_no_direction():
    said = "no kernel change can move `gpu__time_duration.sum` by more than ~7%. If start-up matters, pin it once."
    assert fix_metric_direction(said) == ("gpu__time_duration.sum", None)
    assert fix_metric_direction("`gpu__time_duration.sum` should drop by more than 7%")[1] == "decrease"
    assert fix_metric_direction("`sm__throughput` should go up by about 20%")[1] == "increase"
