"""Parts written under headings in other words (form.py): an assistant's '**Short version:**', '**What the profiles
show**', '**Why ...**', '**Recommendation**'; a Slack note's 'numbers:' / 'why:' / 'change:' labels; a table of
measurements under the bottleneck; a '# Diagnosis' title above the parts is no part."""
from __future__ import annotations

from kernel_profiler.critic import parse_answer

CHATTY = """Great question! Here's what I found.

**Short version:** the fused kernel is limited by HBM bandwidth and already close to the ceiling.

**What the profiles show**

1. In `nsys.sqlite` the loop is 30 launches with a median of 503.9 us each.
2. In `ncu.ncu-rep` the kernel reaches 87.8% of DRAM peak.

**Why this is the ceiling**

It must read 1 GiB and write 1 GiB, so 2.147 GB / 4.81 TB/s = 446 us is the floor.

**Recommendation**

- Leave the kernel; `gpu__time_duration` should stay near 500 us.
"""

SLACK = """bottleneck: the kernel is HBM-bandwidth bound and at the roof.
numbers: ncu.ncu-rep says 502.8 us/launch at 4.22 TB/s = 87.8% of DRAM peak.
why: it has to move 2.147 GB per call, a 446 us floor at 4.81 TB/s.
change: nothing in the kernel; bf16 tensors would halve dram bytes -> ~250 us/launch.
"""

TABLE = """# transpose_once: what limits it

**Bottleneck:** 32-way shared-memory bank conflicts in the transpose tile.

| measurement | value | artifact |
|---|---|---|
| duration of the one launch | 1.302 ms | nsys.sqlite |
| DRAM throughput | 34.0% of peak | ncu.ncu-rep |

**Why:** the read back is by column, so every lane of the warp hits the same bank.

**Fix:** declare `__shared__ float tile[32][33]`; shared wavefronts per load should decrease from ~32 to ~1.
"""


def test_headings_in_other_words_are_the_four_parts():
    a = parse_answer(CHATTY)
    assert "HBM bandwidth" in a.bottleneck and "floor" in a.explanation and "Leave the kernel" in a.fix_text
    assert [e.value for e in a.evidence] == [30, 87.8]


def test_slack_labels_are_the_four_parts():
    a = parse_answer(SLACK)
    assert a.bottleneck.startswith("the kernel") and "446 us floor" in a.explanation and a.fix_text.startswith("nothing")
    assert a.evidence and a.evidence[0].value == 502.8


def test_a_table_under_the_bottleneck_is_the_evidence_and_a_title_is_no_part():
    a = parse_answer(TABLE)
    assert a.bottleneck.startswith("32-way") and "|" not in a.bottleneck
    assert [e.value for e in a.evidence] == [1.302, 34.0]
    assert "same bank" in a.explanation and "tile[32][33]" in a.fix_text
