"""Kineto traces from other people's machines (tests/data/wild, origin and licence in its README):
read every schema variant, refuse what is not an NVIDIA GPU timeline with the right one-line reason.

Expected values are counted from the raw JSON here with the standard library (an independent reader),
not typed in.
"""
from __future__ import annotations

import gzip
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from kernel_profiler.artifacts import kineto, load_paths
from kernel_profiler.errors import UnsupportedCapture
from kernel_profiler.analysis.timeline import rank_kernels, triage

WILD = Path(__file__).parent.parent / "data" / "wild"
V100 = WILD / "k01_kineto_resnet50_nw0_V100.pt.trace.json.gz"
OLD = WILD / "k15_hta_inference_rank1_oldschema.json.gz"
AMD = WILD / "k13_hta_amd_mi250.json.gz"
RANGE = WILD / "k18_hta_cupti_profiler_A100.json.gz"


def raw(path: Path) -> dict:
    with gzip.open(path) as f:
        return json.load(f)


def cats(doc: dict) -> Counter:
    return Counter(e.get("cat") for e in doc["traceEvents"] if e.get("ph") == "X")


def write(doc: dict, path: Path) -> Path:
    path.write_text(json.dumps(doc, indent=1))
    return path


# --------------------------------------------------------------------------- PyTorch 1.8/1.9 schema


@pytest.fixture(scope="module")
def v100():
    return kineto.load(V100)


def test_pytorch_1_8_schema_is_read(v100):
    doc = raw(V100)
    n = cats(doc)
    assert len(v100.kernels) == n["Kernel"] > 8000
    assert len(v100.copies) == n["Memcpy"] and len(v100.sets) == n["Memset"]
    assert len(v100.api) == n["Runtime"]
    steps = [e["name"] for e in doc["traceEvents"] if e.get("cat") == "Operator" and e["name"].startswith("ProfilerStep#")]
    assert list(v100.ranges.name) == sorted(steps, key=lambda s: int(s.split("#")[1])) and len(steps) >= 2
    assert len(v100.gpus) == len(doc["deviceProperties"])
    g = v100.gpus[0]
    assert (g.name, g.compute_capability, g.sm_count) == ("Tesla V100-DGXS-32GB", "7.0", 80)
    # 1.8 writes host tids as strings ("25738"): read as numbers; GPU events carry their launch's host pid.
    (pid,) = v100.processes
    assert set(v100.api.pid) == {pid} and v100.api.tid.notna().all()
    assert v100.kernels.pid.eq(pid).mean() > 0.99
    assert v100.copies.kind.eq("HtoD").any() and v100.copies.bytes.gt(0).all()
    assert set(v100.api[v100.api.name == "cudaLaunchKernel"].category) == {"launch"}


def test_zero_length_kernels_are_kept_and_ranked(v100):
    zero = sum(1 for e in raw(V100)["traceEvents"] if e.get("cat") == "Kernel" and e["dur"] == 0)
    k = v100.kernels
    assert (k.end_ns == k.start_ns).sum() == zero > 0
    res = triage(v100)  # raised (exit 3) when a dur-0 kernel fell inside the window
    lo, hi = res.window
    ranked = rank_kernels(v100, lo, hi)
    inside = ((k.end_ns > lo) & (k.start_ns < hi)).sum()
    assert ranked["count"].sum() == inside == res.summary.kernel_count
    assert res.summary.steps == len(v100.ranges) and res.verdict != "empty"


def test_pytorch_1_8_trace_through_the_cli():
    """The sample is ResNet-50 with DataLoader(num_workers=0): the host loads every batch while the GPU waits.
    The host work the diagnosis finds is the DataLoader's own time, which the trace records apart."""
    p = subprocess.run([sys.executable, "-m", "kernel_profiler.cli", "analyze", str(V100), "--json"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert (d["bound"], d["mechanism"]) == ("host", "host_work")
    loader_ns = 1e3 * sum(e["dur"] for e in raw(V100)["traceEvents"]
                          if e.get("cat") == "Operator" and e["name"].startswith("enumerate(DataLoader)"))
    assert 0.8 < loader_ns / d["timeline"]["idle_by_cause"]["host_work"] < 1.05
    assert d["timeline"]["kernel_count"] == len(kineto.load(V100).kernels)


# --------------------------------------------------------------------------- old schema, no deviceProperties


def test_old_schema_without_device_properties():
    doc = raw(OLD)
    assert "deviceProperties" not in doc
    tl = kineto.load(OLD)
    n = cats(doc)
    assert len(tl.kernels) == n["Kernel"] > 0 and len(tl.api) == n["Runtime"]
    assert tl.gpus == [] and tl.rank == doc["distributedInfo"]["rank"] == 1
    truth = sorted((e["args"]["correlation"], e["args"]["grid"]) for e in doc["traceEvents"] if e.get("cat") == "Kernel")
    got = sorted((int(r.correlation), [int(r.grid_x), int(r.grid_y), int(r.grid_z)]) for r in tl.kernels.itertuples())
    assert got == truth
    assert tl.kernels.pid.notna().all()  # every kernel's cudaLaunchKernel is in the trace
    assert triage(tl).summary.kernel_count == len(tl.kernels)


# --------------------------------------------------------------------------- refusals


def _one_line(err, *words):
    msg = str(err.value)
    assert "\n" not in msg
    for w in words:
        assert w.lower() in msg.lower(), msg
    return msg


def test_rocm_trace_is_refused():
    with pytest.raises(UnsupportedCapture) as err:
        kineto.load(AMD)
    _one_line(err, "not an NVIDIA GPU", "AMD Radeon Graphics", "ROCm")


def test_rocm_trace_without_device_properties_is_refused_by_its_hip_calls(tmp_path):
    doc = raw(AMD)
    del doc["deviceProperties"]
    with pytest.raises(UnsupportedCapture) as err:
        kineto.load(write(doc, tmp_path / "amd.json"))
    _one_line(err, "not an NVIDIA GPU", "hip")


def test_range_profiler_trace_is_refused_with_advice_that_fits():
    doc = raw(RANGE)
    ranges = cats(doc)["cuda_profiler_range"]
    assert ranges > 0 and cats(doc)["kernel"] == 0
    with pytest.raises(UnsupportedCapture) as err:
        kineto.load(RANGE)
    _one_line(err, "range-profiler", f"{ranges} cuda_profiler_range", "no kernel timeline", "ncu")


def test_mtia_trace_is_refused(tmp_path):
    """The same real trace as if an MTIA accelerator had run it: its GPU categories renamed as Kineto names MTIA's."""
    doc = raw(OLD)
    names = {"Kernel": "mtia_ccp_events", "Runtime": "mtia_runtime"}
    for e in doc["traceEvents"]:
        e["cat"] = names.get(e.get("cat"), e.get("cat"))
    with pytest.raises(UnsupportedCapture) as err:
        kineto.load(write(doc, tmp_path / "mtia.json"))
    _one_line(err, "MTIA", "not an NVIDIA GPU")


def test_cpu_only_trace_is_refused(tmp_path):
    doc = raw(V100)
    doc["traceEvents"] = [e for e in doc["traceEvents"]
                          if e.get("cat") not in ("Kernel", "Memcpy", "Memset", "Runtime", "async")]
    with pytest.raises(UnsupportedCapture) as err:
        kineto.load(write(doc, tmp_path / "cpu.json"))
    _one_line(err, "CPU-only", "ProfilerActivity.CUDA")


def test_refusals_exit_2_on_one_line_and_are_skipped_in_a_folder(tmp_path):
    for path, word in ((AMD, "not an NVIDIA GPU"), (RANGE, "range-profiler")):
        p = subprocess.run([sys.executable, "-m", "kernel_profiler.cli", "analyze", str(path)],
                           capture_output=True, text=True)
        assert p.returncode == 2 and word in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert "Traceback" not in p.stderr
    folder = tmp_path / "mixed"
    folder.mkdir()
    for f in (AMD, OLD):
        (folder / f.name).write_bytes(f.read_bytes())
    arts = load_paths([folder])
    assert len(arts.timelines) == 1 and arts.timelines[0].rank == 1
    assert any(AMD.name in w and "not an NVIDIA GPU" in w for w in arts.warnings)


# --------------------------------------------------------------------------- every wild file is accounted for


def test_every_wild_kineto_file_is_read_or_refused():
    for f in sorted(WILD.glob("k*.json.gz")):
        try:
            tl = kineto.load(f)
        except UnsupportedCapture:
            assert f in (AMD, RANGE), f
            continue
        assert f in (V100, OLD), f
        assert len(tl.kernels) > 0 and np.isfinite(tl.kernels.start_ns).all()
