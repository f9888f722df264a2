"""`critique --review claude`: the model reviewer of `ask` judges an answer handed to `critique`, through the fake
Messages API (tests/agent/fake_messages_api.py: it enforces the documented request rules and answers in the real
response shapes). The answers are the engine's own on a real H200 capture (cu_softmax_naive), changed in one part."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from .fake_messages_api import API_KEY, FakeMessagesAPI, reply, text

CASE = "cu_softmax_naive"


class Reviewer:
    """Answers each structured review request with the next verdict; any other request is a test failure."""

    def __init__(self, *verdicts: dict):
        self.verdicts = list(verdicts)
        self.prompts: list[str] = []

    def __call__(self, req):
        assert req.structured is not None, "critique --review sends only the structured review request"
        self.prompts.append(req.user_text())
        return reply(text(json.dumps(self.verdicts.pop(0))))


def _answers(captures, tmp_path) -> tuple[str, dict[str, str]]:
    case = str(captures.case_dir(CASE))
    d = json.loads(subprocess.run([sys.executable, "-m", "kernel_profiler.cli", "analyze", case, "--json"],
                                  capture_output=True, text=True, check=True).stdout)
    variants = {
        "good": d,
        "unsure": {**d, "fix": {**d["fix"], "metric": None, "direction": None, "expected": "",
                                "change": d["fix"]["change"].split(".")[0] + "."}},
        "wrong": {**d, "bound": "host", "mechanism": "host_sync",
                  "bottleneck": "The program is host-bound: it synchronizes after every launch."},
    }
    out = {}
    for name, a in variants.items():
        out[name] = str(tmp_path / f"{name}.json")
        (tmp_path / f"{name}.json").write_text(json.dumps(a))
    return case, out


def _critique(api, answer: str, case: str, *extra: str, key: bool = True) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")}
    if key:
        env.update(ANTHROPIC_API_KEY=API_KEY, ANTHROPIC_BASE_URL=api.url)
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    return subprocess.run([sys.executable, "-m", "kernel_profiler.cli", "critique", answer, "--artifacts", case,
                           "--review", "claude", *extra], capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture(scope="module")
def answers(captures, tmp_path_factory):
    return _answers(captures, tmp_path_factory.mktemp("second_opinion"))


def test_the_review_settles_a_rejection_the_checks_could_not_confirm(answers):
    case, a = answers
    brain = Reviewer({"verdict": "accept", "reasons": []})
    with FakeMessagesAPI(brain) as api:
        p = _critique(api, a["unsure"], case)
    assert api.violations == [] and p.returncode == 0, p.stderr
    assert p.stdout.startswith("ACCEPT (the model review by claude:") and "the checks said REJECT" in p.stdout
    prompt = brain.prompts[0]
    assert "## Unconfirmed" in prompt and "The fix names no metric" in prompt
    assert "### analyze" in prompt and "softmax" in prompt  # the engine's analysis is the reviewer's tool result


def test_a_contradicted_rejection_stands_without_a_request(answers):
    case, a = answers
    with FakeMessagesAPI(Reviewer()) as api:
        p = _critique(api, a["wrong"], case, "--json")
    assert p.returncode == 1 and api.requests == []
    v = json.loads(p.stdout)
    assert v["verdict"] == "reject" and v["grounds"] == "contradicted" and v["review"] is None


def test_the_review_can_reject_what_the_checks_accept(answers):
    case, a = answers
    why = "The fix does not say how the softmax rows are laid out after the change."
    with FakeMessagesAPI(Reviewer({"verdict": "reject", "reasons": [why]})) as api:
        p = _critique(api, a["good"], case, "--json")
    assert api.violations == [] and p.returncode == 1, p.stderr
    v = json.loads(p.stdout)
    assert v["verdict"] == "reject" and v["failed"] == {} and v["grounds"] is None
    assert v["review"]["verdict"] == "reject" and v["review"]["reasons"] == [why]
    assert v["review"]["model"].startswith("claude:")


def test_an_outage_leaves_the_checks_verdict_with_a_notice(answers):
    case, a = answers
    with FakeMessagesAPI(Reviewer()) as api:
        api.fail(500, 500, 500, 500)  # the first try and the SDK's three retries
        p = _critique(api, a["unsure"], case)
    assert api.brain_errors == [] and len(api.requests) == 4
    assert p.returncode == 1 and p.stdout.startswith("REJECT (unconfirmed")
    assert "the model review did not run" in p.stderr and "Traceback" not in p.stderr


def test_review_needs_a_key_and_a_model(answers):
    case, a = answers
    with FakeMessagesAPI(Reviewer()) as api:
        p = _critique(api, a["good"], case, key=False)
        q = _critique(api, a["good"], case, "--review", "expert")
    assert p.returncode == 2 and "ANTHROPIC_API_KEY" in p.stderr and "Traceback" not in p.stderr
    assert q.returncode == 2 and "the reviewer is a model" in q.stderr
    assert api.requests == []


def test_the_score_bench_runs_the_reviewer_on_what_it_settles(tmp_path):
    """bench/critic_score.py --review: the reviewer is asked about every answer the checks accept or could not
    confirm, and no other; a reviewer that accepts everything lifts exactly the unconfirmed rejections."""
    import re
    from pathlib import Path

    bench = Path(__file__).resolve().parents[2] / "bench" / "critic_score.py"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    checks = subprocess.run([sys.executable, str(bench), "adversarial_holdout"], capture_output=True, text=True,
                            env=env, timeout=600)
    fa, n_rej, fr, n_acc, u_fr, u_tr = map(int, re.search(
        r"false accepts (\d+)/(\d+).*false rejects (\d+)/(\d+).*unconfirmed: (\d+) of the false rejects, (\d+) of",
        checks.stdout).groups())
    brain = Reviewer(*[{"verdict": "accept", "reasons": []}] * (n_acc + n_rej))
    with FakeMessagesAPI(brain) as api:
        p = subprocess.run([sys.executable, str(bench), "adversarial_holdout", "--review", "claude"],
                           capture_output=True, text=True, timeout=900,
                           env={**env, "ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": api.url})
    assert p.returncode == 0 and api.violations == [], p.stderr
    accepted = (n_acc - fr) + fa
    assert len(api.requests) == accepted + u_fr + u_tr
    assert f"false accepts {fa + u_tr}/{n_rej}" in p.stdout and f"false rejects {fr - u_fr}/{n_acc}" in p.stdout
