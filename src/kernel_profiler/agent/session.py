"""The entry points the CLI calls: `run_ask` (an investigation with a live environment: the tools run now) and
`replay` (the same loop over a recorded model and environment: nothing runs). Both return AskResult."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Callable, Optional

from ..answer import Answer, AskResult
from ..errors import ToolMissing, UsageError
from . import transcript as tx
from .context import ToolContext
from .finders import python_script_target
from .live import LiveEnvironment
from .models.expert import ExpertModel
from .models.replay import RecordedEnvironment, ReplayModel
from .orchestrator import Orchestrator
from .protocol import Model, ReplayDivergence
from .sandbox import Sandbox, missing_tool_message
from .tools.host import FindTargetsInput, run_find_targets


def run_ask(question: str, cmd: Optional[list[str]], artifacts: list[str], model_spec: str, record: Optional[str],
            progress: Callable[[str], None], *, insist: bool = False, root: Optional[str | Path] = None,
            model: Optional[Model] = None, timeout_s: Optional[float] = None,
            record_extra: Optional[dict] = None) -> AskResult:
    """Investigate `question` on the user's program (`cmd`, an argv list) or existing captures (`artifacts`).

    model_spec: `auto` | `expert` | `claude` | `claude:NAME` | `replay:FILE`. `record`: JSONL transcript path.
    `insist`: profile kernels even when the timeline says host/transfer-bound. `root`: the working tree
    (default: the current directory). `model`: a ready Model object (tests), overriding model_spec.
    `record_extra`: more header fields for the transcript (e.g. where the captures were made).
    """
    if model is None and model_spec and model_spec.startswith("replay:"):
        return replay(model_spec.partition(":")[2], progress=progress)
    artifacts = [str(a) for a in (artifacts or [])]
    root = Path(root or Path.cwd()).resolve()
    if not cmd and not artifacts:
        found = run_find_targets(ToolContext(sandbox=Sandbox(root=root)), FindTargetsInput(query=question))
        hint = ("; candidates in this tree: " + ", ".join(c.path for c in found.candidates[:5])) if found.candidates \
            else ""
        raise UsageError("give the program to investigate after `--` (e.g. `-- python bench_softmax.py`) or existing "
                         f"captures with --artifacts{hint}")
    if model is None:
        from .models import make_model

        model = make_model(model_spec)
    sandbox = Sandbox(root=root, target=list(cmd) if cmd else None, **({"timeout_s": timeout_s} if timeout_s else {}))
    if cmd and not artifacts and isinstance(model, ExpertModel) and sandbox.allowed_executables()["nsys"] is None \
            and not python_script_target(list(cmd)):
        # The offline expert cannot work around a missing timeline profiler (a model can: it gets ToolMissing
        # as a tool error and answers from what it has): a missing tool, exit 2, before anything runs.
        shutil.rmtree(sandbox.scratch, ignore_errors=True)
        raise ToolMissing(missing_tool_message("nsys"))
    ctx = ToolContext(sandbox=sandbox, artifacts=artifacts, insist=insist)
    writer = tx.TranscriptWriter(record, question=question, model=model.name, cmd=list(cmd) if cmd else None,
                                 artifacts=artifacts, insist=insist, extra=record_extra) if record else None
    progress(f"investigating with {model.name}" + (f"; recording to {record}" if record else ""))
    try:
        res = Orchestrator(model, question=question, cmd=list(cmd) if cmd else None, artifacts=artifacts,
                           insist=insist, env=LiveEnvironment(ctx), writer=writer, progress=progress).run()
        if ctx.produced:
            res.notices.append(f"captures made by this run are kept in {sandbox.scratch}")
        res.source = "program" if cmd else "artifacts"
        return res
    finally:
        if writer is not None:
            writer.close()
        if not ctx.produced:
            shutil.rmtree(sandbox.scratch, ignore_errors=True)


def _answer_json(answer: Optional[dict | Answer]) -> str:
    """An answer as comparable JSON (a recorded answer of any schema version is read as the Answer it is)."""
    if answer is None:
        return "null"
    a = answer if isinstance(answer, Answer) else Answer.model_validate(answer)
    return json.dumps(a.model_dump(mode="json", exclude={"schema_version"}), sort_keys=True)


def replay(path: str | Path, progress: Optional[Callable[[str], None]] = None) -> AskResult:
    """Re-run a transcript from its recorded model turns and tool results: no GPU, profilers or network.

    Raises ReplayDivergence if the run asks for anything other than what was recorded."""
    header, events = tx.read(path)
    src = str(path)
    if not isinstance(header.get("question"), str):
        raise tx.TranscriptError(f"{src}:1: the transcript header holds no question")
    model = ReplayModel(events, source=src)
    o = Orchestrator(model, question=header["question"], cmd=header.get("cmd"), artifacts=header.get("artifacts") or [],
                     insist=bool(header.get("insist")), env=RecordedEnvironment(events, source=src), progress=progress)
    res = o.run()
    if not model.finished():
        raise ReplayDivergence(f"{src}: the replayed run ended before using every recorded model turn")
    recorded = next((e for e in reversed(events) if e["event"] == "answer" and e.get("final")), None)
    if recorded is not None and (recorded.get("accepted") != res.accepted
                                 or _answer_json(recorded.get("answer"))
                                 != _answer_json(res.as_answer() if res.answered else None)):
        raise ReplayDivergence(f"{src}: the replayed final answer differs from the recorded one")
    res.transcript = src
    res.source = "transcript"
    res.source_note = (f"Replayed from the recorded transcript {src} ({header.get('model') or 'model not recorded'}): "
                       "no program was run and no capture was read now.")
    return res
