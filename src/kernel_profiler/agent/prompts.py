"""What the investigation says in words: the prompts (Jinja templates under prompts/), the first user message, the
progress line of a tool call and, when no answer passed the critic, the experiment that would settle it."""
from __future__ import annotations

import json
from typing import Any, Optional

from jinja2 import Environment, PackageLoader, StrictUndefined

from ..analysis.decide import TIMELINE_VERDICTS
from ..kernel_name import KernelName
from .finders import python_script_target

_env = Environment(loader=PackageLoader("kernel_profiler", "prompts"), undefined=StrictUndefined,
                   keep_trailing_newline=True, autoescape=False)


def render(name: str, **kw: Any) -> str:
    return _env.get_template(name).render(**kw)


def intro(question: str, cmd: Optional[list[str]], artifacts: list[str], insist: bool) -> str:
    """The first user message: the question and what the user fixed."""
    lines = [question.strip(), ""]
    if cmd:
        lines.append(f"Program to investigate (fixed): {json.dumps(cmd)}")
    if artifacts:
        lines.append(f"Existing captures (fixed): {json.dumps(artifacts)}")
    if insist:
        lines.append("I insist on kernel profiling even if the timeline says the GPU is not the limit.")
    lines.append("Start with the timeline.")
    return "\n".join(lines)


def describe(name: str, args: dict, cmd: Optional[list[str]], artifacts: list[str], env) -> str:
    """The progress line of a tool call (`env`: the protocol.Environment it runs in)."""
    if name == "timeline":
        if artifacts:
            return "loading the given captures"
        said = env.describe(name, args)
        if said:
            return said
        from ..toolpaths import find_nsys
        if find_nsys() is None and cmd and python_script_target(list(cmd)):
            return "nsys not found: running the program under the PyTorch profiler"
        return "running the program under nsys"
    if name == "kernel_profile":
        return (f"kernels matching {args.get('kernel_regex')!r} "
                + ("from the given ncu report" if artifacts else
                   f"under ncu (skip {args.get('launch_skip', 3)}, count {args.get('launch_count', 1)})"))
    if name == "sass":
        return f"opcode counts of {args.get('kernel_regex')!r}"
    return json.dumps(args, default=str)[:120]


def settle(cmd: Optional[list[str]], timeline: Optional[dict], verdicts: list[dict]) -> str:
    """The experiment that would settle an inconclusive investigation, with the critic's open objections."""
    cmd_s = " ".join(cmd) if cmd else "CMD"
    if timeline is None:
        return (f"Capture a timeline: `nsys profile -t cuda,nvtx -o timeline {cmd_s}` then "
                f"`nsys export --type sqlite timeline.nsys-rep`, and ask again with --artifacts timeline.sqlite.")
    dom = [k.get("name", "") for k in timeline.get("dominant_kernels", [])]
    top = KernelName(dom[0]).base if dom else "KERNEL"
    reasons = [r for v in verdicts if v.get("verdict") == "reject" for r in v.get("reasons", [])]
    if timeline.get("verdict") in TIMELINE_VERDICTS:
        exp = ("Remove the idle time the timeline attributes (e.g. batch the launches into a CUDA graph or "
               "remove the synchronization) and re-capture the timeline: `timeline.gpu_busy_fraction` should rise.")
    else:
        exp = (f"Profile the dominant kernel one level deeper: `ncu --set full -k regex:{top} -s 3 -c 3 -o report "
               f"{cmd_s}`, and check the metrics the answer cites against the report.")
    if reasons:
        exp += " Open objections: " + " | ".join(reasons[-3:])
    return exp
