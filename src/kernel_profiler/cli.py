"""The `kernel-profiler` command line. The only module that prints.

Exit codes: the table in exitcodes.py (shown by `--help` and in the README).
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import List, Optional

import typer

from . import __version__
from .errors import KernelProfilerError, UsageError
from .exitcodes import ExitCode, table_text

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, rich_markup_mode=None,
                  help="What limits this kernel or this program's GPU time, and what exactly should change.",
                  epilog="Exit codes (every command):\n\n\b\n" + table_text())


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kernel-profiler {__version__}")
        raise typer.Exit(ExitCode.OK)


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="print the version and exit")) -> None:
    """What limits this kernel or this program's GPU time, and what exactly should change."""

EXAMPLE = Path(__file__).parent / "data" / "examples" / "softmax"


def _err(msg: str) -> None:
    typer.echo(f"kernel-profiler: {msg}", err=True)


def _check_new(path: Optional[Path], flag: str, suffixes: tuple[str, ...] = ()) -> None:
    if path is None:
        return
    if suffixes and path.suffix.lower() not in suffixes:
        raise UsageError(f"{flag} {path}: the file name must end in {' or '.join(suffixes)} "
                         "(the extension chooses the format)")
    if path.exists():
        raise UsageError(f"{path} already exists; choose another {flag} file (nothing was overwritten)")


HTML = (".html", ".htm")


def _write_report(d, out: Path, paths=None, rooflines=None) -> None:
    from .render.html import render_html, rooflines_for

    if rooflines is None and paths:
        rooflines = rooflines_for(paths)
    out.write_text(render_html(d, rooflines, link_base=out.parent.resolve()))
    _progress(f"HTML report written to {out}")


def _split_extra(ctx: typer.Context) -> tuple[list[str], list[str]]:
    """Extra command-line words: (more --artifacts values given after the first, the command after `--`).

    Lets `--artifacts A B C` work like `--artifacts A --artifacts B --artifacts C`.
    """
    extra = list(ctx.args)
    argv = sys.argv[1:]
    if "--" in argv:
        cmd = argv[argv.index("--") + 1:]
        before = extra[: len(extra) - len(cmd)] if cmd and extra[-len(cmd):] == cmd else extra
        return before, cmd
    return extra, []


def _progress(msg: str) -> None:
    typer.echo(f"... {msg}", err=True)


@app.command()
def analyze(
    paths: List[Path] = typer.Argument(..., help="capture files or folders (nsys .sqlite/.nsys-rep, .ncu-rep, ncu CSV, "
                                                "PyTorch trace .json[.gz], SASS, res-usage, ptxas logs, telemetry JSON)"),
    as_json: bool = typer.Option(False, "--json", help="print the Diagnosis as JSON (schema: `kernel-profiler schema`)"),
    fmt: str = typer.Option("text", "--format", help="text | md | json"),
    report_html: Optional[Path] = typer.Option(None, "--report", help="also write a self-contained HTML report here"),
) -> None:
    """Name the bottleneck from existing captures, without any model."""
    from .artifacts import load_paths
    from .analysis.engine import run
    from .render.markdown import markdown, text

    if fmt not in ("text", "md", "json"):
        raise UsageError(f"--format must be text, md or json, not {fmt!r}")
    _check_new(report_html, "--report", HTML)
    an = run(load_paths(paths))  # loaded and analyzed once, for the answer and the report
    d = an.diagnosis
    if report_html is not None:
        _write_report(d, report_html, rooflines=an.rooflines)
    if as_json or fmt == "json":
        typer.echo(d.model_dump_json(indent=2))
    else:
        typer.echo(markdown(d) if fmt == "md" else text(d))


@app.command()
def schema() -> None:
    """Print the JSON schema of what `analyze --json` (a Diagnosis) and `ask --json` (an AskResult) print: both are
    the same Answer, with `bound` and `mechanism` ids at the top level."""
    from .answer import json_schema

    typer.echo(json.dumps(json_schema(), indent=2))


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def ask(
    ctx: typer.Context,
    question: str = typer.Argument(..., help='e.g. "why is my softmax slow"'),
    artifacts: List[Path] = typer.Option([], "--artifacts", help="existing captures to investigate"),
    model: str = typer.Option("", "--model", help="expert | claude[:NAME] | replay:FILE (default: claude when "
                                                  "ANTHROPIC_API_KEY is set, else the offline expert)"),
    record: Optional[Path] = typer.Option(None, "--record", help="write the session as a JSONL transcript"),
    report_html: Optional[Path] = typer.Option(None, "--report", help="also write a self-contained HTML report here"),
    insist: bool = typer.Option(False, "--insist", help="profile kernels even when the timeline says host/transfer-bound"),
    as_json: bool = typer.Option(False, "--json", help="print the answer as JSON (schema: `kernel-profiler schema`)"),
) -> None:
    """Investigate like an expert: timeline, then one kernel deep, then SASS. Use `-- CMD ...` for a live target."""
    more, cmd = _split_extra(ctx)
    artifacts = list(artifacts) + [Path(a) for a in more]
    if more and not artifacts[: len(artifacts) - len(more)]:
        raise UsageError(f"unexpected arguments {' '.join(more)}: put the command to profile after `--`")
    _check_new(record, "--record")
    _check_new(report_html, "--report", HTML)
    if "--" in sys.argv[1:] and not cmd:
        raise UsageError("nothing after `--`: give the program to profile, e.g. `-- python bench.py`")
    if cmd:
        _check_program(cmd)
    arts = [str(a) for a in artifacts]
    source_note = None
    if not cmd and not arts and not _has_gpu():
        source_note = demo_note(question)
        _progress(f"no GPU and no --artifacts: using the bundled real capture {EXAMPLE}")
        arts = [str(EXAMPLE)]
    # With a GPU and no target, run_ask looks for the program in the working tree (find_targets) and asks
    # which one to profile.
    from .agent.session import run_ask

    import tempfile

    rec = str(record) if record else (str(Path(tempfile.mkdtemp(prefix="kp-ask-")) / "run.jsonl") if report_html else None)
    result = run_ask(question, cmd or None, arts, model or "auto", rec, _progress, insist=insist)
    if source_note is not None:
        result.source, result.source_note = "demo", source_note
    if report_html is not None:
        from .runs import report_for

        # the answer this run gave (as the transcript recorded it), with the measurements behind it
        d, rooflines = report_for(Path(rec))
        _write_report(d, report_html, None, rooflines)
    from .render.json import show
    typer.echo(show(result, as_json))


@app.command()
def report(run: Path = typer.Argument(..., help="a capture file or folder, or an `ask --record` transcript"),
           out: Path = typer.Option(..., "--out", "-o", help="HTML file to write (or .md for Markdown)")) -> None:
    """Write the report of a recorded run: self-contained HTML with roofline and timeline, or Markdown."""
    from .render.markdown import markdown
    from .runs import is_transcript, report_for

    if not run.exists():
        raise UsageError(f"{run}: no such file or directory")
    _check_new(out, "--out", HTML + (".md",))
    d, rooflines = report_for(run)  # a transcript: the answer it recorded, not a new decision
    if out.suffix.lower() == ".md":
        out.write_text(markdown(d))
        _progress(f"Markdown report written to {out}")
    else:
        _write_report(d, out, None if is_transcript(run) else [run], rooflines)


@app.command()
def replay(transcript: Path = typer.Argument(..., help="a JSONL transcript written by `ask --record`"),
           as_json: bool = typer.Option(False, "--json")) -> None:
    """Re-run a recorded session from its tool results and model turns: no GPU, no profilers, no network.

    Exit 4 when the re-run diverges from the transcript.
    """
    from .agent.session import replay as run_replay

    result = run_replay(str(transcript), progress=_progress)
    from .render.json import show
    typer.echo(show(result, as_json))


@app.command(context_settings={"allow_extra_args": True})
def critique(ctx: typer.Context,
             answer: Path = typer.Argument(..., help="diagnosis JSON, or Markdown with Bottleneck/Evidence/Mechanism/Fix"),
             artifacts: List[Path] = typer.Option(..., "--artifacts", help="the captures the answer cites"),
             as_json: bool = typer.Option(False, "--json"),
             review: str = typer.Option("", "--review", help="claude or claude:NAME: a model reviewer judges an "
                                        "accepted answer and settles a rejection the checks could not confirm")) -> None:
    """Check any agent's answer against the artifacts. Exit 0 accept, 1 reject."""
    from .agent.second_opinion import reviewed, reviewer
    from .critic import critique_text
    from .render.markdown import verdict_text

    artifacts = [str(a) for a in list(artifacts) + [Path(a) for a in ctx.args]]
    model = reviewer(review) if review else None  # a bad --review spec fails before any work
    if not answer.is_file():
        raise UsageError(f"{answer}: no such file")
    try:
        text_in = answer.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise UsageError(f"{answer}: not UTF-8 text ({e.reason} at byte {e.start})") from e
    v = reviewed(text_in, artifacts, model, _progress) if model else critique_text(text_in, artifacts)
    # --json: every number with the fact (artifact, kernel, metric) or declared derivation it matched (an auditable
    # accept), and the model review where one ran
    typer.echo(json.dumps(v.model_dump(mode="json"), indent=2) if as_json else verdict_text(v))
    raise typer.Exit(ExitCode.OK if v.verdict == "accept" else ExitCode.REJECTED)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def telemetry(ctx: typer.Context,
              out: Path = typer.Option(Path("telemetry.json"), "--out", "-o", help="where to write the samples"),
              interval: float = typer.Option(0.1, "--interval", help="seconds between samples")) -> None:
    """Sample GPU clocks, throttle reasons, temperature, power and utilization while `-- CMD ...` runs."""
    import subprocess

    from .telemetry import Sampler

    cmd = [a for a in ctx.args if a != "--"]
    if not cmd:
        raise UsageError("give the command to watch after `--`, e.g. kernel-profiler telemetry -- python train.py")
    if out.exists():
        raise UsageError(f"{out} already exists; choose another --out (nothing was overwritten)")
    import shutil

    if shutil.which(cmd[0]) is None:
        raise UsageError(f"{cmd[0]}: command not found")
    with Sampler(interval_s=interval) as s:
        try:
            rc = subprocess.run(cmd).returncode
        except OSError as e:
            raise UsageError(f"cannot run {cmd[0]}: {e.strerror or e}") from e
    s.write(out)
    _progress(f"{len(s.samples)} samples of {len(s.gpus)} GPU(s) written to {out}")
    raise typer.Exit(rc)


PROFILE_SH = Path(__file__).parent / "data" / "profile.sh"


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []})
def profile(ctx: typer.Context) -> None:
    """Capture one level of evidence, then analyze it: `profile nsys CMD...`, `KERNEL=regex profile ncu CMD...`,
    `profile sass BINARY|DIR`, `profile telemetry CMD...` (`profile --help` for the environment variables).

    Runs the bundled profile.sh (tools/profile.sh in a clone) and exits with its status.
    """
    import shutil
    import subprocess

    bash = shutil.which("bash")
    if bash is None:
        raise UsageError("`kernel-profiler profile` needs bash on PATH")
    raise typer.Exit(subprocess.run([bash, str(PROFILE_SH), *ctx.args]).returncode)


@app.command("install")
def install_cmd(target: str = typer.Argument(..., help="what to install into: claude"),
                dest: Path = typer.Option(Path("."), "--dest", help="project folder that gets .claude/"),
                user: bool = typer.Option(False, "--user", help="install into ~/.claude instead"),
                force: bool = typer.Option(False, "--force", help="overwrite files you changed")) -> None:
    """Install the Claude Code subagent and its skills into .claude/ (it profiles with `kernel-profiler profile`)."""
    from .install import install

    if target != "claude":
        raise UsageError(f"unknown install target {target!r}; the only one is: claude")
    rep = install(Path.home() if user else dest, force=force)
    typer.echo(f"installed {len(rep['installed'])}, unchanged {len(rep['unchanged'])}, kept {len(rep['kept'])} "
               f"(files you changed; --force overwrites them)"
               + (f", removed {len(rep['removed'])} no longer used" if rep["removed"] else ""))
    for rel in rep["kept"]:
        typer.echo(f"  kept {rel}")


@app.command("uninstall")
def uninstall_cmd(target: str = typer.Argument(..., help="claude"),
                  dest: Path = typer.Option(Path("."), "--dest"),
                  user: bool = typer.Option(False, "--user")) -> None:
    """Remove what `install claude` put there (files you changed since are kept)."""
    from .install import uninstall

    if target != "claude":
        raise UsageError(f"unknown uninstall target {target!r}; the only one is: claude")
    rep = uninstall(Path.home() if user else dest)
    typer.echo(f"removed {len(rep['removed'])}, kept {len(rep['kept'])} changed file(s)")
    for rel in rep["kept"]:
        typer.echo(f"  kept {rel}")


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def mcp(ctx: typer.Context,
        root: Path = typer.Option(Path("."), "--root", help="working tree the tools may read (default: here)"),
        artifacts: List[Path] = typer.Option([], "--artifacts", help="captures the tools start from")) -> None:
    """Serve the profiling tools, analyze and critique over MCP (stdio). `-- CMD ...` fixes the program to profile."""
    try:
        from .mcp_server import serve
    except ImportError as e:  # pragma: no cover - depends on the optional extra
        raise UsageError(f"the MCP server needs the mcp package: pip install 'kernel-profiler[mcp]' ({e})") from e
    more, cmd = _split_extra(ctx)
    serve(root.resolve(), cmd or None, [str(a) for a in list(artifacts) + [Path(m) for m in more]])


@app.command()
def verify(before: Path = typer.Argument(..., help="captures (file or folder) before the change"),
           after: Path = typer.Argument(..., help="captures (file or folder) after the change"),
           as_json: bool = typer.Option(False, "--json")) -> None:
    """Did the change work? Per-kernel and overall time with run-to-run noise, the prediction, the new bottleneck.

    Exit 0 improved, 1 regressed (or the predicted metric moved the wrong way), 5 within noise.
    """
    from .verify import verify as run_verify

    r = run_verify([before], [after])
    typer.echo(r.model_dump_json(indent=2) if as_json else r.render())
    raise typer.Exit(r.exit_code())


@app.command()
def version() -> None:
    """Print the version."""
    typer.echo(__version__)


def demo_note(question: str) -> str:
    """What `ask` says first when it answers from the bundled capture instead of the user's program."""
    off_topic = "" if "softmax" in question.lower() else (
        "Your question is not about this softmax, so this answer does not answer it. ")
    return ("This answer is about the bundled demo, not your program: a naive softmax profiled on an NVIDIA H200 "
            "(no GPU and no --artifacts here). " + off_topic + "Give your captures with --artifacts, "
            "or your program after `--` on a machine with a GPU.")


def _check_program(cmd: list[str]) -> None:
    """The program after `--` must exist before anything is profiled (exit 2 otherwise)."""
    import shutil

    exe = cmd[0]
    if "/" in exe:
        if not Path(exe).is_file():
            raise UsageError(f"{exe}: no such file (the program to profile, after `--`)")
        if not os.access(exe, os.X_OK):
            raise UsageError(f"{exe}: not executable (chmod +x it, or run it through its interpreter)")
    elif shutil.which(exe) is None:
        raise UsageError(f"{exe}: command not found (the program to profile, after `--`)")
    if Path(exe).name.startswith(("python", "bash", "sh")) and len(cmd) > 1:
        script = next((a for a in cmd[1:] if not a.startswith("-")), None)
        if script is not None and script.endswith((".py", ".sh")) and not Path(script).is_file():
            raise UsageError(f"{script}: no such file (the script to profile, after `--`)")


def _has_gpu() -> bool:
    try:
        import pynvml

        pynvml.nvmlInit()
        return pynvml.nvmlDeviceGetCount() > 0
    except Exception:
        return False


def main() -> None:
    try:
        rc = app(standalone_mode=False)  # click returns the code of typer.Exit in this mode
        sys.exit(rc if isinstance(rc, int) else 0)
    except KernelProfilerError as e:
        _err(str(e).splitlines()[0] if str(e) else type(e).__name__)
        sys.exit(int(e.exit_code))
    except typer.Exit as e:
        sys.exit(int(e.exit_code))
    except (typer.Abort, KeyboardInterrupt):
        _err("interrupted")
        sys.exit(ExitCode.INTERRUPTED)
    except Exception as e:  # click usage errors and anything unexpected
        if hasattr(e, "show") and hasattr(e, "exit_code"):  # click (or typer's vendored click) usage error
            e.show()
            sys.exit(e.exit_code or ExitCode.USAGE)
        if os.environ.get("KP_DEBUG"):
            raise
        _err(f"internal error: {type(e).__name__}: {e} (set KP_DEBUG=1 for the traceback)")
        sys.exit(ExitCode.INTERNAL)


if __name__ == "__main__":
    main()
