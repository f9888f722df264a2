"""Reports of recorded runs (runs.py): a transcript's report shows the answer that run gave, not a new decision."""
from __future__ import annotations

import subprocess
import sys

from kernel_profiler.agent.session import run_ask
from kernel_profiler.analysis.engine import analyze
from kernel_profiler.render.markdown import markdown
from kernel_profiler.runs import accepted_answer, report_for

from agent.scripted import ScriptedModel, call


def _recorded(captures, tmp_path):
    """A run recorded with a model whose accepted answer words the bottleneck and the fix differently from the
    engine: the numbers, ids and mechanism are the engine's (so the critic accepts it), the sentences are not."""
    art = str(captures.case_dir("cu_tiny_launches"))
    engine = analyze([art])
    own = engine.as_answer().model_dump(mode="json")
    own["bottleneck"] = "The GPU sits idle between launches: the host issues many tiny kernels one by one."
    own["fix"]["change"] = "Capture the loop of launches once as a CUDA graph and replay it each step."
    rec = tmp_path / "run.jsonl"
    r = run_ask("why is it slow", None, [art], "expert", str(rec), lambda s: None, root=tmp_path,
                model=ScriptedModel([call("timeline", 1), call("submit_answer", 2, **own)]))
    assert r.accepted, r.verdicts
    return engine, own, rec


def test_report_of_a_transcript_is_the_accepted_answer(captures, tmp_path):
    engine, own, rec = _recorded(captures, tmp_path)
    assert own["bottleneck"] != engine.bottleneck  # what the engine decides now differs from what was accepted
    d, rooflines = report_for(rec)
    assert (d.bottleneck, d.fix.change, d.mechanism, d.bound) == (own["bottleneck"], own["fix"]["change"],
                                                                   "launch_overhead", "host")
    assert d.primary is None  # no engine finding stands in for the answer
    # the measurements behind it come from the recorded timeline result
    assert d.timeline is not None and d.timeline.busy_fraction == engine.timeline.busy_fraction
    assert d.device == engine.device and d.artifacts and rooflines == []
    md = markdown(d)
    assert own["bottleneck"] in md and engine.bottleneck not in md
    res, _results = accepted_answer(rec)
    assert res.accepted and res.as_answer() == d.as_answer()


def test_report_command_writes_the_accepted_answer(captures, tmp_path):
    _engine, own, rec = _recorded(captures, tmp_path)
    for out in (tmp_path / "r.md", tmp_path / "r.html"):
        p = subprocess.run([sys.executable, "-m", "kernel_profiler.cli", "report", str(rec), "-o", str(out)],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        assert own["fix"]["change"] in out.read_text()
