"""Claims of one-time work and of causes a kernel "suffers" (issue 10, item 2: mechanism signatures; the bound must
agree with the steady state), on real H200 captures, each rule with a twin that goes the other way:
  - catalog.py startup pattern ("module loading", "JIT", "compilation") and checks.py `check_bound`: one-time work
    blamed for a program whose steady state is kernel-bound is one-time work presented as the steady state
    (test_module_loading_is_one_time_work, test_jit_compilation_is_one_time_work);
  - claim.py `_ASSERT_BEFORE`: "X suffers N-way bank conflicts" asserts the cause, which is then checked against the
    captures (test_a_cause_the_code_suffers_is_claimed).
"""
from __future__ import annotations

from critic_case import answer, case  # noqa: F401 (the fixture)

from kernel_profiler.critic import facts_for  # noqa: F401


def _loading_answer(c, bottleneck: str):
    return c.critique(answer(
        bottleneck,
        [f"GPU busy {c.dg.timeline.busy_fraction:.1%} of the steady window (nsys)",
         f"steady window {c.dg.timeline.window_ns / 1e6:.2f} ms (nsys)"],
        "Every kernel's module is loaded the first time it is launched, and that wait keeps the GPU idle before the "
        "first launches of the program.",
        "Set CUDA_MODULE_LOADING=EAGER and warm up before timing; the step time should fall (estimate)."))


def test_module_loading_is_one_time_work(case):
    """Module loading blamed for ot_py_eager_lazy, whose steady state keeps the GPU busy on its kernels, is one-time
    work presented as the steady state; the same answer blaming the elementwise kernels' traffic is not refused by
    that check."""
    c = case("ot_py_eager_lazy")
    loading = _loading_answer(c, "The program is dominated by CUDA module loading.")
    assert any("blames start-up" in r and "kernel-bound" in r for r in loading.reasons), loading.reasons
    traffic = _loading_answer(c, "The program is memory-bound: its chain of elementwise kernels moves excess DRAM "
                                 "traffic.")
    assert not any("blames start-up" in r for r in traffic.reasons), traffic.reasons


def _suffers(c, kernel: str):
    us = c.metrics(kernel)["gpu__time_duration.sum"] / 1e3
    return c.critique(answer(
        f"`{kernel}` takes {us:.1f} us per launch.",
        [f"gpu__time_duration.sum = {us:.1f} us (ncu)"],
        "The transpose suffers 32-way bank conflicts when a warp writes a column of its tile: all 32 lanes hit the "
        "same bank, so each store is replayed 32 times and the kernel stays far above its DRAM floor.",
        "Pad the tile by one element so a column falls in 32 banks: shared wavefronts per request should fall from 32 "
        "to 1 (estimate)."))


def test_a_cause_the_code_suffers_is_claimed(case):
    """claim.py `_ASSERT_BEFORE`: "the transpose suffers 32-way bank conflicts" asserts bank conflicts (before, only
    "suffers from" did), so the claim is checked: tr_strided's Triton gather runs no shared-memory instruction and
    the claim is refused; on cu_transpose_conflict, whose tile does conflict, it stands."""
    wrong = _suffers(case("tr_strided"), "gather_transpose")
    assert any("claims shared bank conflict" in r for r in wrong.reasons), wrong.reasons
    right = _suffers(case("cu_transpose_conflict"), "transpose")
    assert right.checks["signature"], right.reasons


def test_jit_compilation_is_one_time_work(case):
    """catalog.py startup pattern: "JIT compilation" blamed for hot_py_compile_pointwise, whose steady state is 30
    launches of the compiled kernel keeping the GPU busy, is one-time work presented as the steady state."""
    c = case("hot_py_compile_pointwise")
    jit = _loading_answer(c, "The program is bound by JIT compilation: Inductor compiles before the first launch.")
    assert any("blames start-up" in r and "kernel-bound" in r for r in jit.reasons), jit.reasons
    traffic = _loading_answer(c, "The fused kernel is memory-bound: it streams its bytes at DRAM speed.")
    assert not any("blames start-up" in r for r in traffic.reasons), traffic.reasons
