"""tools/profile.sh: the subagent's method followed literally on the H200, and the script's own checks.

tests/data/profile_sh/ holds what `suite/device_session.sh profile_sh` produced on an nvidia-h200-x2
machine on 2026-11-30: `tools/profile.sh nsys`, then `KERNEL=transpose_tile tools/profile.sh ncu`,
then `tools/profile.sh sass` on the capture-suite program cu_transpose_conflict, the Markdown answer
`kernel-profiler analyze` wrote from the three captures (answer.md), and a telemetry sample.
"""
from __future__ import annotations

import lzma
import shutil
import subprocess
from pathlib import Path

import pytest

from kernel_profiler.critic import critique_text
from kernel_profiler.analysis.engine import analyze

DATA = Path(__file__).parent / "data" / "profile_sh"
SCRIPT = Path(__file__).parent.parent / "tools" / "profile.sh"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("profile_sh")
    for f in DATA.rglob("*.xz"):
        target = out / f.relative_to(DATA).with_suffix("")
        target.parent.mkdir(parents=True, exist_ok=True)
        with lzma.open(f) as fi, open(target, "wb") as fo:
            shutil.copyfileobj(fi, fo)
    return out


def test_each_step_narrows_the_diagnosis(run_dir):
    timeline = analyze([run_dir / "t1"])
    assert timeline.bound == "inconclusive" and "transpose_tile" in timeline.bottleneck  # step 1 names the kernel
    kernel = analyze([run_dir / "t1", run_dir / "t2"])
    assert (kernel.bound, kernel.mechanism) == ("memory", "shared_bank_conflict")
    full = analyze([run_dir / "t1", run_dir / "t2", run_dir / "t3"])
    assert full.mechanism == "shared_bank_conflict"
    assert any(e.metric == "sass.LDS+STS" and e.value > 0 for e in full.evidence)


def test_answer_written_on_the_h200_passes_the_critic(run_dir):
    answer = (run_dir / "answer.md").read_text()
    assert "shared-memory bank conflicts" in answer
    v = critique_text(answer, [run_dir / "t1", run_dir / "t2", run_dir / "t3"])
    assert v.verdict == "accept", v.reasons


def test_telemetry_from_the_h200(run_dir):
    import json

    t = json.loads((run_dir / "t4" / "telemetry.json").read_text())
    assert t["kind"] == "kernel-profiler.telemetry" and len(t["gpus"]) == 2
    assert max(s["sm_clock_mhz"] for s in t["samples"]) > 1000


def _sh(*args, env=None, cwd=None):
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=60, cwd=cwd)


def test_help_and_bad_use(tmp_path):
    assert _sh("--help").returncode == 0
    p = _sh("ncu", "true", cwd=tmp_path)
    assert p.returncode == 2 and "profile.sh:" in p.stderr
    assert not any(tmp_path.iterdir())  # a refused call leaves no kp-artifacts/ folder behind


@pytest.mark.parametrize("args,env", [(["ncu", "true"], {}), (["sass", "no_such_binary"], {}),
                                      (["nsys", "true"], {"PATH": "/usr/bin:/bin"})])
def test_refusals_create_no_output_folder(tmp_path, args, env):
    import os

    if args[0] == "nsys" and shutil.which("nsys", path="/usr/bin:/bin"):
        pytest.skip("nsys is installed here")
    p = _sh(*args, env={**os.environ, **env}, cwd=tmp_path)
    assert p.returncode == 2 and not any(tmp_path.iterdir()), p.stderr


def test_reachable_as_kernel_profiler_subcommand(tmp_path):
    """The packaged script (tools/profile.sh links to it) runs as `kernel-profiler profile` from any folder."""
    import sys

    assert SCRIPT.resolve() == (Path(__file__).parent.parent / "src" / "kernel_profiler" / "data" / "profile.sh")
    cli = [sys.executable, "-m", "kernel_profiler.cli", "profile"]
    h = subprocess.run([*cli, "--help"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert h.returncode == 0 and "kernel-profiler profile nsys CMD" in h.stdout
    p = subprocess.run([*cli, "sass", "no_such_binary"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert p.returncode == 2 and "profile.sh:" in p.stderr and not any(tmp_path.iterdir())


def test_missing_profiler_is_explained(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "OUT": str(tmp_path / "o")}
    p = _sh("nsys", "true", env=env)
    if shutil.which("nsys", path=env["PATH"]):
        pytest.skip("nsys is installed here")
    assert p.returncode == 2 and "nsys not found" in p.stderr


def test_refuses_to_overwrite(tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    p = _sh("sass", "/bin/true", env={"PATH": "/usr/bin:/bin", "OUT": str(out)})
    assert p.returncode == 2 and (out / "keep.txt").read_text() == "mine"
