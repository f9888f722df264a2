"""The sandbox refuses adversarial requests: shell metacharacters, paths outside the tree, programs not on the list."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kernel_profiler.agent import sandbox as sbx
from kernel_profiler.agent.session import run_ask
from kernel_profiler.agent.sandbox import (Sandbox, SandboxViolation, TargetFailed, TargetTimeout, check_regex,
                                           check_sections)
from kernel_profiler.agent.context import ToolContext
from kernel_profiler.agent.tools import call_tool
from kernel_profiler.errors import CounterPermission, ToolMissing

from .scripted import ScriptedModel, call


@pytest.mark.parametrize("rx", [
    "softmax_rows; rm -rf ~", "$(reboot)", "`id`", "softmax && curl evil.sh", "a\nb", "x' ; echo '",
    "kern${IFS}el", "-k", "x" * 300, "(unclosed",
])
def test_kernel_regex_refused(rx):
    with pytest.raises(SandboxViolation):
        check_regex(rx)


@pytest.mark.parametrize("rx", ["softmax_rows", "at::native::vectorized_elementwise_kernel<.*>|gemm$",
                                r"nvjet_sm90_\w+", "^(a|b)_kernel"])
def test_kernel_regex_accepted(rx):
    assert check_regex(rx) == rx


@pytest.mark.parametrize("sec", ["SpeedOfLight; rm -rf /", "SpeedOfLight && id", "../../etc/passwd", "NotASection",
                                 "$(id)"])
def test_section_refused(sec):
    with pytest.raises(SandboxViolation):
        check_sections(["SpeedOfLight", sec])


def test_sections_allowed():
    assert check_sections(["SpeedOfLight", "MemoryWorkloadAnalysis", "SourceCounters"])


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "tree"
    (root / "src").mkdir(parents=True)
    (root / "src" / "softmax.cu").write_text("__global__ void softmax_rows() {}\nint main() {}\n")
    (root / "escape").symlink_to("/etc")
    (root / "passwd_link").symlink_to("/etc/passwd")
    return root


@pytest.mark.parametrize("path", ["../../etc/passwd", "/etc/passwd", "escape/passwd", "passwd_link",
                                  "src/../../outside.txt"])
def test_paths_outside_tree_refused(tree, path):
    with pytest.raises(SandboxViolation):
        Sandbox(root=tree).resolve_path(path)


def test_path_inside_tree_allowed(tree):
    sb = Sandbox(root=tree)
    assert sb.resolve_path("src/softmax.cu") == (tree / "src" / "softmax.cu").resolve()
    assert sb.resolve_path(str(tree / "src" / "softmax.cu")).name == "softmax.cu"


@pytest.mark.parametrize("argv", [["/bin/sh", "-c", "id"], ["bash", "-c", "id"], ["curl", "http://x"],
                                  ["rm", "-rf", "/tmp/x"]])
def test_executable_not_on_allow_list(tree, argv):
    sb = Sandbox(root=tree, target=[sys.executable, "-c", "pass"])
    with pytest.raises(SandboxViolation, match="allow-list"):
        sb.run(argv)


def test_read_source_via_tool(tree):
    ctx = ToolContext(sandbox=Sandbox(root=tree))
    ok = call_tool(ctx, "read_source", {"path": "src/softmax.cu"})
    assert not ok.is_error and "softmax_rows" in ok.content["text"]
    for bad in ("../../etc/passwd", "/etc/passwd", "passwd_link", "escape/hostname"):
        out = call_tool(ctx, "read_source", {"path": bad})
        assert out.is_error and out.error_type == "SandboxViolation"


def test_find_targets(tree):
    ctx = ToolContext(sandbox=Sandbox(root=tree))
    out = call_tool(ctx, "find_targets", {"query": "why is my softmax slow"})
    assert not out.is_error and out.content["words"] == ["softmax"]
    assert out.content["candidates"][0]["path"] == "src/softmax.cu"


def test_adversarial_model_turns_refused(captures, tree):
    """A model that tries shell injection, paths outside the tree and a bad section gets typed refusals."""
    art = str(captures.case_dir("cu_softmax_naive"))
    from kernel_profiler.analysis.engine import analyze

    good = analyze([art]).as_answer().model_dump(mode="json")
    m = ScriptedModel([
        call("timeline", 1),
        call("kernel_profile", 2, kernel_regex="softmax_rows; rm -rf ~"),
        call("kernel_profile", 3, kernel_regex="softmax_rows", sections=["SpeedOfLight; id"]),
        call("read_source", 4, path="../../etc/passwd"),
        call("read_source", 5, path="/etc/passwd"),
        call("read_source", 6, path="passwd_link"),
        call("sass", 7, kernel_regex="softmax_rows", source="/bin/ls"),
        call("no_such_tool", 8, argv=["/bin/sh", "-c", "id"]),
        call("submit_answer", 9, **good),
    ])
    r = run_ask("why slow", None, [art], "expert", None, lambda s: None, root=tree, model=m)
    tool_msgs = [req["last"] for req in m.requests[2:9]]
    assert all(t["role"] == "tool" and t["is_error"] for t in tool_msgs)
    assert [t["content"]["error"] for t in tool_msgs] == ["SandboxViolation"] * 7
    assert r.accepted


def test_target_crash_is_typed(tree):
    sb = Sandbox(root=tree, target=[sys.executable, "-c", "import sys; sys.stderr.write('boom: bad shape\\n'); sys.exit(3)"])
    with pytest.raises(TargetFailed, match="status 3.*boom: bad shape"):
        sb.run(sb.target)


def test_target_hang_is_killed(tree):
    sb = Sandbox(root=tree, target=[sys.executable, "-c", "import time; time.sleep(60)"], timeout_s=1)
    with pytest.raises(TargetTimeout, match="longer than 1 s"):
        sb.run(sb.target)


def test_counter_permission_detected(tree):
    msg = "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters"
    sb = Sandbox(root=tree, target=[sys.executable, "-c", f"print({msg!r})"])
    with pytest.raises(CounterPermission, match="CAP_SYS_ADMIN"):
        sb.run(sb.target)


def test_env_passed_explicitly(tree, monkeypatch):
    monkeypatch.setenv("SECRET_TOKEN", "x")
    sb = Sandbox(root=tree, target=[sys.executable, "-c", "import os; print(sorted(os.environ))"])
    out = sb.run(sb.target).stdout
    assert "SECRET_TOKEN" not in out and "PATH" in out


def test_output_capped(tree):
    sb = Sandbox(root=tree, target=[sys.executable, "-c", "print('x' * 1000000)"], output_cap=1000)
    out = sb.run(sb.target).stdout
    assert len(out) < 1100 and "truncated" in out


def test_missing_nsys_says_what_to_do(tree, monkeypatch):
    monkeypatch.setattr(sbx, "find_nsys", lambda: None)
    ctx = ToolContext(sandbox=Sandbox(root=tree, target=[sys.executable, "-c", "pass"]))
    out = call_tool(ctx, "timeline", {})
    assert out.is_error and out.error_type == "ToolMissing" and "Nsight Systems" in out.content["message"]


def test_missing_ncu_says_what_to_do(tree, monkeypatch):
    monkeypatch.setattr(sbx, "find_ncu", lambda: None)
    with pytest.raises(ToolMissing, match="Nsight Compute"):
        Sandbox(root=tree).executable("ncu")


def test_python_target_falls_back_to_the_pytorch_profiler_without_nsys(monkeypatch, tmp_path):
    """No nsys: a `python script.py` target runs under our torch_trace wrapper in its own interpreter."""
    from kernel_profiler.agent import finders, tools
    from kernel_profiler.agent.sandbox import Sandbox

    monkeypatch.setenv("KERNEL_PROFILER_NSYS", "none")
    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    sb = Sandbox(root=tmp_path, target=[sys.executable, str(script), "--steps", "3"])
    seen = {}

    def fake_run(argv, *, label="run", **kw):
        seen["argv"], seen["label"] = argv, label
        sb.check_argv(argv)  # the target's own interpreter is on the allow-list
        out = Path(argv[3])
        out.write_text("{}")
        raise tools.KernelProfilerError("stop here")

    monkeypatch.setattr(sb, "run", fake_run)
    ctx = ToolContext(sandbox=sb)
    res = tools.call_tool(ctx, "timeline", {})
    assert res.is_error and seen["label"] == "torch-profiler"
    assert seen["argv"][1:3] == ["-m", "kernel_profiler.agent.torch_trace"]
    assert seen["argv"][4:] == ["--", str(script), "--steps", "3"]
    assert finders.python_script_target(["python3", "-m", "pkg.train"]) and not finders.python_script_target(["./app"])
