#!/usr/bin/env python3
"""Build and capture the whole suite on a GPU machine in one go.

For every case in cases.toml: build (CUDA: nvcc with -Xptxas -v, SASS and
resource usage through cuobjdump), run under Nsight Systems and export the
sqlite, record a PyTorch-profiler trace (Python cases), and profile the named
kernel with Nsight Compute (.ncu-rep plus CSV exports). Each step has a
timeout; a failing step is logged in the case's meta.json and the campaign goes
on. Stops starting new cases after --deadline seconds, then packs everything
into xz archives of at most 15 MB under --pack-dir.

Usage (on the device, from the repository root):
  python3 suite/capture.py --lang cuda --work /tmp/cap --pack-dir $OUT --deadline 480
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import gzip
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
NSYS_CANDIDATES = [
    "nsys",
    "/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys",
]


def find_nsys() -> str | None:
    for c in NSYS_CANDIDATES:
        p = shutil.which(c) or (c if os.path.exists(c) else None)
        if p:
            return p
    return None


def sh(cmd: list[str], log: Path, timeout: int, env: dict | None = None, cwd: Path | None = None) -> dict:
    t0 = time.time()
    with open(log, "ab") as f:
        f.write(("\n$ " + " ".join(cmd) + "\n").encode())
        f.flush()
        try:
            rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, timeout=timeout,
                                env=env, cwd=cwd).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        except FileNotFoundError as e:
            rc = f"missing: {e}"
    return {"cmd": cmd, "rc": rc, "seconds": round(time.time() - t0, 2)}


def case_env(case: dict, cdir: Path) -> dict:
    env = dict(os.environ)
    env.update(case.get("env", {}))
    env["TRITON_CACHE_DIR"] = str(cdir / "triton_cache")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def program(case: dict, bindir: Path) -> list[str]:
    src = case["source"]
    if src.endswith(".py"):
        return [sys.executable, str(CASES / src)]
    return [str(bindir / case["name"])]


def build(case: dict, bindir: Path, cdir: Path) -> dict:
    src = CASES / case["source"]
    exe = bindir / case["name"]
    cmd = ["nvcc", "-O3", "-std=c++17", "-arch=sm_90a", "-lineinfo", "-Xptxas", "-v",
           *[f"-D{d}" for d in case.get("defines", [])], "-o", str(exe), str(src), *case.get("libs", [])]
    p = subprocess.run(cmd, capture_output=True, text=True)
    (cdir / "ptxas.log").write_text(p.stdout + p.stderr)
    res = {"cmd": cmd, "rc": p.returncode}
    if p.returncode == 0:
        for flag, out in (("--dump-sass", "sass.txt"), ("-res-usage", "res_usage.txt")):
            q = subprocess.run(["cuobjdump", flag, str(exe)], capture_output=True, text=True)
            (cdir / out).write_text(q.stdout + q.stderr)
    return res


def triton_sass(cdir: Path) -> None:
    cache = cdir / "triton_cache"
    if not cache.exists():
        return
    keep = cdir / "triton"
    keep.mkdir(exist_ok=True)
    for cubin in cache.rglob("*.cubin"):
        stem = cubin.stem
        shutil.copy(cubin, keep / cubin.name)
        for suffix in (".json", ".ptx"):
            side = cubin.with_suffix(suffix)
            if side.exists():
                shutil.copy(side, keep / side.name)
        for flag, out in (("--dump-sass", f"{stem}.sass.txt"), ("-res-usage", f"{stem}.res_usage.txt")):
            q = subprocess.run(["cuobjdump", flag, str(cubin)], capture_output=True, text=True)
            (keep / out).write_text(q.stdout + q.stderr)
    shutil.rmtree(cache, ignore_errors=True)


def capture(case: dict, work: Path, nsys: str | None, skip_ncu: bool) -> dict:
    name = case["name"]
    cdir = work / "captures" / name
    cdir.mkdir(parents=True, exist_ok=True)
    log = cdir / "run.log"
    env = case_env(case, cdir)
    prog = program(case, work / "bin")
    meta: dict = {"case": name, "steps": []}
    is_py = case["source"].endswith(".py")

    def fresh() -> None:  # every run pays the Triton JIT again (one-time-work cases)
        if case.get("fresh_triton_cache"):
            shutil.rmtree(cdir / "triton_cache", ignore_errors=True)

    if not is_py and not (work / "bin" / name).exists():
        meta["error"] = "not built"
        return meta
    # Plain run (Python: with the PyTorch profiler).
    if is_py:
        trace = cdir / "trace.json"
        fresh()
        meta["steps"].append(sh(prog + ["--torch-trace", str(trace)], log, 180, env))
        if trace.exists():
            with open(trace, "rb") as f, gzip.open(str(trace) + ".gz", "wb", compresslevel=9) as g:
                shutil.copyfileobj(f, g)
            trace.unlink()
    else:
        meta["steps"].append(sh(prog, log, 180, env))
    # Timeline.
    if nsys:
        rep = cdir / "nsys"
        fresh()
        meta["steps"].append(sh([nsys, "profile", "-t", "cuda,nvtx", "--sample=none", "--cpuctxsw=none",
                                 "-o", str(rep), "--force-overwrite", "true", *prog], log, 240, env))
        if (cdir / "nsys.nsys-rep").exists():
            meta["steps"].append(sh([nsys, "export", "--type", "sqlite", "--force-overwrite", "true",
                                     "-o", str(cdir / "nsys.sqlite"), str(cdir / "nsys.nsys-rep")], log, 240, env))
    # One kernel deep.
    if case.get("kernel") and not skip_ncu:
        fresh()
        ncu_env = dict(env, STEPS="2")
        cmd = ["ncu", "--set", "full", "--clock-control", "none", "-k", f"regex:{case['kernel']}",
               "-s", str(case.get("ncu_skip", 0)), "-c", str(case.get("ncu_count", 1)), "-f",
               "-o", str(cdir / "ncu")]
        if is_py:
            cmd += ["--target-processes", "all"]
        meta["steps"].append(sh(cmd + prog, log, 300, ncu_env))
        rep = cdir / "ncu.ncu-rep"
        if rep.exists():
            for page in ("raw", "details"):
                with open(cdir / f"ncu_{page}.csv", "wb") as f:
                    subprocess.run(["ncu", "--import", str(rep), "--csv", "--page", page], stdout=f,
                                   stderr=subprocess.STDOUT, timeout=120)
            with open(cdir / "ncu_source_sass.csv", "wb") as f:
                subprocess.run(["ncu", "--import", str(rep), "--csv", "--page", "source", "--print-source", "sass"],
                               stdout=f, stderr=subprocess.STDOUT, timeout=120)
    if is_py:
        triton_sass(cdir)
    (cdir / "case.json").write_text(json.dumps(case, indent=1))
    (cdir / "meta.json").write_text(json.dumps(meta, indent=1))
    return meta


def pack(work: Path, pack_dir: Path, label: str) -> None:
    pack_dir.mkdir(parents=True, exist_ok=True)
    tarball = work / f"{label}.tar.xz"
    subprocess.run(["tar", "-C", str(work), "-cf", str(tarball), "--use-compress-program=xz -T0 -9", "captures", "env"],
                   check=False)
    subprocess.run(["split", "-b", "15m", "-d", str(tarball), str(pack_dir / f"{label}.tar.xz.part")], check=False)
    print(subprocess.run(["ls", "-la", str(pack_dir)], capture_output=True, text=True).stdout)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lang", choices=["cuda", "python", "all"], default="all")
    ap.add_argument("--only", default="", help="comma-separated case names")
    ap.add_argument("--work", default="/tmp/capture")
    ap.add_argument("--pack-dir", default=os.environ.get("OUT", "/tmp/capture-out"))
    ap.add_argument("--label", default="captures")
    ap.add_argument("--deadline", type=float, default=480)
    ap.add_argument("--skip-ncu", action="store_true")
    ap.add_argument("--cases", default=str(HERE / "cases.toml"), help="the case list (cases.toml, holdout.toml)")
    args = ap.parse_args()
    start = time.time()
    work = Path(args.work)
    (work / "bin").mkdir(parents=True, exist_ok=True)
    envdir = work / "env"
    envdir.mkdir(exist_ok=True)
    cases = tomllib.loads(Path(args.cases).read_text())["case"]
    only = {c for c in args.only.split(",") if c}
    cases = [c for c in cases if (not only or c["name"] in only)
             and (args.lang == "all" or (args.lang == "python") == c["source"].endswith(".py"))]
    nsys = find_nsys()
    for cmd, out in ((["nvidia-smi", "-q"], "nvidia-smi.txt"), (["ncu", "--version"], "ncu-version.txt"),
                     ([nsys or "nsys", "--version"], "nsys-version.txt"), (["nvcc", "--version"], "nvcc-version.txt")):
        try:
            (envdir / out).write_text(subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout)
        except Exception as e:  # noqa: BLE001 - record and go on
            (envdir / out).write_text(f"failed: {e}")
    cuda_cases = [c for c in cases if not c["source"].endswith(".py")]
    with cf.ThreadPoolExecutor(16) as pool:
        futs = {}
        for c in cuda_cases:
            cdir = work / "captures" / c["name"]
            cdir.mkdir(parents=True, exist_ok=True)
            futs[pool.submit(build, c, work / "bin", cdir)] = c["name"]
        for f in cf.as_completed(futs):
            print(f"build {futs[f]}: rc={f.result()['rc']}", flush=True)
    summary = []
    for c in cases:
        if time.time() - start > args.deadline:
            summary.append({"case": c["name"], "skipped": "deadline"})
            print(f"SKIP {c['name']} (deadline)", flush=True)
            continue
        t0 = time.time()
        meta = capture(c, work, nsys, args.skip_ncu)
        rcs = [s["rc"] for s in meta.get("steps", [])]
        print(f"{c['name']}: {time.time() - t0:.1f}s rcs={rcs} {meta.get('error', '')}", flush=True)
        summary.append({"case": c["name"], "rcs": rcs, "seconds": round(time.time() - t0, 1)})
    (envdir / f"summary-{args.label}.json").write_text(json.dumps(summary, indent=1))
    pack(work, Path(args.pack_dir), args.label)
    print(f"total {time.time() - start:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
