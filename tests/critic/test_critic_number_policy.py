"""The numbers policy (critic/number_check.py, arithmetic.py, unverified.py), each rule on a real H200 capture with a
twin that must be refused:
  - arithmetic written out over several operands, with words, powers and units, is recomputed: a result that holds
    is a stated derivation, one that does not is refused;
  - a number that is a ratio of two numbers of its own sentence is arithmetic the writer did not spell out;
  - a number no capture measures and nothing contradicts (knowledge: a size from the source) is listed as
    unverified, while a number presented as the run's measurement and within 3x of the measured value is refused;
  - a kernel called memory- or latency-bound whose SMs issue at >= 80% of peak is refused."""
from __future__ import annotations

from critic_case import answer, case  # noqa: F401 (the fixture)


DUR = "gpu__time_duration.sum"
SM = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
DRAM = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"


def _gemm(c, mechanism: str):
    m = c.metrics("xmma_gemm")
    return c.critique(answer(
        "The fp32 GEMM `sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize` is compute-bound on the FMA pipe: TF32 is off, "
        "so its tensor cores stay idle.",
        [f"kernel duration {m[DUR] / 1e6:.2f} ms (`{DUR}`, ncu.ncu-rep)",
         f"SM throughput {m[SM]:.1f}% of peak (`{SM}`, ncu.ncu-rep)"],
        mechanism,
        "Enable TF32 (torch.backends.cuda.matmul.allow_tf32 = True); `gpu__time_duration.sum` should decrease."))


def test_written_arithmetic_over_several_operands_is_recomputed(case):
    c = case("ot_py_gemm_fp32")
    ms = c.metrics("xmma_gemm")[DUR] / 1e6
    flop = 2 * 8192 ** 3
    text = ("Every FLOP runs as FFMA, because the math path is FP32: 2 × 8192³ = {:.2f} TFLOP per GEMM / {:.2f} ms = "
            "{:.1f} TFLOP/s, which keeps it {:.0f}x from what tensor cores would allow. Its three matrices are "
            "3 × 8192² × 4 B = {:.0f} MB, read from DRAM a few times at most.")
    size = 3 * 8192 ** 2 * 4 / 1e6
    ok = _gemm(c, text.format(flop / 1e12, ms, flop / ms / 1e9, 8, size))
    assert ok.checks["numbers"] and ok.checks["arithmetic"], ok.reasons
    assert any(n.derivation and "stated arithmetic" in n.derivation for n in ok.numbers if n.written.startswith("805")), \
        ok.numbers
    bad = _gemm(c, text.format(flop / 1e12, ms, flop / ms / 1e9, 8, size * 1.3))
    assert bad.verdict == "reject" and not bad.checks["numbers"], bad.reasons


def test_chains_read_words_powers_and_a_result_that_starts_the_next_chain():
    from kernel_profiler.critic.arithmetic import chains

    got = chains("The FP32 ceiling is 132 SMs x 128 FMA/clk x 2 x 1.98 GHz (TARGET_INFO_GPU) = 66.9 TFLOP/s.")
    assert [(s.ok, s.result.written) for s in got] == [(True, "66.9 TFLOP/s")]
    got = chains("2^20 threads x 1024 FMA x 2 FLOP = 2.15 GFLOP; 2.15 GFLOP / 36.3 µs = 59.1 TFLOP/s.")
    assert [(s.ok, s.result.written) for s in got] == [(True, "2.15 GFLOP"), (True, "59.1 TFLOP/s")]
    assert [s.ok for s in chains("2 × 8192³ = 1.30 TFLOP")] == [False]  # 1.10 TFLOP
    assert chains("the 3x gap = bad") == []  # a ratio, not an operator


def test_a_ratio_of_two_numbers_of_the_sentence_is_arithmetic(case):
    """'the first 1000 launches took 5.9 ms, 5.9 us each': no capture fact is either number, but the second is the
    first over the launches; written out wrong ('5.9 ms / 1000 = 8.8 us') it is refused."""
    c = case("cu_tiny_launches")
    s = c.dg.timeline
    per = s.window_ns / s.top_kernels[0].count / 1e3 * 1.07  # the early launches ran a little slower

    def text(sentence):
        return c.critique(answer(
            "The program is host-bound on launch overhead: `tiny_update` kernels are shorter than the time to launch them.",
            [f"GPU busy {s.busy_fraction:.0%} of the steady window (nsys.sqlite)"],
            f"{sentence} The GPU waits on the host between kernels, so it sits idle most of the window.",
            "Batch the updates into one kernel; the launch count (`timeline.launches`) should decrease."))
    ok = text(f"The first 1000 launches took {per:.2f} ms, {per:.2f} us each.")
    assert ok.checks["numbers"], ok.reasons
    assert any(n.derivation and "same sentence" in n.derivation for n in ok.numbers), ok.numbers
    bad = text(f"The first 1000 launches took {per:.2f} ms: {per:.2f} ms / 1000 = {per * 1.5:.2f} us each.")
    assert not bad.checks["numbers"], bad.reasons


def test_knowledge_is_unverified_and_a_wrong_measurement_is_refused(case):
    c = case("cu_divergence")
    m = c.metrics("branchy")
    us = m[DUR] / 1e3

    def text(sentence):
        return c.critique(answer(
            "`branchy` is compute-bound: its warps diverge, so each issue slot does a fraction of its 32 lanes' work.",
            [f"SM throughput {m[SM]:.1f}% of peak (`{SM}`, ncu.ncu-rep)",
             f"kernel duration {us:.0f} us (`{DUR}`, ncu.ncu-rep)"],
            f"The branch on the element's value sends lanes of one warp down two paths, so both paths issue for every "
            f"warp and the issue slots, not memory, bound it. {sentence}",
            "Sort or partition the input so that a warp takes one path; `gpu__time_duration.sum` should decrease."))
    known = text("A DRAM access costs about 600 ns on HBM3e, which the resident warps hide easily.")
    assert known.checks["numbers"], known.reasons
    assert any(n.unverified and n.written.startswith("600") for n in known.numbers), known.numbers
    wrong = text(f"The kernel takes {us * 1.6:.0f} us.")
    assert not wrong.checks["numbers"] and any(f"{us * 1.6:.0f} us" in r for r in wrong.reasons), wrong.reasons


def test_busy_sms_are_not_waiting_on_memory(case):
    c = case("cu_divergence")
    m = c.metrics("branchy")
    assert m[SM] >= 80 and m[DRAM] < 70

    def text(bound):
        return c.critique(answer(
            f"`branchy` is {bound}-bound.",
            [f"SM throughput {m[SM]:.1f}% of peak (`{SM}`, ncu.ncu-rep)",
             f"DRAM throughput {m[DRAM]:.1f}% of peak (`{DRAM}`, ncu.ncu-rep)"],
            "Both sides of the branch issue for every warp, so the issue slots are spent on lanes that do nothing, "
            "which keeps the kernel far from its roofline.",
            "Partition the input so a warp takes one path; `gpu__time_duration.sum` should decrease."))
    assert text("compute").checks["bound"], text("compute").reasons
    bad = text("latency")
    assert not bad.checks["bound"] and any("% busy" in r for r in bad.reasons), bad.reasons
