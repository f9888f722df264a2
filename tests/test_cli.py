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
    assert p.returncode == 0 and "bound" in json.loads(p.stdout)["properties"]


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
