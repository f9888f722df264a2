"""The bound an answer states in plain words, checked against the captures (issue 10, item 2: the bound must agree
with the timeline's steady state and the kernel's own counters), on real H200 captures, each rule with a twin that
goes the other way:
  - bound_words.py: "the memory system is the bottleneck" states a memory bound, refused for a program whose
    steady state is host-bound (test_the_memory_system_named_as_the_bottleneck);
  - bound_words.py and checks.py `_kernel_bound`: "SFU-limited", "XU-bound" state a compute bound, refused for a
    kernel whose SM is under COMPUTE_WEAK_PCT busy while DRAM is busier (test_a_pipe_named_as_the_limit).
"""
from __future__ import annotations

from critic_case import answer, case  # noqa: F401 (the fixture)


def _memset_answer(c, verdict: str):
    busy = c.dg.timeline.busy_fraction * 100
    return c.critique(answer(
        f"The memsets are slow. {verdict}",
        [f"GPU busy {busy:.1f}% of the steady window (nsys)"],
        "Each small cudaMemsetAsync is its own operation, and the step waits for thousands of them; that is why the "
        "step takes as long as it does.",
        "Clear the pool with one memset per step: the step time should fall several times (estimate)."))


def test_the_memory_system_named_as_the_bottleneck(case):
    c = case("h7_memset_many")
    memory = _memset_answer(c, "The memory system is the bottleneck of this step.")
    assert any("calls it memory-bound" in r and "host-bound" in r for r in memory.reasons), memory.reasons
    host = _memset_answer(c, "The host is the bottleneck of this step.")
    assert host.checks["bound"], host.reasons


def _pipe_answer(c, kernel: str, pipe: str):
    us = c.metrics(kernel)["gpu__time_duration.sum"] / 1e3
    return c.critique(answer(
        f"`{kernel}` is {pipe}-limited.",
        [f"gpu__time_duration.sum = {us:.1f} us (ncu)"],
        f"Its math runs on the {pipe} pipe, a quarter-rate unit, so the kernel waits on that unit and stays far above "
        "its DRAM floor.",
        "Use the fast intrinsic: the kernel time should fall (estimate)."))


def test_a_pipe_named_as_the_limit(case):
    """cu_elementwise_chain's `ew_tanh` streams DRAM with its SM under 40% busy: "SFU-limited" is refused;
    h5_fp64_promotion's `damp`, whose XU pipe is saturated, may be called "XU-limited"."""
    tanh = _pipe_answer(case("cu_elementwise_chain"), "ew_tanh", "SFU")
    assert any("compute-bound" in r and "no unit of the SM" in r for r in tanh.reasons), tanh.reasons
    xu = _pipe_answer(case("h5_fp64_promotion"), "damp", "XU")
    assert xu.checks["bound"], xu.reasons
