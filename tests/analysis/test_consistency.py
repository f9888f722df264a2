"""Inputs from different devices, runs, jobs or programs are never combined silently.

Every case is built from real files: our H200 captures (tests/data/captures) and profiler output from other
people's GPUs (tests/data/wild, ../shared/wild-formats).
"""
from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from kernel_profiler.artifacts import load_paths
from kernel_profiler.analysis.consistency import reconcile
from kernel_profiler.analysis.engine import analyze, run
from kernel_profiler.errors import ArtifactError, EmptyCapture
from kernel_profiler.verify import verify
from kernel_profiler.verify.text import render

CC86 = "c01_esmm_metrics_cc86.csv"  # ncu --metrics CSV from an RTX 30-class GPU (compute capability 8.6)


def _set_apart(d_or_arts, path) -> list[str]:
    return [w for w in d_or_arts.warnings if w.startswith(f"set apart {path}")]


# ---------------------------------------------------------------- runs and jobs
def test_traces_of_two_runs_name_no_straggler(captures):
    """Rank 0 of mr_uneven and rank 1 of mr_balanced: both H200, world size 2, ranks 0 and 1, but two runs."""
    r0 = captures.path("mr_uneven", "trace_rank0.json.gz")
    r1 = captures.path("mr_balanced", "trace_rank1.json.gz")
    d = analyze([r0, r1])
    assert d.straggler_verdict is None and d.straggler_rank is None and not d.ranks
    assert d.mechanism not in ("rank_imbalance", "thermal_throttle")
    (w,) = _set_apart(d, r1)
    assert "another run" in w and str(r0) in w
    assert str(r1) not in d.artifacts


def test_ranks_of_one_run_are_still_compared(captures):
    d = analyze([captures.path("mr_uneven", f"trace_rank{i}.json.gz") for i in (0, 1)])
    assert d.straggler_verdict == "straggler" and len(d.ranks) == 2
    assert not any(w.startswith("set apart") for w in d.warnings)


def test_a_sample_of_ranks_names_no_straggler(captures):
    """The two real per-rank traces of mr_uneven (a straggler job), read as 2 of an 8-rank job.

    No capture here comes from a job larger than two GPUs, so the job size recorded in the traces'
    distributedInfo is the one thing changed: everything the straggler analysis measures stays real.
    """
    arts = load_paths([captures.path("mr_uneven", f"trace_rank{i}.json.gz") for i in (0, 1)])
    assert {t.world_size for t in arts.timelines} == {2}  # what the traces say
    full = run(arts).diagnosis
    assert full.straggler_verdict == "straggler"  # all ranks of the job: a verdict
    arts.timelines = [dataclasses.replace(t, world_size=8) for t in arts.timelines]
    d = run(arts).diagnosis
    assert d.straggler_verdict is None and d.straggler_rank is None and d.straggler_cause is None
    assert d.mechanism not in ("rank_imbalance", "thermal_throttle")
    note = next(f for f in d.secondary if "sample of ranks" in f.bottleneck)
    assert "2 of the job's 8 ranks" in note.bottleneck
    assert sorted(r.rank for r in d.ranks) == [0, 1]


# ---------------------------------------------------------------- devices
def test_kernel_profile_from_another_gpu_is_set_apart(captures, wild):
    tl = captures.path("cu_sgemm_fp32", "nsys.sqlite")
    other = wild(CC86)
    d = analyze([tl, other])
    (w,) = _set_apart(d, other)
    assert "compute capability 8.6" in w and "NVIDIA H200" in w
    assert d.device == "NVIDIA H200" and d.artifacts == [str(tl)]
    for f in [d.primary, *d.secondary]:
        assert all(e.artifact != str(other) for e in f.evidence)


def test_no_roofline_from_another_devices_report(captures, wild):
    """An H200 ncu report and an RTX 30-class CSV: the roofline and the device label are the H200's alone."""
    rep = captures.path("cu_sgemm_fp32", "ncu.ncu-rep")
    other = wild(CC86)
    an = run(load_paths([rep, other]))
    assert an.diagnosis.device == "NVIDIA H200"
    assert _set_apart(an.diagnosis, other)
    assert an.kernels and all(a.profile.source == str(rep) for a in an.kernels)
    assert an.rooflines and all("Ampere" not in r.ceiling_source for r in an.rooflines)
    alone = run(load_paths([rep]))
    assert [r.model_dump() for r in an.rooflines] == [r.model_dump() for r in alone.rooflines]


def test_verify_across_devices_says_so(captures, wild):
    r = verify([captures.path("cu_sgemm_fp32", "ncu.ncu-rep")], [wild(CC86)])
    assert any("BEFORE ran on NVIDIA H200, AFTER on Ampere GPU (compute capability 8.6)" in w for w in r.warnings)
    assert render(r).startswith("CAUTION: ")


# ---------------------------------------------------------------- programs
def test_kernel_profile_of_another_program_is_set_apart(captures):
    tl = captures.path("cu_softmax_naive", "nsys.sqlite")
    rep = captures.path("cu_transpose_conflict", "ncu.ncu-rep")
    d = analyze([tl, rep])
    (w,) = _set_apart(d, rep)
    assert "none of its kernels appears in the timeline" in w
    assert "transpose" not in d.bottleneck.lower()


def test_every_suite_case_keeps_its_own_profiles(captures):
    """The program check never sets apart a case's own ncu profiles (nsys, ncu and Kineto name kernels differently)."""
    for case in ("ho_py_torch_softmax", "py_gemm_bf16", "cu_softmax_naive", "tr_strided"):
        arts = reconcile(load_paths([captures.case_dir(case)]))
        assert arts.kernel_profiles, case
        assert not [w for w in arts.warnings if "ncu" in w and w.startswith("set apart")], (case, arts.warnings)


def test_verify_of_two_programs_says_they_share_no_kernel(captures):
    r = verify([captures.case_dir("cu_softmax_naive")], [captures.case_dir("py_tiny_ops")])
    assert r.shared_kernels == 0
    assert any("share no kernel" in w for w in r.warnings)
    assert render(r).splitlines()[0].startswith("CAUTION: BEFORE and AFTER share no kernel")


def test_verify_of_a_real_fix_has_no_caution(captures):
    r = verify([captures.case_dir("cu_softmax_naive")], [captures.case_dir("cu_softmax_fixed")])
    assert r.shared_kernels >= 1 and not any("share no kernel" in w for w in r.warnings)
    assert not render(r).startswith("CAUTION")


# ---------------------------------------------------------------- folders with unusable files
def test_folder_lists_the_files_it_could_not_use(tmp_path, captures, wild):
    import shutil

    good = tmp_path / "nsys.sqlite"
    shutil.copy(captures.path("cu_divergence", "nsys.sqlite"), good)
    data = captures.path("cu_softmax_naive", "ncu.ncu-rep").read_bytes()
    (tmp_path / "cut.ncu-rep").write_bytes(data[: len(data) // 3])  # a real report, truncated
    shutil.copy(wild("s02_haroonsyed_sgemm_RTX3060L_WSL.sqlite"), tmp_path / "wsl.sqlite")
    log = tmp_path / "run.log"  # the program's own output: read, as the provenance of numbers quoted from it
    shutil.copy(captures.path("cu_divergence", "run.log"), log)
    (tmp_path / "notes.md").write_text("profiling notes: the divergence run\n")
    arts = load_paths([tmp_path])
    assert arts.files == [str(good), str(log)]
    text = "\n".join(arts.warnings)
    assert f"skipped {tmp_path / 'cut.ncu-rep'}: " in text
    assert f"skipped {tmp_path / 'wsl.sqlite'}: " in text and "WSL2" in text
    assert "not profiler artifacts: notes.md" in text
    d = analyze([tmp_path])
    assert d.warnings == arts.warnings
    # named explicitly, the truncated report is an error, not a skip
    with pytest.raises(ArtifactError):
        load_paths([tmp_path / "cut.ncu-rep"])


def test_folder_with_nothing_usable_says_why(tmp_path, wild):
    import shutil

    shutil.copy(wild("s02_haroonsyed_sgemm_RTX3060L_WSL.sqlite"), tmp_path / "wsl.sqlite")
    (tmp_path / "notes.txt").write_text("profiling notes\n")
    with pytest.raises(ArtifactError) as e:
        load_paths([tmp_path])
    assert "WSL2" in str(e.value)
    (tmp_path / "wsl.sqlite").unlink()
    with pytest.raises(EmptyCapture) as e:
        load_paths([tmp_path])
    assert "notes.txt" in str(e.value)


def test_cli_prints_what_was_set_apart(captures, wild):
    tl = captures.path("cu_sgemm_fp32", "nsys.sqlite")
    p = subprocess.run([sys.executable, "-m", "kernel_profiler.cli", "analyze", str(tl), str(wild(CC86))],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "INPUTS NOT USED" in p.stdout and f"set apart {wild(CC86)}" in p.stdout


def test_v100_timeline_with_an_h200_report_gives_no_mixed_roofline(captures, wild):
    """The issue's case with real files: a PyTorch-1.8 trace from a V100 (k01) and our H200 ncu report."""
    v100 = wild("k01_kineto_resnet50_nw0_V100.pt.trace.json.gz")
    rep = captures.path("cu_sgemm_fp32", "ncu.ncu-rep")
    an = run(load_paths([v100, rep]))
    assert "V100" in an.diagnosis.device
    assert _set_apart(an.diagnosis, rep) and not an.kernels and not an.rooflines


def test_two_programs_timelines_are_not_read_as_ranks(captures):
    """Two nsys captures of different programs (run minutes apart) were once compared as two ranks."""
    a = captures.path("cu_softmax_naive", "nsys.sqlite")
    b = captures.path("cu_tiny_launches", "nsys.sqlite")
    d = analyze([a, b])
    assert not d.ranks and d.straggler_verdict is None
    (kept,) = d.artifacts
    (w,) = [w for w in d.warnings if w.startswith("set apart")]
    assert "another run" in w and kept in w
