"""Program-level timeline facts computed by the metrics registry (`metrics.TIMELINE`): one definition of each
timeline value for the engine, `verify` and the critic. A fact carries the registry name and definition."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import metrics

if TYPE_CHECKING:
    from .facts import Facts

_FAMILY = {"ns": "time", "ratio": "ratio", "count": "count", "byte": "bytes", "byte/s": "byte_rate"}


def registry_facts(f: "Facts", view: metrics.TimelineView) -> set[str]:
    """Add the registry's timeline values on this view; the names added (the caller computes none of them again)."""
    added = set()
    for m in metrics.TIMELINE:
        if m.compute is None or m.unit not in _FAMILY:
            continue
        try:
            v = m.compute(view)
        except (KeyError, ValueError, ZeroDivisionError):  # a timeline without the table the metric reads
            continue
        if v is not None:
            f.add(m.name, v, _FAMILY[m.unit], f"timeline ({view.summary.source})", None, f"registry: {m.definition}")
            added.add(m.name)
    return added
