"""Cross-rank straggler analysis: compare ranks before profiling any kernel.

Input: one nsys timeline holding several processes (one per rank), or one
timeline per rank (PyTorch traces), plus optional per-rank step times and NVML
telemetry. Per rank: step-time distribution (warm-up outliers dropped),
compute time vs time inside collectives (NCCL kernels), and the delay with
which it enters each collective after the first rank did. The straggler is the
rank that enters last and waits least; its cause is uneven work (more compute
per step), throttling (lower clocks with a throttle reason, explaining the
extra compute), or its host (same compute, late entry: the GPU idled waiting
for the host).
"""
from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from typing import Optional

import numpy as np
import pandas as pd

from . import intervals as iv
from ..artifacts.tables import Artifacts
from ..answer import Evidence, Finding, Fix, RankRow
from ..catalog import CATALOG
from ..display import duration
from ..telemetry import POWER_REASONS, THERMAL_REASONS

COLLECTIVE = re.compile(r"nccl|rccl|all_?reduce|all_?gather|reduce_?scatter", re.IGNORECASE)
# The spread in collective entry is noise below both of these.
NOISE_ABS_NS = 0.2e6
NOISE_FRAC_OF_STEP = 0.05
# Compute per step differing by less than this fraction is the same work.
COMPUTE_NOISE = 0.10
# Throttling explains the straggler when its clock deficit accounts for this share of its extra compute.
THROTTLE_EXPLAINS = 0.7
# A throttle reason counts when present in at least this share of a rank's samples.
THROTTLE_MIN_SHARE = 0.2
# Steps slower than this many times the median at the start are warm-up.
WARMUP_FACTOR = 3.0
# Compute between consecutive collectives under this fraction of one collective's time: a communication-only
# stretch (no step markers given), not a sequence of steps.
COMM_ONLY_COMPUTE_FRACTION = 0.01
# Collectives taking at least this share of every rank's step, with no straggler, is comms-bound.
COMMS_BOUND_SHARE = 0.4


@dataclass
class RankAnalysis:
    """What comparing the ranks found."""

    finding: Finding  # the straggler, comms-bound or balanced-ranks finding, or why no verdict can be given
    rows: list[RankRow]  # per-rank numbers, in rank order
    straggler: Optional[int] = None  # the rank the others wait for; None when there is none
    cause: Optional[str] = None  # the straggler's cause: uneven_work, host or throttle:<reason>
    sample: bool = False  # the ranks at hand do not cover their job: no straggler verdict is possible

    @property
    def answers(self) -> bool:
        """The ranks answer the question: a straggler, or every rank waiting in its collectives."""
        return self.straggler is not None or self.finding.mechanism == "comms_wait"

    @property
    def verdict(self) -> Optional[str]:
        """'straggler' or 'no straggler'; None for a sample of ranks."""
        return None if self.sample else ("straggler" if self.straggler is not None else "no straggler")


@dataclass
class RankView:
    rank: int
    pid: Optional[int]
    device: Optional[int]
    kernels: pd.DataFrame
    source: str


def rank_views(arts: Artifacts) -> list[RankView]:
    """One view per rank: processes of one timeline, or one timeline per rank."""
    views: list[RankView] = []
    multi = [t for t in arts.timelines if len(t.kernels) and t.kernels["pid"].nunique() > 1]
    if multi:
        tl = max(multi, key=lambda t: len(t.kernels))
        groups = sorted(tl.kernels.groupby("pid"), key=lambda g: (g[1]["device"].min(), g[0]))
        for i, (pid, k) in enumerate(groups):
            views.append(RankView(rank=i, pid=int(pid), device=int(k["device"].min()), kernels=k, source=tl.source))
        return views
    per_rank = [t for t in arts.timelines if len(t.kernels)]
    if len(per_rank) > 1:
        for i, t in enumerate(sorted(per_rank, key=lambda t: (t.rank if t.rank is not None else 1 << 30, t.source))):
            rank = t.rank if t.rank is not None else i
            dev = int(t.kernels["device"].min()) if t.kernels["device"].notna().any() else None
            views.append(RankView(rank=rank, pid=None, device=dev, kernels=t.kernels, source=t.source))
    return views


def _steady(values: list[float]) -> list[float]:
    if len(values) >= 3:
        med = statistics.median(values[1:])
        while values and values[0] > WARMUP_FACTOR * med:
            values = values[1:]
    return values


def _pct(values: list[float], q: float) -> Optional[float]:
    return float(np.percentile(values, q)) if values else None


def _telemetry_for(arts: Artifacts, view: RankView) -> tuple[Optional[float], list[str]]:
    """Median SM clock and the throttle reasons (beyond idle) present in >= THROTTLE_MIN_SHARE of samples."""
    for t in arts.telemetry:
        samples = [s for s in t.get("samples", []) if (t.get("rank") == view.rank or
                   (t.get("rank") is None and s.get("gpu") == view.device))]
        if t.get("rank") == view.rank:
            samples = t.get("samples", [])
        if not samples:
            continue
        clocks = [s["sm_clock_mhz"] for s in samples if s.get("sm_clock_mhz")]
        counts: dict[str, int] = {}
        for s in samples:
            for r in s.get("throttle_reasons", []):
                if r != "gpu_idle":
                    counts[r] = counts.get(r, 0) + 1
        reasons = sorted(r for r, n in counts.items() if n >= THROTTLE_MIN_SHARE * len(samples))
        return (statistics.median(clocks) if clocks else None), reasons
    return None, []


def sample_of_ranks(arts: Artifacts, views: list[RankView]) -> Optional[Finding]:
    """A finding saying the ranks at hand do not cover their job (so no straggler can be named), or None.

    Per-rank traces name their job's size (Kineto `distributedInfo.world_size`); the slowest
    rank may be one that was not captured, so a sample of ranks gets no straggler verdict.
    """
    sizes = {t.world_size for t in arts.timelines if t.world_size}
    if len(sizes) != 1 or any(v.pid is not None for v in views):
        return None
    world = sizes.pop()
    have = sorted({v.rank for v in views})
    if have == list(range(world)):
        return None
    shown = ", ".join(map(str, have[:8])) + (" ..." if len(have) > 8 else "")
    return Finding(
        bound="inconclusive", mechanism=None, share=0.0,
        bottleneck=(f"These traces hold {len(have)} of the job's {world} ranks (ranks {shown}): a sample of ranks "
                    f"cannot name a straggler, since the slowest rank may be one that was not captured."),
        evidence=[Evidence(metric="multirank.ranks_captured", value=float(len(have)), unit="count",
                           artifact=views[0].source, meaning=f"ranks captured, of a world size of {world}")],
        explanation=("A straggler is the rank the others wait for inside each collective; with ranks missing, the "
                     "one they wait for may be absent, and the lag among the captured ranks proves nothing."),
        fix=Fix(change=f"Capture every rank of the job (one trace per rank, all {world}), then compare them.",
                metric="multirank.ranks_captured", direction="increase", expected=f"to {world}"),
        confidence=0.9)


def _is_collective(names: pd.Series) -> np.ndarray:
    """Per kernel: is it a collective? The pattern runs once per distinct name (names repeat every step)."""
    names = names.astype(str)
    hits = [n for n in pd.unique(names) if COLLECTIVE.search(n)]
    return names.isin(hits).to_numpy()


def analyze_ranks(arts: Artifacts) -> Optional[RankAnalysis]:
    """The ranks compared (None with fewer than two ranks or no collective to compare them on)."""
    views = rank_views(arts)
    if len(views) < 2:
        return None
    sample = sample_of_ranks(arts, views)
    if sample is not None:
        rows = [RankRow(rank=v.rank, pid=v.pid, device=v.device, source=v.source) for v in views]
        return RankAnalysis(sample, rows, sample=True)
    coll = []
    for v in views:
        k = v.kernels
        is_coll = _is_collective(k["name"])
        c = k[is_coll].sort_values("start_ns")
        coll.append(c)
    n = min(len(c) for c in coll)
    rows: list[RankRow] = []
    steps_by_rank = {s["rank"]: [float(x) * 1e9 for x in s["step_s"]] for s in arts.step_times
                     if s.get("rank") is not None}
    if n == 0:
        return None
    starts = np.vstack([c["start_ns"].to_numpy(np.float64)[-n:] for c in coll])
    durs = np.vstack([(c["end_ns"] - c["start_ns"]).to_numpy(np.float64)[-n:] for c in coll])
    # Drop warm-up collectives (first ones much longer than the median on every rank).
    keep = np.ones(n, dtype=bool)
    med_d = np.median(durs, axis=1, keepdims=True)
    for i in range(min(n, 5)):
        if np.all(durs[:, i] > WARMUP_FACTOR * med_d[:, 0]):
            keep[i] = False
    starts, durs = starts[:, keep], durs[:, keep]
    lag = starts - starts.min(axis=0, keepdims=True)
    med_lag = np.median(lag, axis=1)
    med_wait = np.median(durs, axis=1)
    step_from_coll = float(np.median(np.diff(starts.min(axis=0)))) if starts.shape[1] > 1 else None
    compute = []
    for v, c in zip(views, coll):
        k = v.kernels
        other = k[~_is_collective(k["name"])]
        lo, hi = float(c["start_ns"].iloc[-n:].iloc[0]), float(c["end_ns"].iloc[-1])
        s, e = iv.union(*iv.clip(other["start_ns"].to_numpy(np.float64), other["end_ns"].to_numpy(np.float64), lo, hi))
        compute.append(iv.total(s, e) / max(starts.shape[1] - 1, 1))
    comm_only = all(c_ns < COMM_ONLY_COMPUTE_FRACTION * w for c_ns, w in zip(compute, med_wait)) and all(
        len(v.kernels) > len(c) for v, c in zip(views, coll))
    for i, v in enumerate(views):
        steps = _steady(steps_by_rank.get(v.rank, []))
        clock, reasons = _telemetry_for(arts, v)
        rows.append(RankRow(rank=v.rank, pid=v.pid, device=v.device, steps=len(steps) or int(starts.shape[1]),
                            step_p50_ns=_pct(steps, 50) or step_from_coll, step_p90_ns=_pct(steps, 90),
                            step_p99_ns=_pct(steps, 99), step_max_ns=max(steps) if steps else None,
                            compute_ns_per_step=compute[i], collective_ns_per_step=float(med_wait[i]),
                            collective_enter_lag_ns=float(med_lag[i]), sm_clock_mhz_median=clock,
                            throttle_reasons=reasons, source=v.source))
    step = rows[0].step_p50_ns or step_from_coll or 1.0
    if comm_only and not steps_by_rank:
        # Collectives back to back with no compute between them, and the compute elsewhere: a one-time
        # communication stretch (e.g. the initial parameter sync), not steps: no straggler to look for in it.
        span = float(starts.max(axis=0)[-1] + durs[:, -1].max() - starts.min(axis=0)[0])
        f = Finding(bound="inconclusive", mechanism=None, share=0.0,
                    bottleneck=(f"No straggler to look for: the {starts.shape[1]} collectives on each rank run back to "
                                f"back with no compute between them ({duration(span)}), a one-time communication "
                                f"stretch, not steps; each rank's steady state is judged on its own timeline."),
                    evidence=[Evidence(metric="multirank.compute_ns_per_step", value=float(max(compute)), unit="ns",
                                       artifact=views[0].source, meaning="GPU compute between consecutive collectives"),
                              Evidence(metric="multirank.collective_ns_per_step", value=float(np.min(med_wait)),
                                       unit="ns", artifact=views[0].source, meaning="median time of one collective")],
                    explanation=("Steps repeat compute and communication; a run of collectives alone is set-up or "
                                 "tear-down traffic, reported with the one-time work."),
                    confidence=0.7)
        return RankAnalysis(f, rows)
    s_idx = int(np.argmax(med_lag))
    spread = float(med_lag[s_idx])
    src = views[0].source
    if spread < max(NOISE_ABS_NS, NOISE_FRAC_OF_STEP * step):
        coll_share = float(np.min(med_wait)) / step
        ev = [Evidence(metric="multirank.collective_enter_spread_ns", value=spread, unit="ns", artifact=src,
                       meaning=f"ranks enter each collective within {spread / 1e6:.3f} ms of each other "
                               f"(noise threshold {max(NOISE_ABS_NS, NOISE_FRAC_OF_STEP * step) / 1e6:.2f} ms)"),
              Evidence(metric="multirank.step_p50_ns", value=step, unit="ns", artifact=src,
                       meaning=f"median step {step / 1e6:.2f} ms on every rank")]
        if coll_share >= COMMS_BOUND_SHARE:
            f = Finding(bound="comms", mechanism="comms_wait", share=coll_share,
                        bottleneck=(f"No straggler, but every rank spends {coll_share:.0%} of each step inside "
                                    f"collectives: the job is communication-bound."),
                        evidence=ev + [Evidence(metric="multirank.collective_ns_per_step", value=float(np.min(med_wait)),
                                                unit="ns", artifact=src, meaning="shortest per-rank collective time per step")],
                        explanation="All ranks arrive together and still wait: the transfer itself is the cost.",
                        fix=Fix(change=CATALOG["comms_wait"].fix_text(),
                                metric="multirank.collective_ns_per_step", direction="decrease",
                                expected="proportional to bytes moved or overlap achieved"), confidence=0.6)
            return RankAnalysis(f, rows)
        f = Finding(bound="inconclusive", mechanism=None, share=0.0,
                    bottleneck=f"No straggler: the {len(views)} ranks stay within noise of each other.",
                    evidence=ev, explanation="Ranks are balanced; look at the per-rank timeline and kernels instead.",
                    confidence=0.7)
        return RankAnalysis(f, rows)

    others = [i for i in range(len(views)) if i != s_idx]
    comp_s = compute[s_idx]
    comp_o = float(np.median([compute[i] for i in others]))
    c_ratio = comp_s / comp_o if comp_o else 1.0
    clock_s = rows[s_idx].sm_clock_mhz_median
    clocks_o = [rows[i].sm_clock_mhz_median for i in others if rows[i].sm_clock_mhz_median]
    k_ratio = (statistics.median(clocks_o) / clock_s) if (clock_s and clocks_o) else 1.0
    reasons = [r for r in rows[s_idx].throttle_reasons if r in THERMAL_REASONS | POWER_REASONS]
    straggler = views[s_idx].rank
    wait_o = float(np.median([med_wait[i] for i in others]))
    ev_lag = Evidence(metric="multirank.collective_enter_lag_ns", value=spread, unit="ns", artifact=src,
                      meaning=f"rank {straggler} enters each collective {spread / 1e6:.2f} ms after the first rank (median)")
    ev_wait = Evidence(metric="multirank.collective_ns_per_step", value=wait_o, unit="ns", artifact=src,
                       meaning=f"the other ranks wait {wait_o / 1e6:.2f} ms per step inside the collective, rank "
                               f"{straggler} only {med_wait[s_idx] / 1e6:.2f} ms")
    if c_ratio > 1 + COMPUTE_NOISE and reasons and k_ratio > 1 and (k_ratio - 1) >= THROTTLE_EXPLAINS * (c_ratio - 1):
        cause = f"throttle:{reasons[0]}"
        f = Finding(
            bound="comms", mechanism="thermal_throttle", share=spread / step,
            bottleneck=(f"Rank {straggler} is the straggler: its GPU runs at {clock_s:.0f} MHz against "
                        f"{statistics.median(clocks_o):.0f} MHz on the others ({', '.join(reasons)}), so its compute "
                        f"takes {c_ratio:.2f}x longer and every other rank waits in the collective."),
            evidence=[ev_lag, ev_wait, Evidence(metric="telemetry.sm_clock_mhz_median", value=clock_s, unit="MHz",
                                                artifact=src, meaning=f"rank {straggler}'s SM clock, throttle: {', '.join(reasons)}")],
            explanation=("The same work on a slower-clocked GPU takes longer; the clock deficit accounts for the "
                         "extra compute time, and the all-reduce makes every rank wait for the slowest."),
            fix=Fix(change=CATALOG["thermal_throttle"].fix_text(rank=straggler),
                    metric="telemetry.sm_clock_mhz_median", direction="increase",
                    expected=f"to the others' {statistics.median(clocks_o):.0f} MHz; step time down by ~{spread / 1e6:.1f} ms"),
            confidence=0.75)
    elif c_ratio > 1 + COMPUTE_NOISE:
        cause = "uneven_work"
        clock_note = ""
        if clock_s and clocks_o and k_ratio > 1.02:
            clock_note = (f" Its SM clock is lower too ({clock_s:.0f} vs {statistics.median(clocks_o):.0f} MHz"
                          f"{', ' + ', '.join(reasons) if reasons else ''}), but that explains only {k_ratio:.2f}x of "
                          f"the {c_ratio:.2f}x: the clocks do not make it the cause.")
        f = Finding(
            bound="comms", mechanism="rank_imbalance", share=spread / step,
            bottleneck=(f"Rank {straggler} is the straggler: it does {c_ratio:.2f}x the GPU compute of the other "
                        f"ranks per step, so they wait {wait_o / 1e6:.1f} ms per step in the collective."),
            evidence=[ev_lag, ev_wait, Evidence(metric="multirank.compute_ns_per_step", value=comp_s, unit="ns",
                                                artifact=src, meaning=f"rank {straggler} computes {comp_s / 1e6:.2f} ms "
                                                f"per step against {comp_o / 1e6:.2f} ms on the others")],
            explanation=("Work is unevenly split: the straggler's kernels take longer every step, and a collective "
                         "completes only when the last rank arrives, so the fast ranks idle inside it." + clock_note),
            fix=Fix(change=CATALOG["rank_imbalance"].fix_text(),
                    metric="multirank.collective_enter_lag_ns", direction="decrease",
                    expected=f"from {spread / 1e6:.1f} ms toward 0; step time down by up to {spread / 1e6:.1f} ms",
                    current_value=spread, target_value=0.0),
            confidence=0.8)
    else:
        cause = "host"
        f = Finding(
            bound="comms", mechanism="rank_imbalance", share=spread / step,
            bottleneck=(f"Rank {straggler} is the straggler because of its host: it does the same GPU work as the "
                        f"others but enters each collective {spread / 1e6:.1f} ms late."),
            evidence=[ev_lag, ev_wait, Evidence(metric="multirank.compute_ns_per_step", value=comp_s, unit="ns",
                                                artifact=src, meaning=f"rank {straggler} computes {comp_s / 1e6:.2f} ms "
                                                f"per step, the others {comp_o / 1e6:.2f} ms: same work")],
            explanation=("Its GPU work is no longer than the others', so the delay is on the host side: the rank's "
                         "process launches its work late (data loading, CPU contention, Python work), its GPU idles "
                         "first, and every other rank then waits inside the collective."),
            fix=Fix(change=CATALOG["rank_imbalance"].fix_text("host", rank=straggler),
                    metric="multirank.collective_enter_lag_ns", direction="decrease",
                    expected=f"from {spread / 1e6:.1f} ms toward 0", current_value=spread, target_value=0.0),
            confidence=0.75)
    return RankAnalysis(f, rows, straggler, cause)
