"""The environment the tools run programs in: nsys, the PyTorch profiler, ncu, cuobjdump and NVML, each through
the sandbox (allow-listed executables, the user's fixed target, a scratch folder, time limits).

Each function runs one program and returns the files it wrote (recorded in `ctx.produced`) or what it measured;
reading those files is the artifact readers' job, and judging them the analysis'.
"""
from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Optional

from ..artifacts import sass as sass_reader
from ..artifacts.tables import SassFunction
from ..errors import EmptyCapture, KernelProfilerError
from .context import ToolContext
from .ncu_metrics import targeted_args

PASSES = re.compile(r"==PROF== Profiling .*?(\d+)\s+pass(?:es)?")


def torch_trace(ctx: ToolContext) -> Path:
    """The target run under the PyTorch profiler (nsys is absent): its own interpreter, our wrapper module."""
    sb = ctx.sandbox
    sb.executable("target")
    d = sb.new_dir("torch-trace")
    out = d / "trace.json"
    pkg_root = str(Path(__file__).resolve().parents[2])
    sb.env = dict(sb.env, PYTHONPATH=os.pathsep.join(p for p in (pkg_root, sb.env.get("PYTHONPATH")) if p))
    sb.run([sb.target[0], "-m", "kernel_profiler.agent.torch_trace", str(out), "--", *sb.target[1:]],
           label="torch-profiler")
    if not out.exists():
        raise EmptyCapture(str(out), "the PyTorch profiler wrote no trace (does the target's Python have torch?)")
    ctx.produced.append(str(out))
    return out


def nsys_timeline(ctx: ToolContext) -> Path:
    """The target run under Nsight Systems, exported to sqlite."""
    sb = ctx.sandbox
    nsys = sb.executable("nsys")
    sb.executable("target")
    d = sb.new_dir("nsys")
    rep = d / "timeline"
    sb.run([nsys, "profile", "-t", "cuda,nvtx,osrt", "--sample=none", "--cpuctxsw=none", "-o", str(rep),
            "--force-overwrite", "true", *sb.target], label="nsys-profile")
    sqlite = d / "timeline.sqlite"
    sb.run([nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "-o", str(sqlite),
            str(rep) + ".nsys-rep"], label="nsys-export")
    ctx.produced.append(str(sqlite))
    return sqlite


def ncu_argv(ncu: str, pattern: str, skip: int, count: int, out: Path, sections: list[str],
             sset: Optional[str]) -> list[str]:
    argv = [ncu, "--clock-control", "none", "-k", f"regex:{pattern}", "-s", str(skip), "-c", str(count), "-f",
            "-o", str(out)]
    if sections:
        for s in sections:
            argv += ["--section", s]
    elif (sset or "targeted") == "targeted":
        argv += targeted_args()
    else:
        argv += ["--set", sset]
    return argv


class Ncu:
    """Nsight Compute on the target: each `profile` call writes one report into a new scratch folder; the
    replay passes ncu reported are collected in `passes`."""

    def __init__(self, ctx: ToolContext, pattern: str, sections: list[str]):
        self.ctx, self.pattern, self.sections = ctx, pattern, sections
        self.ncu = ctx.sandbox.executable("ncu")
        ctx.sandbox.executable("target")
        self.passes: list[int] = []

    def profile(self, skip: int, count: int, sset: Optional[str]) -> tuple[Path, str]:
        """(the report path, which may not exist when ncu profiled nothing; the end of what ncu said)."""
        sb = self.ctx.sandbox
        out = sb.new_dir("ncu") / "profile"
        res = sb.run(ncu_argv(self.ncu, self.pattern, skip, count, out, self.sections, sset) + list(sb.target),
                     label="ncu")
        self.passes.extend(int(m.group(1)) for m in PASSES.finditer((res.stdout or "") + "\n" + (res.stderr or "")))
        return Path(str(out) + ".ncu-rep"), (res.stdout or "").strip()[-300:]


def sass_dump(ctx: ToolContext, rep: Path, fns: list[SassFunction]) -> list[SassFunction]:
    """Write the SASS a report carries (its source counters) as a SASS dump beside it, and read it back: the SASS
    counts then cite the SASS source they were counted from, and the critic reads the same file."""
    if not fns:
        return fns
    lines: list[str] = []
    for fn in fns:
        lines += [f"\tcode for {fn.arch or 'sm_90'}", f"\t\tFunction : {fn.mangled or fn.name}"]
        lines += [f"        /*{16 * i:04x}*/                   {ins} ;" for i, ins in enumerate(fn.instructions)]
        lines.append("")
    out = Path(str(rep).removesuffix(".ncu-rep") + ".sass.txt")
    out.write_text("\n".join(lines) + "\n")
    ctx.produced.append(str(out))
    try:
        return list(sass_reader.load(out))
    except KernelProfilerError:
        return fns


def cuobjdump(ctx: ToolContext, binary: Path) -> list[SassFunction]:
    """The SASS of a binary or cubin (cuobjdump --dump-sass), kept as a SASS dump in scratch among the captures the
    critic reads."""
    sb = ctx.sandbox
    exe = sb.executable("cuobjdump")
    res = sb.run([exe, "--dump-sass", str(binary)], label="cuobjdump")
    d = sb.new_dir("sass")
    txt = d / (binary.name + ".sass.txt")
    txt.write_text(res.stdout)
    ctx.produced.append(str(txt))  # the critic checks SASS counts against the dump they were read from
    return list(sass_reader.load_sass(txt))


def sample_gpus(seconds: float, interval_s: float):
    """NVML samples of every GPU for `seconds` (telemetry.Sampler; NvmlUnavailable says what to do)."""
    from ..telemetry import Sampler

    s = Sampler(interval_s=interval_s)
    s.start()
    try:
        time.sleep(seconds)
    finally:
        s.stop()
    return s
