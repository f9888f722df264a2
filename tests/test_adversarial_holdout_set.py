"""Shape of the blind holdout answer set (tests/data/adversarial_holdout): it must not rot.

Checks only that the set is complete and points at real captures. It never runs the critic: the set stays
blind until the lead scores the critic on it once."""
from __future__ import annotations

import json
import tomllib
from collections import Counter

import pytest

from conftest import CAPTURES, DATA

HOLDOUT = DATA / "adversarial_holdout"
CATEGORIES = {"correct", "counter_dump", "wrong_mechanism", "wrong_bound", "fabricated", "injection",
              "wrong_direction"}
FIELDS = {"id", "file", "case", "artifacts", "expected", "category", "why"}


def answers() -> list[dict]:
    return tomllib.loads((HOLDOUT / "cases.toml").read_text())["answer"]


def test_every_entry_has_its_fields():
    for a in answers():
        missing = FIELDS - a.keys()
        assert not missing, f"{a.get('id')}: missing {missing}"
        assert a["expected"] in {"accept", "reject"}, a["id"]
        assert a["category"] in CATEGORIES, a["id"]
        assert (a["category"] == "correct") == (a["expected"] == "accept"), a["id"]
        assert a["why"].strip(), a["id"]
        assert a["artifacts"], a["id"]


def test_ids_unique_and_files_exist():
    ids = [a["id"] for a in answers()]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]
    for a in answers():
        path = HOLDOUT / a["file"]
        assert path.is_file(), f"{a['id']}: no file {a['file']}"
        assert path.stat().st_size > 100, f"{a['id']}: answer too short"
        if path.suffix == ".json":
            d = json.loads(path.read_text())
            assert {"bound", "bottleneck"} <= d.keys(), a["id"]


def test_every_file_is_listed():
    listed = {a["file"] for a in answers()}
    on_disk = {f"answers/{p.name}" for p in (HOLDOUT / "answers").iterdir()}
    assert on_disk == listed, on_disk ^ listed


@pytest.mark.parametrize("a", answers(), ids=lambda a: a["id"])
def test_case_and_artifacts_exist(a):
    case = CAPTURES / a["case"]
    assert case.is_dir(), f"no capture folder {a['case']}"
    for name in a["artifacts"]:
        assert (case / name).is_file() or (case / f"{name}.xz").is_file(), f"{a['case']}: no {name}"


def test_size_coverage_and_mix():
    rows = answers()
    assert len(rows) >= 30
    assert len({a["case"] for a in rows}) >= 8
    verdicts = Counter(a["expected"] for a in rows)
    assert verdicts["accept"] and verdicts["reject"]
    assert 0.3 <= verdicts["accept"] / len(rows) <= 0.5
    cats = Counter(a["category"] for a in rows)
    assert all(cats[c] >= 3 for c in CATEGORIES), cats


def test_holdout_is_disjoint_from_the_tuning_set():
    """Blind means: no answer id shared with the set the critic is tuned on, and mostly other cases."""
    tuning = tomllib.loads((DATA / "adversarial" / "cases.toml").read_text())["answer"]
    assert not {a["id"] for a in tuning} & {a["id"] for a in answers()}
    shared_cases = {a["case"] for a in tuning} & {a["case"] for a in answers()}
    assert len(shared_cases) <= len({a["case"] for a in answers()}) // 2, shared_cases
