"""`kernel-profiler mcp`: an MCP server over stdio exposing the profiling tools, `analyze` and `critique`.

The tools are the agent's own (agent/tools/ REGISTRY): the same pydantic
input schemas and the same sandbox as `kernel-profiler ask`. The program to
profile is fixed when the server starts (`-- CMD ...`), and so is the working
tree; a client can only choose kernels, sections and files inside the tree.

Register with Claude Code:
    claude mcp add kernel-profiler -- kernel-profiler mcp --root /path/to/project [-- CMD ...]
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

from pydantic import BaseModel, Field, ValidationError

from . import __version__
from .errors import KernelProfilerError

SERVER_NAME = "kernel-profiler"
EXPOSED = ("timeline", "kernel_profile", "sass", "gpu_telemetry", "read_source", "find_targets")


class AnalyzeInput(BaseModel):
    """Diagnose existing capture files or folders inside the working tree (no model involved)."""

    paths: list[str] = Field(description="capture files or folders, relative to the working tree")


class CritiqueInput(BaseModel):
    """Check a four-part answer (diagnosis JSON, or Markdown with Bottleneck/Evidence/Mechanism/Fix)."""

    answer: str = Field(description="the answer text")
    artifacts: list[str] = Field(description="the captures it cites, relative to the working tree")


def _context(root: Path, target: Optional[list[str]], artifacts: list[str]):
    from .agent.sandbox import Sandbox
    from .agent.context import ToolContext

    return ToolContext(sandbox=Sandbox(root=root, target=target), artifacts=artifacts)


def build_server(root: Path, target: Optional[list[str]] = None, artifacts: Optional[list[str]] = None):
    """The low-level MCP server object (mcp >= 2), ready to run over stdio or in-process."""
    import mcp.types as types
    from mcp.server.lowlevel import Server

    from .agent.tools import REGISTRY, call_tool, input_schema

    ctx = _context(root, target, list(artifacts or []))

    def inside(p: str) -> str:
        return str(ctx.sandbox.resolve_path(p))  # refuses paths outside the working tree

    def text_result(payload, is_error: bool = False):
        return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(payload, default=str))],
                                    structured_content=payload if isinstance(payload, dict) else None,
                                    is_error=is_error)

    async def list_tools(_ctx, _params) -> types.ListToolsResult:
        tools = [types.Tool(name=n, description=REGISTRY[n].description,
                            input_schema=input_schema(REGISTRY[n].input, live=True)) for n in EXPOSED]
        tools.append(types.Tool(name="analyze", description=AnalyzeInput.__doc__,
                                input_schema=AnalyzeInput.model_json_schema()))
        tools.append(types.Tool(name="critique", description=CritiqueInput.__doc__,
                                input_schema=CritiqueInput.model_json_schema()))
        return types.ListToolsResult(tools=tools)

    async def call(_ctx, params) -> types.CallToolResult:
        name, args = params.name, params.arguments or {}
        try:
            if name == "analyze":
                from .analysis.engine import analyze

                inp = AnalyzeInput.model_validate(args)
                return text_result(analyze([inside(p) for p in inp.paths]).model_dump(mode="json"))
            if name == "critique":
                from .critic import critique_text

                inp = CritiqueInput.model_validate(args)
                v = critique_text(inp.answer, [inside(p) for p in inp.artifacts])
                return text_result({"verdict": v.verdict, "reasons": v.reasons})
            if name not in EXPOSED:
                return text_result({"error": "UnknownTool", "message": f"no tool {name!r}"}, True)
            out = call_tool(ctx, name, args)
            return text_result(out.content, out.is_error)
        except ValidationError as e:
            return text_result({"error": "InvalidInput", "message": str(e).splitlines()[0]}, True)
        except KernelProfilerError as e:
            return text_result({"error": type(e).__name__, "message": str(e)}, True)

    return Server(SERVER_NAME, version=__version__, on_list_tools=list_tools, on_call_tool=call)


def serve(root: Path, target: Optional[list[str]] = None, artifacts: Optional[list[str]] = None) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    server = build_server(root, target, artifacts)

    async def main() -> None:
        async with stdio_server() as (r, w):
            await server.run(r, w, server.create_initialization_options())

    anyio.run(main)
