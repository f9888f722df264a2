"""A program's own log (run.log) given beside the captures is an artifact of facts (issue 10, item 1): a number an
answer takes from it matches the value of the line it describes, with the file and line as its provenance; the
same number without the log, or a number the log does not print, is refused. Verdicts on cu_grid_stride_small_grid,
a real H200 capture whose program printed "grid_stride: 10 steps, median step 0.0654 ms" before nsys ran it.
"""
from __future__ import annotations

from critic_case import answer, case  # noqa: F401 (the fixture)

from kernel_profiler.analysis.engine import diagnose
from kernel_profiler.artifacts import load_paths
from kernel_profiler.critic import critique_read

CASE = "cu_grid_stride_small_grid"


def _grid_answer(c, step: str) -> str:
    m = c.metrics("saxpy_grid_stride")
    return answer(
        f"`saxpy_grid_stride` is latency-bound by low parallelism: {m['launch__grid_size']:.0f} blocks on "
        f"{m['launch__sm_count']:.0f} SMs.",
        [f"{m['launch__grid_size']:.0f} blocks (ncu `launch__grid_size`) for {m['launch__sm_count']:.0f} SMs",
         f"DRAM throughput {m['gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed']:.2f}% of peak "
         "(ncu `gpu__dram_throughput`)",
         f"the program's median step is {step} (run.log)"],
        f"Each block runs on one SM, so {m['launch__sm_count'] - m['launch__grid_size']:.0f} SMs stay idle and too "
        "few loads are in flight to approach the DRAM bandwidth: the kernel runs far above its memory floor "
        "because most of the GPU has no work.",
        f"Launch at least 2 blocks per SM (grid >= 264): `launch__grid_size` rises from "
        f"{m['launch__grid_size']:.0f} to 264 and DRAM throughput should increase several-fold.")


def test_a_number_quoted_from_the_program_log(case, captures):
    c = case(CASE)
    ok = c.critique(_grid_answer(c, "0.065 ms"))
    assert ok.verdict == "accept", ok.reasons
    cited = next(n for n in ok.numbers if n.written.startswith("0.065"))
    assert cited.fact and "run.log:" in cited.fact  # a line that printed 0.0654 ms or 0.0651 ms (two runs)

    wrong = c.critique(_grid_answer(c, "0.061 ms"))
    assert wrong.verdict == "reject" and not wrong.checks["numbers"]

    folder = captures.case_dir(CASE)
    arts = load_paths([folder / n for n in ("nsys.sqlite", "ncu.ncu-rep", "ncu_raw.csv")])
    without = critique_read(_grid_answer(c, "0.065 ms"), arts, diagnose(arts))
    assert without.verdict == "reject" and not without.checks["numbers"]  # the captures alone do not hold 0.065 ms
