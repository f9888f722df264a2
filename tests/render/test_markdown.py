"""What people read, rendered from real H200 captures: units, sensible precision, names, no dead lines.

Covers every renderer: render.markdown/text (analyze, report -o x.md), render.html (report -o x.html),
verify's text and ask's answer (AskResult.markdown).
"""
from __future__ import annotations

import re

import pytest

from kernel_profiler.answer import AskResult
from kernel_profiler.display import times
from kernel_profiler.analysis.engine import analyze
from kernel_profiler.render.html import render_html, rooflines_for
from kernel_profiler.render.markdown import markdown, text
from kernel_profiler.verify import verify

CASES = ["cu_softmax_naive", "cu_sgemm_fp32", "cu_histogram_fixed", "cu_local_array", "py_unfused_gelu",
         "cu_tiny_launches", "mr_balanced", "cu_elementwise_fused"]
DECIMAL = re.compile(r"\d[\d,]*\.\d+")
EXPONENT = re.compile(r"\d(?:\.\d+)?e[+-]\d+")  # 4.769e+07
BARE_NS = re.compile(r"\d ns\b")


@pytest.fixture(scope="module")
def rendered(captures):
    out = {}
    for case in CASES:
        folder = captures.case_dir(case)
        d = analyze([folder])
        out[case] = (d, markdown(d), text(d), render_html(d, rooflines_for([folder])))
    return out


def _numbers_are_readable(s: str, where: str) -> None:
    s = re.sub(r"/tmp/\S+|pytest-\d+", " ", s)  # paths carry digits that are not quantities
    for m in DECIMAL.finditer(s):  # 36.33810663678693: at most 5 significant digits in a decimal
        digits = m.group(0).replace(",", "").replace(".", "").lstrip("0")
        assert len(digits) <= 5, (where, m.group(0))
    assert not EXPONENT.search(s), (where, EXPONENT.search(s).group(0))
    assert "nan" not in s.split()


@pytest.mark.parametrize("case", CASES)
def test_markdown_text_and_html_numbers_are_readable(case, rendered):
    d, md, tx, html = rendered[case]
    for where, s in (("md", md), ("text", tx), ("html", re.sub(r'data-[\w-]+="[^"]*"', "", html))):
        _numbers_are_readable(s, f"{case} {where}")


@pytest.mark.parametrize("case", CASES)
def test_also_found_has_no_empty_or_inconclusive_lines(case, rendered):
    d, md, tx, html = rendered[case]
    tail = re.split(r"\n\n(?:## |Device:)", md.split("## Also found", 1)[1])[0] if "## Also found" in md else ""
    for line in tail.strip().splitlines():
        assert line.startswith("- ") and len(line) > 10 and "inconclusive" not in line and "(0% of time)" not in line
    assert "inconclusive (0% of time)" not in html


def test_mr_balanced_drops_the_zero_share_inconclusive_line(rendered):
    d, md, tx, html = rendered["mr_balanced"]
    assert any(f.bound == "inconclusive" and not f.share for f in d.secondary)  # the engine still carries it
    assert "inconclusive (0%" not in md


def test_full_set_report_is_not_asked_for_again(rendered):
    """cu_histogram_fixed was captured with --set full: no request for 'a full-set ncu report'; the stall
    reason and ncu's own stall rule, already in the report, are used instead."""
    d, md, tx, html = rendered["cu_histogram_fixed"]
    assert d.mechanism is None and "full-set" not in md and "--set full" not in md
    assert "long_scoreboard" in md and "rule CPIStall" in md
    assert any(e.metric.endswith("long_scoreboard_per_issue_active.ratio") for e in d.evidence)
    assert "already holds per-instruction samples" in md


def test_roofline_states_both_floors(rendered):
    d, md, tx, html = rendered["cu_softmax_naive"]
    r = d.roofline
    assert "the work needs 113.3 µs" in md and "545.3 MB" in md and f"gap {times(r.needed_gap)}" in md
    assert "At the 1.265 GB it moved from DRAM the floor is 262.8 µs (gap 6.51x)" in md
    assert "15.1x its memory floor of 113.3 µs" in d.explanation
    # HTML: the same sentence, the gap drawn at the intensity of the needed bytes
    assert 'id="roofline-text"' in html and "the work needs 113.3 µs" in html
    assert 'class="pt needed"' in html and 'class="excess-line"' in html


def test_kernel_names_get_an_ellipsis_not_a_silent_cut(rendered):
    d, md, tx, html = rendered["py_unfused_gelu"]
    rows = [l for l in md.splitlines() if l.startswith("| `")]
    assert rows and all(len(l.split("`")[1]) <= 70 for l in rows)
    assert any("…" in l.split("`")[1] for l in rows)
    long = max((k.name for k in d.timeline.top_kernels), key=len)
    assert len(long) > 70 and long[:70] not in md  # the old silent cut


def test_html_answer_has_no_literal_backticks(rendered):
    for case in CASES:
        d, md, tx, html = rendered[case]
        answer = html.split('<div class="answer" id="answer">', 1)[1].split("</div>", 1)[0]
        assert "`" not in answer, case
        if 'id="also-h"' in html:
            assert "`" not in html.split('id="also-h"', 1)[1].split('id="artifacts-h"')[0], case
    d, md, tx, html = rendered["cu_softmax_naive"]
    assert "<p><code>softmax_rows</code> is memory-bound" in html


def test_html_fix_numbers_carry_units(rendered):
    d, md, tx, html = rendered["cu_local_array"]
    assert d.fix.current_value > 1e6 and d.fix.target_value == 0
    assert re.search(r"\(now [\d,]+ sectors, target 0 sectors\)", html), re.findall(r"\(now [^)]*\)", html)
    assert "e+0" not in html


def test_sgemm_labels_agree_in_every_renderer(rendered):
    d, md, tx, html = rendered["cu_sgemm_fp32"]
    assert d.bound == "compute"
    for s in (md, tx, html):
        assert "memory-bound" not in s and "compute floor" in s


def test_verify_text_has_units(captures):
    r = verify([captures.case_dir("cu_local_array")], [captures.case_dir("cu_local_array_fixed")])
    out = r.render()
    _numbers_are_readable(out, "verify")
    assert re.search(r"[\d,]+ sectors -> 0 sectors", out), out
    assert " ms -> " in out and "µs" in out and r.prediction_check.unit == "sector"


def test_ask_answer_values_carry_units(rendered):
    d = rendered["cu_softmax_naive"][0]
    res = AskResult.of(d.as_answer(), question="why is my softmax slow", model="offline-expert", accepted=True)
    out = markdown(res)
    assert "- 4 bytes/sector `smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio`" in out
    assert "4.0 byte/sector" not in out
    _numbers_are_readable(out, "ask")


def test_readme_quick_start_matches_what_ask_prints():
    """The README's excerpt of `ask "why is my softmax slow"` (bundled example) quotes the engine's words."""
    from pathlib import Path

    import kernel_profiler

    root = Path(__file__).resolve().parent.parent.parent
    readme = " ".join((root / "README.md").read_text(encoding="utf-8").split())
    example = Path(kernel_profiler.__file__).parent / "data" / "examples" / "softmax"
    d = analyze([example])
    said = " ".join(d.explanation.split())
    start = said.index("it runs ")
    sentence = said[start:said.index(". ", start)]
    assert "15.1x its memory floor of 113.3 µs" in sentence and sentence in readme
    assert "4 bytes/sector" in readme and "4.0 byte/sector" not in readme


def test_power_cap_samples_next_to_a_gemm_are_used(captures):
    """NVML telemetry given with a GEMM capture that shows sw_power_cap while busy is named next to the
    near-peak verdict (the ceilings are at the throttled clock), and the answer still passes the critic."""
    import json

    from kernel_profiler.critic import critique_text

    folder, tel = captures.case_dir("py_gemm_bf16"), captures.path("telemetry", "telemetry_gemm.json")
    samples = json.loads(tel.read_text())["samples"]
    busy = [s for s in samples if (s.get("gpu_util_pct") or 0) >= 50]
    capped = [s for s in busy if "sw_power_cap" in s["throttle_reasons"]]
    assert len(capped) >= 0.2 * len(busy) > 0
    d = analyze([folder, tel])
    assert d.bound == "near_peak"
    ev = {e.metric: e for e in d.primary.evidence}
    assert ev["telemetry.throttled_sample_fraction"].value == pytest.approx(len(capped) / len(busy), abs=1e-4)
    assert ev["telemetry.sm_clock_mhz_median"].value < 1980
    assert "sw_power_cap" in d.explanation and "power-capped" in d.explanation
    md = markdown(d)
    assert "telemetry.throttled_sample_fraction" in md  # shown among the answer's evidence
    v = critique_text(md, [folder, tel])
    assert v.verdict == "accept", v.reasons
    assert "NVML" not in analyze([folder]).explanation  # nothing said without the samples
