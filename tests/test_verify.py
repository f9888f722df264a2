"""`verify BEFORE AFTER` on the real H200 before/after pairs of the capture suite.

Ground truth (which case fixes which, the mechanism the fix must remove, the
mechanism expected afterwards) comes from suite/cases.toml; every number
compared is read from the captures themselves (the BEFORE diagnosis' fix, the
AFTER ncu report or timeline), never typed in.
"""
from __future__ import annotations

import pytest

from conftest import suite_cases
from kernel_profiler.artifacts import load_paths
from kernel_profiler.analysis.engine import analyze
from kernel_profiler.analysis.kernels import dedupe
from kernel_profiler.analysis.mechanisms.memory import BANK_CONFLICT_MIN_WAYS
from kernel_profiler.kernel_name import KernelName
from kernel_profiler.verify import verify
from kernel_profiler.verify.prediction import PREDICTION_MIN_FRACTION
from kernel_profiler.verify.result import EXIT_IMPROVED, EXIT_REGRESSED, EXIT_WITHIN_NOISE, VerifyResult

CASES = {c["name"]: c for c in suite_cases()}
FIXES = [c for c in CASES.values() if c.get("fix_of") and not c.get("recapture")]
_CACHE: dict[tuple[str, str], VerifyResult] = {}


def pair(captures, before: str, after: str) -> VerifyResult:
    if (before, after) not in _CACHE:
        _CACHE[(before, after)] = verify([captures.case_dir(before)], [captures.case_dir(after)])
    return _CACHE[(before, after)]


def after_ncu(captures, case: str, kernel: str):
    """The AFTER case's ncu profile of `kernel`, read directly from its .ncu-rep."""
    profs = [p for p in dedupe(load_paths([captures.path(case, "ncu.ncu-rep")]).kernel_profiles)
             if KernelName(p.name).base == KernelName(kernel).base]
    assert profs, f"no ncu profile of {kernel} in {case}"
    return profs[0]


def assert_prediction_reached(r: VerifyResult) -> None:
    p = r.prediction_check
    moved = p.after_value - p.before_value
    assert (moved > 0) == (p.direction == "increase"), p.detail
    if p.target_value is not None:
        assert moved / (p.target_value - p.before_value) >= PREDICTION_MIN_FRACTION, p.detail


@pytest.mark.parametrize("case", FIXES, ids=[c["name"] for c in FIXES])
def test_every_fix_pair_improves_and_confirms(case, captures):
    r = pair(captures, case["fix_of"], case["name"])
    assert r.verdict == "improved" and r.overall.beyond_noise and r.speedup > 1.0, r.render()
    assert r.prediction == "confirmed", r.render()
    assert_prediction_reached(r)
    assert r.exit_code() == EXIT_IMPROVED
    assert r.before_mechanism == case["expect_moved"]
    assert r.after_mechanism != case["expect_moved"] and r.bottleneck_moved
    if case.get("mechanism"):
        assert (r.after_bound, r.after_mechanism) == (case["bound"], case["mechanism"]), r.after_bottleneck
    assert r.after_bottleneck == analyze([captures.case_dir(case["name"])]).bottleneck


def test_softmax_coalescing(captures):
    r = pair(captures, "cu_softmax_naive", "cu_softmax_fixed")
    before = analyze([captures.case_dir("cu_softmax_naive")])
    p = r.prediction_check
    assert p.metric == before.fix.metric and p.before_value == before.fix.current_value
    assert p.after_value == after_ncu(captures, "cu_softmax_fixed", before.primary.kernel).get(p.metric)
    assert p.after_value >= p.before_value + PREDICTION_MIN_FRACTION * (p.target_value - p.before_value)
    assert r.prediction == "confirmed"
    assert r.speedup > 5.0
    assert (r.before_mechanism, r.after_mechanism) == (CASES["cu_softmax_naive"]["mechanism"],
                                                       CASES["cu_softmax_fixed"]["mechanism"])
    assert not r.before_mechanism_still_present
    # The kernel is matched by name although its grid changed (one thread per row -> one block per row).
    (k,) = r.kernels
    assert KernelName(k.name).base == CASES["cu_softmax_fixed"]["kernel"]
    assert k.launch_changed and k.beyond_noise and k.speedup > 1.0
    assert not r.removed and not r.added


def test_transpose_bank_conflicts(captures):
    r = pair(captures, "cu_transpose_conflict", "cu_transpose_fixed")
    p = r.prediction_check
    assert r.prediction == "confirmed"
    assert p.before_value >= BANK_CONFLICT_MIN_WAYS > p.after_value
    wf, inst = p.metric.split("/")
    prof = after_ncu(captures, "cu_transpose_fixed", p.kernel)
    assert p.after_value == pytest.approx(prof.get(wf) / prof.get(inst))
    assert p.progress >= PREDICTION_MIN_FRACTION
    assert r.before_mechanism == "shared_bank_conflict" and not r.before_mechanism_still_present
    assert r.kernels[0].match == "name+launch" and not r.kernels[0].launch_changed
    assert r.verdict == "improved" and r.kernels[0].beyond_noise


def test_histogram_atomics(captures):
    r = pair(captures, "cu_histogram_atomic", "cu_histogram_fixed")
    p = r.prediction_check
    assert r.prediction == "confirmed"
    terms = p.metric.split("+")
    prof = after_ncu(captures, "cu_histogram_fixed", p.kernel)
    assert p.after_value == sum(prof.get(t) for t in terms)
    assert p.after_value * 100 < p.before_value  # "hundreds of times fewer global atomics"
    assert r.speedup > 10.0 and r.verdict == "improved"
    assert r.before_mechanism == CASES["cu_histogram_fixed"]["expect_moved"]
    assert not r.before_mechanism_still_present


def test_pageable_to_pinned_still_transfer_bound(captures):
    r = pair(captures, "cu_pageable_copy", "cu_pinned_copy")
    after = analyze([captures.case_dir("cu_pinned_copy")])
    p = r.prediction_check
    assert p.metric == "timeline.host_copy_bandwidth" and r.prediction == "confirmed"
    ev = next(e for e in after.evidence if e.metric == p.metric)
    assert p.after_value == pytest.approx(ev.value) and p.after_value > p.before_value
    assert r.before_bound == r.after_bound == CASES["cu_pinned_copy"]["bound"]
    assert r.after_mechanism == CASES["cu_pinned_copy"]["mechanism"] and r.bottleneck_moved
    assert r.verdict == "improved" and r.exit_code() == EXIT_IMPROVED
    # The consuming kernel did not change: its launches stay within noise.
    assert r.kernels and all(not k.beyond_noise for k in r.kernels)


def test_unfused_to_fused_gelu(captures):
    r = pair(captures, "py_unfused_gelu", "py_fused_gelu")
    p = r.prediction_check
    assert p.metric == "derived.streaming_dram_bytes" and p.direction == "decrease"
    assert r.prediction == "confirmed" and p.after_value < p.before_value
    assert r.verdict == "improved" and r.speedup > 1.0
    # The chain of elementwise kernels is gone, one GELU kernel came in.
    assert len(r.removed) >= 3 and len(r.added) >= 1
    assert any("gelu" in k.name.lower() for k in r.added)
    assert not any("gelu" in k.name.lower() for k in r.removed)
    after_keys = {k.name for k in r.added} | {k.name for k in r.kernels}
    assert not {KernelName(k.name).key for k in r.removed} & {KernelName(n).key for n in after_keys}
    assert r.after_mechanism == CASES["py_fused_gelu"]["mechanism"]
    text = r.render()
    assert "Removed kernels" in text and "Added kernels" in text


def test_sync_loop_idle_time(captures):
    r = pair(captures, "cu_sync_loop", "cu_sync_loop_fixed")
    after = analyze([captures.case_dir("cu_sync_loop_fixed")])
    p = r.prediction_check
    assert p.metric == "timeline.idle_host_sync_ns" and r.prediction == "confirmed"
    assert p.after_value == after.timeline.idle_by_cause["host_sync"] < p.before_value
    assert r.overall.metric == "step_ns" and r.verdict == "improved"
    assert r.before_mechanism == CASES["cu_sync_loop_fixed"]["expect_moved"]


@pytest.mark.parametrize("case", ["py_gemm_bf16", "py_fused_gelu", "py_unfused_gelu"])
def test_same_program_two_runs_is_within_noise(case, captures):
    """The Kineto trace and the nsys capture are two separate runs of one unchanged program."""
    r = verify([captures.path(case, "trace.json.gz")], [captures.path(case, "nsys.sqlite")])
    assert r.verdict == "within_noise", r.render()
    assert r.exit_code() == EXIT_WITHIN_NOISE
    assert not r.overall.beyond_noise and r.overall.metric == "step_ns"
    # Kernels are matched across the two formats' spellings of the same names.
    assert r.kernels and not r.removed and not r.added
    assert all(not k.beyond_noise for k in r.kernels)
    assert r.prediction != "wrong_direction"
    assert "WITHIN NOISE" in r.render()


def test_identical_capture_is_within_noise(captures):
    d = captures.case_dir("cu_transpose_fixed")
    r = verify([d], [d])
    assert r.verdict == "within_noise" and r.speedup == 1.0 and r.exit_code() == EXIT_WITHIN_NOISE
    assert not r.bottleneck_moved and r.prediction in ("partial", "not_evaluated")


def test_swapped_pair_regresses(captures):
    r = pair(captures, "cu_softmax_fixed", "cu_softmax_naive")
    assert r.verdict == "regressed" and r.speedup < 1.0
    assert r.prediction == "wrong_direction"
    assert r.exit_code() == EXIT_REGRESSED
    assert r.after_mechanism == CASES["cu_softmax_naive"]["mechanism"]
    assert "REGRESSED" in r.render()


def test_json_round_trip(captures):
    r = pair(captures, "cu_softmax_naive", "cu_softmax_fixed")
    back = VerifyResult.model_validate_json(r.model_dump_json())
    assert back.verdict == r.verdict and back.exit_code() == r.exit_code()
    assert back.prediction_check == r.prediction_check
