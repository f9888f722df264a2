"""Rules of commit 704ab12 ('critic: one-time work set apart is not the claim, and more layouts read'), on real H200
captures. Each test has a twin, the same answer with one detail changed, that goes the other way; each was checked
by editing its rule out in a worktree and seeing the test fail. Which rule each test pins:
  1. claim.py `_set_apart` (`_SET_APART`, `_BACK_REFERENCE`, `_STILL_DOMINANT`):
     test_one_time_work_set_apart_is_not_the_claim (hot_py_upload_then_tiny_ops: a pageable upload that 'costs'
     its one-time milliseconds, then 'Keep those apart', 'That is paid once and is not the steady-state limiter' or
     ', but it is not the steady-state limiter': the launch-bound steady state is the claim, accepted; 'It is a
     one-time cost that dominates this short run' still claims pageable_transfer, which the captures contradict);
     test_a_single_end_of_run_download_is_not_the_claim (hot_cu_strided_then_download: 'it is a single end-of-run
     download' leaves the uncoalesced gather as the claim, accepted; '... download that dominates this run' claims
     the pageable copy, refused). Reverted apart, `_BACK_REFERENCE` fails the 'Keep those apart' and 'That is paid
     once' cases, and `_STILL_DOMINANT` every case (their twins, which dominate, are then read as set apart too);
  2. claim.py `_LIMITING_VERB`: test_a_cause_named_by_its_verb_is_asserted (a mechanism 'The GPU waits for the CPU
     to enqueue each kernel' under a bottleneck that names no cause claims launch_overhead: accepted on py_tiny_ops,
     its signature refused on the GPU-busy cu_sgemm_fp32; the verb phrase is rule 3's launch_overhead words, so
     reverting those words fails this test too);
  3. catalog.py words: test_new_catalog_words_name_their_cause ('per-call driver cost' and 'waits on the CPU to
     enqueue' launch_overhead on py_tiny_ops, 'CPU computation' host_work on cu_host_work, 'copies fill/take
     up/occupy' transfer_volume on cu_pinned_copy, each accepted; the same answer on cu_sgemm_fp32, GPU busy with
     no copies, claims the same cause and its signature is refused);
  4. direction.py: test_towards_gives_the_fix_direction (`_FROM_TO` 'towards': py_tiny_ops, GPU busy 'from N %
     towards 80 %' accepted, 'towards 1 %' the wrong way);
     test_to_a_majority_gives_the_fix_direction (`_FROM_TO_WORD` 'majority', 'from about N': cu_sgemm_fp32, tensor
     pipe 'from ~N % / from about N % to a majority of cycles' accepted, 'to a small share' the wrong way; without
     'majority' both fail, without 'about' the second);
     test_a_values_unit_is_not_a_metric_name (`_stated_move`'s unit filter: cu_sgemm_fp32, 'achieved throughput
     ~N -> ~550-700 TFLOP/s' is the throughput rising, accepted; '-> ~2-3 TFLOP/s' the wrong way; "Rank 1's launch
     lag" stays a name);
     test_a_metrics_clause_ends_at_while (the `while|whereas` split: py_tiny_ops, 'the step should stay ~N ms
     while tokens per second rise, and the GPU idle fraction should fall' accepted; with 'and' for 'while' the
     step is said to rise, the wrong way);
  5. form.py `_CHECKBOX`: test_checklist_items_read_like_labelled_bullets (py_tiny_ops: '- [x] **Fix:**' and
     '- [ ] **Fix:**' are the fix, accepted; '- [x] **Observations:**' is no fix label and the fix is missing);
     `_FOOTNOTE`: test_trailing_footnotes_are_evidence_not_the_fix (py_tiny_ops, an unlabelled answer: '[1] ...',
     '[2] ...' after the fix are evidence and the fix is the paragraph before; without the markers the same
     lines are read into the fix).
Every number in an answer is read from the capture at test time (the diagnosis, the timeline facts, the one-time
work, the ncu metrics); the targets a fix predicts ('towards 80 %', '~550-700 TFLOP/s') are predictions, not
measurements.
"""
from __future__ import annotations

import pytest
from critic_case import answer, case, engine_value  # noqa: F401 (the fixture)

from kernel_profiler.critic import facts_for, parse_answer
from kernel_profiler.critic.direction import fix_metric_direction


def _fact(c, metric: str, kernel: str | None = None) -> float:
    return next(x.value for x in facts_for(c.arts, c.dg).items if x.metric == metric and
                (kernel is None or (x.kernel and kernel in x.kernel)))


_DISPATCH = ("Each op runs for about a microsecond on the GPU but takes several on the host to dispatch, so the GPU "
             "idles between launches.")
_GRAPH = "Capture the loop in a CUDA graph; GPU busy should increase several-fold."


def _host(c, bottleneck: str, mechanism: str = _DISPATCH, fix: str = _GRAPH):
    busy = _fact(c, "timeline.gpu_busy_fraction")
    return c.critique(answer(bottleneck, [f"GPU busy {100 * busy:.1f}% of the steady window (nsys)"], mechanism, fix))


# ----------------------------------------------------------------------------- 1. one-time work set apart
@pytest.mark.parametrize("apart", [". Keep those apart: it happens once.",
                                   ". That is paid once and is not the steady-state limiter.",
                                   ", but it is not the steady-state limiter."])
def test_one_time_work_set_apart_is_not_the_claim(case, apart):
    c = case("hot_py_upload_then_tiny_ops")
    upload = c.dg.timeline.onetime_by_class["upload"] / 1e6
    busy, median = _fact(c, "timeline.gpu_busy_fraction"), _fact(c, "timeline.kernel_median_ns")

    def critique(second: str):
        return c.critique(answer(
            f"A pageable upload before the loop costs {upload:.1f} ms{second} The loop itself is launch-bound: "
            "microsecond kernels behind eager dispatch.",
            [f"GPU busy {100 * busy:.1f}% of the steady window (nsys)",
             f"median kernel {median / 1e3:.1f} us (nsys)"],
            "Each in-place add runs for about a microsecond, but the host needs several microseconds to dispatch the "
            "next one through the eager path, so the GPU idles between launches.", _GRAPH))
    set_apart = critique(apart)
    assert set_apart.mechanism == "launch_overhead" and set_apart.verdict == "accept", set_apart.reasons
    dominant = critique(". It is a one-time cost that dominates this short run.")
    assert dominant.mechanism == "pageable_transfer" and not dominant.checks["signature"], dominant.reasons


def test_a_single_end_of_run_download_is_not_the_claim(case):
    c = case("hot_cu_strided_then_download")
    download = c.dg.timeline.onetime_by_class["download"] / 1e6
    sectors = engine_value(c, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum/")

    def critique(tail: str):
        return c.critique(answer(
            f"The device-to-host copy into pageable memory costs {download:.1f} ms; it is a single end-of-run "
            f"download{tail}. `strided_gather` is bound by uncoalesced loads.",
            [(f"{sectors:.0f} sectors per load request (ncu l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum / "
              "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum)")],
            "Each lane reads a different row, so every warp's load touches a separate sector for every lane and most "
            f"of each sector's bytes are wasted; the kernel runs {c.dg.roofline.gap:.1f}x its DRAM floor.",
            "Read the rows coalesced (transpose through shared memory); sectors per request should decrease "
            "several-fold."))
    single = critique("")
    assert single.mechanism == "uncoalesced_global" and single.verdict == "accept", single.reasons
    dominant = critique(" that dominates this run")
    assert dominant.mechanism == "pageable_transfer" and not dominant.checks["signature"], dominant.reasons


# ----------------------------------------------------------------------------- 2. a cause named by its verb
def test_a_cause_named_by_its_verb_is_asserted(case):
    mechanism = ("The GPU waits for the CPU to enqueue each kernel: each op runs for about a microsecond on the GPU "
                 "but takes several on the host, so the GPU idles between launches.")
    head = "The GPU is idle for most of the steady window."
    launch = _host(case("py_tiny_ops"), head, mechanism)
    assert launch.mechanism == "launch_overhead" and launch.verdict == "accept", launch.reasons
    busy = _host(case("cu_sgemm_fp32"), head, mechanism)
    assert busy.mechanism == "launch_overhead" and not busy.checks["signature"], busy.reasons


# ----------------------------------------------------------------------------- 3. catalog words
_HOST_PREP = "The host prepares each batch on one thread between launches, so the GPU has nothing queued and idles."
_COPIES = ("Every step moves the whole data set over PCIe from pinned memory at near link bandwidth, so the GPU waits "
           "for the copies to land.")


@pytest.mark.parametrize("name,head,mechanism,fix,cause", [
    ("py_tiny_ops", "The loop is dominated by per-call driver cost.", _DISPATCH, _GRAPH, "launch_overhead"),
    ("py_tiny_ops", "The GPU waits on the CPU to enqueue every op.", _DISPATCH, _GRAPH, "launch_overhead"),
    ("cu_host_work", "The program is dominated by CPU computation between launches.", _HOST_PREP,
     "Prepare the batch on the GPU; GPU busy should increase several-fold.", "host_work"),
    *[("cu_pinned_copy", f"Host-to-device copies {verb} the steady window.", _COPIES,
       "Keep the data resident on the GPU; the copy time should decrease several-fold.", "transfer_volume")
      for verb in ("fill", "take up", "occupy")]])
def test_new_catalog_words_name_their_cause(case, name, head, mechanism, fix, cause):
    named = _host(case(name), head, mechanism, fix)
    assert named.mechanism == cause and named.verdict == "accept", named.reasons
    busy = _host(case("cu_sgemm_fp32"), head, mechanism, fix)
    assert busy.mechanism == cause and not busy.checks["signature"], busy.reasons


# ----------------------------------------------------------------------------- 4. fix directions
def test_towards_gives_the_fix_direction(case):
    c = case("py_tiny_ops")
    busy = 100 * _fact(c, "timeline.gpu_busy_fraction")
    up = f"Capture the loop in a CUDA graph; GPU busy should go from {busy:.0f} % towards 80 %."
    down = f"Capture the loop in a CUDA graph; GPU busy should go from {busy:.0f} % towards 1 %."
    assert fix_metric_direction(up) == ("GPU busy", "increase")
    rises = _host(c, "The loop is launch-bound.", fix=up)
    assert rises.checks["fix"] and rises.verdict == "accept", rises.reasons
    falls = _host(c, "The loop is launch-bound.", fix=down)
    assert not falls.checks["fix"] and any("decrease" in r for r in falls.reasons), falls.reasons


def _tensor(c, fix: str):
    tensor, flops = engine_value(c, "sm__pipe_tensor_cycles_active"), engine_value(c, "derived.fp32_flops_per_second")
    return c.critique(answer(
        "The SGEMM is compute-bound on the FP32 FMA pipe: the tensor cores sit idle.",
        [(f"tensor pipe active {tensor:.2f}% of cycles "
          "(ncu sm__pipe_tensor_cycles_active.sum.pct_of_peak_sustained_elapsed)")],
        f"Every multiply-add issues as an FFMA on the FMA pipe at {flops / 1e12:.1f} TFLOP/s while the tensor pipe is "
        f"active {tensor:.2f}% of cycles, so the kernel is held to the FP32 roof, far below the tensor-core roof.",
        fix))


_BF16 = "Run the GEMM in bf16 through cuBLAS; expected: "


@pytest.mark.parametrize("start", ["~", "about "])
def test_to_a_majority_gives_the_fix_direction(case, start):
    c = case("cu_sgemm_fp32")
    tensor = engine_value(c, "sm__pipe_tensor_cycles_active")
    most = _tensor(c, f"{_BF16}tensor-pipe utilization from {start}{tensor:.0f} % to a majority of cycles.")
    assert most.checks["fix"] and most.verdict == "accept", most.reasons
    few = _tensor(c, f"{_BF16}tensor-pipe utilization from {start}{tensor:.0f} % to a small share of cycles.")
    assert not few.checks["fix"] and any("decrease" in r for r in few.reasons), few.reasons


def test_a_values_unit_is_not_a_metric_name(case):
    c = case("cu_sgemm_fp32")
    tflops = engine_value(c, "derived.fp32_flops_per_second") / 1e12
    up = f"{_BF16}achieved throughput ~{tflops:.0f} -> ~550-700 TFLOP/s."
    assert fix_metric_direction(up) == ("achieved throughput", "increase")
    rises = _tensor(c, up)
    assert rises.checks["fix"] and rises.verdict == "accept", rises.reasons
    falls = _tensor(c, f"{_BF16}achieved throughput ~{tflops:.0f} -> ~2-3 TFLOP/s.")
    assert not falls.checks["fix"] and any("decrease" in r for r in falls.reasons), falls.reasons
    # a rank's number before its metric is part of the name, not a value's unit
    rank = "Expected: Rank 1's launch lag should fall several-fold."
    assert fix_metric_direction(rank) == ("1's launch lag", "decrease")


@pytest.mark.parametrize("joint", ["while", "whereas"])
def test_a_metrics_clause_ends_at_while(case, joint):
    c = case("py_tiny_ops")
    step = _fact(c, "timeline.steady_step_median_ns") / 1e6

    def fix(word: str) -> str:
        return (f"Batch eight inputs into each op: the step should stay ~{step:.1f} ms {word} tokens per second rise, "
                "and the GPU idle fraction should fall several-fold.")
    assert fix_metric_direction(fix(joint)) == ("the GPU idle fraction", "decrease")
    apart = _host(c, "The loop is launch-bound.", fix=fix(joint))
    assert apart.checks["fix"] and apart.verdict == "accept", apart.reasons
    joined = _host(c, "The loop is launch-bound.", fix=fix("and"))
    assert not joined.checks["fix"] and any("'the step' will increase" in r for r in joined.reasons), joined.reasons


# ----------------------------------------------------------------------------- 5. checklists and footnotes
def _tiny(c) -> tuple[float, float]:
    return 100 * _fact(c, "timeline.gpu_busy_fraction"), _fact(c, "timeline.kernel_median_ns") / 1e3


@pytest.mark.parametrize("box", ["[x]", "[ ]", "[X]"])
def test_checklist_items_read_like_labelled_bullets(case, box):
    c = case("py_tiny_ops")
    busy, median = _tiny(c)

    def text(label: str) -> str:
        return (f"- {box} **Bound:** host: the loop is launch-bound.\n"
                f"- {box} **Evidence:** GPU busy {busy:.1f}% of the steady window (nsys); median kernel "
                f"{median:.2f} us (nsys)\n"
                f"- {box} **Mechanism:** {_DISPATCH}\n"
                f"- {box} **{label}:** {_GRAPH}\n")
    checked = c.critique(text("Fix"))
    assert parse_answer(text("Fix")).fix_text == _GRAPH
    assert parse_answer(text("Fix")).bottleneck == "host: the loop is launch-bound."
    assert checked.mechanism == "launch_overhead" and checked.verdict == "accept", checked.reasons
    other = c.critique(text("Observations").replace(_GRAPH, "The loop issues 200 launches per step."))  # (no change
    assert any("fix part is missing" in r for r in other.reasons), other.reasons  # proposed, no move predicted)


def test_trailing_footnotes_are_evidence_not_the_fix(case):
    c = case("py_tiny_ops")
    busy, median = _tiny(c)
    body = ("The loop is launch-bound: host dispatch, not the GPU, sets the pace.\n\n"
            f"GPU busy {busy:.1f}% of the steady window [1]; median kernel {median:.2f} us [1].\n\n"
            f"{_DISPATCH}\n\n{_GRAPH}\n\n")
    notes = ["nsys.sqlite: CUPTI_ACTIVITY_KIND_KERNEL, the steady window.", "ncu_raw.csv: gpu__time_duration.sum."]
    marked = body + "\n".join(f"[{i}] {n}" for i, n in enumerate(notes, 1)) + "\n"
    a = parse_answer(marked)
    assert a.fix_text == _GRAPH, a.fix_text
    assert all(n in " ".join(e.meaning or "" for e in a.evidence) for n in notes), a.evidence
    assert c.critique(marked).verdict == "accept", c.critique(marked).reasons
    unmarked = parse_answer(body + "\n".join(notes) + "\n")
    assert unmarked.fix_text != _GRAPH and notes[0] in unmarked.fix_text, unmarked.fix_text
