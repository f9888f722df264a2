"""Regression tests for review findings: sandboxed SASS sources, ncu report discovery, the critic's cache,
single definitions shared by the agent modules, and typed errors for bad transcripts."""
from __future__ import annotations

import importlib.util
import json
import lzma
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from kernel_profiler.agent import context, environment, order, orchestrator, tools
from kernel_profiler.agent import transcript as tx
from kernel_profiler.agent.models import expert
from kernel_profiler.agent.session import replay, run_ask
from kernel_profiler.agent.sandbox import Sandbox
from kernel_profiler.agent.context import ToolContext
from kernel_profiler.agent.tools import call_tool
from kernel_profiler.analysis import decide
from kernel_profiler.analysis.decide import STARTUP_NOTE_MIN_NS
from kernel_profiler.errors import ArtifactError, KernelProfilerError
from kernel_profiler.runs import diagnosis_from_transcript

from .scripted import ScriptedModel, call

CAPTURES = Path(__file__).parent.parent / "data" / "captures"
TRANSCRIPTS = Path(__file__).parent.parent.parent / "transcripts"
ELF = b"\x7fELF" + b"\x00" * 60


# ------------------------------------------------------------------ 1. sass: no cubin from outside the tree
@pytest.fixture
def dumped(monkeypatch):
    """Record the binaries the sass tool would hand to cuobjdump (none is run)."""
    seen: list[Path] = []

    def fake(ctx, binary):
        seen.append(Path(binary))
        return []

    monkeypatch.setattr(environment, "cuobjdump", fake)
    return seen


def _tree_with_escaping_cubin(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "tree", tmp_path / "outside"
    (root / "cubins").mkdir(parents=True)
    outside.mkdir()
    secret = outside / "secret.cubin"
    secret.write_bytes(ELF)
    (root / "cubins" / "evil.cubin").symlink_to(secret)
    return root, secret


def test_sass_folder_skips_cubin_symlinked_outside_the_tree(tmp_path, dumped):
    root, secret = _tree_with_escaping_cubin(tmp_path)
    (root / "cubins" / "mine.cubin").write_bytes(ELF)
    ctx = ToolContext(sandbox=Sandbox(root=root, scratch=tmp_path / "scratch"), method_order=False)
    out = call_tool(ctx, "sass", {"kernel_regex": "k", "source": "cubins"})
    assert out.is_error  # no function matches (cuobjdump faked): the point is what was dumped
    assert dumped == [(root / "cubins" / "mine.cubin").resolve()]
    assert all(p.resolve().is_relative_to(root.resolve()) for p in dumped)


def test_sass_folder_of_only_escaping_cubins_is_refused(tmp_path, dumped):
    root, _ = _tree_with_escaping_cubin(tmp_path)
    ctx = ToolContext(sandbox=Sandbox(root=root, scratch=tmp_path / "scratch"), method_order=False)
    out = call_tool(ctx, "sass", {"kernel_regex": "k", "source": "cubins"})
    assert out.is_error and out.error_type == "SandboxViolation"
    assert "evil.cubin" in out.content["message"]
    assert dumped == []


def test_triton_cache_cubins_must_stay_inside_the_cache(tmp_path, dumped):
    root, cache, outside = tmp_path / "tree", tmp_path / "triton", tmp_path / "outside"
    for d in (root, cache / "abc", outside):
        d.mkdir(parents=True)
    (cache / "abc" / "kern.cubin").write_bytes(ELF)
    (outside / "secret.cubin").write_bytes(ELF)
    (cache / "abc" / "evil.cubin").symlink_to(outside / "secret.cubin")
    sb = Sandbox(root=root, scratch=tmp_path / "scratch")
    sb.env = dict(sb.env, TRITON_CACHE_DIR=str(cache))
    ctx = ToolContext(sandbox=sb, method_order=False)
    call_tool(ctx, "sass", {"kernel_regex": "k", "source": "triton-cache"})
    assert dumped == [(cache / "abc" / "kern.cubin").resolve()]


# ------------------------------------------------------------------ 2. ncu reports among the artifacts
def test_corrupt_ncu_rep_xz_is_a_typed_error(tmp_path):
    good = (CAPTURES / "cu_softmax_naive" / "ncu.ncu-rep.xz").read_bytes()
    bad = tmp_path / "art" / "ncu.ncu-rep.xz"
    bad.parent.mkdir()
    bad.write_bytes(good[: len(good) // 2])  # truncated: lzma raises EOFError mid-stream
    ctx = ToolContext(sandbox=Sandbox(root=tmp_path, scratch=tmp_path / "scratch"), artifacts=[str(bad.parent)], method_order=False)
    with pytest.raises(ArtifactError, match="corrupt or truncated"):
        ctx.user_artifacts()
    out = call_tool(ctx, "sass", {"kernel_regex": "softmax"})
    assert out.is_error and out.error_type == "ArtifactError"


@pytest.mark.skipif(importlib.util.find_spec("ncu_report") is None, reason="needs the ncu_report wheel")
def test_same_named_reports_in_two_folders_both_found_once(tmp_path, captures, monkeypatch):
    """Two `ncu.ncu-rep.xz` in two folders: the artifact readers decompress each once and the SASS of both reaches
    the sass tool, citing the user's files."""
    from kernel_profiler import artifacts

    cases = ("cu_softmax_naive", "cu_vec_copy")
    folders = []
    for case in cases:
        d = tmp_path / "runs" / case
        d.mkdir(parents=True)
        (d / "ncu.ncu-rep.xz").write_bytes((CAPTURES / case / "ncu.ncu-rep.xz").read_bytes())
        folders.append(str(d))
    calls = []
    real = artifacts._decompress_xz
    monkeypatch.setattr(artifacts, "_decompress_xz", lambda p, d: calls.append(p) or real(p, d))
    ctx = ToolContext(sandbox=Sandbox(root=tmp_path, scratch=tmp_path / "scratch"), artifacts=folders,
                      method_order=False)
    arts = ctx.user_artifacts()
    assert ctx.user_artifacts() is arts and len(calls) == 2  # cached: not decompressed again
    sources = {f.source for f in arts.sass}
    assert sources == {str(Path(f) / "ncu.ncu-rep.xz") for f in folders}
    out = call_tool(ctx, "sass", {"kernel_regex": "softmax"})
    assert not out.is_error and out.content["source"] == str(Path(folders[0]) / "ncu.ncu-rep.xz")
    assert len(calls) == 2


# ------------------------------------------------------------------ 3. the critic's artifacts and diagnosis
def test_collected_artifacts_and_diagnosis_are_cached_until_produced_changes(tmp_path, captures, monkeypatch):
    loads, diags = [], []
    real_load, real_diag = context.load_paths, context.engine_diagnose
    monkeypatch.setattr(context, "load_paths", lambda p: loads.append(list(p)) or real_load(p))
    monkeypatch.setattr(context, "engine_diagnose", lambda a: diags.append(a) or real_diag(a))
    ctx = ToolContext(sandbox=Sandbox(root=tmp_path, scratch=tmp_path / "scratch"),
                      artifacts=[str(captures.path("cu_softmax_naive", "nsys.sqlite"))])
    a1, d1 = ctx.collected_artifacts(), ctx.collected_diagnosis()
    assert ctx.collected_artifacts() is a1 and ctx.collected_diagnosis() is d1
    assert len(loads) == 1 and len(diags) == 1
    ctx.produced.append(str(captures.path("cu_softmax_naive", "ncu_raw.csv")))
    a2, d2 = ctx.collected_artifacts(), ctx.collected_diagnosis()
    assert a2 is not a1 and d2 is not d1 and len(loads) == 2 and len(diags) == 2
    assert len(a2.kernel_profiles) > len(a1.kernel_profiles)


def test_critic_gets_one_cached_diagnosis_across_answers(captures, tmp_path, monkeypatch):
    import kernel_profiler.critic as critic

    seen = []
    real = critic.critique
    monkeypatch.setattr(critic, "critique", lambda a, arts, diagnosis=None: seen.append(diagnosis) or real(a, arts, diagnosis))
    art = str(captures.case_dir("cu_softmax_naive"))
    invented = {"bottleneck": "softmax_rows is memory-bound.",
                "evidence": [{"metric": "dram__bytes_read.sum", "value": 123456789.0, "unit": "byte",
                              "artifact": "ncu.ncu-rep"}],
                "explanation": "Invented.", "fix": {"change": "Coalesce the loads.", "metric": "dram__bytes_read.sum",
                                                    "direction": "decrease"}}
    m = ScriptedModel([call("timeline", 1)] + [call("submit_answer", i, **invented) for i in (2, 3, 4)])
    r = run_ask("q", None, [art], "expert", None, lambda s: None, root=tmp_path, model=m)
    assert not r.accepted and len(seen) == 3
    assert seen[0] is not None and all(d is seen[0] for d in seen)


# ------------------------------------------------------------------ 4. one definition each
def test_shared_definitions_are_single():
    assert orchestrator.TIMELINE_VERDICTS is decide.TIMELINE_VERDICTS
    assert expert.TIMELINE_VERDICTS is decide.TIMELINE_VERDICTS
    assert orchestrator.order_violation is order.order_violation  # one method for ask, MCP and replay


def test_timeline_startup_note_follows_the_engine_rule():
    def tres(startup_ns, window_ns):
        summary = SimpleNamespace(startup_ns=startup_ns, window_ns=window_ns, capture_ns=startup_ns + window_ns,
                                  source="nsys.sqlite")
        t = SimpleNamespace(summary=summary, onetime=None, verdict="kernel")
        return decide.TimelineStage(timeline=None, triage=t, ranks=None, answer=[], notes=[], timeline_only=None)

    # longer than the window but shorter than STARTUP_NOTE_MIN_NS: the engine notes nothing, neither does the tool
    assert tres(0.5 * STARTUP_NOTE_MIN_NS, 0.1 * STARTUP_NOTE_MIN_NS).startup_note() is None
    assert tres(2 * STARTUP_NOTE_MIN_NS, 3 * STARTUP_NOTE_MIN_NS).startup_note() is None
    note = tres(2 * STARTUP_NOTE_MIN_NS, 0.1 * STARTUP_NOTE_MIN_NS).startup_note()
    assert note is not None and note.mechanism == "startup_dominated"


# ------------------------------------------------------------------ 5./6. bad transcripts: typed, one line
def _transcript_lines() -> list[str]:
    return (TRANSCRIPTS / "expert_cu_softmax_naive.jsonl").read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("bad, line, what", [
    (b'{"format_version": 1, "question": "q"}\n\xff\xfe{"event": "notice"}\n', 2, "UTF-8"),
    (b'{"format_version": 1, "question": "q"}\n[1]\n', 2, "not a JSON object"),
    (b'[1]\n', 1, "not a JSON object"),
    (b'7\n', 1, "not a JSON object"),
    (b'{"format_version": 1, "question": "q"}\n{"seq": 1}\n', 2, "event"),
])
def test_bad_transcript_is_a_typed_error(tmp_path, bad, line, what):
    f = tmp_path / "t.jsonl"
    f.write_bytes(bad)
    with pytest.raises(tx.TranscriptError, match=what) as e:
        replay(f)
    assert f"{f}:{line}:" in str(e.value)


@pytest.mark.parametrize("bad", [b'{"format_version": 1, "question": "q"}\n\xff\n', b'{"format_version": 1}\n[1]\n'])
def test_replay_cli_bad_transcript_one_line_exit_2(tmp_path, bad):
    f = tmp_path / "t.jsonl"
    f.write_bytes(bad)
    p = subprocess.run([sys.executable, "-m", "kernel_profiler.cli", "replay", str(f)], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1 and str(f) in p.stderr


def test_report_transcript_uses_the_transcript_reader(tmp_path):
    lines = _transcript_lines()
    good = tmp_path / "good.jsonl"
    good.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert diagnosis_from_transcript(good).bottleneck
    header = json.loads(lines[0])
    newer = tmp_path / "newer.jsonl"
    newer.write_text("\n".join([json.dumps(dict(header, format_version=99))] + lines[1:]) + "\n", encoding="utf-8")
    with pytest.raises(ArtifactError, match="transcript format 99"):
        diagnosis_from_transcript(newer)
    not_obj = tmp_path / "not_obj.jsonl"
    not_obj.write_text("\n".join(lines[:3] + ["[1]"] + lines[3:]) + "\n", encoding="utf-8")
    with pytest.raises(KernelProfilerError, match=r":4: not a JSON object"):
        diagnosis_from_transcript(not_obj)


def test_cuobjdump_sass_is_among_the_captures_the_critic_reads(tmp_path, monkeypatch):
    """SASS the sass tool dumped with cuobjdump is a capture: the critic must read the dump the counts came from
    (the real cuobjdump listing of cu_transpose_conflict stands in for cuobjdump's output)."""
    from kernel_profiler.agent.sandbox import RunResult

    listing = lzma.open(CAPTURES / "cu_transpose_conflict" / "sass.txt.xz", "rt").read()
    sb = Sandbox(root=tmp_path, scratch=tmp_path / "scratch")
    monkeypatch.setattr(sb, "executable", lambda name: "/stand-in/" + name)
    monkeypatch.setattr(sb, "run", lambda argv, label="run", **kw: RunResult(argv, 0, listing, "", 0.1))
    ctx = ToolContext(sandbox=sb, method_order=False)
    fns = environment.cuobjdump(ctx, tmp_path / "transpose")
    assert any("transpose" in f.name for f in fns)
    assert len(ctx.produced) == 1 and ctx.produced[0].endswith("transpose.sass.txt")
    arts = ctx.collected_artifacts()
    assert arts is not None and arts.sass, "the critic's captures hold no SASS"
