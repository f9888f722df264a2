"""Checks shared by the holdout test modules (test_holdout5.py, test_holdout6.py, test_holdout7.py): a case
parametrized with its strict xfail when the engine misses it, a capture's text, a kernel's ncu duration, that every
case was captured, the engine's verdict against the ground truth as written, and a fixed twin's moved mechanism."""
from __future__ import annotations

import lzma
import sqlite3

import pytest

from conftest import CAPTURES
from kernel_profiler.analysis.engine import analyze
from kernel_profiler.artifacts import load_paths


def param(name: str, misses: dict[str, str]):
    marks = [pytest.mark.xfail(reason=misses[name], strict=True)] if name in misses else []
    return pytest.param(name, marks=marks, id=name)


def capture_text(case: str, name: str) -> str:
    return lzma.open(CAPTURES / case / f"{name}.xz", "rt").read()


def kernel_ns(captures, case: str) -> float:
    (k,) = [k for k in load_paths([captures.path(case, "ncu.ncu-rep")]).kernel_profiles
            if k.get("gpu__time_duration.sum")]
    return k.get("gpu__time_duration.sum")


def assert_every_case_captured(cases: dict[str, dict]) -> None:
    for name, c in cases.items():
        d = CAPTURES / name
        assert (d / "nsys.sqlite.xz").exists(), name
        if c.get("kernel"):
            assert (d / "ncu.ncu-rep.xz").exists() and (d / "ncu_raw.csv.xz").exists(), name
        if c["source"].endswith(".py"):
            assert (d / "trace.json.gz").exists(), name
        else:
            assert (d / "sass.txt.xz").exists() and (d / "ptxas.log.xz").exists(), name


def assert_as_written(captures, name: str, case: dict) -> None:
    """The unchanged engine gives the bound and mechanism the ground truth wrote before the capture."""
    d = analyze([captures.case_dir(name)])
    assert (d.bound, d.mechanism) == (case["bound"], case["mechanism"]), d.bottleneck


def assert_fix_moved(captures, name: str, case: dict) -> None:
    """A fixed twin no longer shows the mechanism its slow build planted."""
    d = analyze([captures.case_dir(name)])
    assert d.mechanism != case["expect_moved"], d.bottleneck


def ncu_metric(captures, case: str, name: str) -> float:
    """A metric of the one profiled kernel of a case's ncu.ncu-rep."""
    (k,) = [k for k in load_paths([captures.path(case, "ncu.ncu-rep")]).kernel_profiles
            if k.get("gpu__time_duration.sum")]
    return k.get(name)


def nsys_db(captures, case: str) -> sqlite3.Connection:
    return sqlite3.connect(captures.path(case, "nsys.sqlite"))


def runtime_calls(db: sqlite3.Connection, like: str) -> int:
    """CUDA runtime calls whose name is LIKE `like` in an nsys sqlite export."""
    n, = db.execute("select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME r join StringIds s on s.id = r.nameId "
                    "where s.value like ?", (like,)).fetchone()
    return n
