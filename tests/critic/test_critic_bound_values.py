"""Numbers held to what they are written as (issue 10, item 1: facts with provenance), on real H200 captures, each
rule with a twin that goes the other way:
  - unverified.py `bound_metric` and number_check.py `_bound_miss`: a number written as a named metric's value
    ("`dram__bytes.sum.per_second` = **4.79 TB/s**") is held to that metric, whatever else it equals (the device's
    bandwidth, a ratio of two cited values) (test_a_value_written_at_a_metric_name_is_that_metric);
  - unverified.py `_gpu_busy`: "GPU busy N%" pins the program's busy fraction
    (test_the_gpu_busy_fraction_is_pinned_by_its_words);
  - number_check.py `_bound_miss`: an operand of arithmetic written at a metric's name is no value of that metric
    (test_an_operand_written_at_a_metric_name_is_no_value_of_it);
  - numbers.py, concepts.py, unverified.py `_PER_UNIT`: "N useful bytes" is the bytes-per-sector ratio, held to it
    however far off (test_useful_bytes_per_sector_in_prose).
"""
from __future__ import annotations

from critic_case import answer, case  # noqa: F401 (the fixture)

from kernel_profiler.critic import facts_for


def _vec_answer(c, rate: float, busy: float):
    m = c.metrics("scale_vec4")
    us = m["gpu__time_duration.sum"] / 1e3
    return c.critique(answer(
        f"`scale_vec4` is at its memory roofline: {us:.0f} us per launch.",
        [f"gpu__time_duration.sum = {us:.1f} us (ncu)",
         f"GPU busy {busy:.1f}% of the steady window (nsys)"],
        f"ncu reports `dram__bytes.sum.per_second` = **{rate / 1e12:.2f} TB/s**, so the kernel streams its bytes as "
        "fast as HBM delivers them; no change to the kernel can shorten it, only fewer bytes can.",
        "Leave the kernel; fuse the scale into its consumer so the bytes are not moved twice: kernel time per step "
        "should fall (estimate)."))


def test_a_value_written_at_a_metric_name_is_that_metric(case):
    """unverified.py `bound_metric` and number_check.py `_bound_miss`: "`dram__bytes.sum.per_second` = **4.79 TB/s**"
    is that metric's value, refused when the capture holds another, although 4.79 TB/s is close to the device's
    bandwidth (a ceiling presented as the measurement); the measured value passes."""
    c = case("cu_vec_copy")
    rate = c.metrics("scale_vec4")["dram__bytes.sum.per_second"]
    busy = c.dg.timeline.busy_fraction * 100
    assert not any("written as the value" in r for r in _vec_answer(c, rate, busy).reasons)
    bandwidth = next(f.value for f in facts_for(c.arts, c.dg).items if f.metric == "device.dram_bandwidth")
    fab = _vec_answer(c, bandwidth * 0.998, busy)
    assert any("written as the value of `dram__bytes.sum.per_second`" in r for r in fab.reasons), fab.reasons


def test_the_gpu_busy_fraction_is_pinned_by_its_words(case):
    """unverified.py `_gpu_busy`: "GPU busy N% of the steady window" names the whole GPU's busy fraction, a
    program-level value its words pin: 0.6x the measured fraction is refused (before, a program-level value was
    pinned only by its metric name or words more specific than 'busy', and any busy fraction passed unverified)."""
    c = case("cu_vec_copy")
    rate = c.metrics("scale_vec4")["dram__bytes.sum.per_second"]
    busy = c.dg.timeline.busy_fraction * 100
    assert not any("gpu_busy_fraction" in r for r in _vec_answer(c, rate, busy).reasons)
    wrong = _vec_answer(c, rate, busy * 0.6)
    assert any("gpu_busy_fraction" in r for r in wrong.reasons), wrong.reasons


def _sum_answer(c, total_gb: float):
    m = c.metrics("scale_vec4")
    read, written = m["dram__bytes_read.sum"] / 1e9, m["dram__bytes_write.sum"] / 1e9
    us = m["gpu__time_duration.sum"] / 1e3
    return c.critique(answer(
        f"`scale_vec4` is at its memory roofline: {us:.0f} us per launch.",
        [f"gpu__time_duration.sum = {us:.1f} us (ncu)",
         f"add up dram__bytes: {read:.2f} GB read + {written:.2f} GB written = {total_gb:.2f} GB per launch"],
        "The kernel streams its bytes as fast as HBM delivers them; no change to the kernel can shorten it, only fewer "
        "bytes can.",
        "Leave the kernel; fuse the scale into its consumer so the bytes are not moved twice: kernel time per step "
        "should fall (estimate)."))


def test_an_operand_written_at_a_metric_name_is_no_value_of_it(case):
    """number_check.py `_bound_miss`: in "dram__bytes: 1.07 GB read + 1.07 GB written = 2.15 GB" the read bytes are an
    operand of the sum, not the value of `dram__bytes` (nor of its `.peak_sustained` ceiling); a sum that does not
    hold is refused as arithmetic."""
    c = case("cu_vec_copy")
    m = c.metrics("scale_vec4")
    total = (m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"]) / 1e9
    right = _sum_answer(c, total)
    assert not any("written as the value" in r for r in right.reasons) and right.checks["numbers"], right.reasons
    wrong = _sum_answer(c, total * 1.5)
    assert not wrong.checks["numbers"] or not wrong.checks["arithmetic"], wrong.reasons


def _useful_answer(c, useful: float):
    ms = c.metrics("softmax_rows")["gpu__time_duration.sum"] / 1e6
    return c.critique(answer(
        "`softmax_rows` is memory-bound on scattered global accesses: each 32-byte sector it fetches delivers "
        f"{useful:.0f} useful bytes.",
        [f"gpu__time_duration.sum = {ms:.2f} ms (ncu)"],
        "A warp's 32 loads land in 32 different rows, so most of each sector is fetched for nothing and the kernel "
        f"moves several times the bytes it needs, which keeps it {c.dg.roofline.gap:.1f}x above its floor.",
        "Let a warp own a row: `smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio` should rise to 32 "
        "(estimate)."))


def test_useful_bytes_per_sector_in_prose(case):
    """numbers.py COUNT_NOUNS, concepts.py and unverified.py `_PER_UNIT`: "delivers 4 useful bytes" (of each sector) is
    the bytes-per-sector ratio, held to it even far off (the ratio lives between 1 and 32): 9 is refused. Before, "9
    useful bytes" was no quantity at all and passed unread."""
    c = case("cu_softmax_naive")
    useful = c.metrics("softmax_rows")["smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"]
    right = _useful_answer(c, useful)
    assert right.checks["numbers"], right.reasons
    wrong = _useful_answer(c, useful * 2.25)
    assert any("useful bytes" in r and "bytes_per_sector" in r for r in wrong.reasons), wrong.reasons
