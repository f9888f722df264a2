#!/usr/bin/env python3
"""Time one whole live `ask` with the targeted ncu request against the same `ask` with `--set full`.

For each request (targeted: what `ask` asks ncu for first; full: `KERNEL_PROFILER_NCU_SET=full`) runs
`kernel-profiler ask QUESTION --model expert --record T.jsonl -- CMD` on the GPU machine, then reads the
transcript: wall time of the whole ask, of the timeline tool (one nsys run + export + triage), of the
kernel_profile tool (the ncu run(s) + reading the report), the replay passes ncu reported per profiled launch,
how many ncu runs there were, and whether the critic accepted the answer (`--alone`: also the program alone).

  python3 bench/ask_time.py --label column_sum_scale --out /tmp/ask -- /tmp/ot/bin/ot_cu_pageable_upload

Prints one JSON line per request and a summary line with the ratios targeted / full.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from kernel_profiler.agent.ncu_metrics import SET_ENV  # noqa: E402


def tool_seconds(events: list[dict]) -> dict[str, float]:
    """Seconds spent in each tool, from the transcript's tool_call / tool_result timestamps."""
    started: dict[str, tuple[str, float]] = {}
    spent: dict[str, float] = {}
    for e in events:
        if e.get("event") == "tool_call":
            started[e["id"]] = (e["name"], e["t"])
        elif e.get("event") == "tool_result" and e.get("id") in started:
            name, t0 = started.pop(e["id"])
            spent[name] = spent.get(name, 0.0) + e["t"] - t0
    return spent


def summarise(transcript: Path) -> dict:
    lines = [json.loads(ln) for ln in transcript.read_text().splitlines() if ln.strip()]
    head, events = lines[0], lines[1:]
    spent = tool_seconds(events)
    passes: list[int] = []
    for e in events:
        if e.get("event") == "tool_result" and e.get("name") == "kernel_profile" and isinstance(e.get("content"), dict):
            passes += e["content"].get("replay_passes") or []
    final = [e for e in events if e.get("event") == "answer" and e.get("final")]
    return {"model": head.get("model"), "gpu": (head.get("machine") or {}).get("gpu"),
            "timeline_s": round(spent.get("timeline", 0.0), 2), "kernel_profile_s": round(spent.get("kernel_profile", 0.0), 2),
            "sass_s": round(spent.get("sass", 0.0), 2), "profiled_launches": len(passes), "passes": passes,
            "accepted": bool(final and final[-1].get("accepted")),
            "bottleneck": (final[-1].get("answer") or {}).get("bottleneck", "")[:160] if final else ""}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", required=True)
    ap.add_argument("--out", default="/tmp/ask-time")
    ap.add_argument("--question", default="why is this program slow?")
    ap.add_argument("--requests", default="targeted,full")
    ap.add_argument("--timeout", type=int, default=150)
    ap.add_argument("--alone", action="store_true", help="also time the program alone")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    alone = None
    if a.alone:
        t0 = time.time()
        subprocess.run(cmd, capture_output=True, timeout=a.timeout)
        alone = round(time.time() - t0, 2)
    rows = {}
    for req in [r for r in a.requests.split(",") if r]:
        rec = out / f"{a.label}-{req}.jsonl"
        env = dict(os.environ, **{SET_ENV: req})
        t0 = time.time()
        p = subprocess.run([sys.executable, "-m", "kernel_profiler.cli", "ask", a.question, "--model", "expert",
                            "--record", str(rec), "--", *cmd], capture_output=True, text=True, env=env,
                           timeout=a.timeout)
        wall = time.time() - t0
        (out / f"{a.label}-{req}.log").write_text(p.stdout + p.stderr)
        row = {"label": a.label, "request": req, "ask_s": round(wall, 2), "program_alone_s": alone,
               "rc": p.returncode, **(summarise(rec) if rec.exists() else {})}
        row["rest_s"] = round(wall - row.get("timeline_s", 0) - row.get("kernel_profile_s", 0), 2)
        rows[req] = row
        print(json.dumps(row), flush=True)
    if "targeted" in rows and "full" in rows:
        t, f = rows["targeted"], rows["full"]
        print(json.dumps({"label": a.label, "summary": "targeted / full",
                          "passes": [t.get("passes"), f.get("passes")],
                          "kernel_profile_s": [t.get("kernel_profile_s"), f.get("kernel_profile_s")],
                          "ask_s": [t["ask_s"], f["ask_s"]], "ask_ratio": round(t["ask_s"] / f["ask_s"], 3)}),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
