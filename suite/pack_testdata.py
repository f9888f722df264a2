#!/usr/bin/env python3
"""Turn an unpacked capture campaign into compressed test data under tests/data/captures.

Keeps, per case: the Nsight Systems sqlite, the Nsight Compute report and its
CSV exports, the Kineto trace, SASS/resource usage/ptxas logs, Triton cubins,
the run log and meta.json (the commands that produced them), all xz-compressed
except files that are already gzip'd. Drops the .nsys-rep files (the sqlite
carries their content) except for `--keep-nsys-rep` cases.

  python3 suite/pack_testdata.py CAMPAIGN_DIR/captures tests/data/captures
"""
from __future__ import annotations

import lzma
import shutil
import sys
from pathlib import Path

SKIP = {"case.json", "ncu_source_sass.csv"}
KEEP_SOURCE_SASS = {"cu_cublas_bf16", "py_gemm_bf16", "py_matmul_fp32", "ot_py_gemm_fp32", "ot_py_gemm_bf16"}
KEEP_NSYS_REP = {"cu_vec_copy"}


def main(src: str, dst: str) -> None:
    src_p, dst_p = Path(src), Path(dst)
    for case in sorted(p for p in src_p.iterdir() if p.is_dir()):
        out = dst_p / case.name
        out.mkdir(parents=True, exist_ok=True)
        for f in sorted(case.rglob("*")):
            if not f.is_file():
                continue
            rel = f.relative_to(case)
            if f.name in SKIP and not (f.name == "ncu_source_sass.csv" and case.name in KEEP_SOURCE_SASS):
                continue
            if f.suffix == ".nsys-rep" and case.name not in KEEP_NSYS_REP:
                continue
            target = out / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if f.suffix == ".gz":
                shutil.copy(f, target)
            else:
                with open(f, "rb") as fi, lzma.open(str(target) + ".xz", "wb", preset=9) as fo:
                    shutil.copyfileobj(fi, fo)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
