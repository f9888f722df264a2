"""Cases the engine was not tuned on (suite/holdout.toml), captured on the H200 after the detectors and
thresholds were fixed. Ground truth was written before capture."""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from kernel_profiler.analysis.engine import analyze

CASES = tomllib.loads((Path(__file__).parent.parent / "suite" / "holdout.toml").read_text())["case"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_holdout(case, captures):
    d = analyze([captures.case_dir(case["name"])])
    if "mechanism" in case:
        assert (d.bound, d.mechanism) == (case["bound"], case["mechanism"]), d.bottleneck
    else:
        assert d.mechanism != case["expect_not"], d.bottleneck
        assert d.roofline is not None and d.roofline.gap > 1.25  # the measured reason it is not near peak
