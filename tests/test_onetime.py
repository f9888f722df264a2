"""One-time work apart from the steady state (issue 9), on real H200 captures of programs that mark no steps
(suite/onetime.toml, ground truth written before capture): the repeated part of the GPU work is found from the
work itself, the one-time work outside it is classified and reported apart, and the steady state alone decides
the verdict, from the Nsight Systems export and from the PyTorch-profiler trace alike."""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from kernel_profiler.artifacts import load_paths
from kernel_profiler.analysis.consistency import main_timeline
from kernel_profiler.analysis.engine import analyze
from kernel_profiler.analysis.timeline import triage

CASES = {c["name"]: c for c in tomllib.loads((Path(__file__).parent.parent / "suite" / "onetime.toml").read_text())["case"]}
TIMELINES = [(name, fmt) for name, c in CASES.items()
             for fmt in (("nsys.sqlite", "trace.json.gz") if c["source"].endswith(".py") else ("nsys.sqlite",))]
ID = [f"{n}-{f.split('.')[0]}" for n, f in TIMELINES]
# The class of one-time work each case was written to have, as triage names it.
ONETIME_CLASS = {"jit": "jit", "module_loading": "module_loading", "library_init": "library_init", "upload": "upload"}


def _triage(captures, name, fmt):
    return triage(main_timeline(load_paths([captures.path(name, fmt)]).timelines))


def _kernel_files(captures, name) -> list[Path]:
    out = [captures.path(name, "ncu.ncu-rep")]
    if captures.has(name, "sass.txt"):
        out.append(captures.path(name, "sass.txt"))
    return out


@pytest.mark.parametrize("name,fmt", TIMELINES, ids=ID)
def test_steady_state_verdict(captures, name, fmt):
    case = CASES[name]
    r = _triage(captures, name, fmt)
    assert r.verdict == case["steady"], (r.verdict, r.summary.window_source, r.summary.idle_by_cause)


@pytest.mark.parametrize("name,fmt", TIMELINES, ids=ID)
def test_one_time_work_reported_apart(captures, name, fmt):
    case = CASES[name]
    r = _triage(captures, name, fmt)
    s = r.summary
    if not case["onetime"]:
        assert r.onetime is None, r.onetime.bottleneck
        return
    assert r.onetime is not None and r.onetime.mechanism == "startup_dominated"
    largest = max(s.onetime_by_class, key=s.onetime_by_class.get)
    assert largest == ONETIME_CLASS[case["onetime"][0]], s.onetime_by_class
    # The one-time work is outside the window: the window is the repeated part alone.
    assert "repeated part" in s.window_source and s.repeats and s.repeats >= 5
    assert s.onetime_ns > s.window_ns or name in ("ot_py_gemm_fp32",), (s.onetime_ns, s.window_ns)


@pytest.mark.parametrize("name,fmt", [t for t in TIMELINES if "kernel" in CASES[t[0]]],
                         ids=[i for i, t in zip(ID, TIMELINES) if "kernel" in CASES[t[0]]])
def test_kernel_mechanism_leads_one_time_work_also_found(captures, name, fmt):
    case = CASES[name]
    d = analyze([captures.path(name, fmt), *_kernel_files(captures, name)])
    assert (d.bound, d.mechanism) == (case["bound"], case["mechanism"]), d.bottleneck
    onetime = [f for f in d.secondary if f.bottleneck.startswith("One-time work")]
    assert bool(onetime) == bool(case["onetime"]), [f.bottleneck for f in d.secondary]


def test_eager_first_iteration_is_warm_up_paying_module_loading(captures):
    for fmt in ("nsys.sqlite", "trace.json.gz"):
        s = _triage(captures, "ot_py_eager_lazy", fmt).summary
        assert s.repeats == 20 and "first left out as warm-up" in s.window_source
        assert s.top_kernels[0].count == 19  # the 19 steady repetitions
        assert s.onetime_by_class["module_loading"] > 0.8 * s.onetime_ns


def test_triton_jit_gap_is_compilation_not_host_work(captures):
    for fmt in ("nsys.sqlite", "trace.json.gz"):
        r = _triage(captures, "ot_py_triton_jit", fmt)
        assert r.summary.onetime_by_class["jit"] > 0.5e9  # ~1.4-1.6 s measured on the H200
        assert r.summary.busy_fraction > 0.95 and r.summary.top_kernels[0].name == "gather_transpose"


def test_allocator_churn_is_not_host_computation(captures):
    d = analyze([captures.path("ot_cu_alloc_churn", "nsys.sqlite")])
    assert (d.bound, d.mechanism) == ("host", "allocator_churn")
    causes = d.timeline.idle_by_cause
    assert causes["allocator"] > 0.9 * d.timeline.idle_ns and causes["host_work"] == 0.0
    assert "once" in d.fix.change


def test_single_launch_has_no_repeated_part(captures):
    r = _triage(captures, "ot_cu_launch_once", "nsys.sqlite")
    assert r.summary.repeats is None and "no repeated GPU work" in r.summary.window_source
    assert r.summary.top_kernels[0].name.startswith("transpose_once") and r.summary.top_kernels[0].count == 1


def test_pageable_upload_is_one_time_not_transfer_bound(captures):
    d = analyze([captures.path("ot_cu_pageable_upload", "nsys.sqlite")])  # timeline only
    assert d.bound != "transfer"
    onetime = next(f for f in d.secondary if f.mechanism == "startup_dominated")
    assert "host-to-device" in onetime.bottleneck and "pin" in onetime.fix.change
