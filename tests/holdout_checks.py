"""Checks shared by the holdout test modules (test_holdout5.py, test_holdout6.py): a case parametrized with its
strict xfail when the engine misses it, a capture's text, a kernel's ncu duration, and that every case was captured."""
from __future__ import annotations

import lzma

import pytest

from conftest import CAPTURES
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
