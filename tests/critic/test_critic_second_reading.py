"""The critic's second reading (critic.critique_read, form.read_by_role; issue 10, item 4): an answer the reading of
its layout rejects only for what that reading missed (no causal chain, a fix with no measured outcome) is read again by
the role of each sentence, and the second reading stands only when every check accepts it. On the real py_pageable_copy
capture, each case with a twin that the second reading must not rescue:
  - a terse note whose "- watch:" line (the fix's outcome) the layout reads as evidence: rejected by the layout's
    reading (the fix names no metric), accepted on the second (test_a_fix_outcome_the_layout_misplaces);
  - the same note predicting the copy bandwidth falling: the second reading reads the outcome and the fix check
    refuses it, so the verdict stays the first reading's (test_the_second_reading_keeps_every_check);
  - the same note blaming launch overhead: a check of the claim fails, so there is no second reading
    (test_a_refuted_claim_gets_no_second_reading).
"""
from __future__ import annotations

import pytest
from critic_case import case  # noqa: F401 (the fixture)

from kernel_profiler.critic import facts_for
from kernel_profiler.critic.fixes import NO_METRIC


def _timeline(c, metric: str) -> float:
    return next(f.value for f in facts_for(c.arts, c.dg).items if f.metric == metric and f.kernel is None)


def _note(c, verdict: str, watch: str) -> str:
    copy_ms, window_ms = _timeline(c, "timeline.copy_ns") / 1e6, _timeline(c, "timeline.window_ns") / 1e6
    step_ms = _timeline(c, "timeline.steady_step_median_ns") / 1e6
    gbps = _timeline(c, "timeline.window_copy_bandwidth") / 1e9
    mib = _timeline(c, "timeline.copy_median_bytes") / 2 ** 20
    return ("py_pageable_copy\n"
            f"- {verdict}: copies = {copy_ms:.1f} of {window_ms:.1f} ms steady window, step ~{step_ms:.1f} ms\n"
            f"- H2D {mib:.0f} MiB/step from **pageable** host memory (nsys srcKind = Pageable) => ~{gbps:.2f} GB/s\n"
            "- pageable => staged through the driver's bounce buffer, a CPU memcpy in the path\n"
            "- fix: `host = host.pin_memory()` once at setup + `.to('cuda', non_blocking=True)`\n"
            f"- watch: {watch.format(gbps=gbps, step=step_ms)}\n")


@pytest.fixture(scope="module")
def pageable(case):
    return case("py_pageable_copy")


def test_a_fix_outcome_the_layout_misplaces(pageable):
    """The layout's reading takes "- fix:" as the fix and "- watch:" as evidence, so its fix names no metric; read by
    role, the watch line is the fix's expected effect and every check passes."""
    text = _note(pageable, "transfer-bound", "memcpy GB/s up ({gbps:.2f} -> tens of GB/s), step time down "
                                             "~{step:.0f} ms -> ~6 ms (est.)")
    layout = pageable.critique_layout(text)
    assert layout.verdict == "reject" and set(layout.failed) == {"fix"} and NO_METRIC in layout.failed["fix"], \
        layout.reasons
    v = pageable.critique(text)
    assert v.verdict == "accept" and v.reading == "role", v.reasons


def test_the_second_reading_keeps_every_check(pageable):
    """Read by role, the watch line predicts the copy bandwidth falling: a fix of pageable copies cannot do that, so
    the second reading rejects too and the verdict is the first reading's."""
    text = _note(pageable, "transfer-bound", "memcpy GB/s down ({gbps:.2f} -> ~2 GB/s) (est.)")
    v = pageable.critique(text)
    assert v.verdict == "reject" and v.reading == "layout" and set(v.failed) == {"fix"}, v.reasons
    assert NO_METRIC in v.failed["fix"], v.failed


def test_a_refuted_claim_gets_no_second_reading(pageable):
    """A note that blames launch overhead fails a check of its claim (the copies take the window), not only one of
    its reading: it is not read again, however its fix reads."""
    text = _note(pageable, "launch-bound, launch overhead", "memcpy GB/s up ({gbps:.2f} -> tens of GB/s), step "
                                                           "time down ~{step:.0f} ms -> ~6 ms (est.)")
    v = pageable.critique(text)
    assert v.verdict == "reject" and v.reading == "layout", v.reasons
    assert set(v.failed) - {"fix", "not_a_dump"}, v.failed
