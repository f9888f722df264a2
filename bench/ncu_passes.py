#!/usr/bin/env python3
"""How many replay passes does ncu need per profiled kernel: the targeted request vs `--set full`?

Runs Nsight Compute on one launch of one kernel of a program once per request variant, reads the
"N passes" figure ncu prints for the profiled launch (and `profiler__replayer_passes`, the count the report
stores), times the whole ncu run, and reads the report back the way `ask` does: the SASS it carries
(`artifacts.ncu_report.load_sass`) and the mechanism the engine names from it. Run on the GPU machine:

  python3 bench/ncu_passes.py --label column_sum_scale --regex column_sum_scale --skip 2 \
      --out /tmp/bench -- /tmp/ot/bin/ot_cu_pageable_upload

Prints one JSON line per variant: {"label", "variant", "passes", "report_passes", "ncu_wall_s", "report_bytes",
"sass_instructions", "mechanism", "rc"}. "targeted" is what a live `ask` asks for first
(`kernel_profiler.agent.ncu_metrics.targeted_args`); the others are measured for comparison.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from kernel_profiler.agent.ncu_metrics import ENGINE_METRICS, SET_ENV, targeted_args  # noqa: E402

# The seven sections the issue named, measured first (22 passes on the H200, no mechanism named).
SEVEN_SECTIONS = ("SpeedOfLight", "MemoryWorkloadAnalysis", "ComputeWorkloadAnalysis", "LaunchStats",
                  "Occupancy", "WarpStateStats", "SourceCounters")

PASSES = re.compile(r"(\d+)\s+pass(?:es)?")


def _sections(*names: str) -> list[str]:
    return [x for s in names for x in ("--section", s)]


def variants() -> dict[str, list[str]]:
    os.environ.pop(SET_ENV, None)
    metrics = ["--metrics", ",".join(ENGINE_METRICS)]
    return {
        "targeted": targeted_args(),
        "targeted+SourceCounters": targeted_args() + _sections("SourceCounters"),
        "targeted+inst_executed": _sections("LaunchStats", "Occupancy")
        + ["--metrics", ",".join((*ENGINE_METRICS, "inst_executed"))],
        "metrics+LaunchStats": _sections("LaunchStats") + metrics,
        "LaunchStats+Occupancy": _sections("LaunchStats", "Occupancy"),
        "sections7": _sections(*SEVEN_SECTIONS),
        "full": ["--set", "full"],
    }


def read_back(rep: Path) -> dict:
    """What ask would get from this report: SASS instructions and the mechanism the engine names."""
    out: dict = {"report_passes": None, "sass_instructions": None, "mechanism": None}
    if not rep.exists():
        return out
    try:
        from kernel_profiler.artifacts import ncu_report
        from kernel_profiler.analysis.kernels import analyze_kernels, excess_dram_traffic
        profiles = ncu_report.load(rep)
        out["report_passes"] = [p.metrics.get("profiler__replayer_passes") for p in profiles]
        try:
            out["sass_instructions"] = [len(f.instructions) for f in ncu_report.load_sass(rep)]
        except Exception as e:  # noqa: BLE001 - reported, not raised: the bench measures what is there
            out["sass_instructions"] = f"none ({type(e).__name__})"
        an = analyze_kernels(profiles, None, [], [])
        out["mechanism"] = [f.mechanism for a in an for f in a.findings[:1]]
        if excess_dram_traffic(an) is not None:
            out["mechanism"].append("excess_dram_traffic")
    except Exception as e:  # noqa: BLE001
        out["mechanism"] = f"error: {type(e).__name__}: {e}"[:200]
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", required=True)
    ap.add_argument("--regex", required=True)
    ap.add_argument("--skip", type=int, default=0)
    ap.add_argument("--out", default="/tmp/ncu-passes")
    ap.add_argument("--only", default="", help="comma-separated variants")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    only = {v for v in a.only.split(",") if v}
    for name, args in variants().items():
        if only and name not in only:
            continue
        tag = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
        rep = out / f"{a.label}-{tag}"
        argv = ["ncu", "--clock-control", "none", "-k", f"regex:{a.regex}", "-s", str(a.skip), "-c", "1",
                "--target-processes", "all", "-f", "-o", str(rep), *args, *cmd]
        t0 = time.time()
        p = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        wall = time.time() - t0
        log = p.stdout + p.stderr
        (out / f"{a.label}-{tag}.log").write_text(" ".join(argv) + "\n" + log)
        prof = [ln for ln in log.splitlines() if ln.startswith("==PROF== Profiling")]
        passes = [int(m.group(1)) for ln in prof for m in [PASSES.search(ln)] if m]
        f = Path(str(rep) + ".ncu-rep")
        print(json.dumps({"label": a.label, "variant": name, "passes": passes, "ncu_wall_s": round(wall, 2),
                          "report_bytes": f.stat().st_size if f.exists() else None, **read_back(f),
                          "rc": p.returncode}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
