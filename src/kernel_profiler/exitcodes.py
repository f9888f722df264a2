"""The one table of exit codes. Every command exits with one of these (`telemetry` and `profile` pass the
watched program's / profiling script's status through); `--help` and the README show this table.
"""
from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    REJECTED = 1
    USAGE = 2
    INTERNAL = 3
    DIVERGED = 4
    WITHIN_NOISE = 5
    INTERRUPTED = 130


MEANING: dict[ExitCode, str] = {
    ExitCode.OK: "success (`critique`: answer accepted; `verify`: improved)",
    ExitCode.REJECTED: "`critique` rejected the answer; `verify`: regressed, or the predicted metric moved the wrong way",
    ExitCode.USAGE: "bad input or a missing tool: one-line message, nothing of yours is modified",
    ExitCode.INTERNAL: "internal error (`KP_DEBUG=1` shows the traceback)",
    ExitCode.DIVERGED: "`replay`: the re-run diverged from the recorded transcript",
    ExitCode.WITHIN_NOISE: "`verify`: the change is within run-to-run noise",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C)",
}


def table_markdown() -> str:
    """The README's table."""
    rows = [f"| {int(c)} | {MEANING[c]} |" for c in ExitCode]
    return "\n".join(["| exit code | meaning |", "| --- | --- |", *rows])


def table_text() -> str:
    """The table for `--help`."""
    return "\n".join(f"{int(c):>3}  {MEANING[c].replace('`', '')}" for c in ExitCode)
