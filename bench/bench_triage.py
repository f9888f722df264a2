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


def build_trace(src: Path, target_kernels: int, out: Path, compress: bool) -> dict:
    import orjson

    with gzip.open(src, "rb") if src.suffix == ".gz" else open(src, "rb") as f:
        doc = orjson.loads(f.read())
    events = doc.pop("traceEvents")
    per_copy = sum(1 for e in events if e.get("cat") == "kernel")
    copies = max(1, -(-target_kernels // per_copy))
    ts = [e["ts"] for e in events if isinstance(e.get("ts"), (int, float))]
    ends = [e["ts"] + e.get("dur", 0) for e in events if isinstance(e.get("ts"), (int, float))]
    period = (max(ends) - min(ts)) + 1000.0  # µs, with a 1 ms gap between repeats
    corr_span = 1 + max([e.get("args", {}).get("correlation", 0) for e in events if isinstance(e.get("args"), dict)]
                        + [e.get("id", 0) for e in events if isinstance(e.get("id"), int)])
    ext_span = 1 + max(e.get("args", {}).get("External id", 0) for e in events if isinstance(e.get("args"), dict))
    meta = [e for e in events if e.get("ph") == "M"]
    body = [e for e in events if e.get("ph") != "M"]

    header = dict(doc)
    header.setdefault("distributedInfo", {"rank": 0})
    head = orjson.dumps(header, option=orjson.OPT_INDENT_2)
    opener = gzip.open(out, "wb", compresslevel=1) if compress else open(out, "wb")
    with opener as f:
        # Kineto's layout: header keys, then "traceEvents": [ one event per line-group ].
        f.write(head[:-2] + b',\n  "traceEvents": [\n  ')
        first = True
        for e in meta:
            f.write((b"" if first else b",\n  ") + orjson.dumps(e))
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
                chunk.append(orjson.dumps(e2))
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
    import numpy as np

    from kernel_profiler.artifacts import kineto
    try:
        from kernel_profiler.timeline import triage
    except ImportError:  # TODO: remove once kernel_profiler.timeline.triage is in the tree
        triage = None
    rss0 = _vmhwm_mb()
    t0 = time.perf_counter()
    tl = kineto.load(Path(path))
    t1 = time.perf_counter()
    if triage is not None:
        res = triage(tl)
        what = "kineto.load + timeline.triage"
        detail = type(res).__name__
    else:
        # TODO: stand-in until timeline.triage exists: vectorised busy-union over kernels.
        s = tl.kernels["start_ns"].to_numpy()
        e = tl.kernels["end_ns"].to_numpy()
        o = np.argsort(s, kind="stable")
        s, e = s[o], np.maximum.accumulate(e[o])
        new = np.r_[True, s[1:] > e[:-1]]
        busy = float((np.maximum.reduceat(e, np.flatnonzero(new)) - s[new]).sum())
        what = "kineto.load + busy-union stand-in (TODO: timeline.triage)"
        detail = f"busy={busy:.0f}ns"
    t2 = time.perf_counter()
    return {"what": what, "load_s": t1 - t0, "seconds": t2 - t0, "peak_rss_mb": _vmhwm_mb(),
            "import_rss_mb": rss0, "kernels": int(len(tl.kernels)), "detail": detail}


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", choices=["kp", "hta"], help=argparse.SUPPRESS)
    ap.add_argument("path", nargs="?", help="use this trace instead of building one")
    ap.add_argument("--src", type=Path, default=DEFAULT_SRC, help="real capture to repeat")
    ap.add_argument("--kernels", type=int, default=500_000, help="kernels in the built trace")
    ap.add_argument("--gz", action="store_true", help="write the built trace gzip'ed (.json.gz)")
    ap.add_argument("--hta-python", default=sys.executable, help="interpreter with HolisticTraceAnalysis")
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

    tmp = None
    if args.path:
        path = Path(args.path)
        info = {}
    else:
        tmp = tempfile.TemporaryDirectory(prefix="kp-bench-")
        path = Path(tmp.name) / ("trace.json.gz" if args.gz else "trace.json")
        t = time.perf_counter()
        info = build_trace(args.src, args.kernels, path, args.gz)
        print(f"built {path}: {info['kernels']:,} kernels, {info['events']:,} events, "
              f"{info['bytes'] / 2**20:.0f} MiB in {time.perf_counter() - t:.1f} s (from {args.src.parent.name})")
    try:
        results = {}
        sides = [("kp", args.kp_python)] + ([] if args.skip_hta else [("hta", args.hta_python)])
        for side, py in sides:
            runs = [run_worker(py, side, path, args.hta_timeout if side == "hta" else None)
                    for _ in range(args.repeat)]
            best = min(runs, key=lambda r: r["seconds"])
            best["peak_rss_mb"] = max(r["peak_rss_mb"] for r in runs)
            results[side] = best
            print(f"  {side}: {best['seconds']:.2f} s, peak RSS {best['peak_rss_mb']:.0f} MB  ({best['detail']})",
                  flush=True)
        print()
        print(f"{'side':<62} {'seconds':>8} {'(parse)':>8} {'peak RSS MB':>12}")
        for side in results:
            r = results[side]
            print(f"{r['what']:<62} {r['seconds']:>8.2f} {r['load_s']:>8.2f} {r['peak_rss_mb']:>12.0f}")
        if "hta" in results:
            kp, hta = results["kp"], results["hta"]
            if hta.get("timed_out"):  # a lower bound on HTA's time and memory: the ratios are upper bounds
                print(f"{'ratio kernel-profiler / HTA (HTA unfinished: upper bounds)':<62} "
                      f"{'< %.3f' % (kp['seconds'] / hta['timed_out']):>8} {'':>8} "
                      f"{'< %.3f' % (kp['peak_rss_mb'] / hta['peak_rss_mb']):>12}")
            else:
                print(f"{'ratio kernel-profiler / HTA':<62} {kp['seconds'] / hta['seconds']:>8.3f} {'':>8} "
                      f"{kp['peak_rss_mb'] / hta['peak_rss_mb']:>12.3f}")
            print(f"baseline: {hta['what']} (include_last_profiler_step=True, visualize=False)")
        print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    finally:
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    main()
