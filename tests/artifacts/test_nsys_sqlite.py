"""nsys sqlite reader: the capture's clock, and captures without GPU activity refused with the right reason."""
from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest

from kernel_profiler.artifacts import load_paths, nsys_sqlite
from kernel_profiler.errors import UnsupportedCapture
from kernel_profiler.analysis.timeline import triage

# nsys 2025.3.1 captures on our H200: CUDA binaries and Python programs, one and two processes.
CASES = ["cu_divergence", "cu_sync_loop", "py_startup", "py_item_sync", "mr_uneven"]


def _diagnostics(path) -> dict[str, int]:
    con = sqlite3.connect(path)
    try:
        return dict(con.execute("select text, timestamp from DIAGNOSTIC_EVENT where text like 'Profiling has %'"))
    finally:
        con.close()


@pytest.mark.parametrize("case", CASES)
def test_capture_span_is_on_the_events_clock(captures, case):
    path = captures.path(case, "nsys.sqlite")
    tl = nsys_sqlite.load(path)
    marks = _diagnostics(path)
    # nsys's own diagnostics mark the session on the events' clock; ANALYSIS_DETAILS.startTime does not
    assert tl.capture_start_ns == marks["Profiling has started."]
    assert tl.capture_end_ns >= marks["Profiling has stopped."]
    first_event = min(df["start_ns"].min() for df in (tl.kernels, tl.copies, tl.api) if len(df))
    assert tl.capture_start_ns <= first_event  # the capture starts before anything in it
    s = triage(tl).summary
    first_gpu = min(df["start_ns"].min() for df in (tl.kernels, tl.copies, tl.sets) if len(df))
    assert s.startup_ns == pytest.approx(first_gpu - tl.capture_start_ns)
    # start-up covers the CUDA API calls made before the first GPU work (context creation, allocation)
    assert s.startup_ns > tl.api["start_ns"].min() > 0
    assert tl.utc_origin_ns and tl.utc_origin_ns > 1.7e18  # session start on the UTC clock (2023 or later)


def test_wsl2_export_without_gpu_activity_is_refused_with_the_reason(wild):
    path = wild("s02_haroonsyed_sgemm_RTX3060L_WSL.sqlite")
    with pytest.raises(UnsupportedCapture) as e:
        nsys_sqlite.load(path)
    msg = str(e.value)
    assert "WSL2" in msg and "native Linux" in msg and "ncu" in msg
    assert "was CUDA tracing on" not in msg  # it was: the API calls are there
    assert "\n" not in msg


def test_wsl2_export_cli_one_line_exit_2(wild):
    path = wild("s02_haroonsyed_sgemm_RTX3060L_WSL.sqlite")
    p = subprocess.run([sys.executable, "-m", "kernel_profiler.cli", "analyze", str(path)], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 2
    lines = (p.stderr + p.stdout).strip().splitlines()
    assert len(lines) == 1 and "WSL2" in lines[0] and "Traceback" not in p.stderr


def test_wsl2_export_in_a_folder_is_listed_as_skipped(tmp_path, wild, captures):
    import shutil

    shutil.copy(wild("s02_haroonsyed_sgemm_RTX3060L_WSL.sqlite"), tmp_path / "wsl.sqlite")
    shutil.copy(captures.path("cu_divergence", "nsys.sqlite"), tmp_path / "native.sqlite")
    arts = load_paths([tmp_path])
    assert arts.files == [str(tmp_path / "native.sqlite")]
    assert any("wsl.sqlite" in w and "WSL2" in w for w in arts.warnings)
