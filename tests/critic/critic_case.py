"""Helpers of the critic's rule tests: a real capture case loaded and diagnosed once (the `case` fixture, imported
by each test module: a conftest.py here would shadow tests/conftest.py's helpers), an answer in four parts."""
from __future__ import annotations

import pytest

from kernel_profiler.analysis.engine import diagnose
from kernel_profiler.artifacts import load_paths
from kernel_profiler.critic import critique, parse_answer


class Case:
    def __init__(self, folder):
        self.folder = folder
        self.arts = load_paths([folder])
        self.dg = diagnose(self.arts)

    def metrics(self, name: str) -> dict:
        """The ncu metrics of the richest .ncu-rep profile of the kernel whose name contains `name`."""
        return max((k for k in self.arts.kernel_profiles if name in k.name and k.source.endswith(".ncu-rep")),
                   key=lambda k: len(k.metrics)).metrics

    def critique(self, text: str):
        return critique(parse_answer(text), self.arts, self.dg, raw=text)


def answer(bottleneck: str, evidence: list[str], mechanism: str, fix: str) -> str:
    ev = "\n".join(f"- {e}" for e in evidence)
    return f"## Bottleneck\n{bottleneck}\n\n## Evidence\n{ev}\n\n## Mechanism\n{mechanism}\n\n## Fix\n{fix}\n"


@pytest.fixture(scope="module")
def case(captures):
    cache: dict[str, Case] = {}

    def get(name: str) -> Case:
        if name not in cache:
            cache[name] = Case(captures.case_dir(name))
        return cache[name]
    return get
