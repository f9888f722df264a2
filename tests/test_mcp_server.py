"""`kernel-profiler mcp` over stdio: an MCP client session initializes, lists the tools, runs analyze."""
from __future__ import annotations

import shutil
import sys

import pytest

pytest.importorskip("mcp", reason="install the test extra: pip install -e '.[test]'")
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
async def test_stdio_session_lists_tools_and_analyzes(captures, tmp_path):
    case = captures.case_dir("cu_histogram_atomic")
    root = tmp_path / "project"
    shutil.copytree(case, root / "capture")
    params = StdioServerParameters(command=sys.executable, args=["-m", "kernel_profiler.cli", "mcp", "--root", str(root),
                                                                 "--artifacts", str(root / "capture")])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.name == "kernel-profiler"
            names = {t.name for t in (await session.list_tools()).tools}
            assert {"timeline", "kernel_profile", "sass", "gpu_telemetry", "analyze", "critique"} <= names
            early = await session.call_tool("kernel_profile", {"kernel_regex": "histogram"})
            assert early.is_error and early.structured_content["error"] == "OrderViolation"  # same method as `ask`
            res = await session.call_tool("analyze", {"paths": ["capture"]})
            assert not res.is_error, res.content
            assert (res.structured_content["bound"], res.structured_content["mechanism"]) == ("latency", "atomic_contention")
            outside = await session.call_tool("analyze", {"paths": ["../../etc"]})
            assert outside.is_error  # the sandbox keeps the client inside the working tree
            tl = await session.call_tool("timeline", {"top": 3})  # the agent's tool, same schema and sandbox
            assert not tl.is_error, tl.content
            assert tl.structured_content["verdict"] == "kernel"
            assert tl.structured_content["dominant_kernels"][0]["name"].startswith("histogram")
            other = await session.call_tool("kernel_profile", {"kernel_regex": "^no_such_kernel$"})
            assert other.is_error and "dominate GPU time" in other.structured_content["message"]
            kp = await session.call_tool("kernel_profile", {"kernel_regex": "histogram"})
            assert not kp.is_error, kp.content
