"""Reader for ``ncu --csv --page raw`` and ``ncu --csv --page details`` output.

* raw page: wide table, row 1 metric names, row 2 units, then one row per
  profiled launch. Metric names are ncu's raw names, identical to the
  ``.ncu-rep`` ones (including section-prefixed ones such as
  ``SM_A.TriageCompute...``).
* details page: long table, one row per (launch, section, metric) with display
  names and display units ("Duration", "ms"), plus rule rows. Display names are
  mapped to raw metric names through ``DETAILS_TO_RAW`` (every entry checked
  against the .ncu-rep of the same capture); a display metric without an entry
  is kept under the key ``"<Section Name>: <Metric Name>"`` (the section is
  needed: "Memory Throughput" is a % in Speed Of Light and a byte/s in Memory
  Workload Analysis).

Both pages give KernelProfile objects with values in base units (the unit
conversion is :func:`kernel_profiler.artifacts.units.to_base`, shared with the
.ncu-rep reader). Values are parsed tolerantly: thousands separators
("587,778"), "n/a" and empty cells (left out of ``metrics``), text values
(left out of ``metrics``; device name, grid and block go to their fields).
Lines before the header (``==PROF==``/``==WARNING==`` lines, program stdout)
and ``==...==`` lines after it are skipped.

``ncu --csv --metrics a,b`` (no --page) prints the details page with the raw metric
names themselves in "Metric Name" (section "Command line profiler metrics", and the
sections of app-range exports): a name that already is a raw metric name is kept as is.
App-range (and NVTX-filtered) exports add NVTX columns before "Kernel Name" (header
"thread Domain:Push/Pop_Range:..." / "Id:Domain:Start/Stop_Range:..."); their "Kernel
Name" is just "range", so the profile is named after the NVTX range. The "CC" column
(compute capability) gives the device when the file names none (``device_label``).

Rules (details page only) use the same dict keys as the .ncu-rep reader:
``id, name (None), section, type, title (None), message, speedup_type, speedup``.
"""
from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Optional

from kernel_profiler.artifacts.tables import KernelProfile, read_artifact_bytes
from kernel_profiler.artifacts.units import to_base
from kernel_profiler.errors import ArtifactError, EmptyCapture, UnknownFormat

_HEADER_START = '"ID","Process ID"'
_FIXED = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
          "Block Size", "Grid Size", "Device", "CC"]

# (section display name, metric display name) -> raw metric name (ncu 2025.3, sm_90).
DETAILS_TO_RAW: dict[tuple[str, str], str] = {
    ("GPU Speed Of Light Throughput", "Duration"): "gpu__time_duration.sum",
    ("GPU Speed Of Light Throughput", "DRAM Frequency"): "dram__cycles_elapsed.avg.per_second",
    ("GPU Speed Of Light Throughput", "SM Frequency"): "gpc__cycles_elapsed.avg.per_second",
    ("GPU Speed Of Light Throughput", "Elapsed Cycles"): "gpc__cycles_elapsed.max",
    ("GPU Speed Of Light Throughput", "Memory Throughput"): "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    ("GPU Speed Of Light Throughput", "DRAM Throughput"): "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    ("GPU Speed Of Light Throughput", "L1/TEX Cache Throughput"): "l1tex__throughput.avg.pct_of_peak_sustained_active",
    ("GPU Speed Of Light Throughput", "L2 Cache Throughput"): "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    ("GPU Speed Of Light Throughput", "SM Active Cycles"): "sm__cycles_active.avg",
    ("GPU Speed Of Light Throughput", "Compute (SM) Throughput"): "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    ("Memory Workload Analysis", "Memory Throughput"): "dram__bytes.sum.per_second",
    ("Memory Workload Analysis", "Mem Busy"): "gpu__compute_memory_access_throughput.avg.pct_of_peak_sustained_elapsed",
    ("Memory Workload Analysis", "Max Bandwidth"): "gpu__compute_memory_request_throughput.avg.pct_of_peak_sustained_elapsed",
    ("Memory Workload Analysis", "Mem Pipes Busy"): "sm__memory_throughput.avg.pct_of_peak_sustained_elapsed",
    ("Memory Workload Analysis", "L1/TEX Hit Rate"): "l1tex__t_sector_hit_rate.pct",
    ("Memory Workload Analysis", "L2 Hit Rate"): "lts__t_sector_hit_rate.pct",
    ("Memory Workload Analysis", "L2 Persisting Size"): "launch__persisting_l2_cache_size",
    ("Memory Workload Analysis", "Local Memory Spilling Requests"): "derived__local_spilling_requests",
    ("Memory Workload Analysis", "Local Memory Spilling Request Overhead"): "derived__local_spilling_requests_pct",
    ("Compute Workload Analysis", "Executed Ipc Active"): "sm__inst_executed.avg.per_cycle_active",
    ("Compute Workload Analysis", "Executed Ipc Elapsed"): "sm__inst_executed.avg.per_cycle_elapsed",
    ("Compute Workload Analysis", "Issued Ipc Active"): "sm__inst_issued.avg.per_cycle_active",
    ("Launch Statistics", "Block Size"): "launch__block_size",
    ("Launch Statistics", "Grid Size"): "launch__grid_size",
    ("Launch Statistics", "Registers Per Thread"): "launch__registers_per_thread",
    ("Launch Statistics", "Shared Memory Configuration Size"): "launch__shared_mem_config_size",
    ("Launch Statistics", "Dynamic Shared Memory Per Block"): "launch__shared_mem_per_block_dynamic",
    ("Launch Statistics", "Static Shared Memory Per Block"): "launch__shared_mem_per_block_static",
    ("Launch Statistics", "Driver Shared Memory Per Block"): "launch__shared_mem_per_block_driver",
    ("Launch Statistics", "Threads"): "launch__thread_count",
    ("Launch Statistics", "Waves Per SM"): "launch__waves_per_multiprocessor",
    ("Launch Statistics", "# SMs"): "launch__sm_count",
    ("Launch Statistics", "# TPCs"): "launch__tpc_count",
    ("Launch Statistics", "Stack Size"): "launch__stack_size",
    ("Launch Statistics", "Cluster Size"): "launch__cluster_size",
    ("Occupancy", "Achieved Occupancy"): "sm__warps_active.avg.pct_of_peak_sustained_active",
    ("Occupancy", "Achieved Active Warps Per SM"): "sm__warps_active.avg.per_cycle_active",
    ("Occupancy", "Theoretical Occupancy"): "sm__maximum_warps_per_active_cycle_pct",
    ("Occupancy", "Theoretical Active Warps per SM"): "sm__maximum_warps_avg_per_active_cycle",
    ("Occupancy", "Block Limit Registers"): "launch__occupancy_limit_registers",
    ("Occupancy", "Block Limit Shared Mem"): "launch__occupancy_limit_shared_mem",
    ("Occupancy", "Block Limit Warps"): "launch__occupancy_limit_warps",
    ("Occupancy", "Block Limit SM"): "launch__occupancy_limit_blocks",
    ("Occupancy", "Block Limit Barriers"): "launch__occupancy_limit_barriers",
    ("Warp State Statistics", "Avg. Active Threads Per Warp"): "smsp__thread_inst_executed_per_inst_executed.ratio",
    ("Warp State Statistics", "Avg. Not Predicated Off Threads Per Warp"): "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio",
    ("Warp State Statistics", "Warp Cycles Per Issued Instruction"): "smsp__average_warp_latency_per_inst_issued.ratio",
    ("Instruction Statistics", "Executed Instructions"): "smsp__inst_executed.sum",
    ("Instruction Statistics", "Issued Instructions"): "smsp__inst_issued.sum",
    ("Instruction Statistics", "Avg. Executed Instructions Per Scheduler"): "smsp__inst_executed.avg",
    ("Instruction Statistics", "Avg. Issued Instructions Per Scheduler"): "smsp__inst_issued.avg",
    ("Scheduler Statistics", "Active Warps Per Scheduler"): "smsp__warps_active.avg.per_cycle_active",
    ("Scheduler Statistics", "Eligible Warps Per Scheduler"): "smsp__warps_eligible.avg.per_cycle_active",
    ("Scheduler Statistics", "Issued Warp Per Scheduler"): "smsp__issue_active.avg.per_cycle_active",
    ("Scheduler Statistics", "No Eligible"): "smsp__issue_inst0.avg.pct_of_peak_sustained_active",
    ("Scheduler Statistics", "One or More Eligible"): "smsp__issue_active.avg.pct_of_peak_sustained_active",
    ("Source Counters", "Branch Instructions"): "smsp__inst_executed_op_branch.sum",
    ("Source Counters", "Branch Efficiency"): "smsp__sass_average_branch_targets_threads_uniform.pct",
    ("Source Counters", "Avg. Divergent Branches"): "smsp__sass_branch_targets_threads_divergent.avg",
    ("GPU and Memory Workload Distribution", "Average DRAM Active Cycles"): "dram__cycles_active.avg",
    ("GPU and Memory Workload Distribution", "Average L2 Active Cycles"): "lts__cycles_active.avg",
    ("GPU and Memory Workload Distribution", "Average SM Active Cycles"): "sm__cycles_active.avg",
    ("GPU and Memory Workload Distribution", "Average SMSP Active Cycles"): "smsp__cycles_active.avg",
    ("GPU and Memory Workload Distribution", "Total DRAM Elapsed Cycles"): "dram__cycles_elapsed.sum",
    ("GPU and Memory Workload Distribution", "Total L2 Elapsed Cycles"): "lts__cycles_elapsed.sum",
    ("GPU and Memory Workload Distribution", "Total SM Elapsed Cycles"): "sm__cycles_elapsed.sum",
    ("GPU and Memory Workload Distribution", "Total SMSP Elapsed Cycles"): "smsp__cycles_elapsed.sum",
}

_DIMS = re.compile(r"^\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)$")
# A raw ncu metric name: unit__counter[.rollup[.submetric]], e.g. "sm__throughput.avg.pct_of_peak_sustained_elapsed".
_RAW_METRIC = re.compile(r"^[a-z0-9]+(?:_[a-z0-9]+)*__[a-z0-9_]+(?:\.[a-z0-9_]+)*$")
_NVTX_COLUMN = re.compile(r"(Push/Pop|Start/Stop)_Range", re.IGNORECASE)
_CC = re.compile(r"^\s*(\d+)\.(\d+)\s*$")
# Compute capability -> architecture (NVIDIA's CUDA GPU list).
_ARCH = {"7.0": "Volta", "7.2": "Volta", "7.5": "Turing", "8.0": "Ampere", "8.6": "Ampere", "8.7": "Ampere",
         "8.9": "Ada", "9.0": "Hopper", "10.0": "Blackwell", "10.1": "Blackwell", "10.3": "Blackwell",
         "11.0": "Blackwell", "12.0": "Blackwell", "12.1": "Blackwell"}


def compute_capability(text: Optional[str]) -> Optional[str]:
    """"8.6" -> "8.6"; anything else -> None."""
    m = _CC.match(text or "")
    return f"{int(m.group(1))}.{int(m.group(2))}" if m else None


def device_label(cc: Optional[str]) -> Optional[str]:
    """What a file that names no GPU says about it: "Ampere GPU (compute capability 8.6)"."""
    if cc is None:
        return None
    arch = _ARCH.get(cc)
    return f"{arch + ' ' if arch else ''}GPU (compute capability {cc})"


def _nvtx_range(row_get, header: list[str]) -> Optional[str]:
    """The NVTX range named in an app-range export's NVTX columns ("0:<default domain>:NAME:..." -> NAME)."""
    for h in header:
        if not _NVTX_COLUMN.search(h):
            continue
        cell = (row_get(h) or "").strip().strip('"').strip()
        if not cell:
            continue
        parts = cell.split(":")
        name = parts[2] if len(parts) > 2 else cell
        if name and name.lower() != "none":
            return name
    return None


def parse_number(text: Optional[str]) -> Optional[float]:
    """"587,778" -> 587778.0; "1.71" -> 1.71; "n/a", "", text -> None."""
    if text is None:
        return None
    t = text.strip().replace(",", "")
    if not t or t.lower() in ("n/a", "na", "nan", "-"):
        return None
    try:
        return float(t)
    except ValueError:
        return None


def _dims(text: Optional[str]) -> Optional[tuple[int, int, int]]:
    m = _DIMS.match((text or "").strip())
    return tuple(int(x) for x in m.groups()) if m else None  # type: ignore[return-value]


def _table(text: str) -> Optional[list[list[str]]]:
    """CSV rows from the header on; None if there is no ncu CSV header."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith(_HEADER_START)), None)
    if start is None:
        return None
    body = [ln for ln in lines[start:] if ln.startswith('"')]
    return list(csv.reader(io.StringIO("\n".join(body))))


def _kind(header: list[str]) -> Optional[str]:
    if "Metric Name" in header and "Metric Value" in header:
        return "details"
    if "Kernel Name" in header and len(header) > len(_FIXED):
        return "raw"
    return None


def sniff(path: Path, head: bytes) -> bool:
    if b"\x00" in head:
        return False
    text = head.decode("utf-8", "replace")
    i = text.find(_HEADER_START)
    return i >= 0 and '"Kernel Name"' in text[i:i + 4096]


def _read(path: Path) -> tuple[str, list[list[str]]]:
    data = read_artifact_bytes(path, "ncu CSV")
    text = data.decode("utf-8", "replace")
    if "ERR_NVGPUCTRPERM" in text:
        from kernel_profiler.errors import CounterPermission
        raise CounterPermission(str(path))
    rows = _table(text)
    if rows is None or not rows:
        if "No kernels were profiled" in text:
            raise EmptyCapture(path, "ncu profiled no kernel (==WARNING== No kernels were profiled); check the -k filter")
        raise UnknownFormat(path, "not ncu --csv output (no \"ID\",\"Process ID\",... header)")
    kind = _kind(rows[0])
    if kind is None:
        raise UnknownFormat(path, "ncu CSV header is neither --page raw nor --page details")
    return kind, rows


def _check_width(path: Path, rows: list[list[str]], width: int) -> None:
    for n, r in enumerate(rows[1:], start=2):
        if len(r) != width:
            raise ArtifactError(path, f"ncu CSV row {n} has {len(r)} fields, header has {width} (truncated or corrupt file)")


def _load_raw(path: Path, rows: list[list[str]]) -> list[KernelProfile]:
    header = rows[0]
    if len(rows) < 2:
        raise ArtifactError(path, "ncu raw CSV has a header but no units row (truncated)")
    _check_width(path, rows, len(header))
    units_row = rows[1]
    launches = rows[2:]
    if not launches:
        raise EmptyCapture(path, "ncu raw CSV lists no profiled kernel")
    col = {h: i for i, h in enumerate(header)}
    out = []
    for n, r in enumerate(launches):
        metrics: dict[str, float] = {}
        units: dict[str, str] = {}
        for i, name in enumerate(header):
            if name in _FIXED:
                continue
            v = parse_number(r[i])
            if v is None:
                continue
            metrics[name], units[name] = to_base(v, units_row[i])
        get = lambda k: r[col[k]] if k in col else None  # noqa: E731
        lid = parse_number(get("ID"))
        grid = _dims(get("Grid Size"))
        block = _dims(get("Block Size"))
        if grid is None and all(f"launch__grid_dim_{c}" in metrics for c in "xyz"):
            grid = tuple(int(metrics[f"launch__grid_dim_{c}"]) for c in "xyz")  # type: ignore[assignment]
        if block is None and all(f"launch__block_dim_{c}" in metrics for c in "xyz"):
            block = tuple(int(metrics[f"launch__block_dim_{c}"]) for c in "xyz")  # type: ignore[assignment]
        cc = compute_capability(get("CC"))
        dev = get("device__attribute_display_name") or device_label(cc)
        out.append(KernelProfile(
            source=str(path), name=get("Kernel Name") or "?", launch_id=int(lid) if lid is not None else n,
            metrics=metrics, units=units, rules=[], device=dev, grid=grid, block=block,
            mangled=(get("launch__kernel_name") if (get("launch__kernel_name") or "").startswith("_Z") else None),
            compute_capability=cc,
        ))
    return out


def _load_details(path: Path, rows: list[list[str]]) -> list[KernelProfile]:
    header = rows[0]
    width = len(header)
    col = {h: i for i, h in enumerate(header)}
    need = col["Metric Value"] + 1  # metric rows stop after "Metric Value" (rule columns left off)
    for n, r in enumerate(rows[1:], start=2):
        if not need <= len(r) <= width:
            raise ArtifactError(path, f"ncu CSV row {n} has {len(r)} fields, header has {width} (truncated or corrupt file)")
    profiles: dict[str, KernelProfile] = {}
    for r in rows[1:]:
        get = lambda k: (r[col[k]] if k in col and col[k] < len(r) else "")  # noqa: E731
        key = get("ID")
        p = profiles.get(key)
        if p is None:
            lid = parse_number(key)
            name = get("Kernel Name") or "?"
            nvtx = _nvtx_range(get, header)
            if nvtx and name in ("range", "?"):
                name = f"range {nvtx}"
            cc = compute_capability(get("CC"))
            p = profiles[key] = KernelProfile(
                source=str(path), name=name,
                launch_id=int(lid) if lid is not None else len(profiles), metrics={}, units={},
                grid=_dims(get("Grid Size")), block=_dims(get("Block Size")),
                device=device_label(cc), compute_capability=cc)
        section, mname = get("Section Name"), get("Metric Name")
        if get("Rule Name"):
            p.rules.append({
                "id": get("Rule Name"), "name": None, "section": section, "type": get("Rule Type"),
                "title": None, "message": get("Rule Description"),
                "speedup_type": get("Estimated Speedup Type") or None,
                "speedup": parse_number(get("Estimated Speedup")),
            })
            continue
        if not mname:
            continue
        v = parse_number(get("Metric Value"))
        if v is None:
            continue
        name = DETAILS_TO_RAW.get((section, mname)) or (mname if _RAW_METRIC.match(mname) else f"{section}: {mname}")
        p.metrics[name], p.units[name] = to_base(v, get("Metric Unit"))
    if not profiles:
        raise EmptyCapture(path, "ncu details CSV lists no profiled kernel")
    return list(profiles.values())


def load(path: Path) -> list[KernelProfile]:
    path = Path(path)
    kind, rows = _read(path)
    return _load_raw(path, rows) if kind == "raw" else _load_details(path, rows)
