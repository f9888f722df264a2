"""Holdout-8 (blind set 14): programs nobody tuned on, suite/holdout8.toml, captured on the H200 (2026-12-01) after
their ground truth was committed (f0eb49b, authored and landed 09:42:53 UTC, before the first device call at
09:43). The captures are checked against their sources first (the planted cause is in the data: PCIe reads of
mapped memory, unified-memory migrations, memsets on the legacy stream, host callbacks, the unaligned GEMM kernel,
the score-matrix passes, the per-row syncs), then the evidence engine is asserted against the ground truth as
written. Where it does not hold, a strict xfail names what was measured; it fails the suite the day it starts to
hold, so the record gets updated. The engine was not changed for these cases."""
from __future__ import annotations

import sqlite3
import tomllib
from pathlib import Path

import pytest

from holdout_checks import (assert_as_written, assert_every_case_captured, assert_fix_moved, kernel_ns, ncu_metric,
                            nsys_db, param, runtime_calls)

CASES = {c["name"]: c for c in
         tomllib.loads((Path(__file__).parent.parent / "suite" / "holdout8.toml").read_text())["case"]}
TRUTH = [n for n, c in CASES.items() if "mechanism" in c]
FIXES = [n for n, c in CASES.items() if c.get("fix_of")]
# How much faster each fixed twin's kernel must be (ncu duration). The legacy-stream fix does not change the kernel
# (the step gets shorter because kernels overlap): test_streams_overlap_only_without_the_legacy_stream checks it.
SPEEDUP = {"h8_zero_copy_fixed": 10.0, "h8_py_bf16_odd_k_fixed": 3.0}

# Measured on the first run of the unchanged engine over these captures (2026-12-01).
MISSES: dict[str, str] = {
    # Updated 2026-12-01 (mech): the catalog now has ids for the three real causes, so the engine names them; the
    # truth as written keeps the nearest ids of its day, so these stay misses, now for the id alone.
    "h8_zero_copy":
        "engine says transfer/zero_copy_reads (truth as written: transfer/transfer_volume, the nearest id then): "
        "`scale_table` reads 134.2 MB from host memory per launch (4,194,304 L2 read-miss sectors to the sysmem "
        "aperture, 100% of its L2 read misses; pcie__read_bytes 53.7 GB/s; DRAM read 8.7 KB), no memcpy in the "
        "window; the device-resident twin runs 30.8x faster. Before the new id: latency with no mechanism",
    "h8_managed_touch":
        "engine says transfer/managed_migration (truth as written: transfer/pageable_transfer, the nearest id then): "
        "134.2 MB of unified-memory migrations per step (64 MiB each way in each of the 10 steady steps), 102 ms of "
        "migrations = 58% of the GPU's busy time; host_work (97% of the idle time) is kept as secondary, the CPU pass "
        "that faults the pages back. No pageable copy exists in the window. Before the new id: host/host_work",
    "h8_legacy_stream":
        "engine says latency/default_stream_serialization (truth as written: latency/low_parallelism, the nearest id "
        "then): the kernels of 8 streams never overlap in the steady window, with 80 operations on the legacy default "
        "stream (id 7) between them; low_parallelism (16 blocks on 132 SMs) and the false-positive atomic_contention "
        "stay secondary. Before the new id: latency/atomic_contention",
    "h8_py_bf16_odd_k":
        "engine says memory/uncoalesced_global on cutlass_75_tensorop_bf16_s1688gemm..._align1 (17 sectors per "
        "request, 3.76 useful bytes per sector from 2-byte LDG.E.LTC128B.U16 loads; 7.557 ms, 146 TFLOP/s, 5.4x the "
        "padded twin): the measurement contradicts instruction_bound as written (issue active 20.6%, tensor pipe "
        "30.7%) -- the element-wise operand loads of the unaligned fallback are the limit",
    "h8_py_naive_attention":
        "engine says compute/instruction_bound on softmax_warp_forward alone (1.467 ms, issue 62.6%, DRAM 30%): true "
        "of that kernel, but the program's waste is the score matrix itself -- softmax, masked_fill (+ its 1.07 GB "
        "clone) and the scale are ~4 ms of the 4.6 ms step, all passes over a tensor flash attention never writes",
    "h8_py_mask_sync":
        "engine says host/launch_overhead (GPU busy 17.2%, 82% of idle time launch overhead, median kernel 2.2 us): "
        "the bound holds; the per-row syncs are there (832 cudaStreamSynchronize + 832 4-byte D2H copies) but each "
        "row also issues 8 launches of ~12.7 us API time, more host time than the 6.7 us sync waits",
}
FIX_MISSES: dict[str, str] = {}



def _kernel_median_ns(db: sqlite3.Connection, like: str) -> float:
    ds = sorted(d for d, in db.execute("select k.end - k.start from CUPTI_ACTIVITY_KIND_KERNEL k join StringIds s "
                                       "on s.id = k.demangledName where s.value like ?", (like,)))
    return ds[len(ds) // 2]


def _gpu_span_ns(db: sqlite3.Connection) -> float:
    """First kernel start to last kernel end (the NVTX step ranges are host-side: they end before the GPU work)."""
    span, = db.execute("select max(end) - min(start) from CUPTI_ACTIVITY_KIND_KERNEL").fetchone()
    return span


def test_every_case_was_captured():
    assert_every_case_captured(CASES)


@pytest.mark.parametrize("fixed", sorted(SPEEDUP))
def test_fixed_twin_runs_faster(captures, fixed):
    """The planted cause costs time: each fixed twin's kernel (ncu duration) is faster by at least SPEEDUP."""
    assert kernel_ns(captures, fixed) * SPEEDUP[fixed] < kernel_ns(captures, CASES[fixed]["fix_of"])


def test_zero_copy_reads_host_memory_over_pcie(captures):
    sysmem = {c: ncu_metric(captures, c, "lts__t_sectors_srcunit_tex_aperture_sysmem_op_read_lookup_miss.sum")
              for c in ("h8_zero_copy", "h8_zero_copy_fixed")}
    assert sysmem["h8_zero_copy"] == 4 * (1 << 20)  # 128 MB of 32-byte sectors from host memory per launch
    assert sysmem["h8_zero_copy_fixed"] < 1000
    assert ncu_metric(captures, "h8_zero_copy", "dram__bytes_read.sum") < 1e6  # the table never touches HBM
    assert ncu_metric(captures, "h8_zero_copy_fixed", "dram__bytes_read.sum") > 1.3e8
    db = nsys_db(captures, "h8_zero_copy")
    n, = db.execute("select count(*) from CUPTI_ACTIVITY_KIND_MEMCPY where copyKind = 1").fetchone()
    assert n == 0  # no host-to-device copy: the transfer hides inside the kernel


def test_managed_records_migrate_every_step(captures):
    db = nsys_db(captures, "h8_managed_touch")
    rows = {(kind, src): (n, nbytes) for kind, src, n, nbytes in db.execute(
        "select copyKind, srcKind, count(*), sum(bytes) from CUPTI_ACTIVITY_KIND_MEMCPY group by 1, 2")}
    assert rows[(11, 7)][1] == 13 * (64 << 20)  # unified-memory HtoD: the 64 MB every step (3 warm-up + 10)
    assert rows[(12, 7)][1] >= 12 * (64 << 20)  # and back to the host on the CPU's writes
    # The timeline's kernel pays the faults; ncu's replay sees the pages resident.
    assert _kernel_median_ns(db, "accumulate%") > 50 * kernel_ns(captures, "h8_managed_touch")


def test_streams_overlap_only_without_the_legacy_stream(captures):
    overlap, legacy, step = {}, {}, {}
    for c in ("h8_legacy_stream", "h8_legacy_stream_fixed"):
        db = nsys_db(captures, c)
        overlap[c], = db.execute("select count(*) from CUPTI_ACTIVITY_KIND_KERNEL a join CUPTI_ACTIVITY_KIND_KERNEL b "
                                 "on a.start < b.start and b.start < a.end").fetchone()
        legacy[c] = dict(db.execute("select streamId, count(*) from CUPTI_ACTIVITY_KIND_MEMSET group by 1"))
        step[c] = _gpu_span_ns(db)
    assert overlap["h8_legacy_stream"] == 0 and overlap["h8_legacy_stream_fixed"] > 100
    assert legacy["h8_legacy_stream"] == {7: 104}  # every memset on the legacy default stream
    assert len(legacy["h8_legacy_stream_fixed"]) == 8
    assert step["h8_legacy_stream"] > 3 * step["h8_legacy_stream_fixed"]
    assert ncu_metric(captures, "h8_legacy_stream", "launch__grid_size") == 16
    assert (ncu_metric(captures, "h8_legacy_stream", "sm__cycles_active.avg")
            < 0.2 * ncu_metric(captures, "h8_legacy_stream", "sm__cycles_elapsed.avg"))


def test_host_callback_after_every_kernel(captures):
    db = nsys_db(captures, "h8_host_callback")
    assert runtime_calls(db, "cudaLaunchHostFunc%") == 64 * 13
    assert runtime_calls(db, "cudaLaunchKernel%") == 64 * 13 + 1  # + the fill


def test_odd_k_takes_the_unaligned_kernel(captures):
    db = nsys_db(captures, "h8_py_bf16_odd_k")
    names = {s for s, in db.execute("select distinct s.value from CUPTI_ACTIVITY_KIND_KERNEL k join StringIds s "
                                    "on s.id = k.demangledName")}
    assert any("align1" in n for n in names), names
    c = "h8_py_bf16_odd_k"  # element-wise (2-byte) operand loads of the alignment-1 kernel: >10 sectors per request
    assert (ncu_metric(captures, c, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
            > 10 * ncu_metric(captures, c, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"))
    fixed = {s for s, in nsys_db(captures, "h8_py_bf16_odd_k_fixed").execute(
        "select distinct s.value from CUPTI_ACTIVITY_KIND_KERNEL k join StringIds s on s.id = k.shortName")}
    assert any(n.startswith("nvjet_sm90") for n in fixed), fixed
    # One-time: the two 134 MB pageable uploads of the "checkpoint", before the loop.
    ups = db.execute("select srcKind, bytes from CUPTI_ACTIVITY_KIND_MEMCPY where copyKind = 1").fetchall()
    assert sorted(ups) == [(0, 8192 * 8191 * 2), (0, 8191 * 8192 * 2)]


def test_attention_round_trips_the_score_matrix(captures):
    db = nsys_db(captures, "h8_py_naive_attention")
    n, nbytes = db.execute("select count(*), min(bytes) from CUPTI_ACTIVITY_KIND_MEMCPY where copyKind = 8").fetchone()
    assert n == 13 and nbytes == 8 * 16 * 2048 * 2048 * 2  # masked_fill's clone of the 1.07 GB scores, every step
    assert ncu_metric(captures, "h8_py_naive_attention", "dram__bytes_read.sum") > 1e9  # softmax reads the scores


def test_mask_indexing_syncs_every_row(captures):
    db = nsys_db(captures, "h8_py_mask_sync")
    assert runtime_calls(db, "cudaStreamSynchronize%") == 64 * 13
    n, = db.execute("select count(*) from CUPTI_ACTIVITY_KIND_MEMCPY where copyKind = 2 and bytes = 4").fetchone()
    assert n == 64 * 13  # the nonzero count of every row, copied to the host


@pytest.mark.parametrize("name", [param(n, MISSES) for n in TRUTH])
def test_holdout8_as_written(captures, name):
    assert_as_written(captures, name, CASES[name])


@pytest.mark.parametrize("name", [param(n, FIX_MISSES) for n in FIXES])
def test_fix_removes_the_planted_mechanism(captures, name):
    assert_fix_moved(captures, name, CASES[name])
