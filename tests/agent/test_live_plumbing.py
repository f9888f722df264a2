"""The live path (`ask -- CMD`) end to end on this GPU-less machine, with STAND-IN nsys/ncu programs.

The stand-ins are test doubles, clearly not profilers: they check the argv the tools build, run the
user's target the way the real tools do, and write a REAL H200 capture (from tests/data) where the
real tool would write its output. What is tested is the plumbing: argv lists, allow-list, scratch
directories, exit codes, the produced files reaching the engine and the critic.
"""
from __future__ import annotations

import sys
import textwrap

import pytest

from kernel_profiler.agent import sandbox as sbx
from kernel_profiler.agent import transcript as tx
from kernel_profiler.agent.session import replay, run_ask

FAKE_NSYS = textwrap.dedent("""\
    #!{py}
    import shutil, subprocess, sys
    a = sys.argv[1:]
    if a[0] == "profile":
        out = a[a.index("-o") + 1]
        assert "--force-overwrite" in a and "-t" in a
        target = a[a.index("--force-overwrite") + 2:]
        rc = subprocess.call(target)
        open(out + ".nsys-rep", "wb").write(b"stand-in report")
        sys.exit(rc)
    if a[0] == "export":
        assert a[a.index("--type") + 1] == "sqlite"
        shutil.copy({sqlite!r}, a[a.index("-o") + 1])
        sys.exit(0)
    sys.exit(2)
""")

FAKE_NCU = textwrap.dedent("""\
    #!{py}
    import shutil, subprocess, sys
    a = sys.argv[1:]
    assert a[a.index("-k") + 1].startswith("regex:")
    int(a[a.index("-s") + 1]); int(a[a.index("-c") + 1])
    out = a[a.index("-o") + 1]
    i = max(a.index("-o") + 2, *[j + 2 for j, x in enumerate(a) if x in ("--set", "--section", "--metrics")])
    rc = subprocess.call(a[i:])
    if {perm}:
        print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters")
        sys.exit(1)
    shutil.copy({rep!r}, out + ".ncu-rep")
    sys.exit(rc)
""")


@pytest.fixture
def stand_ins(tmp_path, captures, monkeypatch):
    def make(perm: bool = False):
        d = tmp_path / "bin"
        d.mkdir(exist_ok=True)
        nsys, ncu = d / "nsys", d / "ncu"
        nsys.write_text(FAKE_NSYS.format(py=sys.executable, sqlite=str(captures.path("cu_softmax_naive", "nsys.sqlite"))))
        ncu.write_text(FAKE_NCU.format(py=sys.executable, rep=str(captures.path("cu_softmax_naive", "ncu.ncu-rep")),
                                       perm=perm))
        nsys.chmod(0o755)
        ncu.chmod(0o755)
        monkeypatch.setattr(sbx, "find_nsys", lambda: str(nsys))
        monkeypatch.setattr(sbx, "find_ncu", lambda: str(ncu))
        return d
    return make


def test_live_ask_runs_timeline_ncu_sass(stand_ins, tmp_path):
    stand_ins()
    target = [sys.executable, "-c", "print('softmax benchmark ran')"]
    rec = tmp_path / "live.jsonl"
    stages: list[str] = []
    r = run_ask("why is my softmax slow", target, [], "expert", str(rec), stages.append, root=tmp_path)
    assert r.accepted, r.verdicts
    assert r.tool_calls == ["timeline", "kernel_profile", "sass", "submit_answer"]
    assert r.mechanism == "uncoalesced_global"
    assert any("running the program under nsys" in s for s in stages)
    header, evs = tx.read(rec)
    assert header["cmd"] == target and header["artifacts"] == []
    res = {e["name"]: e for e in evs if e["event"] == "tool_result"}
    assert res["timeline"]["content"]["mode"] == "captured"
    assert res["kernel_profile"]["content"]["mode"] == "captured"
    assert res["sass"]["content"]["source"].endswith("profile.ncu-rep")
    assert any("kept in" in n for n in r.notices)
    assert replay(rec).as_answer() == r.as_answer()


def test_live_without_counter_access_answers_from_timeline(stand_ins, tmp_path):
    stand_ins(perm=True)
    target = [sys.executable, "-c", "pass"]
    rec = tmp_path / "perm.jsonl"
    r = run_ask("why is my softmax slow", target, [], "expert", str(rec), lambda s: None, root=tmp_path)
    assert r.tool_calls[:2] == ["timeline", "kernel_profile"]
    _, evs = tx.read(rec)
    kp = [e for e in evs if e["event"] == "tool_result" and e["name"] == "kernel_profile"][0]
    assert kp["is_error"] and kp["content"]["error"] == "CounterPermission"
    # the expert answers from what the timeline allows, says why it cannot go deeper, and how to settle it
    assert r.accepted and r.inconclusive and r.bound == "inconclusive"
    assert "softmax_rows" in r.bottleneck
    assert "ERR_NVGPUCTRPERM" in r.explanation and "CAP_SYS_ADMIN" in r.explanation
    assert "ncu --set full -k regex:softmax_rows" in r.settle


def test_live_crashing_target(stand_ins, tmp_path):
    stand_ins()
    target = [sys.executable, "-c", "import sys; sys.stderr.write('CUDA error: illegal address\\n'); sys.exit(7)"]
    stages: list[str] = []
    r = run_ask("q", target, [], "expert", None, stages.append, root=tmp_path)
    assert r.inconclusive and "Capture a timeline" in r.settle
    assert any("TargetFailed" in s or "status 7" in s for s in stages)
