#!/usr/bin/env python3
"""How many replay passes does ncu need per profiled kernel: the targeted sections vs `--set full`?

Runs Nsight Compute on one kernel of a program twice or more (one run per section choice), reads the
"N passes" figure ncu prints for each profiled launch, and times the whole ncu run. Run on the GPU
machine:

  python3 bench/ncu_passes.py --label column_sum_scale --regex column_sum_scale --skip 2 \
      --out /tmp/bench -- /tmp/ot/bin/ot_cu_pageable_upload

Prints one JSON line per variant: {"label", "variant", "passes", "ncu_wall_s", "report_bytes"}.
"targeted" is what a live `ask` asks for first (kernel_profiler.agent.ncu_metrics: the metrics the engine
reads); "sections7"/"sections11" are section lists measured for comparison; "full" is `--set full`.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from kernel_profiler.agent.ncu_metrics import ENGINE_METRICS, TARGETED_SECTIONS  # noqa: E402

# The seven sections the issue named, measured first (22 passes on the H200, no mechanism named).
SEVEN_SECTIONS = ("SpeedOfLight", "MemoryWorkloadAnalysis", "ComputeWorkloadAnalysis", "LaunchStats",
                  "Occupancy", "WarpStateStats", "SourceCounters")

PASSES = re.compile(r"(\d+)\s+pass(?:es)?")


def variants() -> dict[str, list[str]]:
    seven = [x for s in SEVEN_SECTIONS for x in ("--section", s)]
    plus = seven + [x for s in ("MemoryWorkloadAnalysis_Tables", "MemoryWorkloadAnalysis_Chart", "InstructionStats",
                                "SchedulerStats") for x in ("--section", s)]
    targeted = [x for s in TARGETED_SECTIONS for x in ("--section", s)] + ["--metrics", ",".join(ENGINE_METRICS)]
    metrics_only = ["--section", "LaunchStats", "--metrics", ",".join(ENGINE_METRICS)]
    return {"targeted": targeted, "metrics_only": metrics_only, "sections7": seven, "sections11": plus,
            "full": ["--set", "full"]}


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
        rep = out / f"{a.label}-{name}"
        argv = ["ncu", "--clock-control", "none", "-k", f"regex:{a.regex}", "-s", str(a.skip), "-c", "1",
                "--target-processes", "all", "-f", "-o", str(rep), *args, *cmd]
        t0 = time.time()
        p = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        wall = time.time() - t0
        log = p.stdout + p.stderr
        (out / f"{a.label}-{name}.log").write_text(" ".join(argv) + "\n" + log)
        prof = [ln for ln in log.splitlines() if ln.startswith("==PROF== Profiling")]
        passes = [int(m.group(1)) for ln in prof for m in [PASSES.search(ln)] if m]
        f = Path(str(rep) + ".ncu-rep")
        print(json.dumps({"label": a.label, "variant": name, "passes": passes, "ncu_wall_s": round(wall, 2),
                          "report_bytes": f.stat().st_size if f.exists() else None, "rc": p.returncode}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
