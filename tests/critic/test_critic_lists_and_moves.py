"""Answers written as lists of labelled bullets, fixes that name what moves only by the words before the move, and
ratios written the way people write them (issue 10, items 3 and 4), on real H200 captures, each rule with a twin
that goes the other way:
  - form.py `_BOLD_LABEL` and `_sibling_bullets`: "- **Fix:** ..." is a label, its nested bullets are the fix's, and an
    unlabelled bullet of the same list is a part of its own, not the labelled bullet's before it
    (test_a_list_of_labelled_bullets, test_an_unlabelled_bullet_of_a_labelled_list);
  - direction.py `_named_move`: "Expect local loads 33.55M -> 0" names the metric that moves by the words before the
    move (test_the_words_before_a_move_name_its_metric);
  - arithmetic.py `implicit`: "64x, 1 GiB -> 16 MB" holds with the MB read as MiB; `implicit_miss`: "~10x+" is a
    lower bound (test_a_ratio_of_binary_and_decimal_sizes, test_a_ratio_written_as_at_least);
  - evidence_lines.py `metric_values`: "10 warp instructions (`metric`), 2.08 us" gives the metric the number before
    its name, even when another number follows it (test_the_number_before_a_metric_in_parentheses);
  - direction.py `_stated_move` and `_dir_search`: names inside a formula in parentheses define the metric before
    it, and "up to" is no rise (test_names_in_a_formula_define_the_metric_before_it, test_up_to_is_no_direction);
  - metric_kinds.py `RATE`: "threads/inst" is a rate that rises (test_a_rate_per_instruction_rises);
  - form.py: "**Bound:** ..." is the verdict, and without a mechanism part its explanation starts the mechanism
    (test_a_bold_bound_label_is_the_verdict_and_explains);
  - form.py and concepts.py: "Executive summary" opens the verdict, "threads per executed instruction" is the
    divergence ratio (test_an_executive_summary_is_the_verdict);
  - evidence_lines.py `_value_cell`: a table row's value is its value column's number, not a number of its label
    (test_the_value_of_a_line_is_not_a_size_in_its_words); number_check.py: a table row may show how its value is worked out
    (test_a_table_row_may_show_its_arithmetic);
  - evidence_lines.py `_ATTRIBUTE`: "per 32-byte sector" names a thing, it is no value of the metric after it
    (test_the_value_of_a_line_is_not_a_size_in_its_words).
"""
from __future__ import annotations

import pytest
from critic_case import answer, case  # noqa: F401 (the fixture)

from kernel_profiler.critic import facts_for, parse_answer


def _fact(c, metric: str, kernel: bool = True) -> float:
    return next(f.value for f in facts_for(c.arts, c.dg).items
                if f.metric == metric and (f.kernel is not None) == kernel)


def _bullet_answer(c, metric_line: str) -> str:
    m = c.metrics("row_sums")
    conflicts = m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"]
    waves = m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]
    return ("- **Bottleneck:** shared-memory bank conflicts on the row reads keep `row_sums` "
            f"{c.dg.roofline.gap:.2f}x above its DRAM floor.\n"
            f"- **Evidence:** `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum` = {waves:,.0f}, of which "
            f"`l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum` = {conflicts:,.0f}.\n"
            "- **Mechanism:** the tile is `float tile[256][32]`, so every lane of a warp starts its row in the same "
            "bank and each shared load is serialised 8 ways; that stretches every block and keeps the kernel above "
            "its floor.\n"
            "- **Fix:** pad the tile to `float tile[256][33]` so the 32 lanes of a warp fall in 32 different banks.\n"
            f"  - {metric_line.format(m=conflicts / 1e6)}\n"
            "  - kernel time down ~1.8x (estimate)\n")


def test_a_list_of_labelled_bullets(case):
    """The nested bullet under "- **Fix:**" is the fix's: its metric and direction are read (before the rule the list
    had no labels, the fix was its first line and named no metric). The twin predicts the conflicts rising, which a
    fix of bank conflicts cannot do."""
    c = case("ho_smem_stride_reduce")
    down = c.critique(_bullet_answer(c, "metric: `l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum` "
                                        "from {m:.1f}M to ~0"))
    assert down.checks["fix"], down.reasons
    up = c.critique(_bullet_answer(c, "metric: `l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum` "
                                      "from {m:.1f}M to {m:.0f}0M"))
    assert not up.checks["fix"] and any("other way" in r for r in up.reasons), up.reasons


def _tiny_list(c, busy: float) -> str:
    return ("- **Limiter:** the host: `cu_tiny_launches` launches one tiny kernel at a time and the CPU cannot submit "
            "them as fast as the GPU retires them.\n"
            f"- **GPU busy {busy:.1f} %** of the steady window (nsys).\n"
            "- **Mechanism:** each launch costs more CPU time than the kernel takes on the GPU, so the queue never "
            "builds up and the GPU waits for the next launch most of the step.\n"
            "- **Fix:** capture the step's launches in one CUDA graph; GPU busy fraction should rise well above 50% "
            "and the step time fall several times (estimate).\n")


def test_an_unlabelled_bullet_of_a_labelled_list(case):
    """"- **GPU busy 13.1 %** of ..." (emphasis, no colon) in a list of labels is a part of its own, read as the
    evidence, not a line of the "Limiter" bullet before it; the same line with a busy fraction the capture does not
    hold is refused."""
    c = case("cu_tiny_launches")
    busy = c.dg.timeline.busy_fraction * 100
    good = _tiny_list(c, busy)
    parsed = parse_answer(good)
    assert [e.value for e in parsed.evidence] == [round(busy, 1)] and "GPU busy" not in parsed.bottleneck
    assert c.critique(good).verdict == "accept", c.critique(good).reasons
    bad = c.critique(_tiny_list(c, busy * 3))
    assert bad.verdict == "reject" and any("busy" in r.lower() for r in bad.reasons), bad.reasons


def _local_answer(c, after: str):
    m = c.metrics("table_lookup")
    loads = m["sass__inst_executed_local_loads"]
    ms = m["gpu__time_duration.sum"] / 1e6
    return c.critique(answer(
        "`table_lookup` is memory-bound by local-memory traffic from a dynamically indexed per-thread array.",
        [f"`sass__inst_executed_local_loads` = {loads / 1e6:.2f}M warp instructions (ncu)",
         f"gpu__time_duration.sum = {ms:.2f} ms (ncu)"],
        "`table[j]` with `j` from a hash cannot live in registers, so the array goes to the thread's stack in local "
        "memory; every lane of each scattered load touches a different sector, and that traffic keeps the kernel "
        f"{c.dg.roofline.gap:.0f}x above its DRAM floor.",
        "Keep the table in shared memory, indexed `table_s[k][threadIdx.x]`. Expect local loads "
        f"{loads / 1e6:.2f}M -> {after} and the kernel from {ms:.1f} ms to well under 1 ms (estimate)."))


def test_the_words_before_a_move_name_its_metric(case):
    """"Expect local loads 33.55M -> 0": no listed metric name, but the words before the move name a cost (local
    memory traffic) that falls; the twin predicts it rising, which no fix of local-memory traffic does."""
    c = case("cu_local_array")
    loads = c.metrics("table_lookup")["sass__inst_executed_local_loads"]
    fell = _local_answer(c, "0")
    assert fell.checks["fix"], fell.reasons
    rose = _local_answer(c, f"{loads * 2 / 1e6:.0f}M")
    assert not rose.checks["fix"] and any("local loads" in r for r in rose.reasons), rose.reasons


def _d2d_answer(c, ratio: str):
    copy_ns = _fact(c, "timeline.copy_ns", kernel=False)
    return c.critique(answer(
        "The program is bound by the volume of its device-to-device copies: each step copies the whole 1 GiB state.",
        [f"copies take {copy_ns / 1e6:.2f} ms of the steady window (nsys)",
         f"GPU busy {c.dg.timeline.busy_fraction:.1%} of the steady window (nsys)"],
        "The rollback snapshot copies the full state every step although the step rewrites only a slice, so the "
        f"copies fill the window: {ratio} the bytes the step needs, 1 GiB where 16 MB would do.",
        "Copy only the slice the update touches: DtoD bytes per step should fall to the slice's 16 MB, and the copy "
        "time with them (estimate)."))


def test_a_ratio_of_binary_and_decimal_sizes(case):
    """"64x, 1 GiB -> 16 MB": with MB read as MiB the ratio holds; "50x" holds for neither reading."""
    c = case("h5_d2d_snapshot")
    assert not any("not the ratio" in r for r in _d2d_answer(c, "64x").reasons)
    wrong = _d2d_answer(c, "50x")
    assert any("not the ratio" in r and "50" in r for r in wrong.reasons), wrong.reasons


def _gemm_answer(c, ratio: str):
    ms = c.metrics("")["gpu__time_duration.sum"] / 1e6
    return ms, c.critique(answer(
        "The half-precision GEMM runs on the FP32 FMA pipe instead of the tensor cores.",
        [f"gpu__time_duration.sum = {ms:.2f} ms (ncu)"],
        "The kernel multiplies with scalar FMAs, so it is held to the FMA pipe's ceiling, far below what the tensor "
        f"cores could do for the same FLOPs: about {ms / 12.9:.2f} ms instead of {ms:.2f} ms ({ratio}).",
        "Call cuBLAS (or an MMA kernel) for the GEMM: the kernel time should fall several times (estimate)."))


def test_a_ratio_written_as_at_least(case):
    """"~10x+" for a 12.9x move is a lower bound that holds; "~18x+" does not hold for it."""
    c = case("h6_half_fma_gemm")
    _, least = _gemm_answer(c, "~10x+")
    assert not any("not the ratio" in r for r in least.reasons), least.reasons
    _, over = _gemm_answer(c, "~18x+")
    assert any("not the ratio" in r for r in over.reasons), over.reasons


def _tiny_ncu(c, inst: float):
    m = c.metrics("tiny_update")
    us, block = m["gpu__time_duration.sum"] / 1e3, m["launch__block_size"]
    return c.critique(answer(
        "The host is the limit: `cu_tiny_launches` launches one tiny kernel at a time.",
        [f"GPU busy {c.dg.timeline.busy_fraction:.1%} of the steady window (nsys)",
         f"ncu: `tiny_update` is trivial, grid 1 x {block:.0f} threads, {inst:.0f} warp instructions "
         f"(`smsp__inst_executed.sum`), {us:.2f} us under replay"],
        "Each launch costs more CPU time than the kernel takes on the GPU, so the GPU waits for the next launch and "
        "sits idle most of the step.",
        "Capture the step's launches in one CUDA graph: GPU busy fraction should rise well above 50% (estimate)."))


def test_the_number_before_a_metric_in_parentheses(case):
    """The line's first number is the grid's 32 threads; the metric in parentheses takes the number before it."""
    c = case("cu_tiny_launches")
    inst = c.metrics("tiny_update")["smsp__inst_executed.sum"]
    right = _tiny_ncu(c, inst)
    assert not any("smsp__inst_executed" in r for r in right.reasons), right.reasons
    wrong = _tiny_ncu(c, inst * 3)
    assert any("smsp__inst_executed" in r for r in wrong.reasons), wrong.reasons


def _busy_fix(c, verb: str):
    busy = c.dg.timeline.busy_fraction * 100
    return c.critique(answer(
        "The host is the limit: `cu_tiny_launches` launches one tiny kernel at a time.",
        [f"GPU busy {busy:.1f}% of the steady window (nsys)"],
        "Each launch costs more CPU time than the kernel takes on the GPU, so the GPU waits for the next launch and "
        "sits idle most of the step.",
        f"Capture the step's launches in one CUDA graph. GPU busy fraction (kernel time / wall time of the step) "
        f"should {verb} from ~{busy:.0f}% (estimate)."))


def test_names_in_a_formula_define_the_metric_before_it(case):
    """direction.py `_stated_move`: in "GPU busy fraction (kernel time / wall time of the step) should rise" the names
    inside the formula define the busy fraction; the rise is its (before, it was read as the wall time rising, the
    wrong way for a host-bound program). The twin predicts the busy fraction falling."""
    c = case("cu_tiny_launches")
    rise = _busy_fix(c, "rise")
    assert rise.checks["fix"], rise.reasons
    fall = _busy_fix(c, "fall")
    assert not fall.checks["fix"] and any("GPU busy" in r for r in fall.reasons), fall.reasons


def test_up_to_is_no_direction():
    """direction.py `_dir_search`: "up to ~46%" bounds a size, it says no rise; "up" alone, or moved by a verb of
    motion ("goes up to"), still does."""
    from kernel_profiler.critic.direction import clause_direction
    assert clause_direction(" saves up to ~46% of the bytes") is None
    assert clause_direction(" goes up to ~46%") == "increase"
    assert clause_direction(" should go up, to ~46%") == "increase"
    assert clause_direction(" should come down, by up to 46%") == "decrease"


def test_a_rate_per_instruction_rises():
    """metric_kinds.py `RATE`: threads per instruction, written "threads/inst", is a rate that rises toward the
    roofline."""
    from kernel_profiler.critic.metric_kinds import metric_direction
    assert metric_direction("threads/inst") == "increase"
    assert metric_direction("inst count") == "decrease"


def test_a_bold_bound_label_is_the_verdict_and_explains():
    """form.py: "**Bound:** ..." is the verdict (the bottleneck part), and without a mechanism part the sentences after
    its verdict start the mechanism, before a section in other words ("**One-time:** ...")."""
    a = parse_answer("**Bound:** tensor-core compute, near peak. The HMMA pipe is busy 93% of the kernel's cycles and "
                     "DRAM is at 20%, so the operands are reused from shared memory as they should be.\n\n"
                     "**One-time:** library initialisation (12 calls, 28.5 ms) is paid once, before the loop.\n\n"
                     "**Change:** none; leave it. Tensor pipe should stay ~93%.\n")
    assert a.bottleneck.startswith("tensor-core compute")
    assert a.explanation.startswith("The HMMA pipe is busy 93%") and "paid once" in a.explanation


def test_an_executive_summary_is_the_verdict():
    """form.py `_KEYS`: "**Executive summary.**" opens the bottleneck part, and a table under "Appendix A" is the
    evidence; "threads per executed instruction" names the divergence ratio (concepts.py)."""
    from kernel_profiler.critic.concepts import text_concepts
    a = parse_answer("**Executive summary.** `refine` is instruction-bound because of warp divergence.\n\n"
                     "**Appendix A - measurements**\n\n| what | value |\n|---|---|\n| duration | 1.047 ms |\n"
                     "| threads per executed instruction | 3.33 |\n| issue active | 76.9% |\n\n"
                     "**Appendix B - change.** Split the heavy elements into their own warps. Metric: "
                     "`smsp__thread_inst_executed_per_inst_executed.ratio` up from 3.3 toward ~30.\n")
    assert a.bottleneck.startswith("`refine` is instruction-bound")
    assert [e.value for e in a.evidence] == [1.047, 3.33, 76.9]
    assert "divergence" in text_concepts("| threads per executed instruction | 3.33 |")


def _table_answer(c, useful: float):
    m = c.metrics("softmax_rows")
    ms = m["gpu__time_duration.sum"] / 1e6
    return c.critique(
        "## Bottleneck\n`softmax_rows` is limited by uncoalesced global loads: each thread owns one row.\n\n"
        "## Evidence\n| what | value | source |\n|---|---|---|\n"
        f"| kernel time | {ms:.2f} ms | ncu `gpu__time_duration.sum` |\n"
        f"| useful bytes per 32-B sector (loads) | {useful:.1f} | "
        "`smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio` |\n\n"
        "## Mechanism\nA warp's 32 loads land in 32 different rows, so each 32-byte sector brings one useful float and "
        "the kernel moves several times the bytes it needs, which keeps it "
        f"{c.dg.roofline.gap:.1f}x above its floor.\n\n"
        "## Fix\nLet a warp own a row and stride the columns over its lanes: useful bytes per sector should rise to "
        "32 (estimate).\n")


def _sector_answer(c, useful: float):
    m = c.metrics("softmax_rows")
    sectors = m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
    ms = m["gpu__time_duration.sum"] / 1e6
    return c.critique(answer(
        "`softmax_rows` is limited by uncoalesced global loads: each thread owns one row.",
        [f"gpu__time_duration.sum = {ms:.2f} ms (ncu)",
         f"global loads: **{sectors:,.0f} sectors**, and only **{useful:.1f} bytes used per 32-byte sector** "
         "(`smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio`)"],
        "A warp's 32 loads land in 32 different rows, so each 32-byte sector brings one useful float and the kernel "
        f"moves several times the bytes it needs, which keeps it {c.dg.roofline.gap:.1f}x above its floor.",
        "Let a warp own a row and stride the columns over its lanes: useful bytes per sector should rise to 32 "
        "(estimate)."))


@pytest.mark.parametrize("build", [_table_answer, _sector_answer], ids=["table_row", "sized_noun"])
def test_the_value_of_a_line_is_not_a_size_in_its_words(case, build):
    """evidence_lines.py `_value_cell`: the value of "| useful bytes per 32-B sector | 4.0 | `metric` |" is the value
    column's 4.0, not the 32 of the label; `_ATTRIBUTE`: in "4.0 bytes used per 32-byte sector (`metric`)" the metric
    takes the 4.0 before it, the 32 of "32-byte sector" names the sector. Each twin cites 8.0 and is refused."""
    c = case("cu_softmax_naive")
    useful = c.metrics("softmax_rows")["smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"]
    right = build(c, useful)
    assert right.checks["numbers"], right.reasons
    wrong = build(c, useful * 2)
    assert any("bytes_per_sector" in r for r in wrong.reasons), wrong.reasons


def _memset_table(c, factor: float):
    mean_us = next(f.value for f in facts_for(c.arts, c.dg).items if f.metric == "api.cudaMemsetAsync.mean_ns") / 1e3
    per_step = 4096  # the memsets per step in the program's source (suite/holdout7/memset_many.cu), no measurement
    busy = c.dg.timeline.busy_fraction * 100
    return c.critique(
        "## Bottleneck\nThe host: the step issues thousands of tiny `cudaMemsetAsync` calls.\n\n"
        "## Evidence\n| what | value | how |\n|---|---|---|\n"
        f"| GPU busy | {busy:.1f}% | nsys, steady window |\n"
        f"| host time in cudaMemsetAsync per step | {per_step * mean_us / 1e3 * factor:.2f} ms | "
        f"{per_step} calls x {mean_us:.3f} us avg |\n\n"
        "## Mechanism\nEach call costs microseconds of host time while its 4 KB memset takes about a microsecond on the "
        "GPU, so the GPU waits on the host for most of the step.\n\n"
        "## Fix\nClear the pool with one memset per step: calls per step should fall from 4096 to 1 (estimate).\n")


def test_a_table_row_may_show_its_arithmetic(case):
    """number_check.py: a table row's value worked out in its own row ("| host time | 11.86 ms | 4096 calls x 2.895 us
    |") is a derivation the row shows, not a misread measurement; a product that does not hold is refused."""
    c = case("h7_memset_many")
    right = _memset_table(c, 1.0)
    assert right.checks["numbers"], right.reasons
    wrong = _memset_table(c, 1.6)
    assert not wrong.checks["numbers"], wrong.reasons
