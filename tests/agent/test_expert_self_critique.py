"""The offline expert critiques its own draft before submitting (issue 9): evidence lines the deterministic critic
rejects are dropped, and an answer that still cannot pass is submitted as inconclusive, never as a claim.

The case that would otherwise be rejected is the one seen live on the two-GPU H200: the draft carried the ranks'
"no straggler" evidence line, whose noise threshold is no measured value ('... within 0.004 ms of each other
(noise threshold 0.20 ms)'); the critic rejected it three times and the run ended inconclusive on a correct
diagnosis (transcript of that run: the x2 session's live_nccl.log). The critic now lists such a threshold as
unverified instead of refusing it, so here the same engine line from the real two-rank capture mr_balanced carries
its measured spread mis-copied (x3), which the critic still refuses.

The self-critique checks against the captures the environment loaded for the critic: one ask reads them once."""
from __future__ import annotations

import sys

import pytest

from kernel_profiler.agent.models import expert as expert_mod
from kernel_profiler.agent.models.expert import self_critique
from kernel_profiler.agent.session import run_ask
from kernel_profiler.analysis.engine import diagnose
from kernel_profiler import artifacts
from kernel_profiler.artifacts import load_paths
from kernel_profiler.answer import Answer, Diagnosis, Evidence
from kernel_profiler.critic import critique


def _note_line(d) -> Evidence:
    """The evidence line of the engine's own no-straggler note (the kind of line the critic rejected live)."""
    note = next(f for f in d.secondary if f.evidence and f.evidence[0].metric == "multirank.collective_enter_spread_ns")
    e = note.evidence[0]
    return Evidence(metric=e.metric, value=e.value * 3, unit=e.unit, artifact=e.artifact, meaning=e.meaning)


def _with_rank_note(d) -> Answer:
    a = d.as_answer()
    return a.model_copy(update={"evidence": a.evidence + [_note_line(d)]})


def _critic(arts, d):
    return lambda answer: critique(answer, arts, diagnosis=d)


def test_rejected_evidence_line_is_dropped_and_the_rest_passes(captures):
    path = str(captures.case_dir("mr_balanced"))
    arts = load_paths([path])
    d = diagnose(arts)
    draft = _with_rank_note(d)
    assert critique(draft, arts, diagnosis=d).verdict == "reject"  # would otherwise be rejected
    fixed, notes = self_critique(draft, _critic(arts, d))
    assert critique(fixed, arts, diagnosis=d).verdict == "accept"
    assert [e.metric for e in fixed.evidence] == [e.metric for e in draft.evidence[:-1]]
    assert fixed.bottleneck == draft.bottleneck and len(notes) == 1 and "dropped 1 evidence line" in notes[0]


def test_an_answer_that_cannot_be_repaired_is_submitted_as_inconclusive(captures):
    """A draft written from other captures (another run's numbers) cannot be backed by these ones."""
    other = diagnose(load_paths([captures.case_dir("mr_uneven")])).as_answer()
    arts = load_paths([captures.case_dir("mr_balanced")])
    out, notes = self_critique(other, _critic(arts, diagnose(arts)))
    assert out.bound == "inconclusive" and out.mechanism is None and "as inconclusive" in notes[0]
    assert "straggler" not in out.bottleneck and not any(ch.isdigit() for ch in out.bottleneck + out.explanation)
    assert critique(out, arts).verdict == "accept"


def test_an_accepted_draft_is_left_alone(captures):
    arts = load_paths([captures.case_dir("cu_softmax_naive")])
    d = diagnose(arts)
    a = d.as_answer()
    assert self_critique(a, _critic(arts, d)) == (a, [])
    assert self_critique(a, None) == (a, [])  # nothing to check against (a replay): the draft as it is


def test_ask_never_submits_what_its_critic_rejects(captures, tmp_path, monkeypatch):
    """In a whole ask: the expert's draft carries the rejected line; with the self-critique every submitted answer is
    accepted at once, without it the same draft is rejected until the run ends inconclusive."""
    orig = Diagnosis.as_answer
    line = _note_line(diagnose(load_paths([captures.case_dir("mr_balanced")])))

    def drafts_with_note(d):
        a = orig(d)
        return a.model_copy(update={"evidence": a.evidence + [line]})

    monkeypatch.setattr(Diagnosis, "as_answer", drafts_with_note)
    r = run_ask("why is mr_balanced slow", None, [str(captures.case_dir("mr_balanced"))], "expert",
                str(tmp_path / "a.jsonl"), lambda s: None, root=tmp_path)
    assert r.accepted and not any(v["verdict"] == "reject" for v in r.verdicts)
    assert not any(e.metric == "multirank.collective_enter_spread_ns" for e in r.evidence)
    monkeypatch.setattr(expert_mod, "self_critique", lambda a, check, earlier=(): (a, []))
    r2 = run_ask("why is mr_balanced slow", None, [str(captures.case_dir("mr_balanced"))], "expert",
                 str(tmp_path / "b.jsonl"), lambda s: None, root=tmp_path)
    assert not r2.accepted and r2.inconclusive and r2.verdicts[0]["verdict"] == "reject"


@pytest.mark.parametrize("case, calls", [("cu_softmax_naive", ["timeline", "kernel_profile", "sass", "submit_answer"]),
                                         ("py_tiny_ops", ["timeline", "submit_answer"])])
def test_one_ask_reads_the_captures_once(case, calls, captures, tmp_path, monkeypatch):
    """The tools, the expert's self-critique and the critic share one read of the user's captures (the self-critique
    used to read them again, and the critic a third time)."""
    real, reads = artifacts.load_paths, []

    def counting(paths, *args, **kwargs):
        paths = [str(p) for p in paths]
        reads.append(paths)
        return real(paths, *args, **kwargs)

    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("kernel_profiler") and getattr(mod, "load_paths", None) is real:
            monkeypatch.setattr(mod, "load_paths", counting)
    path = str(captures.case_dir(case))
    r = run_ask(f"why is {case} slow", None, [path], "expert", None, lambda s: None, root=tmp_path)
    assert r.accepted and r.tool_calls == calls
    assert reads == [[path]]
