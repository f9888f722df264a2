"""Shape of the adversarial answer sets: it must not rot.

tests/data/adversarial is the set the critic is developed against; tests/data/adversarial_holdout was written
later, blind (a development set since its one blind score); tests/data/adversarial_blind2 and
tests/data/adversarial_blind3 are two more blind sets over captures no earlier set uses (blind2 became a
development set after its blind scores; blind3 is scored, never tuned on); tests/data/adversarial_blind4 is a
blind set of half correct answers, most of them on six "fresh" cases no other set uses, the rest on reused cases
(each answer says which with `fresh`); tests/data/adversarial_blind5 is a blind set over the holdout-5 captures
(suite/holdout5.toml), programs written and captured after the critic, that no other set uses.
These tests check only that each set is complete and points at real captures; they never run the critic
(bench/critic_score.py scores the sets, tests/test_critic_adversarial.py holds the ratchet on the first)."""
from __future__ import annotations

import json
import tomllib
from collections import Counter

import pytest

from conftest import CAPTURES, DATA

MIN_ANSWERS = {"adversarial": 40, "adversarial_holdout": 30, "adversarial_blind2": 45, "adversarial_blind3": 45,
               "adversarial_blind4": 60, "adversarial_blind5": 40}
SETS = list(MIN_ANSWERS)
# sets written on 2026-12-01/03 by helpers that never read the critic (blind6-blind81): checked for shape, not for the mix
# of categories their writers chose (blind10 names its categories in finer words)
LATER = [f"adversarial_blind{i}" for i in range(6, 82)]
CATEGORIES = {"correct", "counter_dump", "wrong_mechanism", "wrong_bound", "fabricated", "injection",
              "wrong_direction"}
ALIASES = {"fabricated_numbers": "fabricated", "twin_numbers": "fabricated", "datasheet_as_measured": "fabricated",
           "one_time_as_steady": "wrong_bound", "wrong_fix": "wrong_direction"}
FIELDS = {"id", "file", "case", "artifacts", "expected", "category", "why"}


def answers(name: str) -> list[dict]:
    return tomllib.loads((DATA / name / "cases.toml").read_text())["answer"]


@pytest.mark.parametrize("name", SETS + LATER)
def test_every_entry_has_its_fields(name):
    for a in answers(name):
        missing = FIELDS - a.keys()
        assert not missing, f"{a.get('id')}: missing {missing}"
        assert a["expected"] in {"accept", "reject"}, a["id"]
        assert ALIASES.get(a["category"], a["category"]) in CATEGORIES, a["id"]
        assert (a["category"] == "correct") == (a["expected"] == "accept"), a["id"]
        assert a["why"].strip(), a["id"]
        assert a["artifacts"], a["id"]


@pytest.mark.parametrize("name", SETS + LATER)
def test_ids_unique_and_files_exist(name):
    ids = [a["id"] for a in answers(name)]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]
    for a in answers(name):
        path = DATA / name / a["file"]
        assert path.is_file(), f"{a['id']}: no file {a['file']}"
        assert path.stat().st_size > 100, f"{a['id']}: answer too short"
        if path.suffix == ".json":
            d = json.loads(path.read_text())
            assert isinstance(d, dict), a["id"]  # an object: the Diagnosis shape, or a free-form JSON message as an
            # agent or a script may write one (blind38's four JSON answers: a summary, what/value/source items), which
            # the critic refuses as unreadable: a false reject when the answer is correct


@pytest.mark.parametrize("name", SETS + LATER)
def test_every_file_is_listed(name):
    listed = {a["file"] for a in answers(name)}
    on_disk = {f"answers/{p.name}" for p in (DATA / name / "answers").iterdir()}
    assert on_disk == listed, on_disk ^ listed


@pytest.mark.parametrize("a", [a for name in SETS + LATER for a in answers(name)], ids=lambda a: a["id"])
def test_case_and_artifacts_exist(a):
    case = CAPTURES / a["case"]
    assert case.is_dir(), f"no capture folder {a['case']}"
    for name in a["artifacts"]:
        assert any((case / f"{name}{ext}").is_file() for ext in ("", ".xz", ".gz")), f"{a['case']}: no {name}"


@pytest.mark.parametrize("name", SETS)
def test_size_coverage_and_mix(name):
    rows = answers(name)
    assert len(rows) >= MIN_ANSWERS[name]
    assert len({a["case"] for a in rows}) >= 8
    verdicts = Counter(a["expected"] for a in rows)
    assert verdicts["accept"] and verdicts["reject"]
    assert 0.3 <= verdicts["accept"] / len(rows) <= 0.5
    cats = Counter(a["category"] for a in rows)
    assert all(cats[c] >= 3 for c in CATEGORIES), cats


def test_holdout_is_disjoint_from_the_tuning_set():
    """Blind means: no answer id shared with the set the critic is tuned on, and mostly other cases."""
    tuning, holdout = answers("adversarial"), answers("adversarial_holdout")
    assert not {a["id"] for a in tuning} & {a["id"] for a in holdout}
    shared_cases = {a["case"] for a in tuning} & {a["case"] for a in holdout}
    assert len(shared_cases) <= len({a["case"] for a in holdout}) // 2, shared_cases


@pytest.mark.parametrize("name", ["adversarial_blind2", "adversarial_blind3", "adversarial_blind5"])
def test_a_blind_set_shares_no_case_or_id_with_the_sets_before_it(name):
    """A later blind set measures the critic on captures no earlier set uses."""
    blind = answers(name)
    others = [a for n in SETS[:SETS.index(name)] for a in answers(n)]
    assert not {a["id"] for a in blind} & {a["id"] for a in others}
    assert not {a["case"] for a in blind} & {a["case"] for a in others}


def test_blind4_fresh_cases_are_used_by_no_other_set():
    """blind4 marks each answer fresh or reused; its fresh cases appear in no other set, its ids in none."""
    blind = answers("adversarial_blind4")
    others = [a for n in SETS if n != "adversarial_blind4" for a in answers(n)]
    assert all(isinstance(a.get("fresh"), bool) and a.get("kind") for a in blind), "every answer needs fresh and kind"
    assert not {a["id"] for a in blind} & {a["id"] for a in others}
    fresh = {a["case"] for a in blind if a["fresh"]}
    reused = {a["case"] for a in blind if not a["fresh"]}
    assert not fresh & reused, fresh & reused
    assert not fresh & {a["case"] for a in others}, fresh & {a["case"] for a in others}
    assert len(fresh) >= 6
    assert sum(a["fresh"] for a in blind) >= len(blind) / 2
    for flag in (True, False):  # both scores the lead reports need correct and wrong answers
        verdicts = Counter(a["expected"] for a in blind if a["fresh"] is flag)
        assert verdicts["accept"] >= 10 and verdicts["reject"] >= 10, (flag, verdicts)


def test_blind5_json_answers_are_diagnoses_and_its_cases_are_holdout5():
    """blind5's agent answers validate as `kernel-profiler schema`'s Diagnosis; its cases are the holdout-5 captures."""
    from kernel_profiler.answer import Diagnosis

    rows = answers("adversarial_blind5")
    holdout5 = {c["name"] for c in tomllib.loads((DATA.parent.parent / "suite" / "holdout5.toml").read_text())["case"]}
    assert {a["case"] for a in rows} == holdout5
    assert all(a.get("kind") and a.get("style") for a in rows)
    jsons = [a for a in rows if a["file"].endswith(".json")]
    assert len(jsons) >= 10
    for a in jsons:
        Diagnosis.model_validate_json((DATA / "adversarial_blind5" / a["file"]).read_text())
