"""Helpers of the critic's rule tests: a real capture case loaded and diagnosed once (the `case` fixture, imported
by each test module: a conftest.py here would shadow tests/conftest.py's helpers), an answer in four parts."""
from __future__ import annotations

from pathlib import Path

import pytest

from kernel_profiler.analysis.engine import diagnose
from kernel_profiler.artifacts import load_paths
from kernel_profiler.critic import critique, critique_read, parse_answer


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
        """The critic's verdict on the text, as `critique` gives it (a second reading by sentence role included)."""
        return critique_read(text, self.arts, self.dg)

    def critique_layout(self, text: str):
        """The verdict on the reading of the text's layout alone (no second reading): for rules of that reading."""
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


def engine_value(c, metric: str) -> float:
    """The value of the engine's first evidence item whose metric starts with `metric` (read from the capture)."""
    return next(e.value for e in c.dg.evidence if e.metric.startswith(metric))


def divergence_answer(c, fix: str):
    """The critic's verdict on a warp-divergence answer about cu_divergence's `branchy`, its numbers read from the
    capture, whose fix ends with `fix`."""
    lanes, sm = engine_value(c, "smsp__thread_inst_executed_per_inst_executed"), engine_value(c, "sm__throughput")
    return c.critique(answer(
        "`branchy` is compute-bound by warp divergence.",
        [f"{lanes:.1f} active threads per instruction (ncu smsp__thread_inst_executed_per_inst_executed.ratio)",
         f"SM throughput {sm:.1f}% of peak (ncu sm__throughput.avg.pct_of_peak_sustained_elapsed)"],
        "Lanes of each warp take different sides of the data-dependent branch, so each warp runs both paths with most "
        "lanes masked off; the SM issues many instructions for little useful work and the kernel runs "
        f"{c.dg.roofline.gap:.1f}x its roofline floor.",
        f"Make the branch uniform per warp by sorting the elements by branch; {fix}"))


DATA = Path(__file__).parent.parent / "data"


def answer_text(set_: str, id_: str) -> str:
    """An answer of an adversarial set (`set_` without its "adversarial_" prefix) by its id."""
    folder = DATA / f"adversarial_{set_}" / "answers"
    return next(folder.glob(f"{id_}.*")).read_text(encoding="utf-8")


def refused_for(v, words: str) -> bool:
    """Whether the verdict refuses the answer with a reason that contains `words`."""
    return v.verdict == "reject" and any(words in r for r in v.reasons)


def accepted(v) -> bool:
    """Whether the critic accepted: the verdict the rule tests assert on."""
    return v.verdict == "accept"
