"""The sass tool: the opcode counts of one kernel, from the first SASS source that has it (`finders.sass_sources`)."""
from __future__ import annotations

import re
from collections import Counter
from typing import Optional

from pydantic import BaseModel, Field

from ...kernel_name import KernelName
from ...artifacts.tables import SassFunction
from ...catalog import TENSOR_OPS
from ...errors import EmptyCapture
from ..context import ToolContext
from ..finders import sass_sources
from ..order import matches
from ..sandbox import MAX_REGEX_LEN, check_regex

SASS_OPCODES_SHOWN = 40


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


def run_sass(ctx: ToolContext, inp: SassInput) -> SassOutput:
    rx = re.compile(check_regex(inp.kernel_regex))
    seen: list[SassFunction] = []
    hits: list[SassFunction] = []
    fns: list[SassFunction] = []
    for fns in sass_sources(ctx, inp.source):
        hits = [f for f in fns if matches(rx, f.name) or matches(rx, getattr(f, "mangled", None) or "")]
        seen += fns
        if hits:
            break
    if not seen:
        raise EmptyCapture("sass", "no SASS source: no SASS dump or ncu report holding SASS among the "
                                   "captures, and the target is not a CUDA binary (give `source`)")
    if not hits:
        raise EmptyCapture("sass", f"no function matches {inp.kernel_regex!r}; functions: "
                                   + ", ".join(sorted({KernelName(f.name).qualified for f in seen})[:10]))
    fn = max(hits, key=lambda f: len(f.instructions))
    ops = fn.opcode_counts

    def count(*prefixes: str) -> int:
        return sum(v for op, v in ops.items() if op.startswith(prefixes))

    forms = Counter(i for i in fn.instructions if i.split(".", 1)[0] in ("LDG", "STG", "LDL", "STL", "LDS", "STS"))
    return SassOutput(
        kernel=fn.name, source=fn.source, arch=fn.arch, instruction_count=len(fn.instructions),
        opcode_counts=dict(sorted(ops.items(), key=lambda kv: -kv[1])[:SASS_OPCODES_SHOWN]),
        memory_forms=dict(forms.most_common(20)),
        checks={"tensor_mma": count(*TENSOR_OPS), "FFMA": count("FFMA"),
                "LDL+STL": count("LDL", "STL"), "ATOM+RED": count("ATOM", "RED"), "BAR": count("BAR")},
        other_functions=sorted({KernelName(f.name).qualified for f in fns if f is not fn})[:10],
    )
