"""Where data and work are placed (holdout 8, real H200 captures), each with a twin that goes the other way:
  - zero_copy_reads: a kernel that reads mapped host memory over PCIe (h8_zero_copy) against the same kernel
    reading its table from HBM after one upload (h8_zero_copy_fixed);
  - managed_migration: managed records the CPU rewrites every step (h8_managed_touch) against a capture with no
    managed memory (h8_zero_copy);
  - default_stream_serialization: eight streams with a memset on the legacy default stream before each kernel
    (h8_legacy_stream) against the memsets on the kernels' own streams (h8_legacy_stream_fixed).
The detector (engine), the signature (critic) and the reader's facts they stand on are checked on both."""
from __future__ import annotations

import numpy as np
import pytest

from kernel_profiler import signatures
from kernel_profiler.analysis.engine import analyze, run
from kernel_profiler.analysis.mechanisms.host_memory import detect_zero_copy
from kernel_profiler.analysis.streams import overlapping_pairs, serialized, stream_use
from kernel_profiler.analysis.unified_memory import material, migrations
from kernel_profiler.artifacts import load_paths
from kernel_profiler.critic import facts_for
from kernel_profiler.critic.checks import _measured

MIB = 1 << 20


def _profile(captures, case: str):
    (k,) = [k for k in load_paths([captures.path(case, "ncu.ncu-rep")]).kernel_profiles
            if k.get("gpu__time_duration.sum")]
    return k


def _signature(captures, case: str, mechanism: str, kernel: bool = False) -> tuple[str, str]:
    arts = load_paths([captures.case_dir(case)])
    f = facts_for(arts, analyze([captures.case_dir(case)]))

    class C:  # what checks._measured reads
        facts = f
    return signatures.check(mechanism, _measured(C, next(iter(f.profiles)) if kernel else None))


# ----------------------------------------------------------------------------- zero-copy
def test_zero_copy_detector_fires_on_mapped_reads_not_on_the_uploaded_table(captures):
    f = detect_zero_copy(_profile(captures, "h8_zero_copy"), None)
    assert f is not None and (f.bound, f.mechanism) == ("transfer", "zero_copy_reads")
    assert f.evidence[0].value == 4 * MIB  # 128 MiB of 32-byte sectors from host memory per launch
    assert detect_zero_copy(_profile(captures, "h8_zero_copy_fixed"), None) is None


def test_zero_copy_signature_present_only_where_the_kernel_reads_host_memory(captures):
    status, txt = _signature(captures, "h8_zero_copy", "zero_copy_reads", kernel=True)
    assert status == signatures.PRESENT and "134.2 MB" in txt, txt
    status, txt = _signature(captures, "h8_zero_copy_fixed", "zero_copy_reads", kernel=True)
    assert status == signatures.ABSENT and "0.0 MB" in txt, txt


def test_engine_names_zero_copy_only_without_the_upload(captures):
    assert analyze([captures.case_dir("h8_zero_copy")]).mechanism == "zero_copy_reads"
    assert analyze([captures.case_dir("h8_zero_copy_fixed")]).mechanism != "zero_copy_reads"


# ----------------------------------------------------------------------------- managed memory
def test_reader_names_unified_memory_migrations(captures):
    tl = load_paths([captures.path("h8_managed_touch", "nsys.sqlite")]).timelines[0]
    kinds = tl.copies.groupby("kind")["bytes"].sum().to_dict()
    assert kinds["UVM_HtoD"] == 13 * 64 * MIB and kinds["UVM_DtoH"] >= 12 * 64 * MIB
    assert "unknown" not in kinds


def test_managed_migrations_are_material_every_step_and_absent_without_managed_memory(captures):
    a = run(load_paths([captures.case_dir("h8_managed_touch")]))
    lo, hi = a.triage.window
    m = migrations(a.timeline.copies, lo, hi)
    assert m.htod_bytes == 10 * 64 * MIB and m.dtoh_bytes == 10 * 64 * MIB  # both ways, every one of 10 steps
    assert material(m, 10, a.triage.summary.busy_ns)
    assert (a.diagnosis.bound, a.diagnosis.mechanism) == ("transfer", "managed_migration")
    assert "host_work" in [f.mechanism for f in a.diagnosis.secondary]  # the CPU pass, what the faults look like
    b = run(load_paths([captures.case_dir("h8_zero_copy")]))
    none = migrations(b.timeline.copies, *b.triage.window)
    assert none.bytes == 0 and not material(none, 10, b.triage.summary.busy_ns)


def test_managed_signature_present_with_migrations_absent_without(captures):
    status, txt = _signature(captures, "h8_managed_touch", "managed_migration")
    assert status == signatures.PRESENT and "134.2 MB" in txt, txt
    status, txt = _signature(captures, "h8_zero_copy", "managed_migration")
    assert status == signatures.ABSENT and "no unified-memory migration" in txt, txt


# ----------------------------------------------------------------------------- the legacy default stream
def test_overlapping_pairs():
    assert overlapping_pairs(np.array([0.0, 10, 20]), np.array([10.0, 20, 30])) == 0  # back to back
    assert overlapping_pairs(np.array([0.0, 5, 6]), np.array([10.0, 8, 7])) == 3
    assert overlapping_pairs(np.array([0.0, 0.0]), np.array([0.0, 5.0])) == 0  # an empty interval overlaps nothing
    assert overlapping_pairs(np.array([]), np.array([])) == 0


@pytest.mark.parametrize("case,expect", [("h8_legacy_stream", True), ("h8_legacy_stream_fixed", False)])
def test_streams_serialized_only_with_legacy_stream_memsets(captures, case, expect):
    a = run(load_paths([captures.case_dir(case)]))
    assert a.timeline.null_streams == frozenset({7})
    u = stream_use(a.timeline, *a.triage.window)
    assert u.streams == 8
    assert (u.overlaps == 0) == expect and (u.null_ops == 80) == expect  # 8 memsets in each of 10 steps
    assert serialized(u, 10) == expect
    assert (a.diagnosis.mechanism == "default_stream_serialization") == expect


def test_default_stream_signature_present_serialized_absent_overlapping(captures):
    status, txt = _signature(captures, "h8_legacy_stream", "default_stream_serialization")
    assert status == signatures.PRESENT and "80 operations on the legacy default stream" in txt, txt
    status, txt = _signature(captures, "h8_legacy_stream_fixed", "default_stream_serialization")
    assert status == signatures.ABSENT and "run concurrently" in txt, txt
