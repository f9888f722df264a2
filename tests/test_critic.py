"""The critic on real H200 captures: accepts the engine's own answers, rejects wrong ones.

The critic's facts come from the captures (and the measured summaries computed from them), never from
the engine's answer text, so "the engine's answers pass" is a real test: see
test_a_diagnosis_that_lies_about_its_own_evidence_is_rejected.
"""
from __future__ import annotations

import pytest

from kernel_profiler.artifacts import load_paths
from kernel_profiler.answer import Fix
from kernel_profiler.critic import (Answer, AnswerFormatError, EvidenceItem, critique, critique_text,
                                    parse_answer)
from kernel_profiler.analysis.engine import diagnose
from kernel_profiler.analysis.roofline import ceilings


@pytest.fixture(scope="module")
def loaded(captures):
    cache = {}

    def get(case):
        if case not in cache:
            d = captures.case_dir(case)
            arts = load_paths([d])
            cache[case] = (d, arts, diagnose(arts))
        return cache[case]
    return get


def _ncu(arts, kernel_substr):
    return next(k for k in arts.kernel_profiles if k.source.endswith(".ncu-rep") and kernel_substr in k.name)


def test_engine_answer_is_accepted(loaded):
    d, arts, dg = loaded("cu_softmax_naive")
    v = critique(dg.as_answer(), arts, dg)
    assert v.verdict == "accept", v.reasons
    assert all(v.checks.values())


def test_a_diagnosis_that_lies_about_its_own_evidence_is_rejected(loaded):
    """The old critic's pool held the engine's evidence, so a diagnosis passed its own critic by construction."""
    d, arts, dg = loaded("cu_softmax_naive")
    liar = dg.model_copy(deep=True)
    for f in [liar.primary, liar]:
        f.evidence[0].value = round(f.evidence[0].value * 1.37, 2)
    v = critique(liar.as_answer(), arts, liar)
    assert v.verdict == "reject" and not v.checks["numbers"], v.reasons
    from kernel_profiler.critic import facts_for
    assert not any(abs(f.value - liar.evidence[0].value) < 1e-9 for f in facts_for(arts, liar).items)


def test_diagnosis_json_text_is_accepted(loaded):
    d, arts, dg = loaded("cu_softmax_naive")
    v = critique_text(dg.model_dump_json(indent=2), [d])
    assert v.verdict == "accept", v.reasons


def test_evidence_number_off_by_30_percent_is_rejected(loaded):
    d, arts, dg = loaded("cu_softmax_naive")
    ans = dg.as_answer()
    i = next(i for i, e in enumerate(ans.evidence) if "sectors" in e.metric)
    wrong = round(ans.evidence[i].value * 1.3, 1)
    ans.evidence[i].value = wrong
    v = critique(ans, arts, dg)
    assert v.verdict == "reject"
    assert not v.checks["numbers"]
    assert any(f"{wrong:.4g}" in r for r in v.reasons), v.reasons


def test_counter_dump_is_rejected(loaded):
    d, arts, dg = loaded("cu_softmax_naive")
    k = _ncu(arts, "softmax_rows")
    names = [m for m in sorted(k.metrics) if "__" in m and k.units.get(m) == "%"][:10]
    assert len(names) == 10
    ans = Answer(
        bottleneck="softmax_rows counters",
        evidence=[EvidenceItem(metric=m, value=k.metrics[m], unit="%", artifact="ncu.ncu-rep", meaning=m)
                  for m in names],
        explanation=", ".join(names),
        fix=Fix(change="Lower gpu__time_duration.sum.", metric="gpu__time_duration.sum", direction="decrease"),
    )
    v = critique(ans, arts, dg)
    assert v.verdict == "reject"
    assert not v.checks["not_a_dump"]
    assert v.checks["numbers"]  # the numbers are real: it is rejected for being a dump, not for the numbers


def test_invented_problem_on_near_peak_kernel_is_rejected(loaded):
    d, arts, dg = loaded("cu_cublas_bf16")
    assert dg.mechanism == "near_peak"
    k = _ncu(arts, "nvjet")
    conflicts = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
    short = k.name.split("(")[0]
    ans = Answer(
        bottleneck=f"`{short}` is limited by shared-memory bank conflicts.",
        evidence=[EvidenceItem(metric=conflicts, value=k.metrics.get(conflicts, 0.0), unit="conflict",
                               artifact="ncu.ncu-rep", kernel=k.name, meaning="bank conflicts on shared loads"),
                  EvidenceItem(metric="gpu__time_duration.sum", value=k.metrics["gpu__time_duration.sum"], unit="ns",
                               artifact="ncu.ncu-rep", kernel=k.name, meaning="kernel duration")],
        explanation="Warps of the kernel hit the same shared-memory bank, so loads serialize and the kernel stays "
                  "below its peak bandwidth.",
        fix=Fix(change="Swizzle the shared tiles so the conflicts drop.", metric=conflicts, direction="decrease"),
        kernel=k.name,
    )
    v = critique(ans, arts, dg)
    assert v.verdict == "reject"
    assert not v.checks["near_peak"]
    assert any("near its roofline" in r and short in r for r in v.reasons), v.reasons


def _with_sentence(dg, sentence):
    ans = dg.as_answer()
    ans.explanation += " " + sentence
    return ans


def test_ncu_duration_quoted_as_step_time_is_rejected(loaded):
    d, arts, dg = loaded("cu_transpose_conflict")
    ncu_ns = _ncu(arts, "transpose_tile").metrics["gpu__time_duration.sum"]
    step_ns = dg.timeline.step_ns_median
    assert abs(ncu_ns - step_ns) / step_ns > 0.03  # the two really differ in this capture
    bad = critique(_with_sentence(dg, f"The program's step time is {ncu_ns / 1e6:.4f} ms."), arts, dg)
    assert bad.verdict == "reject"
    assert not bad.checks["replay_time"]
    # control: the timeline's own step time in the same sentence is fine
    good = critique(_with_sentence(dg, f"The program's step time is {step_ns / 1e6:.4f} ms."), arts, dg)
    assert good.verdict == "accept", good.reasons


def test_rate_above_ceiling_is_rejected(loaded):
    d, arts, dg = loaded("cu_softmax_naive")
    peak = dg.roofline.peak_bandwidth
    bad = critique(_with_sentence(dg, f"It sustains {peak * 1.3 / 1e12:.2f} TB/s."), arts, dg)
    assert bad.verdict == "reject" and not bad.checks["ceilings"]
    ok = critique(_with_sentence(dg, f"It sustains {dg.roofline.achieved_bandwidth / 1e12:.2f} TB/s."), arts, dg)
    assert ok.verdict == "accept", ok.reasons


def _transpose_markdown(arts, with_fix=True):
    k = _ncu(arts, "transpose_tile")
    m = k.metrics
    wf = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
    inst = "smsp__sass_inst_executed_op_shared_ld.sum"
    conflicts = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
    per_inst = m[wf] / m[inst]
    dur_us = m["gpu__time_duration.sum"] / 1e3
    peak = ceilings(k)[0]["dram"]
    floor_us = (m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"]) / peak * 1e6
    bw = m["dram__bytes.sum.per_second"]
    text = f"""# transpose_tile

## Bottleneck
`transpose_tile` is limited by 32-way shared-memory bank conflicts on its shared loads.

## Evidence
- wavefronts per shared load: {per_inst:.2f} ({wf}/{inst}, ncu.ncu-rep)
- bank conflicts: {m[conflicts]:,.0f} ({conflicts}, ncu.ncu-rep)
- kernel duration: {dur_us:.1f} us (gpu__time_duration.sum, ncu.ncu-rep)

## Mechanism
The tile is read by column, so the 32 addresses of a warp fall in one bank and every load is split into
{per_inst:.1f} serialized wavefronts. The kernel moves only {bw / 1e12:.2f} TB/s of the {peak / 1e12:.2f} TB/s
DRAM peak and runs {dur_us:.1f} us against a memory floor of {floor_us:.1f} us.
"""
    if with_fix:
        text += f"""
## Fix
Pad the tile to float[32][33]. `{wf}/{inst}` should drop from {per_inst:.0f} to about 1.
"""
    return text


def test_markdown_answer_with_capture_numbers_is_accepted(loaded):
    d, arts, dg = loaded("cu_transpose_conflict")
    text = _transpose_markdown(arts)
    ans = parse_answer(text)
    assert len(ans.evidence) == 3 and ans.fix.direction == "decrease" and ans.fix.metric
    v = critique(ans, arts, dg)
    assert v.verdict == "accept", v.reasons
    assert critique_text(text, [d]).verdict == "accept"


def test_markdown_answer_with_wrong_number_is_rejected(loaded):
    d, arts, dg = loaded("cu_transpose_conflict")
    dur = _ncu(arts, "transpose_tile").metrics["gpu__time_duration.sum"] / 1e3
    text = _transpose_markdown(arts).replace(f"kernel duration: {dur:.1f} us", f"kernel duration: {dur * 1.3:.1f} us")
    v = critique(parse_answer(text), arts, dg)
    assert v.verdict == "reject" and not v.checks["numbers"]
    assert any(f"{dur * 1.3:.1f}" in r for r in v.reasons), v.reasons


def test_missing_fix_section_is_rejected(loaded):
    d, arts, dg = loaded("cu_transpose_conflict")
    v = critique(parse_answer(_transpose_markdown(arts, with_fix=False)), arts, dg)
    assert v.verdict == "reject"
    assert not v.checks["parts"]
    assert any("fix" in r.lower() for r in v.reasons)


@pytest.mark.parametrize("text", ["The GPU is slow, make it faster.", "{not json", '{"foo": 1}', "   "])
def test_unparseable_text_raises(text):
    with pytest.raises(AnswerFormatError) as e:
        parse_answer(text)
    assert "\n" not in str(e.value)


def _truth():
    from conftest import suite_cases

    return [c for c in suite_cases() if c.get("mechanism")]


def _mutated(md: str, factor: float = 1.37) -> tuple[str, str]:
    """The answer with the value of its first evidence line multiplied by `factor` (and that value as written)."""
    import re

    at = md.index("## Evidence")
    m = re.compile(r"^[-*]\s+(\d[\d,]*(?:\.\d+)?)", re.M).search(md, at)
    assert m, "no evidence value"
    new = f"{float(m.group(1).replace(',', '')) * factor:.4g}"
    return md[:m.start(1)] + new + md[m.end(1):], m.group(1)


@pytest.mark.parametrize("case", _truth(), ids=[c["name"] for c in _truth()])
def test_engine_answers_pass_the_critic_as_markdown(case, captures):
    """What `analyze --format md` prints for every suite case is a grounded answer by the critic's rules, and the
    acceptance is not by construction: the same answer with one evidence number changed by 37% is rejected."""
    from kernel_profiler.analysis.engine import analyze
    from kernel_profiler.render.markdown import markdown

    folder = captures.case_dir(case["name"])
    d = analyze([folder])
    md = markdown(d)
    v = critique_text(md, [folder])
    assert v.verdict == "accept", v.reasons
    assert v.mechanism == d.primary.mechanism, (v.mechanism, d.primary.mechanism)  # the claim is read as written
    bad, num = _mutated(md)
    w = critique_text(bad, [folder])
    assert w.verdict == "reject" and not w.checks["numbers"], (num, w.reasons)


def test_critique_json_lists_the_fact_of_every_number(captures, tmp_path):
    import json
    import subprocess
    import sys

    from kernel_profiler.analysis.engine import analyze
    from kernel_profiler.render.markdown import markdown

    case = captures.case_dir("cu_transpose_conflict")
    ans = tmp_path / "answer.md"
    ans.write_text(markdown(analyze([case])))
    p = subprocess.run([sys.executable, "-m", "kernel_profiler.cli", "critique", str(ans), "--artifacts", str(case),
                        "--json"], capture_output=True, text=True)
    out = json.loads(p.stdout)
    assert p.returncode == 0 and out["verdict"] == "accept", out["reasons"]
    assert out["mechanism"] == "shared_bank_conflict" and out["signature"].startswith("shared_bank_conflict: present")
    assert len(out["numbers"]) >= 8
    for n in out["numbers"]:
        assert n["fact"] or n["derivation"], n
    assert any(n["fact"] and "ncu.ncu-rep" in n["fact"] and "[transpose_tile]" in n["fact"] for n in out["numbers"])
