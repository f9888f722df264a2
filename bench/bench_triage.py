"""Benchmark: kernel-profiler Kineto load + timeline triage vs HTA's temporal breakdown.

Builds a large Kineto trace (default ~500k kernels) by repeating a real capture with
shifted timestamps and correlation ids, then runs each side in a fresh subprocess and
reports wall time of the work (imports excluded, the same for both sides) and the
process's peak RSS (VmHWM from /proc/self/status, which counts numpy/pandas native memory;
ru_maxrss of the child is printed as a cross-check).

    python bench/bench_triage.py                       # HTA from this interpreter
    python bench/bench_triage.py --hta-python /tmp/hta-lean/bin/python
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SRC = ROOT / "tests" / "data" / "captures" / "py_tiny_ops" / "trace.json.gz"


# --------------------------------------------------------------------------- trace builder


def build_trace(src: Path, target_kernels: int, out: Path, compress: bool, header_update: dict | None = None,
                period_us: float | None = None) -> dict:
    import msgspec

    dumps = msgspec.json.Encoder().encode
    with gzip.open(src, "rb") if src.suffix == ".gz" else open(src, "rb") as f:
        doc = msgspec.json.decode(f.read())
    events = doc.pop("traceEvents")
    per_copy = sum(1 for e in events if e.get("cat") == "kernel")
    copies = max(1, -(-target_kernels // per_copy))
    ts = [e["ts"] for e in events if isinstance(e.get("ts"), (int, float))]
    ends = [e["ts"] + e.get("dur", 0) for e in events if isinstance(e.get("ts"), (int, float))]
    period = period_us or (max(ends) - min(ts)) + 1000.0  # µs, with a 1 ms gap between repeats
    corr_span = 1 + max([e.get("args", {}).get("correlation", 0) for e in events if isinstance(e.get("args"), dict)]
                        + [e.get("id", 0) for e in events if isinstance(e.get("id"), int)])
    ext_span = 1 + max(e.get("args", {}).get("External id", 0) for e in events if isinstance(e.get("args"), dict))
    meta = [e for e in events if e.get("ph") == "M"]
    body = [e for e in events if e.get("ph") != "M"]

    header = dict(doc)
    header.setdefault("distributedInfo", {"rank": 0})
    header.update(header_update or {})
    head = msgspec.json.format(dumps(header), indent=2)
    opener = gzip.open(out, "wb", compresslevel=1) if compress else open(out, "wb")
    with opener as f:
        # Kineto's layout: header keys, then "traceEvents": [ one event per line-group ].
        f.write(head[:-2] + b',\n  "traceEvents": [\n  ')
        first = True
        for e in meta:
            f.write((b"" if first else b",\n  ") + dumps(e))
            first = False
        for k in range(copies):
            dt, dc, dx = k * period, k * corr_span, k * ext_span
            chunk = []
            for e in body:
                e2 = dict(e)
                if "ts" in e2:
                    e2["ts"] = round(e2["ts"] + dt, 3)
                if "id" in e2 and isinstance(e2["id"], int):
                    e2["id"] = e2["id"] + dc
                a = e2.get("args")
                if isinstance(a, dict) and ("correlation" in a or "External id" in a):
                    a = dict(a)
                    if "correlation" in a:
                        a["correlation"] += dc
                    if "External id" in a:
                        a["External id"] += dx
                    e2["args"] = a
                if isinstance(e2.get("name"), str) and e2["name"].startswith("ProfilerStep#"):
                    e2["name"] = f"ProfilerStep#{int(e2['name'][13:]) + k * 1000}"
                chunk.append(dumps(e2))
            f.write(b",\n  " + b",\n  ".join(chunk))
        f.write(b"\n  ]\n}\n")
    return {"kernels": per_copy * copies, "events": len(meta) + len(body) * copies, "copies": copies,
            "bytes": out.stat().st_size}


# --------------------------------------------------------------------------- workers (fresh process each)


def _vmhwm_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def worker_kp(path: str) -> dict:
    from kernel_profiler.artifacts import kineto
    from kernel_profiler.analysis.timeline import triage

    rss0 = _vmhwm_mb()
    t0 = time.perf_counter()
    tl = kineto.load(Path(path), progress=False)
    t1 = time.perf_counter()
    res = triage(tl)
    t2 = time.perf_counter()
    return {"what": "kernel-profiler kineto.load + timeline.triage", "load_s": t1 - t0, "seconds": t2 - t0,
            "peak_rss_mb": _vmhwm_mb(), "import_rss_mb": rss0, "kernels": int(len(tl.kernels)),
            "detail": f"verdict={res.verdict} busy={res.summary.busy_fraction:.3f}"}


def worker_hta(path: str) -> dict:
    import logging

    # HTA 0.5.0 rounds ts up (ceil) and end down, so sub-µs kernels (real ones: 0.8 µs
    # elementwise kernels in py_tiny_ops) get dur = -1 and get_temporal_breakdown fails
    # `assert idle_time <= kernel_time`. Its own switch turns the rounding off.
    os.environ.setdefault("HTA_DISABLE_NS_ROUNDING", "1")

    logging.getLogger("hta").setLevel(logging.ERROR)
    from importlib.metadata import version

    from hta.trace_analysis import TraceAnalysis
    rss0 = _vmhwm_mb()
    t0 = time.perf_counter()
    # include_last_profiler_step=True: analyse the whole trace, as kernel-profiler does.
    ta = TraceAnalysis(trace_files={0: os.path.abspath(path)}, include_last_profiler_step=True)
    t1 = time.perf_counter()
    df = ta.get_temporal_breakdown(visualize=False)
    t2 = time.perf_counter()
    row = df.iloc[0]
    return {"what": f"HTA {version('HolisticTraceAnalysis')} get_temporal_breakdown", "load_s": t1 - t0,
            "seconds": t2 - t0, "peak_rss_mb": _vmhwm_mb(), "import_rss_mb": rss0,
            "detail": f"kernel_time={int(row['kernel_time(us)'])}us idle={float(row['idle_time_pctg']):.1f}%"}


def _child_hwm_mb(pid: int) -> float:
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def run_worker(python: str, side: str, path: Path, timeout_s: float | None = None) -> dict:
    """One side in a fresh process. With a timeout, a run past it is killed and reported as unfinished
    (its peak RSS so far is polled from /proc)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    proc = subprocess.Popen([python, __file__, "--worker", side, str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    t0, hwm = time.monotonic(), float("nan")
    while proc.poll() is None:
        hwm = max(hwm, _child_hwm_mb(proc.pid)) if hwm == hwm else _child_hwm_mb(proc.pid)
        if timeout_s and time.monotonic() - t0 > timeout_s:
            proc.kill()
            proc.wait()
            label = "HTA get_temporal_breakdown" if side == "hta" else "kineto.load + timeline.triage"
            return {"what": f"{label} (killed after {timeout_s:.0f} s)", "seconds": float("inf"), "load_s": float("nan"),
                    "peak_rss_mb": hwm, "timed_out": timeout_s, "detail": f"did not finish in {timeout_s:.0f} s"}
        time.sleep(0.5)
    stdout, stderr = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"{side} worker failed (rc={proc.returncode}):\n{stderr[-3000:]}")
    out = json.loads(stdout.strip().splitlines()[-1])
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    out["ru_maxrss_mb"] = after / 1024.0 if after > before else float("nan")  # max over children so far
    return out


DEFAULT_HTA = Path("/work/venv-bench/bin/python")
GOAL_TIME, GOAL_RSS = 0.1, 0.3  # kernel-profiler / HTA, at the largest size


def run_size(path: Path, args) -> dict:
    """Both sides on one trace, one after the other (never concurrently: they would share the CPUs)."""
    results = {}
    sides = [("kp", args.kp_python)] + ([] if args.skip_hta else [("hta", args.hta_python)])
    for side, py in sides:
        runs = [run_worker(py, side, path, args.hta_timeout if side == "hta" else None) for _ in range(args.repeat)]
        best = min(runs, key=lambda r: r["seconds"])
        best["peak_rss_mb"] = max(r["peak_rss_mb"] for r in runs)
        results[side] = best
        shown = f"{best['seconds']:.2f} s" if best["seconds"] != float("inf") else f"> {best['timed_out']:.0f} s"
        print(f"  {side}: {shown}, peak RSS {best['peak_rss_mb']:.0f} MB  ({best['detail']})", flush=True)
    return results


def ratios(res: dict) -> tuple[str, str, bool]:
    """Time and RSS ratios kernel-profiler / HTA as text ('< x' when HTA did not finish: upper bounds)."""
    kp, hta = res["kp"], res["hta"]
    t = kp["seconds"] / (hta["timed_out"] if hta.get("timed_out") else hta["seconds"])
    m = kp["peak_rss_mb"] / hta["peak_rss_mb"]
    lt = "< " if hta.get("timed_out") else ""
    return f"{lt}{t:.3f}", f"{lt}{m:.3f}", t <= GOAL_TIME and m <= GOAL_RSS


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", choices=["kp", "hta"], help=argparse.SUPPRESS)
    ap.add_argument("path", nargs="?", help="use this trace instead of building one")
    ap.add_argument("--src", type=Path, default=DEFAULT_SRC, help="real capture to repeat")
    ap.add_argument("--kernels", default="540000",
                    help="kernels in the built trace; a comma list (50000,100000,540000) runs each size in turn")
    ap.add_argument("--gz", action="store_true", help="write the built trace gzip'ed (.json.gz)")
    ap.add_argument("--hta-python", default=str(DEFAULT_HTA) if DEFAULT_HTA.exists() else sys.executable,
                    help="interpreter with HolisticTraceAnalysis (default: /work/venv-bench/bin/python if present)")
    ap.add_argument("--kp-python", default=sys.executable, help="interpreter with kernel-profiler")
    ap.add_argument("--repeat", type=int, default=1, help="runs per side (best time is reported)")
    ap.add_argument("--skip-hta", action="store_true")
    ap.add_argument("--hta-timeout", type=float, default=900.0,
                    help="seconds after which the HTA run is stopped and reported as unfinished (0: no limit)")
    args = ap.parse_args()

    if args.worker:
        fn = worker_kp if args.worker == "kp" else worker_hta
        print(json.dumps(fn(args.path)))
        return

    rows = []
    sizes = [None] if args.path else [int(k) for k in str(args.kernels).split(",")]
    for n in sizes:
        tmp = None
        if args.path:
            path, info = Path(args.path), {"kernels": None, "bytes": Path(args.path).stat().st_size}
        else:
            tmp = tempfile.TemporaryDirectory(prefix="kp-bench-")
            path = Path(tmp.name) / ("trace.json.gz" if args.gz else "trace.json")
            t = time.perf_counter()
            info = build_trace(args.src, n, path, args.gz)
            print(f"built {path}: {info['kernels']:,} kernels, {info['events']:,} events, "
                  f"{info['bytes'] / 2**20:.0f} MiB in {time.perf_counter() - t:.1f} s (from {args.src.parent.name})",
                  flush=True)
        try:
            rows.append((info, run_size(path, args)))
        finally:
            if tmp is not None:
                tmp.cleanup()

    print()
    print(f"{'kernels':>9} {'MiB':>5} | {'kp s':>7} {'(parse)':>7} {'kp RSS MB':>9} | {'HTA s':>8} {'(parse)':>7} "
          f"{'HTA RSS MB':>10} | {'time ratio':>10} {'RSS ratio':>9}")
    for info, res in rows:
        kp, hta = res["kp"], res.get("hta")
        line = (f"{info['kernels'] or res['kp']['kernels']:>9,} {info['bytes'] / 2**20:>5.0f} | {kp['seconds']:>7.2f} "
                f"{kp['load_s']:>7.2f} {kp['peak_rss_mb']:>9.0f} |")
        if hta:
            done = not hta.get("timed_out")
            tr, mr, _ = ratios(res)
            line += (f" {hta['seconds'] if done else hta['timed_out']:>{'8.2f' if done else '8.0f'}}"
                     f"{'' if done else '+'} {hta['load_s'] if done else float('nan'):>7.2f} "
                     f"{hta['peak_rss_mb']:>9.0f}{'' if done else '+'} | {tr:>10} {mr:>9}")
        print(line)
    if len(rows) > 1:
        (a, ra), (b, rb) = rows[0], rows[-1]
        k = (b["kernels"] or rb["kp"]["kernels"]) / (a["kernels"] or ra["kp"]["kernels"])
        print(f"growth {k:.1f}x kernels: kernel-profiler time {rb['kp']['seconds'] / ra['kp']['seconds']:.1f}x, "
              f"RSS {rb['kp']['peak_rss_mb'] / ra['kp']['peak_rss_mb']:.1f}x", end="")
        if "hta" in ra and "hta" in rb:
            hb, ha = rb["hta"], ra["hta"]
            lo = "> " if hb.get("timed_out") else ""
            print(f"; HTA time {lo}{(hb.get('timed_out') or hb['seconds']) / ha['seconds']:.1f}x, "
                  f"RSS {lo}{hb['peak_rss_mb'] / ha['peak_rss_mb']:.1f}x")
        else:
            print()
    if rows and "hta" in rows[-1][1]:
        tr, mr, ok = ratios(rows[-1][1])
        print(f"goal at the largest size: time ratio {tr} (<= {GOAL_TIME}), RSS ratio {mr} (<= {GOAL_RSS}): "
              f"{'MET' if ok else 'NOT MET'}")
        print(f"baseline: {rows[-1][1]['hta']['what']} (include_last_profiler_step=True, visualize=False); "
              "'+': HTA stopped by --hta-timeout, its numbers are lower bounds and the ratios upper bounds")
    print(f"machine: {os.cpu_count()} CPUs, {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB, "
          f"Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
