"""The `case` fixture of the critic's rule tests: a real capture case loaded and diagnosed once per module."""
from __future__ import annotations

import pytest

from critic_case import Case


@pytest.fixture(scope="module")
def case(captures):
    cache: dict[str, Case] = {}

    def get(name: str) -> Case:
        if name not in cache:
            cache[name] = Case(captures.case_dir(name))
        return cache[name]
    return get
