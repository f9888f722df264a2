"""The investigation's tools, each declared once: a pydantic input model, a pydantic output model, a function.

The same declarations serve Claude tool use (`tool_specs()` gives each input
model's JSON schema), a later MCP server, the offline expert and the tests.
Every tool runs through a `ToolContext`, which holds the sandbox (working tree,
the user's fixed target, scratch directory) and the user's artifacts. Tools
return summaries computed by the evidence engine (triage, roofline, mechanism
findings, opcode counts), never raw dumps.

Files a model names must resolve inside the working tree (`Sandbox.resolve_path`),
and so must every file found under a folder it names. The one documented
exception is `sass(source="triton-cache")`: the user's own Triton cache
($TRITON_CACHE_DIR, else ~/.triton/cache), where every cubin must still resolve
inside that cache folder (no symlink out of it).
"""
from __future__ import annotations

import copy
import os
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal, Optional

from pydantic import BaseModel, Field, ValidationError

from ..artifacts import XZ_MAGIC, _decompress_xz, _head, identify, load_paths
from ..analysis.consistency import reconcile
from ..artifacts import ncu_report
from .ncu_metrics import ENGINE_METRICS, TARGETED_SECTIONS
from ..artifacts import sass as sass_reader
from ..artifacts.tables import Artifacts, SassFunction, Timeline
from ..answer import Diagnosis, Finding, KernelRow, RankRow, Roofline, TimelineSummary
from ..analysis.decide import TIMELINE_VERDICTS, read_timeline
from ..analysis.engine import diagnose as engine_diagnose
from ..errors import ArtifactError, EmptyCapture, KernelProfilerError, UsageError
from ..analysis.kernels import analyze_kernels, excess_dram_traffic, kernel_key
from ..analysis.timeline import TimelineResult
from .protocol import ToolSpec
from .sandbox import (MAX_LAUNCH_COUNT, MAX_LAUNCH_SKIP, MAX_REGEX_LEN, MAX_TELEMETRY_S, READ_CAP_BYTES, Sandbox,
                      SandboxViolation, check_int, check_regex, check_sections, check_set)

# A kernel "dominates" GPU time (and may be profiled with ncu) with at least this
# share of steady-state kernel time; the top-ranked kernel always qualifies.
DOMINANT_SHARE = 0.05
SASS_OPCODES_SHOWN = 40
FIND_MAX_FILES = 5000
FIND_MAX_RESULTS = 20
FIND_EXTS = {".py", ".cu", ".cuh", ".cpp", ".cc", ".c", ".h", ".hpp", ".triton", ".sh"}
SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache", ".tox",
             "site-packages", ".eggs"}


def _answer_model():
    from ..critic import Answer  # written alongside; imported late so this module loads on its own
    return Answer


# =============================================================== context
@dataclass
class ToolContext:
    """What every tool call of one investigation shares."""

    sandbox: Sandbox
    artifacts: list[str] = field(default_factory=list)  # paths the user gave (trusted, may lie outside the tree)
    insist: bool = False  # the user asked for kernel profiling even if the timeline says host/transfer-bound
    method_order: bool = True  # call_tool enforces the method's order (False only to test one tool on its own)
    produced: list[str] = field(default_factory=list)  # captures the tools wrote (nsys sqlite, ncu-rep)
    timeline_result: Optional[TimelineResult] = None
    timeline_output: Optional["TimelineOutput"] = None
    timeline: Optional[Timeline] = None  # the timeline triaged (its launches plan ncu's launch skip/count)
    _user_arts: Optional[Artifacts] = None
    shown: dict[str, str] = field(default_factory=dict)  # decompressed scratch copy -> the user's file
    # The user's ncu reports (found by content, .xz decompressed into scratch): found once per investigation.
    _user_ncu_reps: Optional[list[Path]] = None
    # What the critic checks answers against, keyed by the paths it was loaded from (reloaded only when
    # `produced` changes): (paths, artifacts or None, the engine's diagnosis of them or None).
    _collected: Optional[tuple[tuple[str, ...], Optional[Artifacts], Optional[Diagnosis]]] = None

    def user_artifacts(self) -> Optional[Artifacts]:
        if not self.artifacts:
            return None
        if self._user_arts is None:
            self._user_arts = reconcile(load_paths(self.artifacts))  # another device/run/program set apart
        return self._user_arts

    def _collected_paths(self) -> tuple[str, ...]:
        return tuple(self.artifacts) + tuple(p for p in self.produced if p not in self.artifacts)

    def _load_collected(self) -> tuple[Optional[Artifacts], Optional[Diagnosis]]:
        paths = self._collected_paths()
        if self._collected is None or self._collected[0] != paths:
            arts = None
            if paths:
                try:
                    arts = load_paths(list(paths))
                except KernelProfilerError:
                    arts = None
            self._collected = (paths, arts, None)
        return self._collected[1], self._collected[2]

    def collected_artifacts(self) -> Optional[Artifacts]:
        """Everything the answer may cite: the user's artifacts plus captures the tools made (loaded once, and
        again only when the tools have made new captures)."""
        return self._load_collected()[0]

    def collected_diagnosis(self) -> Optional[Diagnosis]:
        """The engine's diagnosis (engine.diagnose) of `collected_artifacts()`, cached with them."""
        arts, diag = self._load_collected()
        if arts is None:
            return None
        if diag is None:
            diag = engine_diagnose(arts)
            self._collected = (self._collected[0], arts, diag)
        return diag

    def order_violation(self, name: str, args: dict) -> Optional[str]:
        """Why the method refuses `name` now (see `order_violation`), or None. Every client goes through it:
        `call_tool` enforces it, so the MCP server's clients are held to the same order as `ask`."""
        tl = self.timeline_output.model_dump(mode="json") if self.timeline_output is not None else None
        return order_violation(tl, name, args, self.insist)


# =============================================================== timeline
# Tools that come after the timeline in the method (timeline -> one kernel deep -> SASS).
ORDERED_TOOLS = ("kernel_profile", "sass")


def order_violation(timeline: Optional[dict], name: str, args: dict, insist: bool) -> Optional[str]:
    """The method's order and stopping rules, for any client (ask's orchestrator, MCP, replay):
      * no kernel_profile or sass before a timeline;
      * a ranks-, host-, transfer- or start-up-bound timeline ends the investigation: kernel profiling would
        tell nothing (unless the user insisted);
      * kernel_profile only with a regex matching a kernel that dominates GPU time per the timeline.
    `timeline` is the timeline tool's successful result (JSON). Returns the refusal, or None."""
    if name not in ORDERED_TOOLS:
        return None
    if timeline is None:
        return f"{name} is refused before the timeline: call `timeline` first (the method never inverts the order)."
    verdict = timeline.get("verdict")
    if verdict in TIMELINE_VERDICTS and not insist:
        return (f"{name} is refused: the timeline is {verdict}-bound, so kernel profiling would tell nothing. "
                f"Submit the answer from the timeline.")
    if name == "kernel_profile":
        dom = [k.get("name", "") for k in timeline.get("dominant_kernels", [])]
        try:
            rx = re.compile(check_regex(str(args.get("kernel_regex", ""))))
        except SandboxViolation:
            return None  # the sandbox refuses it, with its own reason
        if dom and not any(_matches(rx, n) for n in dom):
            return (f"kernel_profile is refused: {args.get('kernel_regex')!r} matches none of the kernels that "
                    f"dominate GPU time ({', '.join(kernel_key(n)[:60] for n in dom)}).")
    return None



def _matches(rx: re.Pattern, name: str) -> bool:
    """A kernel regex matches a name as given or as its kernel_key (no return type, no argument list)."""
    return bool(rx.search(name) or rx.search(kernel_key(name)))


class TimelineInput(BaseModel):
    """Capture (or load) the program's timeline and triage it. The program is fixed by the user."""

    top: int = Field(5, ge=1, le=10, description="how many kernels of the GPU-time ranking to return")


class TimelineOutput(BaseModel):
    source: str = Field(description="the timeline file the numbers come from")
    mode: Literal["captured", "artifacts"]
    verdict: Literal["ranks", "startup", "transfer", "host", "kernel", "empty"]
    summary: TimelineSummary
    findings: list[Finding] = Field(description="host/transfer/start-up findings, or the timeline-only kernel finding")
    dominant_kernels: list[KernelRow] = Field(description="kernels kernel_profile may be run on (by share of GPU time)")
    startup_note: Optional[Finding] = Field(None, description="one-time work reported apart from the steady state "
                                                                "(JIT, library init, module loading, allocation, one-time "
                                                                "copies), or long process start-up")
    launches: dict[str, list[int]] = Field(default_factory=dict, description="dominant kernel -> [launches before the "
                                                                             "steady window, launches in the capture]")
    device: Optional[str] = None
    next_step: str
    ranks: list[RankRow] = Field(default_factory=list, description="multi-process jobs: per-rank table")
    straggler_rank: Optional[int] = None
    straggler_verdict: Optional[str] = None


PYTHON_EXE = re.compile(r"^python(\d+(\.\d+)?)?$")


def python_script_target(target: list[str]) -> bool:
    """`python script.py ...` or `python -m module ...`: the PyTorch profiler can record it without nsys."""
    if len(target) < 2 or not PYTHON_EXE.match(Path(target[0]).name):
        return False
    return target[1].endswith(".py") or (target[1] == "-m" and len(target) > 2)


def _torch_trace(ctx: ToolContext) -> Path:
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


def _dominant(rows: list[KernelRow]) -> list[KernelRow]:
    return [r for i, r in enumerate(rows) if i == 0 or r.share >= DOMINANT_SHARE]


def run_timeline(ctx: ToolContext, inp: TimelineInput) -> TimelineOutput:
    sb = ctx.sandbox
    if ctx.artifacts:
        arts = ctx.user_artifacts()
        mode = "artifacts"
    elif sb.target and sb.allowed_executables()["nsys"] is None and python_script_target(sb.target):
        arts = load_paths([_torch_trace(ctx)])
        mode = "captured"
    elif sb.target:
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
        arts = load_paths([sqlite])
        mode = "captured"
    else:
        raise UsageError("no program to run and no artifacts: give the program after `--` or captures with --artifacts")
    stage = read_timeline(arts) if arts else None
    tl, tres = (stage.timeline, stage.triage) if stage is not None else (None, None)
    if tl is None or tres is None:
        raise EmptyCapture(", ".join(ctx.artifacts) or "capture", "no timeline (nsys sqlite or PyTorch trace) found; "
                                                                  "capture one with `nsys profile` and export it to sqlite")
    ctx.timeline_result = tres
    ctx.timeline = tl
    summary = tres.summary.model_copy(update={"top_kernels": tres.summary.top_kernels[:inp.top]})
    verdict = stage.verdict
    if verdict == "ranks":
        nxt = ("The ranks differ: the straggler (or the collectives) explain the step time. Submit the answer; "
               "profiling one rank's kernels would not find it" + (" (the user insisted: allowed)." if ctx.insist
                                                                   else "."))
    elif tres.verdict in ("host", "transfer", "startup"):
        nxt = ("The timeline answers the question: the GPU is not the limit. Submit the answer now; profiling "
               "kernels would tell nothing" + (" (the user insisted on kernel profiling: it is allowed)." if ctx.insist
                                               else "."))
    elif tres.verdict == "kernel":
        nxt = ("Kernel-bound: profile the dominant kernel(s) with kernel_profile (a regex matching them; launch_skip "
               "from `launches`: skip the launches before the steady window, never past the last), then confirm the "
               "mechanism with sass." + (" The one-time work (startup_note) is reported apart, under also found."
                                         if tres.onetime is not None else ""))
    else:
        nxt = "The timeline holds no GPU work: nothing to profile."
    dominant = _dominant(tres.summary.top_kernels)
    out = TimelineOutput(source=tl.source, mode=mode, verdict=verdict, summary=summary, findings=stage.findings(),
                         dominant_kernels=dominant, startup_note=stage.startup_note(),
                         launches={k.name: list(launch_counts(tl, tres.window[0], [k.name])) for k in dominant},
                         device=tl.gpus[0].name if tl.gpus else None, next_step=nxt,
                         **stage.rank_fields(with_cause=False))
    ctx.timeline_output = out
    return out


def launch_counts(tl: Timeline, lo: float, names: Optional[list[str]] = None,
                  rx: Optional[re.Pattern] = None) -> tuple[int, int]:
    """(launches before the steady window, launches in the capture) of the kernels named or matching rx."""
    k = tl.kernels
    if not len(k):
        return 0, 0
    kn = k["name"].astype(str)
    if names is not None:
        sel = kn.isin(names).to_numpy()
    else:
        sel = kn.map({n: _matches(rx, n) for n in kn.unique()}).to_numpy(dtype=bool)
    starts = k["start_ns"].to_numpy()[sel]
    return int((starts < lo).sum()), int(sel.sum())


def plan_launches(before: int, total: int, count: int) -> tuple[int, int]:
    """ncu (launch_skip, launch_count) from the launches the timeline counted: skip the launches before the steady
    window and one more warm-up launch when later ones exist; never skip past the last launch (a kernel launched
    once is profiled at skip 0)."""
    if total <= 0:
        return 0, count
    count = max(1, min(count, total))
    skip = before + (1 if total - before > count else 0)
    return max(0, min(skip, total - count)), count


PASSES = re.compile(r"==PROF== Profiling .*?(\d+)\s+pass(?:es)?")


# =============================================================== kernel_profile
# Marks an input field that only applies when a program is run (ncu's launch selection and sections): with
# captures only, `tool_specs(live=False)` leaves it out of the schema the model reads (the tool ignores it).
LIVE_ONLY = {"live_only": True}


class KernelProfileInput(BaseModel):
    """Profile the kernels matching a regex with Nsight Compute (or read them from the given .ncu-rep)."""

    kernel_regex: str = Field(max_length=MAX_REGEX_LEN, description="regular expression over kernel names "
                                                                     "(must match a kernel that dominates GPU time)")
    launch_skip: int = Field(3, ge=0, le=MAX_LAUNCH_SKIP, description="matching launches to skip (warm-up)",
                             json_schema_extra=LIVE_ONLY)
    launch_count: int = Field(1, ge=1, le=MAX_LAUNCH_COUNT, description="matching launches to profile",
                              json_schema_extra=LIVE_ONLY)
    sections: list[str] = Field(default_factory=list, description="ncu section ids; empty = the section set",
                                json_schema_extra=LIVE_ONLY)
    section_set: Optional[Literal["targeted", "basic", "detailed", "full", "roofline"]] = Field(
        "targeted", description="ncu section set used when `sections` is empty: 'targeted' = the metrics the engine "
                                "reads (few replay passes), falling back to 'full' when they name no mechanism",
        json_schema_extra=LIVE_ONLY)


class KernelResult(BaseModel):
    name: str
    key: str
    launch_id: int
    share: Optional[float] = Field(description="share of steady-state GPU time (timeline), else of profiled time")
    duration_ns: float = Field(description="duration of the profiled launch under ncu (replayed: not program time)")
    roofline: Optional[Roofline]
    findings: list[Finding]


class KernelProfileOutput(BaseModel):
    reports: list[str]
    mode: Literal["captured", "artifacts"]
    kernels: list[KernelResult]
    program_finding: Optional[Finding] = Field(description="excess DRAM traffic over several streaming kernels, if any")
    sass_available: bool
    note: str = ""
    replay_passes: list[int] = Field(default_factory=list, description="ncu replay passes per profiled launch")


def _ncu_argv(ncu: str, pattern: str, skip: int, count: int, out: Path, sections: list[str],
              sset: Optional[str]) -> list[str]:
    argv = [ncu, "--clock-control", "none", "-k", f"regex:{pattern}", "-s", str(skip), "-c", str(count), "-f",
            "-o", str(out)]
    if sections:
        for s in sections:
            argv += ["--section", s]
    elif (sset or "targeted") == "targeted":
        for s in TARGETED_SECTIONS:
            argv += ["--section", s]
        argv += ["--metrics", ",".join(ENGINE_METRICS)]
    else:
        argv += ["--set", sset]
    return argv


def _sass_dump(ctx: ToolContext, rep: Path, fns: list[SassFunction]) -> list[SassFunction]:
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


def _names_mechanism(analyses) -> bool:
    return any(f.mechanism for a in analyses for f in a.findings) or excess_dram_traffic(analyses) is not None


def run_kernel_profile(ctx: ToolContext, inp: KernelProfileInput) -> KernelProfileOutput:
    sb = ctx.sandbox
    pattern = check_regex(inp.kernel_regex)
    check_int("launch_skip", inp.launch_skip, 0, MAX_LAUNCH_SKIP)
    check_int("launch_count", inp.launch_count, 1, MAX_LAUNCH_COUNT)
    sections = check_sections(inp.sections)
    sset = check_set(inp.section_set)
    rx = re.compile(pattern)
    ranked = ctx.timeline_result.kernels if ctx.timeline_result is not None else None
    note = ""
    if ctx.artifacts:
        arts = ctx.user_artifacts()
        profiles = [k for k in arts.kernel_profiles if _matches(rx, k.name)]
        sass_fns, resources = arts.sass, arts.resources
        reports = sorted({k.source for k in profiles})
        mode = "artifacts"
        note = ("Read from the given Nsight Compute report(s); launch_skip/launch_count were applied when they "
                "were captured.")
        if not arts.kernel_profiles:
            raise EmptyCapture(", ".join(ctx.artifacts), "the artifacts hold no Nsight Compute report: capture one "
                                                         "with `ncu --set full -k regex:NAME -s 3 -c 1 -o report CMD`")
    elif sb.target:
        ncu = sb.executable("ncu")
        sb.executable("target")
        skip, count = inp.launch_skip, inp.launch_count
        if ctx.timeline is not None and ctx.timeline_result is not None:  # what the timeline counted
            before, total = launch_counts(ctx.timeline, ctx.timeline_result.window[0], rx=rx)
            if total:
                skip, count = min(skip, max(total - 1, 0)), min(count, total)
                if skip + count > total:
                    skip = total - count
                if (skip, count) != (inp.launch_skip, inp.launch_count):
                    note = (f"launch_skip/count {inp.launch_skip}/{inp.launch_count} -> {skip}/{count}: the timeline "
                            f"counted {total} matching launches ({before} before the steady window). ")
        passes: list[int] = []

        def profile(skip: int, count: int, sset: Optional[str]) -> tuple[Path, str]:
            d = sb.new_dir("ncu")
            out = d / "profile"
            res = sb.run(_ncu_argv(ncu, pattern, skip, count, out, sections, sset) + list(sb.target), label="ncu")
            passes.extend(int(m.group(1)) for m in PASSES.finditer((res.stdout or "") + "\n" + (res.stderr or "")))
            return Path(str(out) + ".ncu-rep"), (res.stdout or "").strip()[-300:]

        rep, said = profile(skip, count, sset)
        targeted = not sections and (sset or "targeted") == "targeted"
        if not rep.exists() and (skip > 0 or targeted):  # retry once: the first launch, the full set
            note += (f"ncu wrote no report at launch_skip {skip}" + (" with the targeted metrics" if targeted else "")
                     + f" ({said[-160:]}); retried once at launch_skip 0" + (" with --set full" if targeted else "")
                     + ". ")
            skip, count = 0, 1
            if targeted:
                sset, targeted = "full", False
            rep, said = profile(skip, count, sset)
        if not rep.exists():
            raise EmptyCapture(rep, f"ncu wrote no report: no kernel matched regex {pattern!r} (tried launch_skip "
                                    f"{inp.launch_skip}" + (f" and {skip}" if skip != inp.launch_skip else "")
                                    + f"). ncu said: {said}")
        profiles = ncu_report.load(rep)
        if targeted and profiles and \
                not _names_mechanism(analyze_kernels(profiles, ranked, [], [])):
            note += "The targeted metrics named no mechanism; profiled again with --set full. "
            rep, said = profile(skip, count, "full")
            if rep.exists():
                profiles = ncu_report.load(rep)
        ctx.produced.append(str(rep))
        try:
            sass_fns = _sass_dump(ctx, rep, list(ncu_report.load_sass(rep)))
        except KernelProfilerError:
            sass_fns = []
        resources = []
        reports = [str(rep)]
        mode = "captured"
    else:
        raise UsageError("no program to run and no artifacts")
    if not profiles:
        names = sorted({kernel_key(k.name) for k in ctx.user_artifacts().kernel_profiles}) if ctx.artifacts else []
        raise EmptyCapture(", ".join(reports) or "ncu report", f"no profiled kernel matches {pattern!r}"
                           + (f"; profiled kernels: {', '.join(names[:10])}" if names else ""))
    analyses = analyze_kernels(profiles, ranked, sass_fns, resources)
    program = excess_dram_traffic(analyses)
    kernels = [KernelResult(name=a.profile.name, key=kernel_key(a.profile.name), launch_id=a.profile.launch_id,
                            share=a.share, duration_ns=a.duration_ns, roofline=a.roofline, findings=a.findings)
               for a in analyses]
    return KernelProfileOutput(reports=reports, mode=mode, kernels=kernels, program_finding=program,
                               sass_available=_sass_available(ctx, reports), note=note.strip(),
                               replay_passes=passes if mode == "captured" else [])


# =============================================================== sass
class SassInput(BaseModel):
    """SASS opcode counts of one kernel."""

    kernel_regex: str = Field(max_length=MAX_REGEX_LEN, description="regular expression naming the kernel")
    source: Optional[str] = Field(None, description="a binary, cubin, or folder of cubins inside the working tree, or "
                                                    "'triton-cache' (the user's own Triton cache, $TRITON_CACHE_DIR or "
                                                    "~/.triton/cache: the one folder outside the tree a tool reads); "
                                                    "default: the captures, then the target binary")


class SassOutput(BaseModel):
    kernel: str
    source: str
    arch: Optional[str]
    instruction_count: int
    opcode_counts: dict[str, int] = Field(description="base opcode -> count (most frequent first, capped)")
    memory_forms: dict[str, int] = Field(description="global/local/shared load-store forms with width, e.g. LDG.E.128")
    checks: dict[str, int] = Field(description="tensor-core MMA, FFMA, LDL+STL, ATOM+RED, BAR counts")
    other_functions: list[str] = Field(default_factory=list)


def _is_elf(p: Path) -> bool:
    try:
        with open(p, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def _is_interpreter(exe: str) -> bool:
    """python, bash, ...: an ELF whose SASS is not the program's (Python programs' kernels live in libraries or
    Triton's cache)."""
    return bool(re.match(r"^(python|pypy|bash|sh|env|torchrun|uv|conda)[\d.]*$", Path(exe).name))


def _ncu_reps(ctx: ToolContext) -> list[Path]:
    """ncu reports among the captures the tools made and the user's artifacts (found by content; `.xz` files
    decompressed into scratch, each into its own folder so same-named reports do not collide).

    The user's reports are found once per investigation (cached in the context); a corrupt `.xz` raises
    ArtifactError."""
    out = [Path(p) for p in ctx.produced if p.endswith(".ncu-rep")]
    if ctx._user_ncu_reps is None:
        ctx._user_ncu_reps = _find_user_ncu_reps(ctx)
    return out + ctx._user_ncu_reps


def _find_user_ncu_reps(ctx: ToolContext) -> list[Path]:
    found: list[Path] = []
    base = ctx.sandbox.scratch / "ncu-from-artifacts"
    for i, a in enumerate(ctx.artifacts):
        p = Path(a)
        files = sorted(f for f in p.rglob("*") if f.is_file() and not f.name.startswith(".")) if p.is_dir() else [p]
        for j, f in enumerate(files):
            if not f.is_file() or f.stat().st_size == 0:
                continue
            if _head(f).startswith(XZ_MAGIC):
                d = base / f"{i:02d}-{j:05d}"
                d.mkdir(parents=True, exist_ok=True)
                real = _decompress_xz(f, d)  # ArtifactError when corrupt or truncated
                if identify(real) != "ncu-rep":
                    real.unlink(missing_ok=True)
                    continue
                ctx.shown[str(real)] = str(f)
                found.append(real)
            elif identify(f) == "ncu-rep":
                found.append(f)
    return found


def _sass_available(ctx: ToolContext, reports: list[str]) -> bool:
    if ctx.artifacts and ctx.user_artifacts().sass:
        return True
    if any(r.endswith(".ncu-rep") for r in reports) or _ncu_reps(ctx):
        return True
    exe = ctx.sandbox.target_executable()
    return bool(exe and _is_elf(Path(exe)) and not _is_interpreter(exe))


def _cuobjdump(ctx: ToolContext, binary: Path) -> list[SassFunction]:
    sb = ctx.sandbox
    cuobjdump = sb.executable("cuobjdump")
    res = sb.run([cuobjdump, "--dump-sass", str(binary)], label="cuobjdump")
    d = sb.new_dir("sass")
    txt = d / (binary.name + ".sass.txt")
    txt.write_text(res.stdout)
    return list(sass_reader.load_sass(txt))


def triton_cache_dir(sb: Sandbox) -> Path:
    """The user's Triton cache ($TRITON_CACHE_DIR, else ~/.triton/cache), resolved."""
    env = sb.env.get("TRITON_CACHE_DIR")
    cache = Path(env).expanduser() if env else Path(sb.env.get("HOME") or "~").expanduser() / ".triton" / "cache"
    return cache.resolve()


def _cubins_under(sb: Sandbox, folder: Path, allowed: Optional[Path]) -> list[Path]:
    """The .cubin files under `folder`, each resolved (symlinks followed) inside `allowed`, or inside the working
    tree when `allowed` is None. Files escaping it are skipped; SandboxViolation if every one of them escapes."""
    cubins: list[Path] = []
    refused: list[str] = []
    for f in sorted(folder.rglob("*.cubin")):
        try:
            if allowed is None:
                real = sb.resolve_path(str(f))
            else:
                real = f.resolve()
                if not real.is_relative_to(allowed):
                    raise SandboxViolation(f"{f} resolves to {real}, outside {allowed}")
        except SandboxViolation:
            refused.append(str(f))
            continue
        if real.is_file() and real not in cubins:
            cubins.append(real)
    if refused and not cubins:
        raise SandboxViolation(f"every .cubin under {folder} resolves outside "
                               f"{allowed or 'the working tree'} (symlinks): {', '.join(refused[:5])}")
    return cubins


def _sass_sources(ctx: ToolContext, source: Optional[str]):
    """Lists of SASS functions, one per source, in the order they are tried (lazily: cuobjdump runs last)."""
    sb = ctx.sandbox
    if source is not None:
        if source == "triton-cache":
            # The one place a tool reads outside the working tree: the user's own Triton cache
            # ($TRITON_CACHE_DIR, else ~/.triton/cache). Every cubin must still resolve inside that folder.
            cache = triton_cache_dir(sb)
            cubins = _cubins_under(sb, cache, cache) if cache.is_dir() else []
        else:
            p = sb.resolve_path(source)
            if not p.exists():
                raise ArtifactError(source, "no such file or directory in the working tree")
            if p.is_dir():
                cubins = _cubins_under(sb, p, None)
            elif _is_elf(p):
                cubins = [p]
            else:
                fmt = identify(p)
                if fmt == "ncu-rep":
                    yield list(ncu_report.load_sass(p))
                    return
                if fmt == "sass":
                    yield [f for f in sass_reader.load(p) if isinstance(f, SassFunction)]
                    return
                raise ArtifactError(source, "not a binary, cubin, SASS dump or .ncu-rep")
        if not cubins:
            raise EmptyCapture(source, "no .cubin files found")
        yield [f for c in cubins[:50] for f in _cuobjdump(ctx, c)]
        return
    if ctx.artifacts and ctx.user_artifacts().sass:
        yield list(ctx.user_artifacts().sass)
    for rep in _ncu_reps(ctx):
        try:
            yield list(ncu_report.load_sass(rep))
        except KernelProfilerError:
            continue
    exe = sb.target_executable()
    if exe and _is_elf(Path(exe)) and not _is_interpreter(exe):
        yield _cuobjdump(ctx, Path(exe))


def run_sass(ctx: ToolContext, inp: SassInput) -> SassOutput:
    rx = re.compile(check_regex(inp.kernel_regex))
    seen: list[SassFunction] = []
    hits: list[SassFunction] = []
    fns: list[SassFunction] = []
    for fns in _sass_sources(ctx, inp.source):
        hits = [f for f in fns if _matches(rx, f.name) or _matches(rx, getattr(f, "mangled", None) or "")]
        seen += fns
        if hits:
            break
    if not seen:
        raise EmptyCapture("sass", "no SASS source: no SASS dump or ncu report with SourceCounters among the "
                                   "captures, and the target is not a CUDA binary (give `source`)")
    if not hits:
        raise EmptyCapture("sass", f"no function matches {inp.kernel_regex!r}; functions: "
                                   + ", ".join(sorted({kernel_key(f.name) for f in seen})[:10]))
    fn = max(hits, key=lambda f: len(f.instructions))
    ops = fn.opcode_counts

    def count(*prefixes: str) -> int:
        return sum(v for op, v in ops.items() if op.startswith(prefixes))

    forms = Counter(i for i in fn.instructions if i.split(".", 1)[0] in ("LDG", "STG", "LDL", "STL", "LDS", "STS"))
    return SassOutput(
        kernel=fn.name, source=ctx.shown.get(fn.source, fn.source), arch=fn.arch, instruction_count=len(fn.instructions),
        opcode_counts=dict(sorted(ops.items(), key=lambda kv: -kv[1])[:SASS_OPCODES_SHOWN]),
        memory_forms=dict(forms.most_common(20)),
        checks={"tensor_mma": count("HMMA", "HGMMA", "IMMA", "QGMMA", "UTCHMMA"), "FFMA": count("FFMA"),
                "LDL+STL": count("LDL", "STL"), "ATOM+RED": count("ATOM", "RED"), "BAR": count("BAR")},
        other_functions=sorted({kernel_key(f.name) for f in fns if f is not fn})[:10],
    )


# =============================================================== gpu_telemetry
class TelemetryInput(BaseModel):
    """Sample NVML clocks, throttle reasons, temperature, power and utilization for a while."""

    seconds: float = Field(2.0, gt=0, le=MAX_TELEMETRY_S)
    interval_s: float = Field(0.1, ge=0.01, le=5.0)


class GpuTelemetry(BaseModel):
    gpu: int
    name: Optional[str]
    samples: int
    sm_clock_mhz_median: Optional[float]
    max_sm_clock_mhz: Optional[float]
    temperature_c_max: Optional[float]
    power_w_median: Optional[float]
    power_limit_w: Optional[float]
    gpu_util_pct_median: Optional[float]
    throttle_reasons: dict[str, int] = Field(description="reason -> samples in which it was active")


class TelemetryOutput(BaseModel):
    seconds: float
    gpus: list[GpuTelemetry]
    note: str = "nvidia-smi-style utilization means a kernel was resident, not that the GPU did useful work."


def _median(xs: list) -> Optional[float]:
    xs = sorted(x for x in xs if x is not None)
    return float(xs[len(xs) // 2]) if xs else None


def run_gpu_telemetry(ctx: ToolContext, inp: TelemetryInput) -> TelemetryOutput:
    from ..telemetry import Sampler

    s = Sampler(interval_s=inp.interval_s)
    s.start()  # raises NvmlUnavailable (a KernelProfilerError) with what to do
    try:
        time.sleep(inp.seconds)
    finally:
        s.stop()
    gpus = []
    for g in s.gpus:
        mine = [x for x in s.samples if x["gpu"] == g["gpu"]]
        reasons = Counter(r for x in mine for r in x["throttle_reasons"])
        temps = [x["temperature_c"] for x in mine if x["temperature_c"] is not None]
        gpus.append(GpuTelemetry(gpu=g["gpu"], name=g["name"], samples=len(mine),
                                 sm_clock_mhz_median=_median([x["sm_clock_mhz"] for x in mine]),
                                 max_sm_clock_mhz=g.get("max_sm_clock_mhz"), temperature_c_max=max(temps) if temps else None,
                                 power_w_median=_median([x["power_w"] for x in mine]), power_limit_w=g.get("power_limit_w"),
                                 gpu_util_pct_median=_median([x["gpu_util_pct"] for x in mine]),
                                 throttle_reasons=dict(reasons)))
    return TelemetryOutput(seconds=inp.seconds, gpus=gpus)


# =============================================================== read_source
class ReadSourceInput(BaseModel):
    """Read a text file inside the working tree."""

    path: str = Field(max_length=1024, description="path relative to the working tree")
    max_bytes: int = Field(16384, ge=1, le=READ_CAP_BYTES)


class ReadSourceOutput(BaseModel):
    path: str
    size: int
    truncated: bool
    text: str


def run_read_source(ctx: ToolContext, inp: ReadSourceInput) -> ReadSourceOutput:
    p = ctx.sandbox.resolve_path(inp.path)
    if not p.is_file():
        raise ArtifactError(inp.path, "not a file in the working tree")
    size = p.stat().st_size
    with open(p, "rb") as f:
        data = f.read(inp.max_bytes)
    if b"\x00" in data[:8192]:
        raise ArtifactError(inp.path, "binary file; use the sass tool for binaries")
    return ReadSourceOutput(path=str(p.relative_to(ctx.sandbox.root)), size=size, truncated=size > inp.max_bytes,
                            text=data.decode("utf-8", errors="replace"))


# =============================================================== find_targets
class FindTargetsInput(BaseModel):
    """Find programs and benchmarks in the working tree that the question may be about."""

    query: str = Field(max_length=500, description="the question, or the words to look for (e.g. 'softmax')")


class TargetCandidate(BaseModel):
    path: str
    kind: Literal["python", "cuda", "c++", "executable", "script", "other"]
    score: int
    reasons: list[str]


class FindTargetsOutput(BaseModel):
    words: list[str]
    candidates: list[TargetCandidate]
    note: str = "The program to profile is chosen by the user (`-- CMD`); these are suggestions."


STOP_WORDS = {"why", "is", "my", "the", "a", "an", "slow", "so", "what", "does", "do", "how", "make", "faster",
              "fast", "kernel", "gpu", "this", "it", "of", "in", "on", "for", "and", "to", "with", "program", "code",
              "run", "runs", "take", "takes", "long", "than", "be", "can", "i", "me", "our", "speed", "up", "time"}


def _kind(p: Path) -> str:
    return {".py": "python", ".cu": "cuda", ".cuh": "cuda", ".cpp": "c++", ".cc": "c++", ".c": "c++",
            ".sh": "script"}.get(p.suffix, "executable" if os.access(p, os.X_OK) and _is_elf(p) else "other")


def run_find_targets(ctx: ToolContext, inp: FindTargetsInput) -> FindTargetsOutput:
    words = [w for w in re.findall(r"[a-z0-9_]{3,}", inp.query.lower()) if w not in STOP_WORDS][:8]
    if not words:
        return FindTargetsOutput(words=[], candidates=[])
    root = ctx.sandbox.root
    cands: list[TargetCandidate] = []
    seen = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".")]
        for fn in filenames:
            seen += 1
            if seen > FIND_MAX_FILES:
                break
            p = Path(dirpath) / fn
            if p.is_symlink():
                continue
            elf = p.suffix == "" and _is_elf(p) and os.access(p, os.X_OK)
            if p.suffix not in FIND_EXTS and not elf:
                continue
            name = p.name.lower()
            score, why = 0, []
            for w in words:
                if w in name:
                    score += 5
                    why.append(f"'{w}' in the file name")
            if not elf:
                try:
                    text = p.read_bytes()[:65536].decode("utf-8", "replace").lower()
                except OSError:
                    continue
                for w in words:
                    n = text.count(w)
                    if n:
                        score += min(n, 5)
                        why.append(f"'{w}' {n}x in the text")
                if score and ("__main__" in text or "int main" in text):
                    score += 2
                    why.append("has a main entry point")
            if score:
                cands.append(TargetCandidate(path=str(p.relative_to(root)), kind=_kind(p), score=score, reasons=why))
    cands.sort(key=lambda c: (-c.score, c.path))
    return FindTargetsOutput(words=words, candidates=cands[:FIND_MAX_RESULTS])


# =============================================================== submit_answer
class SubmitAnswerOutput(BaseModel):
    verdict: Literal["accept", "reject"]
    reasons: list[str] = Field(default_factory=list)


def run_submit_answer(ctx: ToolContext, inp: BaseModel) -> SubmitAnswerOutput:  # pragma: no cover - orchestrator owns it
    raise UsageError("submit_answer is handled by the orchestrator (it goes to the critic)")


# =============================================================== registry
@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_model: Any  # a pydantic model class (submit_answer's is resolved late)
    output_model: type[BaseModel]
    fn: Callable[[ToolContext, Any], BaseModel]

    @property
    def input(self) -> type[BaseModel]:
        return self.input_model() if not isinstance(self.input_model, type) else self.input_model


REGISTRY: dict[str, Tool] = {t.name: t for t in [
    Tool("timeline", "Run the user's program under Nsight Systems (or load the given captures) and triage the "
                     "timeline: GPU-busy fraction of the steady window, idle time by host cause, copies, start-up, "
                     "and kernels ranked by share of GPU time. Always the first step.",
         TimelineInput, TimelineOutput, run_timeline),
    Tool("kernel_profile", "Nsight Compute on the kernels matching a regex (only kernels that dominate GPU time per "
                           "the timeline), a few launches after warm-up, with the chosen sections; or read them from "
                           "the given .ncu-rep. Returns roofline (floor, gap, limiter) and mechanism findings per kernel.",
         KernelProfileInput, KernelProfileOutput, run_kernel_profile),
    Tool("sass", "SASS opcode counts of one kernel (from a SASS dump, the ncu report's source counters, the target "
                 "binary, a cubin, or Triton's cache) to confirm or refute a mechanism: load widths, MMA vs FFMA, "
                 "LDL/STL, ATOM/RED.",
         SassInput, SassOutput, run_sass),
    Tool("gpu_telemetry", "Sample NVML clocks, throttle reasons, temperature, power and utilization for a few seconds.",
         TelemetryInput, TelemetryOutput, run_gpu_telemetry),
    Tool("read_source", "Read a source file inside the working tree (size-capped).",
         ReadSourceInput, ReadSourceOutput, run_read_source),
    Tool("find_targets", "Find programs/benchmarks in the working tree matching the question's words.",
         FindTargetsInput, FindTargetsOutput, run_find_targets),
    Tool("submit_answer", "Submit the final four-part answer (bottleneck, evidence, mechanism, fix). It is reviewed "
                          "by a critic; every number cited must come from a tool result.",
         _answer_model, SubmitAnswerOutput, run_submit_answer),
]}

INVESTIGATION_TOOLS = ("timeline", "kernel_profile", "sass", "gpu_telemetry", "read_source", "find_targets",
                       "submit_answer")


def input_schema(model: type[BaseModel], live: bool) -> dict:
    """The input model's JSON schema; without a program to run (`live` False), the LIVE_ONLY fields left out."""
    schema = copy.deepcopy(model.model_json_schema())
    props = schema.get("properties", {})
    for name in list(props):
        if props[name].pop("live_only", False) and not live:
            del props[name]
            if name in schema.get("required", []):
                schema["required"].remove(name)
    return schema


def tool_specs(names: Optional[tuple[str, ...]] = None, live: bool = True) -> list[ToolSpec]:
    """The tools' definitions for a model. `live`: a program is run (else only captures are read)."""
    return [ToolSpec(name=t.name, description=t.description, input_schema=input_schema(t.input, live))
            for t in (REGISTRY[n] for n in (names or INVESTIGATION_TOOLS))]


@dataclass
class ToolOutcome:
    content: Any  # JSON-able
    is_error: bool = False
    error_type: Optional[str] = None


def error_content(e: BaseException) -> dict:
    return {"error": type(e).__name__, "message": str(e)}


def call_tool(ctx: ToolContext, name: str, args: dict) -> ToolOutcome:
    """Validate the input, run the tool in the sandbox, and return JSON-able content or a typed error."""
    tool = REGISTRY.get(name)
    if tool is None:
        e = SandboxViolation(f"unknown tool {name!r}; tools: {', '.join(REGISTRY)}")
        return ToolOutcome(error_content(e), True, type(e).__name__)
    violation = ctx.order_violation(name, args or {}) if ctx.method_order else None
    if violation:
        return ToolOutcome({"error": "OrderViolation", "message": violation}, True, "OrderViolation")
    try:
        inp = tool.input.model_validate(args or {})
        out = tool.fn(ctx, inp)
        return ToolOutcome(out.model_dump(mode="json"))
    except ValidationError as e:
        msg = "; ".join(f"{'.'.join(str(x) for x in err['loc'])}: {err['msg']}" for err in e.errors()[:5])
        return ToolOutcome({"error": "InvalidInput", "message": msg}, True, "InvalidInput")
    except KernelProfilerError as e:
        return ToolOutcome(error_content(e), True, type(e).__name__)
