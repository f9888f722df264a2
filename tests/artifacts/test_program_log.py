"""Program log reader: the numbers a program printed about itself (run.log), with their lines."""
from __future__ import annotations

import pytest

from kernel_profiler.artifacts import identify, load_paths, program_log
from kernel_profiler.errors import EmptyCapture, UnknownFormat


def test_run_log_of_a_real_capture(captures):
    log = program_log.load(captures.path("cu_grid_stride_small_grid", "run.log"))
    steps = [(v.line, v.value, v.unit) for v in log.values]
    assert (3, 0.0654, "ms") in steps and (6, 0.0651, "ms") in steps  # the plain run and the run under nsys
    assert all("==PROF==" not in v.text and "[1/1]" not in v.text for v in log.values)  # the profilers' own lines


def test_profiler_text_formats_keep_their_readers(captures):
    assert identify(captures.path("cu_local_array", "ptxas.log")) == "ptxas-log"
    assert identify(captures.path("cu_local_array", "sass.txt")) == "sass"
    assert identify(captures.path("cu_grid_stride_small_grid", "run.log")) == "program-log"


def test_text_without_timings_is_no_log(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("remember to profile with --set full\nsteps: warm up, then measure\n")
    assert identify(p) is None
    with pytest.raises(UnknownFormat):
        load_paths([p])


def test_a_log_alone_is_no_capture(captures):
    with pytest.raises(EmptyCapture, match="holds no profile"):
        load_paths([captures.path("cu_grid_stride_small_grid", "run.log")])
