"""How the fix check reads the move a fix predicts (issue 10, item 3), on real H200 captures, each rule with a twin
that goes the other way:
  - direction.py `_FROM_TO`: "from 17.8% to near 100%" is a move up, read before a later clause's verb ("and the
    kernel to drop ..."); the same fix predicting a move down is refused (test_a_move_to_near_a_value);
  - form.py `_FIX_TAIL`: "**Change:** ..." then "**Metric:** ..." is one fix (test_the_metric_told_after_the_change_is_the_fix).
"""
from __future__ import annotations

from critic_case import answer, case  # noqa: F401 (the fixture)

from kernel_profiler.critic import facts_for, parse_answer


def _fact(c, metric: str, kernel: bool = True) -> float:
    return next(f.value for f in facts_for(c.arts, c.dg).items if f.metric == metric and (f.kernel is not None) == kernel)


def _grid_answer(c, target: str):
    us = _fact(c, "gpu__time_duration.sum") / 1e3
    grid = _fact(c, "launch__grid_size")
    return c.critique(answer(
        f"`saxpy_grid_stride` is limited by its launch: {grid:.0f} blocks leave most of the 132 SMs idle.",
        [f"`launch__grid_size` = {grid:.0f} blocks (ncu)", f"gpu__time_duration.sum = {us:.1f} us (ncu)"],
        f"With {grid:.0f} blocks only {grid:.0f} of the 132 SMs ever get work, so the kernel runs at a fraction of the "
        "DRAM roofline: most SMs stay idle for the whole launch.",
        "Launch (N + 255) / 256 blocks of 256 threads. I'd expect the SM-active fraction to go from "
        f"12% to {target} and the kernel to drop from ~{us:.0f} us to a few microseconds (estimate)."))


def test_a_move_to_near_a_value(case):
    c = case("cu_grid_stride_small_grid")
    up = _grid_answer(c, "near 100%")
    assert up.checks["fix"], up.reasons
    down = _grid_answer(c, "near 2%")
    assert not down.checks["fix"] and any("SM-active fraction" in r for r in down.reasons), down.reasons


def _labelled_answer(c, label: str, layout: bool = False):
    return (c.critique_layout if layout else c.critique)(_labelled_text(c, label))


def _labelled_text(c, label: str) -> str:
    m = c.metrics("row_sums")
    conflicts = m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"]
    waves = m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]
    return (
        "**Bound:** shared-memory bank conflicts on the row reads keep `row_sums` "
        f"{c.dg.roofline.gap:.2f}x above its DRAM floor.\n\n"
        "**Evidence:**\n"
        f"- `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum` = {waves:,.0f}, of which "
        f"`l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum` = {conflicts:,.0f}.\n\n"
        "**Mechanism:** the tile is `float tile[256][32]`, so every lane of a warp starts its row in the same bank and "
        "each shared load is serialised 8 ways; that stretches every block and keeps the kernel above its floor.\n\n"
        "**Change:** pad the tile to `float tile[256][33]` so the 32 lanes of a warp fall in 32 different banks.\n"
        f"**{label}:** `l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum` from {conflicts / 1e6:.1f}M to ~0, "
        "kernel time down ~1.8x (estimate).\n")


def test_the_metric_told_after_the_change_is_the_fix(case):
    """form._FIX_TAIL: "**Change:** ..." then "**Metric:** ... from 14.7M to ~0" is one fix in two labelled lines, so
    the fix names its metric and direction. After a label that is not part of a fix ("**Aside:**") the same line is
    not the fix's, and the layout's reading finds no metric in the fix; the fix check then reads the block that
    proposes a change and states its move (critic/proposal.py), as the second reading by the role of each sentence
    does, and accepts."""
    c = case("ho_smem_stride_reduce")
    metric = _labelled_answer(c, "Metric", layout=True)
    assert metric.checks["fix"] and metric.reading == "layout", metric.reasons
    aside = _labelled_answer(c, "Aside", layout=True)  # the layout's fix names no metric; the block that states the
    assert aside.verdict == "accept" and aside.checks["fix"], aside.reasons  # move after the change is read for it
    assert parse_answer(_labelled_text(c, "Aside")).fix.metric is None  # (critic/proposal.py), the same verdict
    reread = _labelled_answer(c, "Aside")  # as the second reading by role gives
    assert reread.verdict == "accept", reread.reasons
