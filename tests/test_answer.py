"""The Diagnosis model and its published schema."""
from __future__ import annotations

from kernel_profiler.answer import BOUNDS, MECHANISMS, json_schema

ISSUE_BOUNDS = {"host", "transfer", "memory", "compute", "latency", "near_peak", "comms", "inconclusive"}
ISSUE_MECHANISMS = {
    "launch_overhead", "host_sync", "host_work", "startup_dominated", "pageable_transfer", "transfer_volume",
    "uncoalesced_global", "shared_bank_conflict", "local_memory_spill", "low_parallelism", "occupancy_limit",
    "atomic_contention", "warp_divergence", "no_tensor_cores", "excess_dram_traffic", "instruction_bound",
    "near_peak", "rank_imbalance", "thermal_throttle", "comms_wait",
    "allocator_churn",  # issue 9: GPU idle inside cudaMalloc/cudaFree is not the host's own computation
}


def test_identifiers_are_the_published_ones():
    assert set(BOUNDS) == ISSUE_BOUNDS and set(MECHANISMS) == ISSUE_MECHANISMS


def test_schema_puts_bound_and_mechanism_at_the_top_level():
    s = json_schema()
    assert {"bound", "mechanism", "bottleneck", "evidence", "explanation", "fix", "confidence"} <= set(s["properties"])
    assert set(s["required"]) >= {"bound", "bottleneck", "evidence", "explanation", "confidence", "primary"}
