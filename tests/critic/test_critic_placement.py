"""Mechanisms of where data and work are placed (holdout 8, real H200 captures): a short correct answer naming the
real cause is accepted; one naming a wrong cause for the same capture is rejected with the measurement; the
correct answer on the twin that removed the cause is rejected by the signature.
  - zero_copy_reads: h8_zero_copy (mapped host memory read over PCIe) / h8_zero_copy_fixed (uploaded once);
  - managed_migration: h8_managed_touch (managed records rewritten by the CPU every step) / h8_zero_copy;
  - default_stream_serialization: h8_legacy_stream (memsets on the legacy stream) / h8_legacy_stream_fixed.
"""
from __future__ import annotations

from critic_case import accepted as _accepted, answer, case  # noqa: F401 (the fixture)

from kernel_profiler.catalog import claimed

ZERO_COPY = answer(
    "Transfer-bound inside the kernel: `scale_table` reads its 128 MB table from zero-copy mapped host memory over "
    "PCIe on every launch.",
    ["`scale_table` takes 2.735 ms per launch (ncu gpu__time_duration.sum)",
     "4,194,304 L2 sectors read from sysmem per launch "
     "(lts__t_sectors_srcunit_tex_aperture_sysmem_op_read_lookup_miss.sum), 134.2 MB",
     "DRAM read only 8.7 KB (dram__bytes_read.sum)"],
    "The table is pinned host memory mapped into the device's address space, so every L2 miss on it crosses PCIe at "
    "~49 GB/s instead of HBM's TB/s; no memcpy appears in the timeline because the transfer happens inside the "
    "kernel, on every launch, and the kernel runs far from its DRAM roofline.",
    "Copy the table to device memory once before the loop and read it from HBM: gpu__time_duration.sum should "
    "decrease from 2.735 ms to ~0.1 ms.")
MANAGED = answer(
    "Transfer-bound on unified memory: the managed records migrate between host and device every step because the "
    "CPU rewrites them.",
    ["671.1 MB migrated host-to-device in the 813 ms steady window (nsys unified-memory rows)",
     "GPU busy 21.8% of the steady window"],
    "The CPU writes fault every managed page back to the host, and the accumulate kernel then faults them back to the "
    "device, so each step moves the 64 MB twice on demand at a fraction of the copy bandwidth; the migrations, not the "
    "kernel's arithmetic, set the step time.",
    "Keep the records in a pinned host buffer and copy them once per step with cudaMemcpyAsync (or "
    "cudaMemPrefetchAsync before the launch): timeline.migration_bytes should decrease to ~0.")
LEGACY = answer(
    "Latency-bound: the eight streams are serialized by memsets on the legacy default stream, so each 16-block "
    "`chain_fma` runs alone on a 132-SM GPU.",
    ["no two kernels overlap in the steady window; 80 operations on the legacy default stream between them",
     "`chain_fma` launches 16 blocks on 132 SMs"],
    "cudaMemsetAsync without a stream argument goes to the legacy default stream, which waits for every blocking "
    "stream and blocks them in turn; the independent kernels therefore run one after another, each on 16 of 132 SMs, "
    "so the GPU sits mostly idle instead of running eight kernels side by side.",
    "Issue each memset on the kernel's own stream: the step time should decrease about 6x as the kernels overlap.")


def test_zero_copy_answer_accepted_and_rejected_on_the_uploaded_twin(case):
    v = case("h8_zero_copy").critique(ZERO_COPY)
    assert _accepted(v) and v.mechanism == "zero_copy_reads", v.reasons
    twin = case("h8_zero_copy_fixed").critique(ZERO_COPY)
    assert not twin.checks["signature"] and any("0.0 MB from host memory" in r for r in twin.reasons), twin.reasons


def test_zero_copy_capture_rejects_a_wrong_cause_with_the_grid(case):
    wrong = answer("`scale_table` is latency-bound by too few blocks: the grid leaves SMs idle.",
                   ["`scale_table` takes 2.735 ms per launch (ncu gpu__time_duration.sum)"],
                   "Too few blocks are launched to fill the 132 SMs, so most SMs have nothing to do and the kernel "
                   "runs far from its roofline.",
                   "Launch more blocks: gpu__time_duration.sum should decrease.")
    v = case("h8_zero_copy").critique(wrong)
    assert v.mechanism == "low_parallelism" and not v.checks["signature"], v.reasons
    assert any("grid of 1,056 blocks on 132 SMs" in r for r in v.reasons), v.reasons


def test_managed_answer_accepted_and_rejected_without_managed_memory(case):
    v = case("h8_managed_touch").critique(MANAGED)
    assert _accepted(v) and v.mechanism == "managed_migration", v.reasons
    twin = case("h8_zero_copy").critique(MANAGED)
    assert not twin.checks["signature"] and any("no unified-memory migration" in r for r in twin.reasons), twin.reasons


def test_managed_capture_rejects_pageable_copies_with_the_copy_time(case):
    wrong = answer("Transfer-bound on pageable copies: the records are uploaded from pageable host memory every step.",
                   ["GPU busy 21.8% of the steady window"],
                   "Pageable memory cannot be read by the copy engines directly, so the driver stages each upload "
                   "through a bounce buffer and the copy runs slowly and blocks the host, leaving the GPU idle.",
                   "Pin the host buffer with cudaMallocHost: timeline.host_copy_bandwidth should increase.")
    v = case("h8_managed_touch").critique(wrong)
    assert v.mechanism == "pageable_transfer" and not v.checks["signature"], v.reasons
    assert any("copies take 13% of the steady window" in r for r in v.reasons), v.reasons


def test_legacy_stream_answer_accepted_and_rejected_where_the_streams_overlap(case):
    v = case("h8_legacy_stream").critique(LEGACY)
    assert _accepted(v) and v.mechanism == "default_stream_serialization", v.reasons
    twin = case("h8_legacy_stream_fixed").critique(LEGACY)
    assert not twin.checks["signature"] and any("run concurrently" in r for r in twin.reasons), twin.reasons


def test_legacy_stream_capture_rejects_host_sync_with_the_busy_gpu(case):
    wrong = answer("Host-bound on synchronization: the host synchronizes with the GPU after each kernel.",
                   ["GPU busy 92% of the steady window"],
                   "Each synchronizing call drains the queue, so the GPU waits for the host between kernels.",
                   "Remove the synchronization: timeline.idle_host_sync_ns should decrease.")
    v = case("h8_legacy_stream").critique(wrong)
    assert v.mechanism == "host_sync" and not v.checks["signature"], v.reasons
    assert any("GPU busy 92% of the steady window" in r for r in v.reasons), v.reasons


def test_one_stream_is_the_wrong_way_for_a_serialized_stream_and_the_own_stream_is_not(case):
    one = LEGACY.replace("Issue each memset on the kernel's own stream",
                         "Put all eight kernels on a single stream")
    v = case("h8_legacy_stream").critique(one)
    assert not v.checks["fix"] and any("the wrong way" in r for r in v.reasons), v.reasons
    assert case("h8_legacy_stream").critique(LEGACY).checks["fix"]


def test_the_causes_are_read_from_prose():
    assert "zero_copy_reads" in claimed("the kernel reads its table over PCIe from mapped host memory")
    assert "managed_migration" in claimed("cudaMallocManaged pages migrate back and forth every step")
    assert "default_stream_serialization" in claimed("memsets on the legacy default stream serialize the streams")
    assert not {"zero_copy_reads", "managed_migration", "default_stream_serialization"} & set(
        claimed("each step uploads 256 MiB from pageable host memory at 7 GB/s"))
