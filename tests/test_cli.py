"""The command line as a script sees it: exit codes, one-line errors, --json."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "kernel_profiler.cli", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def test_analyze_json_top_level_ids(captures):
    p = run("analyze", captures.case_dir("cu_transpose_conflict"), "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert (d["bound"], d["mechanism"]) == ("memory", "shared_bank_conflict")
    assert len(d["evidence"]) in (2, 3) and d["fix"]["metric"]


def test_ask_json_and_analyze_json_share_one_schema(captures, tmp_path):
    """`ask --json` and `analyze --json` validate against the one schema `kernel-profiler schema` prints, with the
    same ids, evidence and fix fields; `ask --report` writes the answer `ask` gave."""
    jsonschema = pytest.importorskip("jsonschema")
    case = captures.case_dir("cu_transpose_conflict")
    schema = json.loads(run("schema").stdout)
    a = run("analyze", case, "--json")
    html = tmp_path / "ask.html"
    k = run("ask", "why is it slow", "--artifacts", case, "--model", "expert", "--json", "--report", html)
    assert a.returncode == 0 and k.returncode == 0, (a.stderr, k.stderr)
    d, r = json.loads(a.stdout), json.loads(k.stdout)
    for out in (d, r):
        jsonschema.validate(out, schema)
        assert (out["bound"], out["mechanism"]) == ("memory", "shared_bank_conflict")
        assert set(out["fix"]) >= {"change", "metric", "direction", "expected"}
        assert all(set(e) == {"metric", "value", "unit", "artifact", "kernel", "meaning"} for e in out["evidence"])
    assert "primary" in d and "question" in r and r["accepted"] and r["answered"]
    assert (r["bottleneck"], r["evidence"], r["fix"]) == (d["bottleneck"], d["evidence"], d["fix"])
    with pytest.raises(jsonschema.ValidationError):  # the schema does constrain: an unknown mechanism id fails
        jsonschema.validate({**r, "mechanism": "bank_conflicts"}, schema)
    assert "shared_bank_conflict" in html.read_text()


@pytest.mark.parametrize("content", [b"", b"garbage\n", b"SQLite format 3\x00" + b"\x00" * 50, b'{"traceEvents": ['])
def test_bad_input_one_line_exit_2(tmp_path, content):
    f = tmp_path / "capture.bin"
    f.write_bytes(content)
    p = run("analyze", f)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert str(f) in p.stderr
    assert f.read_bytes() == content  # nothing the user had is modified


def test_missing_file_exit_2(tmp_path):
    p = run("analyze", tmp_path / "nope.sqlite")
    assert p.returncode == 2 and "no such file" in p.stderr


def test_schema_is_json():
    p = run("schema")
    s = json.loads(p.stdout)
    assert p.returncode == 0 and all("bound" in s["$defs"][m]["properties"] for m in ("Diagnosis", "AskResult"))


def test_critique_exit_codes(tmp_path, captures):
    case = captures.case_dir("cu_softmax_naive")
    ans = tmp_path / "answer.json"
    ans.write_text(run("analyze", case, "--json").stdout)
    ok = run("critique", ans, "--artifacts", case, "--json")
    assert ok.returncode == 0 and json.loads(ok.stdout)["verdict"] == "accept"
    d = json.loads(ans.read_text())
    d["evidence"][0]["value"] *= 1.5
    ans.write_text(json.dumps(d))
    bad = run("critique", ans, "--artifacts", case, "--json")
    assert bad.returncode == 1 and json.loads(bad.stdout)["verdict"] == "reject"


def test_critique_says_what_a_rejection_rests_on(tmp_path, captures):
    case = captures.case_dir("cu_softmax_naive")
    d = json.loads(run("analyze", case, "--json").stdout)
    unsure = {**d, "fix": {**d["fix"], "metric": None, "direction": None, "expected": "",
                           "change": d["fix"]["change"].split(".")[0] + "."}}
    wrong = {**d, "bound": "host", "mechanism": "host_sync",
             "bottleneck": "The program is host-bound: it synchronizes after every launch."}
    for name, answer, grounds in (("unsure", unsure, "unconfirmed"), ("wrong", wrong, "contradicted")):
        f = tmp_path / f"{name}.json"
        f.write_text(json.dumps(answer))
        p = run("critique", f, "--artifacts", case)
        assert p.returncode == 1 and p.stdout.startswith(f"REJECT ({grounds}"), p.stdout
        j = run("critique", f, "--artifacts", case, "--json")
        assert j.returncode == 1 and json.loads(j.stdout)["grounds"] == grounds


def test_ask_quick_start_offline(tmp_path):
    """The README's `ask` line: no GPU, no key, no artifacts -> the bundled H200 softmax capture."""
    p = subprocess.run([sys.executable, "-m", "kernel_profiler.cli", "ask", "why is my softmax slow"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300,
                       env={k: v for k, v in __import__("os").environ.items() if k != "ANTHROPIC_API_KEY"})
    assert p.returncode == 0, p.stderr
    out = p.stdout.lower()
    for part in ("bottleneck", "evidence", "mechanism", "fix"):
        assert part in out
    assert "uncoalesced" in out or "scattered" in out


def test_report_from_capture_and_transcript(tmp_path, captures):
    from pathlib import Path

    html = tmp_path / "r.html"
    p = run("analyze", captures.case_dir("cu_transpose_conflict"), "--report", html)
    assert p.returncode == 0 and "<svg" in html.read_text() and "shared_bank_conflict" in html.read_text()
    again = run("analyze", captures.case_dir("cu_transpose_conflict"), "--report", html)
    assert again.returncode == 2 and "already exists" in again.stderr  # never overwritten
    transcript = Path(__file__).parent.parent / "transcripts" / "live-h200-softmax.jsonl"
    md = tmp_path / "live.md"
    p = run("report", transcript, "-o", md)
    assert p.returncode == 0 and "uncoalesced_global" in md.read_text()


@pytest.mark.parametrize("name,content", [
    ("nullrank.json", '{"kind": "kernel-profiler.steps", "rank": "x", "step_s": [0.1]}'),
    ("nosamples.json", '{"kind": "kernel-profiler.telemetry", "samples": null}'),
])
def test_malformed_kernel_profiler_json_is_bad_input(tmp_path, name, content):
    f = tmp_path / name
    f.write_text(content)
    p = run("analyze", f)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and name in p.stderr


def test_memsets_only_trace_does_not_crash(tmp_path):
    f = tmp_path / "memsets.json"
    ev = [{"ph": "X", "cat": "gpu_memset", "name": "Memset", "ts": t, "dur": 5, "pid": 0, "tid": 7,
           "args": {"device": 0, "stream": 7}} for t in (1, 7)]
    f.write_text(json.dumps({"traceEvents": ev}))
    p = run("analyze", f, "--json")
    assert p.returncode == 0, p.stderr


def test_non_utf8_answer_is_bad_input(tmp_path, captures):
    f = tmp_path / "answer.md"
    f.write_bytes(b"\xff\xfe\x00bad")
    p = run("critique", f, "--artifacts", captures.case_dir("cu_softmax_naive"))
    assert p.returncode == 2 and "not UTF-8" in p.stderr


# ---------------------------------------------------------------- exit codes, --version, report extension
def test_one_exit_code_table_in_help_and_readme():
    from pathlib import Path

    from kernel_profiler.exitcodes import MEANING, ExitCode, table_markdown

    codes = [int(c) for c in ExitCode]
    assert len(set(codes)) == len(codes) and ExitCode.INTERNAL == 3
    assert ExitCode.WITHIN_NOISE not in (ExitCode.INTERNAL, ExitCode.USAGE, ExitCode.REJECTED)
    assert ExitCode.DIVERGED not in (ExitCode.INTERNAL, ExitCode.USAGE, ExitCode.REJECTED)
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    assert table_markdown() in readme  # the README shows the same table, generated from exitcodes.py
    help_text = run("--help").stdout
    for c in ExitCode:
        assert f"{int(c):>3}  {MEANING[c].replace('`', '')}"[:60] in help_text


def test_errors_use_the_table():
    from kernel_profiler.agent.protocol import ReplayDivergence
    from kernel_profiler.agent.sandbox import SandboxViolation
    from kernel_profiler.errors import KernelProfilerError
    from kernel_profiler.exitcodes import ExitCode
    from kernel_profiler.verify.result import EXIT_IMPROVED, EXIT_REGRESSED, EXIT_WITHIN_NOISE

    assert KernelProfilerError.exit_code == SandboxViolation.exit_code == ExitCode.USAGE
    assert ReplayDivergence.exit_code == ExitCode.DIVERGED
    assert (EXIT_IMPROVED, EXIT_REGRESSED, EXIT_WITHIN_NOISE) == (ExitCode.OK, ExitCode.REJECTED, ExitCode.WITHIN_NOISE)


def test_version():
    from kernel_profiler import __version__

    p = run("--version")
    assert p.returncode == 0 and p.stdout.strip() == f"kernel-profiler {__version__}"


def test_replay_divergence_exits_4(tmp_path):
    from pathlib import Path

    src = Path(__file__).parent.parent / "transcripts" / "live-h200-softmax.jsonl"
    events = [json.loads(line) for line in src.read_text().splitlines()]
    final = next(e for e in events if e.get("event") == "answer" and e.get("final"))
    final["answer"]["bottleneck"] += " (edited after recording)"  # the re-run cannot reproduce this answer
    bad = tmp_path / "edited.jsonl"
    bad.write_text("".join(json.dumps(e) + "\n" for e in events))
    assert run("replay", src).returncode == 0
    p = run("replay", bad)
    assert p.returncode == 4 and "differs from the recorded one" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.parametrize("name", ["x.txt", "x.pdf", "x"])
def test_report_refuses_unknown_extensions(tmp_path, name):
    from pathlib import Path

    out = tmp_path / name
    p = run("report", Path(__file__).parent.parent / "transcripts" / "live-h200-softmax.jsonl", "-o", out)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and ".html" in p.stderr
    assert not out.exists()


def test_analyze_report_must_be_html(tmp_path, captures):
    p = run("analyze", captures.case_dir("cu_softmax_naive"), "--report", tmp_path / "r.txt")
    assert p.returncode == 2 and not (tmp_path / "r.txt").exists()


# ---------------------------------------------------------------- ask says what it answered
def _ask(*args, cwd, **more_env):
    import os

    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"} | more_env
    return subprocess.run([sys.executable, "-m", "kernel_profiler.cli", "ask", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=300, env=env)


def test_ask_off_topic_question_says_demo_first(tmp_path):
    p = _ask("why is my GEMM slow", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    first = p.stdout.lstrip().splitlines()[0]
    assert "bundled demo" in first and "not your program" in first and "not about this softmax" in first
    j = _ask("why is my GEMM slow", "--json", cwd=tmp_path)
    d = json.loads(j.stdout)
    assert list(d)[:2] == ["source", "source_note"] and d["source"] == "demo" and "softmax" in d["source_note"]


def test_ask_from_given_captures_says_nothing_extra(tmp_path, captures):
    p = _ask("why is my softmax slow", "--artifacts", captures.case_dir("cu_softmax_naive"), "--json", cwd=tmp_path)
    d = json.loads(p.stdout)
    assert d["source"] == "artifacts" and d["source_note"] is None


@pytest.mark.parametrize("cmd,said", [([], "nothing after `--`"), (["./nonexistent_app"], "no such file"),
                                      (["no-such-program-kp"], "command not found"),
                                      (["python3", "missing_bench.py"], "no such file")])
def test_ask_empty_or_missing_program_is_usage_error(tmp_path, cmd, said):
    p = _ask("q", "--", *cmd, cwd=tmp_path)
    assert p.returncode == 2 and said in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1  # one line, before any profiling (no progress lines)
    assert p.stdout == "" and not any(tmp_path.iterdir())


def test_ask_repeated_critic_rejection_printed_once(tmp_path):
    """A real Python program, nsys hidden, and its timeline cannot be recorded by the PyTorch profiler either (no
    torch, or no kernels): every attempt is rejected for the same reason; it is printed once."""
    (tmp_path / "app.py").write_text("print('no GPU work')\n")
    p = _ask("why is it slow", "--", sys.executable, "app.py", cwd=tmp_path, KERNEL_PROFILER_NSYS="none")
    rejected = [line for line in p.stderr.splitlines() if line.startswith("... critic: rejected (")]
    assert len(rejected) == 1 and "rejected again, for the same reasons" in p.stderr
    why = p.stdout.split("## Why inconclusive", 1)[1].split("##", 1)[0]
    reasons = [line for line in why.splitlines() if line.startswith("- ")]
    assert reasons and len(reasons) == len(set(reasons))


def test_ask_without_nsys_is_a_missing_tool(tmp_path):
    """A real non-Python program, no nsys (KERNEL_PROFILER_NSYS names nothing), the offline expert: exit 2 and one
    line naming nsys and how to get it, instead of an inconclusive answer; nothing runs, nothing is written."""
    import os
    import shutil

    work = tmp_path / "work"
    work.mkdir()
    app = work / "real_app"
    shutil.copy("/bin/true", app)
    before = sorted(p.name for p in work.iterdir())
    missing = tmp_path / "no-nsys-here" / "nsys"
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["KERNEL_PROFILER_NSYS"] = str(missing)
    p = subprocess.run([sys.executable, "-m", "kernel_profiler.cli", "ask", "why slow", "--", "./real_app"],
                       capture_output=True, text=True, cwd=work, timeout=300, env=env)
    assert p.returncode == 2, p.stdout + p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    assert "`nsys`" in lines[0] and "Nsight Systems" in lines[0] and "KERNEL_PROFILER_NSYS" in lines[0]
    assert str(missing) in lines[0] and "--artifacts" in lines[0]
    assert p.stdout == "" and sorted(p.name for p in work.iterdir()) == before



def test_an_acceptance_without_a_recognised_cause_says_so(tmp_path, captures):
    from kernel_profiler.critic import Verdict
    from kernel_profiler.render.markdown import verdict_text

    assert verdict_text(Verdict(verdict="accept")).startswith("ACCEPT (no mechanism recognised")
    assert verdict_text(Verdict(verdict="accept", mechanism="near_peak")) == "ACCEPT"
    assert "no mechanism recognised" not in verdict_text(Verdict(verdict="reject", failed={"parts": ["x"]},
                                                                 reasons=["x"], grounds="unconfirmed"))
    own = tmp_path / "own.json"  # the engine's own answer names its cause: a plain ACCEPT
    own.write_text(run("analyze", captures.case_dir("cu_softmax_naive"), "--json").stdout)
    q = run("critique", own, "--artifacts", captures.case_dir("cu_softmax_naive"))
    assert q.returncode == 0 and q.stdout.strip() == "ACCEPT", q.stdout
