"""Rules of commit 80a5f5f ('critic: LSU pipe, idle tensor cores, device-to-device copies and predicted factors read as
meant'), on real H200 captures. Each test has a twin, the same answer with one detail changed, that goes the other
way; each was checked by editing its rule out in a worktree and seeing the test fail. Which rule each test pins:
  1. concepts.py METRIC_CONCEPTS `inst_executed_pipe_lsu` -> "l1": test_lsu_pipe_is_the_lsu_instruction_share
     (cu_sgemm_fp32: 'LSU pipe N%' with N the kernel's sm__inst_executed_pipe_lsu is matched to that metric and
     accepted; 0.8 N is refused as a misreading of sm__inst_executed_pipe_lsu; without the rule 'LSU' reaches only
     l1tex__lsu_writeback_active, so the first is refused and the second names that metric instead);
  2. catalog.py no_tensor_cores words '(are|is ...) doing literally/basically ... nothing/idle':
     test_tensor_cores_doing_nothing_names_the_missing_tensor_cores ('the tensor cores are doing literally nothing',
     'are doing nothing', 'are basically idle' claim no_tensor_cores: accepted on cu_sgemm_fp32; the same answer on
     cu_cublas_bf16, whose GEMM runs on the tensor cores, claims it too and its signature is refused; without the
     words the answer claims no cause at all);
  3. direction.py `_FROM_TO` '(?:the\\s+)?': test_from_n_to_the_range_gives_the_fix_direction (cu_sgemm_fp32:
     'tensor-pipe utilization from ~N% to the 80-90% range' is a rise, accepted; 'FMA pipe utilization from ~N% to
     the 1-2% range' a fall, accepted; the FMA pipe 'to the 80-90% range' is the wrong way, refused; without the
     'the' no direction is read: 'The fix gives no direction');
  4. fixes.py `relieved`: test_a_compute_bound_answer_may_predict_its_dram_throughput_to_rise (cu_divergence,
     warp_divergence, compute-bound: 'DRAM throughput should increase' accepted; 'L2 throughput should decrease'
     and 'dram__bytes_read.sum should decrease' refused by the same check, '... measures memory, but the answer
     says warp divergence (compute-bound) ...'; 'DRAM throughput should decrease' is the wrong way; and the relief
     is one-way: on ho_strided_store, memory-bound, 'the issue rate should increase' is refused by that check);
  5. use.py `_FACTOR_MOVE`: test_a_factor_after_a_verb_of_moving_is_predicted (number_use: 'is to drop ~8x',
     'should fall 3x', 'should be cut by 8x' are predicted, 'is ~8x' and '3x slower than' are not);
     test_the_factor_of_a_predicted_move_is_a_prediction (cu_sgemm_fp32: 'with lazy module loading, start-up is to
     drop ~kx' lists k unverified and is accepted; 'start-up is ~kx' is a measurement that misses the timeline's
     start-up/window ratio and is refused; without the rule the predicted factor is refused the same way);
  6. catalog.py transfer_volume words 'dominated by (the )?(moving|copying|transferring|...)':
     test_dominated_by_moving_names_the_copy_volume (cu_pinned_copy: 'dominated by moving/copying/transferring N GB'
     claims transfer_volume, accepted; the same answer on cu_sgemm_fp32, whose window holds no copies, claims it and
     its signature is refused; without the words the answer claims no cause, and both are accepted);
  7. checks.py `_on_device` in check_bound: test_device_to_device_copies_are_dram_work (h5_d2d_snapshot, copies
     DtoD: a memory-bound or at-the-roofline answer passes the bound check and is accepted; 'compute-bound' is
     still refused; the same answers on cu_pinned_copy, copies HtoD, are refused by the bound check).
Every measured number in an answer is read from the capture at test time (the ncu metrics, the diagnosis, the
timeline facts); the targets and factors a fix or a mechanism predicts are predictions, not measurements.
"""
from __future__ import annotations

import pytest
from critic_case import answer, case, divergence_answer, engine_value  # noqa: F401 (the fixture)

from kernel_profiler.critic import facts_for
from kernel_profiler.critic.direction import fix_metric_direction
from kernel_profiler.critic.match import number_use
from kernel_profiler.critic.numbers import quantities


def _fact(c, metric: str, kernel: str | None = None) -> float:
    return next(x.value for x in facts_for(c.arts, c.dg).items if x.metric == metric and
                (kernel is None or (x.kernel and kernel in x.kernel)))


_TENSOR = "sm__pipe_tensor_cycles_active.sum.pct_of_peak_sustained_elapsed"
_BF16 = "Run the GEMM in bf16 through cuBLAS; "


def _sgemm(c, fix: str = _BF16 + "tensor-pipe utilization should increase several-fold.",
           evidence: tuple[str, ...] = (), tail: str = ""):
    tensor, flops = engine_value(c, "sm__pipe_tensor_cycles_active"), engine_value(c, "derived.fp32_flops_per_second")
    return c.critique(answer(
        "`sgemm_tiled` is compute-bound on the FP32 FMA pipe: the tensor cores sit idle.",
        [f"tensor pipe active {tensor:.2f}% of cycles (ncu {_TENSOR})", *evidence],
        f"Every multiply-add issues as an FFMA on the FMA pipe at {flops / 1e12:.1f} TFLOP/s while the tensor pipe is "
        f"active {tensor:.2f}% of cycles, so the kernel is held to the FP32 roof, far below the tensor-core "
        f"roof.{tail}", fix))


# ----------------------------------------------------------------------------- 1. the LSU pipe
def test_lsu_pipe_is_the_lsu_instruction_share(case):
    c = case("cu_sgemm_fp32")
    lsu = c.metrics("sgemm_tiled")["sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active"]
    said = _sgemm(c, evidence=(f"LSU pipe {lsu:.1f}% (ncu)",))
    assert said.verdict == "accept", said.reasons
    audit = next(n for n in said.numbers if n.written.startswith(f"{lsu:.1f}"))
    assert audit.fact and audit.fact.startswith("sm__inst_executed_pipe_lsu."), audit
    off = _sgemm(c, evidence=(f"LSU pipe {0.8 * lsu:.1f}% (ncu)",))
    assert not off.checks["numbers"], off.reasons
    assert any(f"'{0.8 * lsu:.1f} %'" in r and "sm__inst_executed_pipe_lsu." in r for r in off.reasons), off.reasons


# ----------------------------------------------------------------------------- 2. idle tensor cores
@pytest.mark.parametrize("idle", ["are doing literally nothing", "are doing nothing", "are basically idle"])
def test_tensor_cores_doing_nothing_names_the_missing_tensor_cores(case, idle):
    head = f"The GEMM is slow: the tensor cores {idle}."
    fix = _BF16 + "tensor-pipe utilization should increase several-fold."

    def critique(name: str):
        c = case(name)
        busy = _fact(c, "timeline.gpu_busy_fraction")
        mechanism = ("Every multiply-add of the product is issued one at a time on the SM's general-purpose pipes, so "
                     f"the kernel runs {c.dg.roofline.gap:.1f}x its roofline floor.")
        return c.critique(answer(head, [f"GPU busy {100 * busy:.1f}% of the steady window (nsys)"], mechanism, fix))
    fp32 = critique("cu_sgemm_fp32")
    assert fp32.mechanism == "no_tensor_cores" and fp32.verdict == "accept", fp32.reasons
    bf16 = critique("cu_cublas_bf16")
    assert bf16.mechanism == "no_tensor_cores" and not bf16.checks["signature"], bf16.reasons


# ----------------------------------------------------------------------------- 3. 'from N to the range'
def test_from_n_to_the_range_gives_the_fix_direction(case):
    c = case("cu_sgemm_fp32")
    tensor = engine_value(c, "sm__pipe_tensor_cycles_active")
    fma = c.metrics("sgemm_tiled")["sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"]
    bf16 = _BF16 + "expected: "
    rise = f"{bf16}tensor-pipe utilization from ~{tensor:.0f}% to the 80-90% range."
    assert fix_metric_direction(rise) == ("tensor-pipe utilization", "increase")
    rises = _sgemm(c, rise)
    assert rises.checks["fix"] and rises.verdict == "accept", rises.reasons
    fall = f"{bf16}FMA pipe utilization from ~{fma:.0f}% to the 1-2% range."
    assert fix_metric_direction(fall) == ("FMA pipe utilization", "decrease")
    falls = _sgemm(c, fall)
    assert falls.checks["fix"] and falls.verdict == "accept", falls.reasons
    wrong = _sgemm(c, f"{bf16}FMA pipe utilization from ~{fma:.0f}% to the 80-90% range.")
    assert not wrong.checks["fix"] and any("will increase" in r and "other way" in r for r in wrong.reasons), \
        wrong.reasons


# ----------------------------------------------------------------------------- 4. a compute-bound kernel's DRAM


_MEMORY_METRIC = "measures memory, but the answer says warp divergence (compute-bound) is the limit"


def test_a_compute_bound_answer_may_predict_its_dram_throughput_to_rise(case):
    c = case("cu_divergence")
    rises = divergence_answer(c, "DRAM throughput should increase as the kernel time falls.")
    assert rises.mechanism == "warp_divergence" and rises.verdict == "accept", rises.reasons
    for fix in ("L2 throughput should decrease.", "dram__bytes_read.sum should decrease."):
        falls = divergence_answer(c, fix)
        assert not falls.checks["fix"] and any(_MEMORY_METRIC in r for r in falls.reasons), (fix, falls.reasons)
    wrong = divergence_answer(c, "DRAM throughput should decrease.")
    assert not wrong.checks["fix"] and any("'DRAM throughput' will decrease" in r for r in wrong.reasons), \
        wrong.reasons
    # the relief is one-way: a memory-bound answer still may not predict a compute metric
    store = case("ho_strided_store")
    m = store.metrics("naive_transpose")
    st = ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")

    def transpose(fix: str):
        return store.critique(answer(
            "`naive_transpose` is memory-bound on uncoalesced global stores.",
            [f"{m[st[0]] / m[st[1]]:.1f} sectors per store request (`{st[0]}` / `{st[1]}`, ncu.ncu-rep)"],
            "Consecutive threads write addresses a whole row apart, so every warp store is split into separate "
            f"sector writes and most of each sector is wasted; the kernel runs {store.dg.roofline.stated_gap:.1f}x "
            "its memory roofline floor.",
            f"Transpose through a shared-memory tile padded to 33 columns so the stores become row-contiguous; {fix}"))
    ok = transpose("store sectors per request should decrease.")
    assert ok.verdict == "accept", ok.reasons
    issue = transpose("the issue rate should increase.")
    assert not issue.checks["fix"] and any("measures compute, but the answer says" in r and "(memory-bound)" in r
                                           for r in issue.reasons), issue.reasons


# ----------------------------------------------------------------------------- 5. the factor of a predicted move
@pytest.mark.parametrize("sentence,predicted", [
    ("The kernel time is to drop ~8x.", True), ("The kernel time should fall 3x.", True),
    ("The kernel time should be cut by 8x.", True), ("The kernel time is ~8x.", False),
    ("The kernel is 3x slower than its floor.", False)])
def test_a_factor_after_a_verb_of_moving_is_predicted(sentence, predicted):
    q = next(x for x in quantities(sentence) if x.unit == "x")
    assert number_use(sentence, q).predicted is predicted


def test_the_factor_of_a_predicted_move_is_a_prediction(case):
    c = case("cu_sgemm_fp32")
    ratio = _fact(c, "timeline.startup_fraction")  # start-up over the steady window
    k = round(1.4 * ratio)  # a predicted factor within 2x of that ratio, not equal to it
    assert abs(k - ratio) > 0.1 * ratio and k < 2 * ratio

    def critique(said: str):
        return _sgemm(c, tail=f" Start-up is paid once, and with lazy module loading, start-up {said} ~{k}x.")
    moves = critique("is to drop")
    assert moves.verdict == "accept", moves.reasons
    assert any(n.written == f"{k} x" and n.unverified for n in moves.numbers), moves.numbers
    measured = critique("is")
    assert not measured.checks["numbers"] and any("timeline.startup_fraction" in r for r in measured.reasons), \
        measured.reasons


# ----------------------------------------------------------------------------- 6. 'dominated by moving'
_COPIES = ("Every step moves the whole data set over PCIe from pinned memory at near link bandwidth, so the GPU waits "
           "for the copies to land.")


@pytest.mark.parametrize("verb", ["moving", "copying", "transferring"])
def test_dominated_by_moving_names_the_copy_volume(case, verb):
    pinned = case("cu_pinned_copy")
    gb = _fact(pinned, "timeline.copy_bytes") / 1e9

    def critique(c):
        busy = _fact(c, "timeline.gpu_busy_fraction")
        return c.critique(answer(
            f"The steady window is dominated by {verb} {gb:.1f} GB from the host.",
            [f"GPU busy {100 * busy:.1f}% of the steady window (nsys)"], _COPIES,
            "Keep the data resident on the GPU; the copy time should decrease several-fold."))
    named = critique(pinned)
    assert named.mechanism == "transfer_volume" and named.verdict == "accept", named.reasons
    busy = critique(case("cu_sgemm_fp32"))
    assert busy.mechanism == "transfer_volume" and not busy.checks["signature"], busy.reasons


# ----------------------------------------------------------------------------- 7. device-to-device copies
def _copies(c, bound: str):
    frac, bw = engine_value(c, "timeline.copy_fraction"), engine_value(c, "timeline.host_copy_bandwidth")
    return c.critique(answer(
        f"The loop is {bound}: copies fill the steady window.",
        [f"copies occupy {100 * frac:.1f}% of the window (nsys)", f"copies run at {bw / 1e9:.1f} GB/s (nsys)"],
        "Each step copies the whole buffer, so the copy engine and DRAM are busy moving bytes for most of the window.",
        "Copy only the slice that changed; the copy time should decrease several-fold."))


@pytest.mark.parametrize("bound", ["memory-bound", "at the roofline"])
def test_device_to_device_copies_are_dram_work(case, bound):
    d2d = case("h5_d2d_snapshot")
    kinds = d2d.dg.timeline.copy_bytes
    assert kinds.get("DtoD", 0) > 0.5 * sum(kinds.values())
    on_device = _copies(d2d, bound)
    assert on_device.checks["bound"] and on_device.verdict == "accept", on_device.reasons
    compute = _copies(d2d, "compute-bound")
    assert not compute.checks["bound"] and any("transfer-bound" in r for r in compute.reasons), compute.reasons
    pinned = case("cu_pinned_copy")
    assert set(pinned.dg.timeline.copy_bytes) == {"HtoD"}
    host = _copies(pinned, bound)
    assert not host.checks["bound"] and any("transfer-bound" in r for r in host.reasons), host.reasons
