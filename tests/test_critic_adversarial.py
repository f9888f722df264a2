"""The critic on the adversarial answer set (tests/data/adversarial: 73 answers over 19 capture-suite cases,
written from GPU knowledge without reading the critic's code).

Issue 10's goal is at most 5% false accepts and at most 10% false rejects. Measured on 2026-11-30: the critic
before its rewrite had 13/44 false accepts (30%) and 24/29 false rejects (83%); the rewritten critic 3/44 (7%)
and 24/29 (83%); after reading ratio evidence lines as prose and 'floor' as a ceiling's context, 3/44
(7%) and 22/29 (76%); after ceilings-as-references, API statistics as facts, declared derivations (product
with an architecture constant, time at a rate, complement, chaining), the occupancy signature's issue-rate test
and pageable copies contradicting 'transfer volume', 0/44 (0%) and 11/29 (38%); with inequalities, lane strides
checked against sectors per request, clause-local program-time words and evidence lines scoped to their kernel,
0/44 (0%) and 2/29 (7%): issue 10's goal is met on this set (the independent holdout set is scored apart). This
test is a ratchet that fails if either count gets worse, and
prints every miss so the next change can be judged on it. Lower the bounds as the critic improves; never raise
them, and never edit the set to suit the critic (tests/data/adversarial/README.md)."""
from __future__ import annotations

import tomllib
from pathlib import Path

from kernel_profiler.critic import AnswerFormatError, critique_text

ROOT = Path(__file__).parent / "data" / "adversarial"
MAX_FALSE_ACCEPTS = 0   # of 44 expected rejects
MAX_FALSE_REJECTS = 2   # of 29 expected accepts


def test_adversarial_set_false_accepts_and_rejects(captures):
    answers = tomllib.loads((ROOT / "cases.toml").read_text())["answer"]
    false_accepts, false_rejects, unreadable = [], [], []
    for a in answers:
        paths = [captures.path(a["case"], name) for name in a["artifacts"]]
        try:
            verdict = critique_text((ROOT / a["file"]).read_text(), paths)
        except AnswerFormatError as e:
            unreadable.append(f"{a['id']}: {e}")
            continue
        if verdict.verdict != a["expected"]:
            (false_accepts if a["expected"] == "reject" else false_rejects).append(
                f"{a['id']} ({a['category']}): {'; '.join(verdict.reasons)[:300]}")
    report = "\n".join(["false accepts:", *false_accepts, "false rejects:", *false_rejects, "unreadable:", *unreadable])
    assert not unreadable, report
    assert len(false_accepts) <= MAX_FALSE_ACCEPTS, report
    assert len(false_rejects) <= MAX_FALSE_REJECTS, report
