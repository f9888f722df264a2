"""The mechanism catalog: its signatures on the capture suite (present where the suite planted the mechanism,
gone in the fixed variant that removed it: ground truth written before capture, suite/cases.toml), and the
invariants that make it the one home of each mechanism (ids defined once, references that resolve, the
engine's findings carrying the catalog's bound, fix and fix metric)."""
from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

from kernel_profiler import catalog, signatures
from kernel_profiler.answer import BOUNDS
from kernel_profiler.artifacts import load_paths
from kernel_profiler.critic import facts_for
from kernel_profiler.critic.checks import _measured
from kernel_profiler.analysis.engine import diagnose


def _cases():
    from conftest import suite_cases

    return suite_cases()


_LOADED: dict = {}  # case -> (facts, diagnosis); the artifacts themselves are not kept (memory)


def _load(captures, name: str):
    if name not in _LOADED:
        arts = load_paths([captures.case_dir(name)])
        d = diagnose(arts)
        _LOADED[name] = (facts_for(arts, d), d)
    return _LOADED[name]


def _signature(captures, case: dict, mechanism: str) -> tuple[str, str]:
    f = _load(captures, case["name"])[0]

    class C:  # what checks._measured reads
        facts = f
    key = None
    if catalog.CATALOG[mechanism].scope == "kernel":
        rx = re.compile(case["kernel"])
        key = next(k for k, p in f.profiles.items() if rx.search(p.name))
    return signatures.check(mechanism, _measured(C, key))


PLANTED = [c for c in _cases() if c.get("mechanism") in catalog.CATALOG
           and catalog.CATALOG[c["mechanism"]].signature not in ("sig_unknown", "sig_startup")]
FIXED = [c for c in _cases() if c.get("expect_moved") in catalog.CATALOG
         and catalog.CATALOG[c["expect_moved"]].signature != "sig_unknown"]


@pytest.mark.parametrize("case", PLANTED, ids=[c["name"] for c in PLANTED])
def test_planted_mechanism_has_its_signature(case, captures):
    if catalog.CATALOG[case["mechanism"]].scope == "kernel" and not case.get("kernel"):
        pytest.skip("no kernel profile in this case")
    status, txt = _signature(captures, case, case["mechanism"])
    assert status == signatures.PRESENT, txt


@pytest.mark.parametrize("case", FIXED, ids=[c["name"] for c in FIXED])
def test_fixed_variant_loses_the_signature(case, captures):
    if catalog.CATALOG[case["expect_moved"]].scope == "kernel" and not case.get("kernel"):
        pytest.skip("no kernel profile in this case")
    status, txt = _signature(captures, case, case["expect_moved"])
    assert status != signatures.PRESENT, txt


def test_every_mechanism_id_has_one_catalog_entry():
    from kernel_profiler.answer import MECHANISMS

    assert set(MECHANISMS) == set(catalog.CATALOG)


@pytest.mark.parametrize("text,mid", [("limited by 32-way shared-memory bank conflicts", "shared_bank_conflict"),
                                      ("each sector delivers 4 useful bytes: uncoalesced loads", "uncoalesced_global"),
                                      ("the host synchronizes every step (.item())", "host_sync"),
                                      ("copies from pageable memory", "pageable_transfer")])
def test_claims_are_read_from_prose(text, mid):
    assert mid in catalog.claimed(text)


# ----------------------------------------------------------------------------- one home
SRC = Path(catalog.__file__).parent
IDS = set(catalog.CATALOG)


def _modules():
    for path in sorted(SRC.rglob("*.py")):
        yield path.relative_to(SRC).as_posix(), ast.parse(path.read_text(), str(path))


def _strings(node) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def test_each_mechanism_id_is_defined_once_in_the_catalog():
    """No other module holds a table of mechanism ids (a Literal, a dict keyed by ids, a list of them): two ids in
    one collection outside catalog.py is a second definition that can drift."""
    text = (SRC / "catalog.py").read_text()
    assert all(text.count(f'_e("{i}"') == 1 for i in IDS)
    causes = set(catalog.BY_IDLE_CAUSE)  # the timeline's idle causes share some names with mechanisms
    tables = []
    for rel, tree in _modules():
        if rel == "catalog.py":
            continue
        for node in ast.walk(tree):
            items = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
            if isinstance(node, ast.Subscript):
                items = getattr(node.slice, "elts", [node.slice])
            ids = {i.value for i in items or [] if isinstance(i, ast.Constant) and i.value in IDS - causes}
            if len(ids) >= 2:
                tables.append(f"{rel}:{node.lineno} {sorted(ids)}")
    assert not tables, "mechanism ids listed outside catalog.py:\n" + "\n".join(tables)


def test_every_mechanism_id_used_in_the_code_is_in_the_catalog():
    """mechanism="..." and comparisons with a mechanism name only ids the catalog defines."""
    used = []
    for rel, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "mechanism" and isinstance(node.value, ast.Constant):
                used.append((rel, node.value.value))
            if isinstance(node, ast.Compare) and "mechanism" in ast.unparse(node.left):
                used += [(rel, c.value) for c in node.comparators if isinstance(c, ast.Constant)]
    assert len(used) > 20
    assert [u for u in used if u[1] is not None and u[1] not in IDS] == []


def test_one_tensor_core_opcode_list():
    """The SASS opcodes of tensor-core math are spelled in catalog.TENSOR_OPS only."""
    spelled = [f"{rel}: {v}" for rel, tree in _modules() if rel != "catalog.py"
               for v in _strings(tree) if v in catalog.TENSOR_OPS]
    assert spelled == []
    assert {"HMMA", "HGMMA", "UTCHMMA"} <= set(catalog.TENSOR_OPS)


def test_references_resolve():
    for e in catalog.CATALOG.values():
        fn = e.detector_function()
        assert callable(fn), e.id
        assert f'"{e.id}"' in inspect.getsource(fn) or f'CATALOG["{e.id}"]' in inspect.getsource(fn), \
            f"{e.detector} does not produce {e.id}"
        assert callable(getattr(signatures, e.signature, None)), e.signature
        assert e.bound in BOUNDS
        assert "" in e.fixes and all(d in ("increase", "decrease") for _, d in e.fix_metrics)
        if e.idle_cause:
            assert e.signature == "sig_idle_cause"


SUITE_WITH_FINDINGS = [c for c in _cases() if c.get("mechanism")]


@pytest.mark.parametrize("case", SUITE_WITH_FINDINGS, ids=[c["name"] for c in SUITE_WITH_FINDINGS])
def test_engine_findings_carry_the_catalog_entry(case, captures):
    """Every finding the engine makes on a real capture has its entry's bound, one of its fix texts, and a fix
    metric the entry says a fix of it moves, in that direction."""
    d = _load(captures, case["name"])[1]
    checked = 0
    for f in [d.primary] + list(d.secondary):
        if f.mechanism is None:
            continue
        e = catalog.CATALOG[f.mechanism]
        assert f.bound == e.bound, (f.mechanism, f.bound)
        if f.fix is None:
            continue
        assert any(re.fullmatch(_rx(t), f.fix.change, re.S) for t in e.fixes.values()), (f.mechanism, f.fix.change)
        hits = [d_ for p, d_ in e.fix_metrics if re.search(p, f.fix.metric, re.I)]
        assert f.fix.direction in hits, (f.mechanism, f.fix.metric, f.fix.direction)
        checked += 1
    assert checked or d.primary.mechanism is None


def _rx(template: str) -> str:
    return "".join(".+?" if re.fullmatch(r"\{[^{}]*\}", p) else re.escape(p)
                   for p in re.split(r"(\{[^{}]*\})", template))
