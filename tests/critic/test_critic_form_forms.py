"""Answer forms the critic must read (critic/form.py), each checked end to end on a real H200 capture.

An answer written as plain paragraphs, as numbered parts with bold labels ending in a period, or with an
unlabelled opening before `Mechanism:`/`Fix:` is read in the answer's order (Bottleneck, Evidence, Mechanism,
Fix) and then checked like any other: each form has a twin with one fabricated number that must be rejected,
so reading a form never lets its numbers through unchecked. Values are read from the capture at test time.
"""
from __future__ import annotations

import pytest

from kernel_profiler.analysis.engine import diagnose
from kernel_profiler.artifacts import load_paths
from kernel_profiler.critic import AnswerFormatError, critique, parse_answer

DUR = "gpu__time_duration.sum"


@pytest.fixture(scope="module")
def softmax(captures):
    arts = load_paths([captures.case_dir("cu_softmax_naive")])
    dg = diagnose(arts)
    k = max((k for k in arts.kernel_profiles if "softmax_rows" in k.name), key=lambda k: len(k.metrics))
    return arts, dg, k.metrics


def parts(m, dg, dur_scale=1.0):
    bps = m["smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"]
    return (
        "`softmax_rows` is memory-bound on uncoalesced global loads: each warp load scatters over many sectors.",
        f"Each 32-byte sector it fetches delivers {bps:.0f} useful bytes "
        f"(`smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio`, ncu.ncu-rep). One launch takes "
        f"{m[DUR] * dur_scale / 1e3:.1f} us (`{DUR}`, ncu.ncu-rep).",
        "Adjacent lanes read different rows, so every warp load is split into many sectors and most fetched bytes "
        f"are wasted; the kernel runs {dg.roofline.gap:.1f}x its memory roofline floor.",
        "Map consecutive threads to consecutive addresses (one warp per row). "
        f"`smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio` should go up from {bps:.0f} to 32.")


def check(softmax, text):
    arts, dg, _ = softmax
    return critique(parse_answer(text), arts, dg, raw=text)


FORMS = {
    "plain paragraphs": lambda p: "\n\n".join(p),
    "numbered bold labels ending in a period": lambda p: "\n\n".join(
        f"{i}. **{h}.** {t}" for i, (h, t) in enumerate(zip(("Bottleneck", "Evidence", "Mechanism", "Fix"), p), 1)),
    "unlabelled opening, then labels": lambda p: f"{p[0]}\n\n{p[1]}\n\nMechanism: {p[2]}\n\nFix: {p[3]}",
    "numbered, first label not a part name": lambda p: f"1. **What limits it.** {p[0]}\n\n2. **Evidence (ncu.ncu-rep, "
                                                       f"softmax_rows).**\n   - {p[1]}\n\n3. **Mechanism.** {p[2]}\n\n"
                                                       f"4. **Fix.** {p[3]}",
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_each_form_is_read_in_order_and_checked(softmax, form):
    _, dg, m = softmax
    text = FORMS[form](parts(m, dg))
    a = parse_answer(text)
    assert a.bottleneck.startswith("`softmax_rows` is memory-bound") and a.explanation.startswith("Adjacent lanes")
    assert a.fix.direction == "increase" and a.evidence
    ok = check(softmax, text)
    assert ok.verdict == "accept", ok.reasons
    bad = check(softmax, FORMS[form](parts(m, dg, dur_scale=1.4)))  # the same answer, one duration invented
    assert bad.verdict == "reject" and any("us" in r and "matches no measured value" in r or "does not match" in r
                                           for r in bad.reasons), bad.reasons


def test_one_paragraph_is_read_by_sentence_roles_and_two_of_prose_are_read(softmax):
    """A chat reply in one paragraph: the verdict sentence is the bottleneck, the sentences with numbers the evidence,
    the sentence that says what to do (and the effect after it) the fix; without such a sentence the fix is missing.
    Two or three paragraphs: the last one is the fix. Text with no sentence of numbers stays unreadable."""
    _, dg, m = softmax
    p = parts(m, dg)
    a = parse_answer(f"{p[0]} {p[1]} {p[2]} {p[3]}")
    assert a.bottleneck.startswith("`softmax_rows` is memory-bound") and a.evidence, a
    assert a.fix_text.startswith("Map consecutive threads") and a.fix.direction == "increase", a
    assert check(softmax, f"{p[0]} {p[1]} {p[2]} {p[3]}").verdict == "accept"
    no_fix = check(softmax, f"{p[0]} {p[1]} {p[2]}")
    assert no_fix.verdict == "reject" and any("fix part is missing" in r for r in no_fix.reasons), no_fix.reasons
    with pytest.raises(AnswerFormatError):
        parse_answer("Looked at the capture. The softmax kernel seems slow. Not sure why yet.")
    a = parse_answer(f"{p[0]} {p[1]}\n\n{p[2]} {p[3]}")
    assert a.bottleneck and a.evidence and a.fix_text.startswith(p[2][:20]), a


def test_an_evidence_metric_value_is_the_number_at_its_name_or_the_first(softmax):
    """'Each 32-byte sector delivers 4 useful bytes (`metric`)': the value of the metric is the 4 written at its
    name, not the line's first number; a wrong number at the name is still refused."""
    _, dg, m = softmax
    bps = m["smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"]
    p = list(parts(m, dg))
    assert p[1].startswith("Each 32-byte sector") and bps != 32
    ok = check(softmax, FORMS["unlabelled opening, then labels"](p))
    assert ok.verdict == "accept", ok.reasons
    p[1] = p[1].replace(f"delivers {bps:.0f} useful", f"delivers {bps * 2:.0f} useful")
    bad = check(softmax, FORMS["unlabelled opening, then labels"](p))
    assert bad.verdict == "reject", bad.reasons
