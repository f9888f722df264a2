"""The mechanism catalog's signatures on the capture suite: present where the suite planted the mechanism,
gone in the fixed variant that removed it (ground truth written before capture, suite/cases.toml)."""
from __future__ import annotations

import re

import pytest

from kernel_profiler import catalog
from kernel_profiler.artifacts import load_paths
from kernel_profiler.critic import facts_for
from kernel_profiler.critic.checks import _measured
from kernel_profiler.analysis.engine import diagnose


def _cases():
    from conftest import suite_cases

    return suite_cases()


_FACTS: dict = {}


def _signature(captures, case: dict, mechanism: str) -> tuple[str, str]:
    if case["name"] not in _FACTS:
        arts = load_paths([captures.case_dir(case["name"])])
        _FACTS[case["name"]] = facts_for(arts, diagnose(arts))
    f = _FACTS[case["name"]]

    class C:  # what checks._measured reads
        facts = f
    key = None
    if catalog.CATALOG[mechanism].scope == "kernel":
        rx = re.compile(case["kernel"])
        key = next(k for k, p in f.profiles.items() if rx.search(p.name))
    return catalog.check(mechanism, _measured(C, key))


PLANTED = [c for c in _cases() if c.get("mechanism") in catalog.CATALOG
           and catalog.CATALOG[c["mechanism"]].signature not in (catalog.sig_unknown, catalog.sig_startup)]
FIXED = [c for c in _cases() if c.get("expect_moved") in catalog.CATALOG
         and catalog.CATALOG[c["expect_moved"]].signature is not catalog.sig_unknown]


@pytest.mark.parametrize("case", PLANTED, ids=[c["name"] for c in PLANTED])
def test_planted_mechanism_has_its_signature(case, captures):
    if catalog.CATALOG[case["mechanism"]].scope == "kernel" and not case.get("kernel"):
        pytest.skip("no kernel profile in this case")
    status, txt = _signature(captures, case, case["mechanism"])
    assert status == catalog.PRESENT, txt


@pytest.mark.parametrize("case", FIXED, ids=[c["name"] for c in FIXED])
def test_fixed_variant_loses_the_signature(case, captures):
    if catalog.CATALOG[case["expect_moved"]].scope == "kernel" and not case.get("kernel"):
        pytest.skip("no kernel profile in this case")
    status, txt = _signature(captures, case, case["expect_moved"])
    assert status != catalog.PRESENT, txt


def test_every_mechanism_id_has_one_catalog_entry():
    from kernel_profiler.answer import MECHANISMS

    assert set(MECHANISMS) == set(catalog.CATALOG)


@pytest.mark.parametrize("text,mid", [("limited by 32-way shared-memory bank conflicts", "shared_bank_conflict"),
                                      ("each sector delivers 4 useful bytes: uncoalesced loads", "uncoalesced_global"),
                                      ("the host synchronizes every step (.item())", "host_sync"),
                                      ("copies from pageable memory", "pageable_transfer")])
def test_claims_are_read_from_prose(text, mid):
    assert mid in catalog.claimed(text)
