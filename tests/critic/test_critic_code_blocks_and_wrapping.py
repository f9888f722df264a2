"""Rules of commit b5a771e ('critic: code blocks, 'N x faster', hard-wrapped lines'), on real H200 captures. Each test
has a twin, the same answer with one detail changed, that goes the other way; each was checked by editing its rule
out in a worktree and seeing the test fail. Which rule each test pins:
  1. form.py `_FENCE`: test_a_comment_in_a_code_block_is_no_heading (a '# or: ...' line inside a fenced ``` block
     stays in the fix, whose prediction after the block is read: accepted on cu_sgemm_fp32; the same lines without
     the fences make '# or: ...' a heading that ends the fix at the code, and the fix is refused; without the rule
     the fenced answer is cut the same way);
  2. direction.py `_FASTER`: test_n_x_faster_kernel_says_the_kernel_time_falls ('Expected outcome: about 10x
     faster kernel' is kernel time, decrease: accepted on cu_softmax_naive; 'about 2x slower kernel' is kernel time,
     increase: refused as the wrong way; a fix that names another metric keeps that metric; without the rule the fix
     gives no metric or direction);
  3. claim.py `_plain` (single newlines read as spaces): test_a_hard_wrapped_line_is_one_line ('it was not\\nallowed
     to use the tensor cores' claims no_tensor_cores and is accepted on cu_sgemm_fp32; with a blank line between
     the two halves (two paragraphs) nothing is claimed; without the rule the wrapped line claims nothing);
  4. catalog.py no_tensor_cores words 'not (allowed|permitted|able) to use':
     test_not_allowed_to_use_the_tensor_cores_names_them (each claims no_tensor_cores: accepted on cu_sgemm_fp32, its
     signature refused on cu_cublas_bf16, whose GEMM runs on the tensor cores; 'allowed to use the tensor cores'
     claims nothing; without the words none claims it);
  5. direction.py `busy` in `_FROM_TO_WORD`, 'to'/'from' in `_QUALIFIER`, `_NAMED_METRIC` 'tensor-pipe' not taking
     'metric'/'should': test_from_zero_to_busy_is_a_rise (cu_sgemm_fp32: 'tensor-pipe utilization from ~N % to busy'
     is a rise, accepted; 'FMA pipe utilization from ~N % to busy' a rise of the wrong metric, refused as the other
     way; 'to idle' gives no direction; without 'busy' no direction is read); test_to_busy_is_no_metric_name ('the
     tensor pipe should go from ~0 % to busy': the metric is the tensor pipe and it rises, 'to idle' no direction;
     without 'to' in `_QUALIFIER`, 'to busy' is a second metric name that cuts the tensor pipe's clause before its
     'from ... to busy', so no direction is read; without the 'should' exclusion the metric is 'tensor pipe
     should'); test_tensor_pipe_does_not_take_metric_or_should ('the tensor-pipe metric should rise' and
     'tensor-pipe should rise' name 'tensor-pipe'; 'tensor-pipe utilization' keeps its word);
  6. fixes.py `_real` (the tensor pipe is measured): test_the_tensor_pipe_is_a_measured_metric (cu_divergence, a
     warp-divergence answer, whose own fix metrics do not name the tensor pipe: 'the tensor pipe / tensor-pipe should
     go from ~0 % to busy' passes the fix check and is accepted; 'the tensor delay ...' is refused as nothing the
     captures measure; without the rule the tensor pipe is refused the same way).
Every measured number in an answer is read from the capture at test time (the ncu metrics, the diagnosis, the
timeline facts); the targets and factors a fix predicts are predictions, not measurements.
"""
from __future__ import annotations

import pytest
from critic_case import answer, case, divergence_answer, engine_value  # noqa: F401 (the fixture)

from kernel_profiler.critic import facts_for, parse_answer
from kernel_profiler.critic.claim import asserted_cause
from kernel_profiler.critic.direction import fix_metric_direction


def _fact(c, metric: str) -> float:
    return next(x.value for x in facts_for(c.arts, c.dg).items if x.metric == metric)


_TENSOR = "sm__pipe_tensor_cycles_active.sum.pct_of_peak_sustained_elapsed"
_BF16 = "Run the GEMM in bf16 through cuBLAS; "


def _sgemm(c, fix: str = _BF16 + "tensor-pipe utilization should increase several-fold.",
           head: str = "`sgemm_tiled` is compute-bound on the FP32 FMA pipe: the tensor cores sit idle."):
    tensor, flops = engine_value(c, "sm__pipe_tensor_cycles_active"), engine_value(c, "derived.fp32_flops_per_second")
    return c.critique(answer(
        head, [f"tensor pipe active {tensor:.2f}% of cycles (ncu {_TENSOR})"],
        f"Every multiply-add issues as an FFMA on the FMA pipe at {flops / 1e12:.1f} TFLOP/s while the tensor pipe is "
        f"active {tensor:.2f}% of cycles, so the kernel is held to the FP32 roof, far below the tensor-core roof.",
        fix))


# ----------------------------------------------------------------------------- 1. a comment in a code block
_CODE = ("**What to change.**\n\n{fence}python\nc = a.to(torch.bfloat16) @ b.to(torch.bfloat16)  # cuBLAS\n"
         "# or: a.bfloat16() @ b\n{fence}\n\nThe tensor-pipe utilization should increase several-fold.")


def test_a_comment_in_a_code_block_is_no_heading(case):
    c = case("cu_sgemm_fp32")
    fenced = _CODE.format(fence="```")
    assert "several-fold" in parse_answer(answer("x", ["y"], "z", fenced)).fix.change
    kept = _sgemm(c, fenced)
    assert kept.checks["fix"] and kept.verdict == "accept", kept.reasons
    bare = _CODE.format(fence="").replace("python\n", "")  # unfenced, the comment is a heading that ends the fix (its
    assert "several-fold" not in parse_answer(answer("x", ["y"], "z", bare)).fix.change  # move is then read from
    # the paragraph that predicts it: critic/proposal.py)


# ----------------------------------------------------------------------------- 2. 'N x faster kernel'
def _softmax(c, fix: str):
    m = c.metrics("softmax_rows")
    bps = m["smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"]
    return c.critique(answer(
        "`softmax_rows` is memory-bound on uncoalesced global loads: each warp load scatters over many sectors.",
        [f"each 32-byte sector it fetches delivers {bps:.0f} useful bytes "
         "(`smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio`, ncu.ncu-rep)"],
        "Adjacent lanes read different rows, so every warp load is split into many sectors and most fetched bytes "
        f"are wasted; the kernel runs {c.dg.roofline.gap:.1f}x its memory roofline floor.",
        f"Map consecutive threads to consecutive addresses (one warp per row). {fix}"))


@pytest.mark.parametrize("fix,metric,direction", [
    ("Expected outcome: about 10x faster kernel.", "kernel time", "decrease"),
    ("Expected outcome: about 2x slower kernel.", "kernel time", "increase"),
    ("Expected outcome: about 10x faster kernel; DRAM throughput should decrease.", "DRAM throughput", "decrease")])
def test_n_x_faster_kernel_parses(fix, metric, direction):
    assert fix_metric_direction(fix) == (metric, direction)


def test_n_x_faster_kernel_says_the_kernel_time_falls(case):
    c = case("cu_softmax_naive")
    faster = _softmax(c, "Expected outcome: about 10x faster kernel.")
    assert faster.checks["fix"] and faster.verdict == "accept", faster.reasons
    slower = _softmax(c, "Expected outcome: about 2x slower kernel.")
    assert not slower.checks["fix"] and any("'kernel time' will increase" in r for r in slower.reasons), \
        slower.reasons


# ----------------------------------------------------------------------------- 3. a hard-wrapped line
def test_a_hard_wrapped_line_is_one_line(case):
    wrapped = "The GEMM is slow because it was not\nallowed to use the tensor cores."
    assert asserted_cause(wrapped) == "no_tensor_cores"
    assert asserted_cause(wrapped.replace("\n", "\n\n")) is None
    c = case("cu_sgemm_fp32")
    said = _sgemm(c, head=wrapped)
    assert said.mechanism == "no_tensor_cores" and said.verdict == "accept", said.reasons
    apart = _sgemm(c, head=wrapped.replace("\n", "\n\n"))
    assert apart.mechanism != "no_tensor_cores", apart.reasons


# ----------------------------------------------------------------------------- 4. 'not allowed to use'
@pytest.mark.parametrize("able", ["allowed", "permitted", "able"])
def test_not_allowed_to_use_the_tensor_cores_names_them(case, able):
    head = f"The GEMM is slow: it was not {able} to use the tensor cores."
    assert asserted_cause(head) == "no_tensor_cores"
    assert asserted_cause(head.replace("not ", "")) is None
    fp32 = _sgemm(case("cu_sgemm_fp32"), head=head)
    assert fp32.mechanism == "no_tensor_cores" and fp32.verdict == "accept", fp32.reasons
    bf16 = case("cu_cublas_bf16")
    busy = _fact(bf16, "timeline.gpu_busy_fraction")
    said = bf16.critique(answer(
        head, [f"GPU busy {100 * busy:.1f}% of the steady window (nsys)"],
        "Every multiply-add of the product is issued one at a time on the SM's general-purpose pipes, so the kernel "
        f"runs {bf16.dg.roofline.gap:.1f}x its roofline floor.",
        _BF16 + "tensor-pipe utilization should increase several-fold."))
    assert said.mechanism == "no_tensor_cores" and not said.checks["signature"], said.reasons


# ----------------------------------------------------------------------------- 5. 'from ~0 % to busy'
def test_from_zero_to_busy_is_a_rise(case):
    c = case("cu_sgemm_fp32")
    tensor = engine_value(c, "sm__pipe_tensor_cycles_active")
    fma = c.metrics("sgemm_tiled")["sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"]
    rise = f"{_BF16}expected: tensor-pipe utilization from ~{tensor:.0f} % to busy."
    assert fix_metric_direction(rise) == ("tensor-pipe utilization", "increase")
    assert fix_metric_direction(rise.replace("busy", "idle"))[1] is None
    rises = _sgemm(c, rise)
    assert rises.checks["fix"] and rises.verdict == "accept", rises.reasons
    wrong = _sgemm(c, f"{_BF16}expected: FMA pipe utilization from ~{fma:.0f} % to busy.")
    assert not wrong.checks["fix"] and any("will increase" in r and "other way" in r for r in wrong.reasons), \
        wrong.reasons


def test_to_busy_is_no_metric_name():
    rise = "Use bf16: the tensor pipe should go from ~0 % to busy."
    assert fix_metric_direction(rise) == ("tensor pipe", "increase")
    assert fix_metric_direction(rise.replace("busy", "idle")) == ("tensor pipe", None)


@pytest.mark.parametrize("fix,metric", [("Use bf16: the tensor-pipe metric should rise.", "tensor-pipe"),
                                        ("Use bf16: tensor-pipe should rise.", "tensor-pipe"),
                                        ("Use bf16: tensor-pipe utilization should rise.", "tensor-pipe utilization")])
def test_tensor_pipe_does_not_take_metric_or_should(fix, metric):
    assert fix_metric_direction(fix) == (metric, "increase")


# ----------------------------------------------------------------------------- 6. the tensor pipe is measured


@pytest.mark.parametrize("unit", ["the tensor pipe", "tensor-pipe"])
def test_the_tensor_pipe_is_a_measured_metric(case, unit):
    # warp divergence's own fix metrics do not name the tensor pipe: the metric reaches the 'measured' check
    c = case("cu_divergence")
    measured = divergence_answer(c, f"{unit} should go from ~0 % to busy.")
    assert measured.mechanism == "warp_divergence", measured.reasons
    assert measured.checks["fix"] and measured.verdict == "accept", measured.reasons
    other = divergence_answer(c, "the tensor delay should go from ~0 % to busy.")
    assert not other.checks["fix"] and any("'the tensor delay' is nothing the captures measure" in r
                                           for r in other.reasons), other.reasons
