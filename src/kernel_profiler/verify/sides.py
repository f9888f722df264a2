"""One side of a comparison: its captures loaded and diagnosed once by the engine, with the steady-state steps and
the kernel launches of the steady window grouped by (normalized name, launch configuration)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

import numpy as np

from ..analysis.consistency import reconcile
from ..analysis.engine import run
from ..analysis.steady import WARMUP_OUTLIER_FACTOR
from ..analysis.timeline import TimelineResult
from ..answer import Diagnosis
from ..artifacts import load_paths
from ..artifacts.tables import Artifacts, KernelProfile, Timeline
from ..kernel_name import KernelName


@dataclass
class Group:
    """The launches of one kernel (normalized name, launch configuration) in a side's steady window."""

    name: str
    key: str
    base: str
    cfg: Optional[tuple]
    durations: np.ndarray


@dataclass
class Side:
    """One side of a comparison, as the engine read it."""

    arts: Artifacts
    diag: Diagnosis
    tl: Optional[Timeline]
    tres: Optional[TimelineResult]
    steps: list[float]
    groups: list[Group] = field(default_factory=list)
    profiles: list[KernelProfile] = field(default_factory=list)


def launch_cfg(row) -> Optional[tuple]:
    try:
        vals = tuple(int(row[c]) for c in ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z"))
    except (TypeError, ValueError, KeyError):
        return None
    return vals


def launch_text(cfg: Optional[tuple]) -> Optional[str]:
    if cfg is None:
        return None
    return f"grid=({cfg[0]},{cfg[1]},{cfg[2]}) block=({cfg[3]},{cfg[4]},{cfg[5]})"


def steady_steps(step_ns: list[float]) -> list[float]:
    """Step durations without an outlier first step (the timeline's warm-up rule)."""
    if len(step_ns) > 1 and step_ns[0] > WARMUP_OUTLIER_FACTOR * float(np.median(step_ns[1:])):
        return list(step_ns[1:])
    return list(step_ns)


def kernel_groups_of(tl: Optional[Timeline], tres: Optional[TimelineResult]) -> list[Group]:
    if tl is None or tres is None or len(tl.kernels) == 0:
        return []
    lo, hi = tres.window
    k = tl.kernels
    k = k[(k["start_ns"] >= lo) & (k["start_ns"] <= hi)]
    if len(k) == 0:
        return []
    cols = ["grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z"]
    k = k.assign(_dur=(k["end_ns"] - k["start_ns"]).astype(np.float64), _name=k["name"].astype(str))
    key_of = {n: KernelName(n).key for n in k["_name"].unique()}  # the regex-heavy key once per distinct name
    k["_key"] = k["_name"].map(key_of)
    have_cfg = set(cols) <= set(k.columns)
    by_cols = ["_key"] + (cols if have_cfg else [])
    out = []
    for gkey, g in k.groupby(by_cols, sort=False, dropna=False):
        key = gkey[0] if isinstance(gkey, tuple) else gkey
        cfg = launch_cfg(g.iloc[0]) if have_cfg else None
        name = g["_name"].iloc[0]
        out.append(Group(name=name, key=key, base=KernelName(name).base, cfg=cfg, durations=g["_dur"].to_numpy()))
    return sorted(out, key=lambda g: -float(g.durations.sum()))


def load_side(paths: Iterable[str | Path]) -> Side:
    arts = reconcile(load_paths(paths))
    an = run(arts)  # the engine's one pass: the same timeline and triage the diagnosis used
    tl, tres = an.timeline, an.triage
    steps = steady_steps(tres.step_ns) if tres is not None and tres.step_ns else []
    return Side(arts=arts, diag=an.diagnosis, tl=tl, tres=tres, steps=steps, groups=kernel_groups_of(tl, tres),
                 profiles=[a.profile for a in an.kernels])
