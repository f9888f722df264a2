"""The metrics registry: every derived metric the engine quotes is registered with the unit it is quoted in,
and the registry's computation of a timeline metric gives the number the engine's evidence states (on every
real capture of the suite), so `verify` and the detectors measure the same thing."""
from __future__ import annotations

import math

import pytest

from kernel_profiler import metrics
from kernel_profiler.catalog import CATALOG
from kernel_profiler.analysis.engine import run
from kernel_profiler.artifacts import load_paths


def _cases():
    from conftest import suite_cases

    return [c for c in suite_cases() if c.get("mechanism") or c.get("expect_moved")]


CASES = _cases()


def _quoted(d):
    """(metric, unit or None) of every evidence line and fix of a diagnosis, secondary findings included."""
    for f in [d.primary] + list(d.secondary):
        for e in f.evidence:
            yield e.metric, e.unit, e.value
        if f.fix is not None:
            for part in f.fix.metric.replace("/", "+").split("+"):
                yield part.strip(), None, None


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_engine_quotes_registered_metrics_in_their_units(case, captures):
    an = run(load_paths([captures.case_dir(case["name"])]))
    d = an.diagnosis
    checked = 0
    for name, unit, value in _quoted(d):
        if not name.startswith(metrics.PREFIXES):
            continue
        m = metrics.lookup(name)
        assert m is not None, f"{name} is quoted but not in the metrics registry"
        if unit is not None:
            assert unit == m.unit, f"{name} quoted in {unit}, registered in {m.unit}"
        checked += 1
    # the registry computes the timeline numbers the engine states
    if an.triage is not None and an.timeline is not None:
        view = metrics.TimelineView(an.triage.summary, an.timeline, an.triage.window, list(an.triage.step_ns or []))
        for name, unit, value in _quoted(d):
            m = metrics.lookup(name)
            if unit is None or m is None or m.compute is None and not name.startswith("timeline.idle_"):
                continue
            got, why = metrics.timeline_value(name, view)
            assert got is not None, why
            assert math.isclose(got, value, rel_tol=1e-3, abs_tol=1e-4), (name, got, value)
            checked += 1
    if d.primary.mechanism in CATALOG and CATALOG[d.primary.mechanism].scope == "program":
        assert checked, "a program-level finding quotes timeline metrics"


def test_lookup_of_families_and_unknown_names():
    assert metrics.lookup("timeline.idle_host_sync_ns").name == "timeline.idle_{cause}_ns"
    assert metrics.lookup("timeline.onetime_jit_ns").name == "timeline.onetime_{kind}_ns"
    assert metrics.lookup("sass.LDL+STL").unit == "instructions"
    assert metrics.lookup("timeline.idle_ns").name == "timeline.idle_ns"
    assert metrics.lookup("timeline.no_such_thing") is None
    assert metrics.lookup("dram__bytes_read.sum") is None


def test_every_registered_name_is_defined_once_with_a_unit_and_a_definition():
    names = [m.name for group in (metrics.TIMELINE, metrics.DERIVED, metrics.SASS, metrics.MULTIRANK,
                                  metrics.TELEMETRY) for m in group]
    assert len(names) == len(set(names)) == len(metrics.REGISTRY)
    assert all(m.unit and m.definition and m.name.startswith(metrics.PREFIXES) for m in metrics.REGISTRY.values())


@pytest.mark.parametrize("expr,want", [("a", 6.0), ("a+b", 8.0), ("a/b", 3.0), ("a+b/b+c", 2.0)])
def test_evaluate_expressions(expr, want):
    vals = {"a": 6.0, "b": 2.0, "c": 2.0, "z": 0.0}
    assert metrics.evaluate(expr, lambda t: (vals.get(t), f"src of {t}")) == (want, "src of a")


def test_evaluate_says_why_it_cannot():
    vals = {"a": 6.0, "z": 0.0}
    term = lambda t: (vals.get(t), f"src of {t}" if t in vals else f"{t} is missing")  # noqa: E731
    assert metrics.evaluate("a/z", term) == (None, "a/z: denominator is zero on this side")
    assert metrics.evaluate("a/q", term) == (None, "q is missing")
    assert metrics.evaluate("a/a/a", term)[0] is None
