#!/usr/bin/env python3
"""Capture the two-GPU one-time case(s) of suite/onetime_nccl.toml on a machine with 2 GPUs, in one go.

Per case: an nsys run of the whole torchrun job (both ranks in one report, exported to sqlite) and a run with
the PyTorch profiler writing one Kineto trace per rank (the whole program: no step markers). Packs the results
like suite/capture.py (captures/<case>/ under WORK, split into 15 MB parts in --pack-dir).

  python3 suite/capture_nccl.py --work /tmp/nc --pack-dir $OUT
"""
from __future__ import annotations

import argparse
import gzip
import os
import shutil
import sys
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from capture import find_nsys, pack, sh  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/tmp/nc")
    ap.add_argument("--pack-dir", default=os.environ.get("OUT", "/tmp/nc-out"))
    args = ap.parse_args()
    work = Path(args.work)
    (work / "env").mkdir(parents=True, exist_ok=True)
    nsys = find_nsys()
    env = dict(os.environ, NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1", NVSHMEM_DISABLE_NVLS="1",
               PYTHONUNBUFFERED="1")
    for c in tomllib.loads((HERE / "onetime_nccl.toml").read_text())["case"]:
        t0 = time.time()
        cdir = work / "captures" / c["name"]
        cdir.mkdir(parents=True, exist_ok=True)
        log = cdir / "run.log"
        base = [sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={c['ranks']}",
                "--master_port=29537", str((HERE / "cases" / c["source"]).resolve())]
        rcs = []
        if nsys:
            rcs.append(sh([nsys, "profile", "-t", "cuda,nvtx,osrt", "--sample=none", "--cpuctxsw=none", "-o",
                           str(cdir / "nsys"), "--force-overwrite", "true", *base], log, 300, env)["rc"])
            if (cdir / "nsys.nsys-rep").exists():
                rcs.append(sh([nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "-o",
                               str(cdir / "nsys.sqlite"), str(cdir / "nsys.nsys-rep")], log, 300, env)["rc"])
                (cdir / "nsys.nsys-rep").unlink()
        rcs.append(sh(base + ["--torch-trace", str(cdir)], log, 300, env)["rc"])
        for tr in cdir.glob("trace_rank*.json"):
            with open(tr, "rb") as f, gzip.open(str(tr) + ".gz", "wb", compresslevel=9) as g:
                shutil.copyfileobj(f, g)
            tr.unlink()
        print(f"{c['name']}: {time.time() - t0:.1f}s rcs={rcs}", flush=True)
    pack(work, Path(args.pack_dir), "onetime_nccl")
    return 0


if __name__ == "__main__":
    sys.exit(main())
