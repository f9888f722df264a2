"""Rules of 2026-12-01 (commits f4a1d59 and df472b2), each with a twin that must go the other way, on real H200
captures where the rule reads one:
  - 'dominated by CPU launch cost' names launch overhead and 'the global loads are not coalesced' uncoalesced access,
    so their signature checks run (and refuse them where the captures contradict them);
  - a mechanism's 'This program is therefore host-bound' gives the bound; 'the GPU is idle between ...' does not;
  - 'instead of' relates two numbers; a table column's code ('copyKind 8', 'srcKind=2') is no quantity;
  - 'over 16M elements' that no fact satisfies is unverified (the count a rate is spread across), 'more than 16M
    elements' is refused as a bound;
  - 'tensor cores' names the missing-tensor-core cause only where they are said to be unused; a cause in 'The only
    other cost ... is ...' is not the claim.
"""
from __future__ import annotations

from critic_case import answer, case  # noqa: F401 (the fixture)

from kernel_profiler.critic import facts_for, parse_answer
from kernel_profiler.critic.chain import relates
from kernel_profiler.critic.checks import answer_bound, build_context
from kernel_profiler.critic.claim import asserted_cause
from kernel_profiler.critic.numbers import quantities
from kernel_profiler.critic.match import number_use


def test_launch_cost_names_launch_overhead_and_its_signature_runs(case):
    """'dominated by CPU launch cost' claims launch overhead; on h8_legacy_stream (GPU busy ~92%) the signature check
    refuses it; without 'launch cost' the same sentence claims no launch overhead."""
    c = case("h8_legacy_stream")
    busy = c.dg.timeline.busy_fraction
    assert busy > 0.85, busy
    said = "The program is dominated by CPU launch cost."
    assert asserted_cause(said) == "launch_overhead"
    assert asserted_cause("The program is dominated by the CPU.") != "launch_overhead"
    v = c.critique(answer(said, [f"GPU busy {busy:.0%} of the steady window (nsys.sqlite)"],
                          "Each `chain_fma` launch is tiny, so the host spends longer issuing it than the GPU runs it.",
                          "Launch fewer, larger kernels; GPU busy should increase."))
    assert v.mechanism == "launch_overhead" and not v.checks["signature"], (v.mechanism, v.reasons)


def test_not_coalesced_names_uncoalesced_access_and_coalesced_does_not(case):
    """'the global loads are not coalesced' claims uncoalesced access; on ho_smem_stride_reduce, 4 sectors per
    request, its signature is absent and the answer is refused; 'the loads are coalesced' claims nothing of it."""
    c = case("ho_smem_stride_reduce")
    said = "`row_sums` is slow because the global loads are not coalesced."
    assert asserted_cause(said) == "uncoalesced_global"
    assert asserted_cause("`row_sums` is slow although the loads are coalesced.") != "uncoalesced_global"
    v = c.critique(answer(said, [], "Neighbouring threads read addresses a row apart, so each warp load spans many "
                                    "sectors and DRAM moves bytes nobody uses.",
                          "Make neighbouring threads read neighbouring columns; DRAM bytes should decrease."))
    assert v.mechanism == "uncoalesced_global" and not v.checks["signature"], (v.mechanism, v.reasons)
    assert v.verdict == "reject", v.reasons


_MATH = "The step takes most of its time outside the math it was written for."
_IDLE = "The GPU is idle between the two GEMMs."


def _bound(c, mechanism: str):
    text = answer(_MATH, [], mechanism, "Keep the GPU fed; GPU busy should increase.")
    return answer_bound(build_context(parse_answer(text), facts_for(c.arts, c.dg), text))


def test_a_mechanism_that_says_host_bound_gives_the_bound(case):
    """'This program is therefore host-bound' in the mechanism gives bound host, refused where the steady state keeps
    the GPU busy (ot_py_gemm_fp32); 'the GPU is idle between ...' alone asserts no host bound."""
    c = case("ot_py_gemm_fp32")
    assert c.dg.timeline.busy_fraction > 0.9, c.dg.timeline.busy_fraction
    said = f"{_IDLE} This program is therefore host-bound."
    assert _bound(c, said) == "host"
    assert _bound(c, _IDLE) != "host"
    v = c.critique(answer(_MATH, [], said, "Keep the GPU fed; GPU busy should increase."))
    assert not v.checks["bound"] and any("keeps the GPU busy" in r for r in v.reasons), v.reasons


def test_instead_of_relates_two_numbers():
    """'tens of GB/s instead of 1.7 GB/s' relates two numbers; without 'instead of' (no other comparison word) the
    sentence relates nothing."""
    assert relates("Pinned copies run at tens of GB/s instead of 1.7 GB/s.")
    assert not relates("Pinned copies run at tens of GB/s; these copies run at 1.7 GB/s.")


def test_a_table_columns_code_is_no_quantity():
    """'copyKind 8' and 'srcKind=2' are codes of a table column, not quantities (not '8 rows', '2 calls');
    'cudaLaunchKernel 7.08 us' is one."""
    assert quantities("The table has copyKind 8 rows.") == []
    assert quantities("The pageable copies are srcKind=2 calls.") == []
    q = quantities("The median cudaLaunchKernel 7.08 us is the host's cost per launch.")
    assert [x.written for x in q] == ["7.08 us"], q


def test_over_a_count_is_unverified_more_than_it_is_a_bound(case):
    """'256 iterations per element over 16M elements' (16M not a measured count) is listed as unverified, not
    refused; 'more than 16M elements', which no fact satisfies, is refused as a bound (cu_divergence_fixed)."""
    c = case("cu_divergence_fixed")
    over = "`branchy` runs 256 iterations per element over 16M elements."
    more = "`branchy` runs on more than 16M elements."
    q_over = next(q for q in quantities(over) if q.written.startswith("16"))
    q_more = next(q for q in quantities(more) if q.written.startswith("16"))
    assert number_use(over, q_over).across and number_use(over, q_over).bound == "lower"
    assert not number_use(more, q_more).across and number_use(more, q_more).bound == "lower"

    def text(sentence: str) -> str:
        return answer("`branchy` is instruction-bound: its warps issue every cycle they can.", [],
                      f"{sentence} Every iteration is a dependent FMA, so the SM pipes stay busy issuing them.",
                      "Cut the per-element work; the instruction count should decrease.")
    ok = c.critique(text(over))
    assert ok.checks["numbers"], ok.reasons
    assert any(n.unverified and n.written.startswith("16") for n in ok.numbers), ok.numbers
    bad = c.critique(text(more))
    assert not bad.checks["numbers"], bad.reasons


def test_tensor_cores_name_the_cause_only_where_unused():
    """A tensor-core kernel at the tensor pipe's limit does not claim no_tensor_cores; tensor cores said to be idle,
    or math entirely on the FMA pipe, do."""
    assert asserted_cause("The GEMM is one cuBLAS tensor-core kernel running at the tensor pipe's limit.") \
        != "no_tensor_cores"
    assert asserted_cause("The GEMM is slow: the tensor cores, the only fast path, are idle.") == "no_tensor_cores"
    assert asserted_cause("The GEMM runs entirely on the FMA pipe.") == "no_tensor_cores"
    assert asserted_cause("The GEMM runs entirely on the FP32 FMA pipe.") == "no_tensor_cores"  # 'FP32', blanked


def test_the_only_other_cost_is_not_the_claim():
    """'The only other cost in the run is cuBLAS initialisation, which happens once.' sets a cause apart; 'The cost is
    cuBLAS initialisation.' claims start-up."""
    assert asserted_cause("The only other cost in the run is cuBLAS initialisation, which happens once.") \
        != "startup_dominated"
    assert asserted_cause("The cost is cuBLAS initialisation.") == "startup_dominated"
