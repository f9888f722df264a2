"""A number matches only the memory level its own clause names (issue 10, item 1), on the real H200 capture of
py_fused_gelu, whose one kernel has different DRAM and L2 throughputs. Each rule has a twin that goes the other way:
  - 'DRAM throughput' quoted at the L2's value is refused; at the DRAM's value it is accepted;
  - 'L2 throughput' quoted at the DRAM's value is refused; at the L2's value it is accepted;
  - a unit's share of its peak is not a ratio of two byte counts ('DRAM throughput' at writes/reads is refused),
    while the same ratio called what it is ('writes are N% of the bytes it reads') is accepted.
"""
from __future__ import annotations

from critic_case import answer, case  # noqa: F401 (the fixture)

_KERNEL = "vectorized_elementwise_kernel"


def _levels(c) -> dict:
    m = c.metrics(_KERNEL)
    out = {"dram": m["gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"],
           "l2": m["lts__throughput.avg.pct_of_peak_sustained_elapsed"],
           "read": m["dram__bytes_read.sum"], "write": m["dram__bytes_write.sum"]}
    assert abs(out["dram"] - out["l2"]) > 3.0, out  # the levels differ by more than a rounding
    return out


def _critique(c, evidence: str):
    return c.critique(answer(
        "The GELU kernel is DRAM-bandwidth bound and already close to its roofline.",
        [evidence, f"reads {_levels(c)['read'] / 1e6:.0f} MB from DRAM (ncu dram__bytes_read.sum)"],
        "Each element is read once and written once, so the kernel's time is its bytes over the DRAM bandwidth; "
        "it sits near the floor that bandwidth sets.",
        "Run the GELU in bf16 at the call site; dram__bytes_read.sum should decrease by about 2x."))


def test_dram_throughput_at_the_l2_value_is_refused(case):
    c = case("py_fused_gelu")
    lv = _levels(c)
    wrong = _critique(c, f"the kernel runs at {lv['l2']:.1f}% DRAM throughput (ncu)")
    assert not wrong.checks["numbers"], wrong.reasons
    assert any("dram" in r.lower() for r in wrong.reasons), wrong.reasons
    right = _critique(c, f"the kernel runs at {lv['dram']:.1f}% DRAM throughput (ncu)")
    assert right.checks["numbers"], right.reasons


def test_l2_throughput_at_the_dram_value_is_refused(case):
    c = case("py_fused_gelu")
    lv = _levels(c)
    wrong = _critique(c, f"the kernel keeps {lv['dram']:.1f}% L2 throughput (ncu)")
    assert not wrong.checks["numbers"], wrong.reasons
    assert any("lts__throughput" in r for r in wrong.reasons), wrong.reasons
    right = _critique(c, f"the kernel keeps {lv['l2']:.1f}% L2 throughput (ncu)")
    assert right.checks["numbers"], right.reasons


def test_a_unit_share_is_not_a_ratio_of_byte_counts(case):
    c = case("py_fused_gelu")
    lv = _levels(c)
    share = 100.0 * lv["write"] / lv["read"]
    assert abs(share - lv["dram"]) > 3.0 and abs(share - lv["l2"]) > 0.3, (share, lv)
    wrote, read = f"{lv['write'] / 1e6:.0f} MB", f"{lv['read'] / 1e6:.0f} MB"
    wrong = _critique(c, f"it writes {wrote} and reads {read}, at {share:.1f}% DRAM throughput (ncu)")
    assert not wrong.checks["numbers"], wrong.reasons
    right = _critique(c, f"it writes {wrote} and reads {read}: the writes are {share:.1f}% of the bytes it reads")
    assert right.checks["numbers"], right.reasons
