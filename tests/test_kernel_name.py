"""kernel_name.py: one kernel's name in the forms it is compared and shown, on names real profilers wrote."""
from __future__ import annotations

import pytest

from conftest import suite_cases
from kernel_profiler.artifacts import load_paths
from kernel_profiler.kernel_name import KernelName

CASES = {c["name"]: c for c in suite_cases()}


def _timeline_names(captures, case: str, file: str) -> set[str]:
    (tl,) = load_paths([captures.path(case, file)]).timelines
    return set(tl.kernels["name"].astype(str))


@pytest.mark.parametrize("case", ["cu_softmax_naive", "ho_py_torch_softmax", "py_fused_gelu", "py_gemm_bf16"])
def test_ncu_report_kernels_join_the_nsys_timeline_by_key(captures, case):
    """ncu spells `(int)4`, nsys and Kineto differ in spaces and lambdas: the key joins them; the base is the
    suite's kernel (ncu -k) where the case names one."""
    keys = {KernelName(n).key for n in _timeline_names(captures, case, "nsys.sqlite")}
    profiles = load_paths([captures.path(case, "ncu.ncu-rep")]).kernel_profiles
    assert profiles
    for p in profiles:
        name = KernelName(p.name)
        assert name.key in keys, name.raw
        if "|" not in CASES.get(case, {}).get("kernel", "|"):
            assert name.base == CASES[case]["kernel"]


def test_anonymous_namespace_does_not_hide_the_base():
    """PyTorch's softmax kernel is in `at::native::<unnamed>`; ncu's CSV writes it `unnamed>::`: one base."""
    nsys = "void at::native::<unnamed>::cunn_SoftMaxForwardReg<float, float, float, at::native::<unnamed>::" \
           "SoftMaxForwardEpilogue, long, (int)4>(T3 *, const T1 *, T5)"
    csv = "void unnamed>::cunn_SoftMaxForwardReg<float, float, float, unnamed>::SoftMaxForwardEpilogue, long, 4>" \
          "(T3 *, const T1 *, T5)"
    assert KernelName(nsys).base == KernelName(csv).base == "cunn_SoftMaxForwardReg"
    assert KernelName(nsys).key.startswith("at::native::anon::cunn_SoftMaxForwardReg<float,float,float,")


def test_kineto_and_nsys_spell_the_same_kernels(captures):
    """The PyTorch profiler and nsys captured the same program: every Kineto kernel has an nsys key."""
    nsys = {KernelName(n).key for n in _timeline_names(captures, "py_fused_gelu", "nsys.sqlite")}
    kineto = {KernelName(n).key for n in _timeline_names(captures, "py_fused_gelu", "trace.json.gz")}
    assert kineto and kineto <= nsys


def test_qualified_drops_void_arguments_and_spaces_only():
    n = KernelName("void softmax_rows(const float *, float *, int, int)")
    assert n.qualified == n.key == n.base == "softmax_rows" and str(n) == n.raw
    t = KernelName("void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<float>, "
                   "std::array<char *, (unsigned long)1>>(int, T2, T3)")
    assert t.qualified == ("at::native::vectorized_elementwise_kernel<(int)4,at::native::FillFunctor<float>,"
                           "std::array<char*,(unsignedlong)1>>")
    assert t.key == "at::native::vectorized_elementwise_kernel<4,at::native::FillFunctor<float>,std::array<char*,1>>"
    assert KernelName(None).raw == "" and KernelName(None).base == ""


def test_names_are_shortened_with_an_ellipsis_never_cut():
    long = ("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase &, "
            "at::native::GeluType)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 2)]::operator ()() "
            "const::[lambda(float) (instance 1)], std::array<char *, (unsigned long)2>>(int, T2, T3)")
    s = KernelName(long).display(70)
    assert len(s) == 70 and "…" in s and s.startswith("vectorized_elementwise_kernel<4,")
    assert KernelName("softmax_rows(const float *, float *, int, int)").display() == "softmax_rows"
