"""FP64 work blamed on a kernel that executes none (critic/absent_work.py; issue 10, item 2): the same answer about
`damp` is accepted on h5_fp64_promotion, whose double literals put F2F and DFMA in every iteration, and refused on
its fixed twin h5_fp64_promotion_fixed, whose FP64 pipe measured 0% (real H200 captures)."""
from __future__ import annotations

from critic_case import answer, case  # noqa: F401 (the fixture)

from kernel_profiler.critic.absent_work import blames_fp64

PIPE = "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active"


def _fp64_answer(c) -> str:
    m = c.metrics("damp")
    return answer(
        "`damp` is instruction-bound: the double literals in `x * 0.999 + 0.001` promote every iteration to FP64.",
        [f"issue slots busy {m['smsp__issue_active.avg.pct_of_peak_sustained_active']:.1f}% of active cycles "
         "(ncu `smsp__issue_active`)",
         f"DRAM throughput {m['gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed']:.1f}% of peak "
         "(ncu `gpu__dram_throughput`)"],
        "Each iteration converts x to double (F2F), runs a DFMA on the slow FP64 pipe and converts back, so the SM "
        "spends its issue slots on conversions instead of FFMAs; the kernel is limited by instruction issue, far "
        "from its FP32 roofline, while DRAM stays mostly idle.",
        "Write the literals as floats (`0.999f`, `0.001f`): one FFMA per iteration; `smsp__inst_executed` should "
        "drop about 3x and the kernel time with it.")


def test_fp64_work_blamed(case):
    c = case("h5_fp64_promotion")
    assert c.metrics("damp")[PIPE] > 5
    ok = c.critique(_fp64_answer(c))
    assert ok.verdict == "accept", ok.reasons

    fixed = case("h5_fp64_promotion_fixed")
    assert fixed.metrics("damp")[PIPE] == 0
    v = fixed.critique(_fp64_answer(fixed))
    assert v.verdict == "reject" and not v.checks["signature"]
    assert any("executes none" in r for r in v.reasons)


def test_words_that_blame_fp64_work():
    assert blames_fp64("FP64 promotion in the damping loop") == "FP64"
    assert blames_fp64("the double literals promote the expression to double on every iteration")
    assert blames_fp64("The FP64 detour is gone: the kernel is still issue-bound") is None
    assert blames_fp64("sass.txt has no DFMA, the FP64 pipe is at 0, and the loop is eight FFMAs") is None
