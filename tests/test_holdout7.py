"""Holdout-7 (blind set 8): programs nobody tuned on, suite/holdout7.toml, captured on the H200 (2026-12-01) after
their ground truth was committed (819e684, authored and landed 05:55:20 UTC, before the first device call at
05:56). The captures are checked against their sources first (the planted cause is in the data: SASS, sectors per
request, waves and active cycles, threads per instruction, runtime calls, kernel times of the fixed twins), then
the evidence engine is asserted against the ground truth as written. Where it does not hold, a strict xfail names
what was measured; it fails the suite the day it starts to hold, so the record gets updated. The engine was not
changed for these cases."""
from __future__ import annotations

import sqlite3
import tomllib
from pathlib import Path

import pytest

from holdout_checks import (assert_as_written, assert_every_case_captured, assert_fix_moved, capture_text, kernel_ns,
                            ncu_metric, nsys_db, param, runtime_calls)

CASES = {c["name"]: c for c in
         tomllib.loads((Path(__file__).parent.parent / "suite" / "holdout7.toml").read_text())["case"]}
TRUTH = [n for n, c in CASES.items() if "mechanism" in c]
FIXES = [n for n, c in CASES.items() if c.get("fix_of")]
# How much faster each fixed twin's kernel must be: the tail fix can at best halve a 2-wave kernel.
SPEEDUP = {"h7_aos_field_fixed": 2.0, "h7_trip_divergence_fixed": 2.0, "h7_tail_wave_fixed": 1.5}

# Measured on the first run of the unchanged engine over these captures (2026-12-01).
MISSES: dict[str, str] = {
    "h7_aos_field_fixed":
        "engine says memory with no mechanism: the SoA stream runs at 63.4% of DRAM (169.4 us for 517 MB, 1.58x its "
        "0.107 ms floor), not within 20%; the ground truth's near_peak does not hold on the hardware either (a short "
        "kernel of scalar 4-byte loads); the planted cause is gone (4 sectors per request, 3.3x faster)",
    "h7_tail_wave":
        "engine says latency with no mechanism: SM throughput 44.7% and DRAM 0% leave it without a named cause; the "
        "capture shows the wave quantization (133 one-block-per-SM blocks on 132 SMs, launch__waves_per_multiprocessor "
        "1.01, sm__cycles_active.avg 50.4% of elapsed while issue is 88.7% of active cycles; the 16-way split runs "
        "1.78x faster)",
    "h7_py_permute_copy":
        "engine says compute/instruction_bound on the top kernel (the permute copy: 357 us, issue 75.6%, DRAM 30.2%): "
        "a true reading of that kernel, but the copy itself is the waste -- the norm over S could read the original "
        "layout once (268 MB) instead of copy + read (~790 MB per iteration); the copy is 82.7% of the steady GPU time",
}
FIX_MISSES: dict[str, str] = {}



def test_every_case_was_captured():
    assert_every_case_captured(CASES)


@pytest.mark.parametrize("fixed", FIXES)
def test_fixed_twin_runs_faster(captures, fixed):
    """The planted cause costs time: each fixed twin's kernel (ncu duration) is faster by at least SPEEDUP."""
    assert kernel_ns(captures, fixed) * SPEEDUP[fixed] < kernel_ns(captures, CASES[fixed]["fix_of"])


def test_aos_reads_one_field_of_each_sector(captures):
    assert "LDG.E.CONSTANT" in capture_text("h7_aos_field", "sass.txt")
    assert "+0x1c]" in capture_text("h7_aos_field", "sass.txt")  # the charge field, 28 bytes into the struct
    per_req = {c: ncu_metric(captures, c, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
               / ncu_metric(captures, c, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
               for c in ("h7_aos_field", "h7_aos_field_fixed")}
    assert per_req == {"h7_aos_field": 32.0, "h7_aos_field_fixed": 4.0}
    assert ncu_metric(captures, "h7_aos_field", "dram__bytes_read.sum") > 2e9  # the whole 2 GiB of particles


def test_tail_wave_runs_one_block_alone(captures):
    assert ncu_metric(captures, "h7_tail_wave", "launch__grid_size") == 133
    assert ncu_metric(captures, "h7_tail_wave", "launch__occupancy_limit_shared_mem") == 1
    assert 1.0 < ncu_metric(captures, "h7_tail_wave", "launch__waves_per_multiprocessor") < 1.02
    active = {c: ncu_metric(captures, c, "sm__cycles_active.avg") / ncu_metric(captures, c, "sm__cycles_elapsed.avg")
              for c in ("h7_tail_wave", "h7_tail_wave_fixed")}
    assert active["h7_tail_wave"] < 0.55 and active["h7_tail_wave_fixed"] > 0.9


def test_trip_counts_diverge_within_warps(captures):
    assert ncu_metric(captures, "h7_trip_divergence", "smsp__thread_inst_executed_per_inst_executed.ratio") < 5
    assert ncu_metric(captures, "h7_trip_divergence_fixed", "smsp__thread_inst_executed_per_inst_executed.ratio") == 32
    assert (ncu_metric(captures, "h7_trip_divergence", "smsp__inst_executed.sum")
            > 5 * ncu_metric(captures, "h7_trip_divergence_fixed", "smsp__inst_executed.sum"))


def test_memsets_per_step(captures):
    db = nsys_db(captures, "h7_memset_many")
    assert runtime_calls(db, "cudaMemsetAsync%") == 4096 * 12  # 2 warm-up + 10 measured steps
    n, = db.execute("select count(*) from CUPTI_ACTIVITY_KIND_MEMSET").fetchone()
    assert n == 4096 * 12


def test_empty_cache_reallocates_every_step(captures):
    db = nsys_db(captures, "h7_py_empty_cache")
    assert runtime_calls(db, "cudaMalloc%") >= 4 * 13 and runtime_calls(db, "cudaFree%") >= 4 * 13


def test_compiled_gate_is_one_tiny_kernel_per_call(captures):
    db = nsys_db(captures, "h7_py_compile_tiny")
    n, med = db.execute("select count(*), max(end - start) from CUPTI_ACTIVITY_KIND_KERNEL k join StringIds s "
                        "on s.id = k.shortName where s.value like 'triton_%'").fetchone()
    assert n == 5000 and med < 20_000  # every launch under 20 us


def test_permute_copy_after_one_pageable_upload(captures):
    db = nsys_db(captures, "h7_py_permute_copy")
    (kind, nbytes), = db.execute("select srcKind, bytes from CUPTI_ACTIVITY_KIND_MEMCPY where copyKind = 1").fetchall()
    assert (kind, nbytes) == (0, 268435456)  # pageable host -> device, once
    n, = db.execute("select count(*) from CUPTI_ACTIVITY_KIND_KERNEL k join StringIds s on s.id = k.demangledName "
                    "where s.value like '%direct_copy_kernel_cuda%'").fetchone()
    assert n == 100


@pytest.mark.parametrize("name", [param(n, MISSES) for n in TRUTH])
def test_holdout7_as_written(captures, name):
    assert_as_written(captures, name, CASES[name])


@pytest.mark.parametrize("name", [param(n, FIX_MISSES) for n in FIXES])
def test_fix_removes_the_planted_mechanism(captures, name):
    assert_fix_moved(captures, name, CASES[name])
