"""install/uninstall claude round trip; agent and skill front matter."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kernel_profiler.install import MANIFEST, install, uninstall

ROOT = Path(__file__).parent.parent


def front_matter(path: Path) -> dict[str, str]:
    text = path.read_text()
    m = re.match(r"^---\n(.*?)\n---\n", text, re.S)
    assert m, f"{path} has no YAML front matter"
    out = {}
    for line in m.group(1).splitlines():
        if ":" in line and not line.startswith(" "):
            k, v = line.split(":", 1)
            out[k.strip()] = v.strip()
    return out


def test_agent_front_matter():
    fm = front_matter(ROOT / "agents" / "kernel-profiler.md")
    assert fm["name"] == "kernel-profiler"
    for key in ("description", "tools", "model"):
        assert fm.get(key), key


@pytest.mark.parametrize("skill", sorted(p.parent.name for p in (ROOT / "skills").glob("*/SKILL.md")))
def test_skill_front_matter(skill):
    fm = front_matter(ROOT / "skills" / skill / "SKILL.md")
    assert fm["name"] == skill and fm.get("description")


def test_plugin_manifest_parses():
    assert json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())["name"] == "kernel-profiler"


def test_install_uninstall_round_trip(tmp_path):
    rep = install(tmp_path)
    claude = tmp_path / ".claude"
    assert (claude / "agents" / "kernel-profiler.md").is_file()
    assert (claude / "skills" / "kernel-optimization" / "SKILL.md").is_file()
    assert not (claude / "tools").exists()  # the agent profiles with `kernel-profiler profile`
    assert (claude / MANIFEST).is_file() and rep["installed"]
    # A file the user changed is kept on reinstall and on uninstall.
    mine = claude / "agents" / "kernel-profiler.md"
    mine.write_text("my edits\n")
    assert "agents/kernel-profiler.md" in install(tmp_path)["kept"]
    assert mine.read_text() == "my edits\n"
    # A user's own unrelated file survives too.
    (claude / "agents" / "other.md").write_text("theirs\n")
    rep = uninstall(tmp_path)
    assert "agents/kernel-profiler.md" in rep["kept"] and mine.exists()
    assert (claude / "agents" / "other.md").read_text() == "theirs\n"
    assert not (claude / "skills").exists()


def test_force_overwrites_changed_file(tmp_path):
    install(tmp_path)
    f = tmp_path / ".claude" / "skills" / "kernel-optimization" / "profiling.md"
    f.write_text("changed\n")
    install(tmp_path, force=True)
    assert f.read_text() != "changed\n"


# ---------------------------------------------------------------- the installed subagent, end to end
AGENT = ROOT / "agents" / "kernel-profiler.md"
PROFILE_SH_DATA = Path(__file__).parent / "data" / "profile_sh"


def _front_matter_list(text: str, key: str) -> list[str]:
    m = re.search(rf"^{key}:\n((?:  - .+\n)+)", text.split("\n---\n", 1)[0] + "\n", re.M)
    return [line.strip()[2:].strip() for line in m.group(1).splitlines()] if m else []


def test_agent_paths_resolve_wherever_installed(tmp_path):
    """Claude Code gives a subagent each skill listed under `skills:` with its base directory (checked with
    the Claude Code CLI 2.1.332: project, --user and plugin installs); nothing may point into the session's
    working directory, which is the user's project, not ours."""
    install(tmp_path)
    claude = tmp_path / ".claude"
    text = (claude / "agents" / "kernel-profiler.md").read_text()
    fm = front_matter(claude / "agents" / "kernel-profiler.md")
    tools = {t.strip() for t in fm["tools"].split(",")}
    assert {"Read", "Write", "Edit", "Bash"} <= tools  # the answer is written to a file, then corrected
    skills = _front_matter_list(text, "skills")
    assert skills == ["kernel-optimization", "gpu-performance-engineering"]
    body = text.split("\n---\n", 1)[1]
    assert not re.search(r"`(?:tools|skills)/", body), "a path relative to the working directory"
    pages = set(re.findall(r"`((?:ref/)?[a-z-]+\.md)`", body))
    assert {"profiling.md", "pitfalls.md", "roofline.md", "stragglers.md", "ref/ptx-sass-hopper.md"} <= pages
    for page in pages:  # every page the agent names lies in one of its skills' base directories
        assert any((claude / "skills" / s / page).is_file() for s in skills), page
    for skill in skills:  # and every link inside the skills resolves in the installed tree
        base = claude / "skills" / skill
        for link in re.findall(r"\]\(([^)#:]+)\)", (base / "SKILL.md").read_text()):
            assert (base / link).is_file(), f"{skill}: {link}"


def test_reinstall_removes_what_an_older_version_put_there(tmp_path):
    claude = tmp_path / ".claude"
    install(tmp_path)
    old = claude / "tools" / "profile.sh"  # what versions before `kernel-profiler profile` installed
    old.parent.mkdir()
    old.write_text("#!/bin/sh\n")
    man = json.loads((claude / MANIFEST).read_text())
    man["tools/profile.sh"] = __import__("hashlib").sha256(old.read_bytes()).hexdigest()
    (claude / MANIFEST).write_text(json.dumps(man))
    rep = install(tmp_path)
    assert rep["removed"] == ["tools/profile.sh"] and not (claude / "tools").exists()
    assert "tools/profile.sh" not in json.loads((claude / MANIFEST).read_text())


STAND_INS = {
    # Stand-ins for the profilers, which this machine lacks: each writes what the real tool wrote for the same
    # call on the H200 (tests/data/profile_sh), so everything between the agent's command and the answer is real.
    "nsys": """#!/bin/sh
echo "nsys $*" >> "$CALLS"
if [ "$1" = profile ]; then
  while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
  echo "stand-in: the H200 report's sqlite export is in $DATA/t1" > "$out.nsys-rep"
elif [ "$1" = export ]; then
  while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
  cp "$DATA/t1/nsys.sqlite" "$out"
fi
""",
    "ncu": """#!/bin/sh
echo "ncu $*" >> "$CALLS"
while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
cp "$DATA/t2/ncu.ncu-rep" "$out.ncu-rep"
""",
    "cuobjdump": """#!/bin/sh
echo "cuobjdump $*" >> "$CALLS"
case "$1" in --dump-sass) cat "$DATA/t3/sass.txt" ;; -res-usage) cat "$DATA/t3/res_usage.txt" ;; esac
""",
}


def test_installed_agent_steps_from_another_directory(tmp_path):
    """The installed agent's three steps, as its instructions spell them, run from a directory that is neither
    the repository nor the install, on the H200 captures of cu_transpose_conflict; `kernel-profiler critique`
    accepts the answer they lead to."""
    import lzma
    import os
    import shutil
    import subprocess
    import sys

    data = tmp_path / "h200"
    for f in PROFILE_SH_DATA.rglob("*.xz"):
        target = data / f.relative_to(PROFILE_SH_DATA).with_suffix("")
        target.parent.mkdir(parents=True, exist_ok=True)
        with lzma.open(f) as fi, open(target, "wb") as fo:
            shutil.copyfileobj(fi, fo)
    install(tmp_path / "project")
    body = (tmp_path / "project" / ".claude" / "agents" / "kernel-profiler.md").read_text()
    steps = ["kernel-profiler profile nsys CMD", "KERNEL=regex kernel-profiler profile ncu CMD",
             "kernel-profiler profile sass BINARY_OR_CUBIN", "kernel-profiler critique ANSWER.md --artifacts"]
    for step in steps:
        assert step in body, step
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, script in STAND_INS.items():
        (bin_dir / name).write_text(script)
        (bin_dir / name).chmod(0o755)
    kp = bin_dir / "kernel-profiler"  # this checkout's CLI, whatever the test runner's PATH holds
    kp.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m kernel_profiler.cli "$@"\n')
    kp.chmod(0o755)
    work = tmp_path / "elsewhere"
    work.mkdir()
    (work / "transpose").write_bytes(b"\x7fELF stand-in: cuobjdump above reads the H200 SASS")
    env = {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin", "DATA": str(data), "CALLS": str(tmp_path / "calls.log"),
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}

    def step(*args, **extra):
        return subprocess.run(list(args), capture_output=True, text=True, cwd=work, env={**env, **extra}, timeout=300)

    t1 = step("kernel-profiler", "profile", "nsys", "./transpose", OUT="t1")
    assert t1.returncode == 0 and "transpose_tile" in t1.stdout, t1.stderr
    t2 = step("kernel-profiler", "profile", "ncu", "./transpose", OUT="t2", KERNEL="transpose_tile")
    assert t2.returncode == 0 and "shared_bank_conflict" in t2.stdout, t2.stderr
    t3 = step("kernel-profiler", "profile", "sass", "transpose", OUT="t3")
    assert t3.returncode == 0 and "LDS" in t3.stdout, t3.stderr
    calls = (tmp_path / "calls.log").read_text()
    assert "-k regex:transpose_tile" in calls and "-s 3 -c 1" in calls  # the script passed the agent's KERNEL on
    answer = step("kernel-profiler", "analyze", "t1", "t2", "t3", "--format", "md")
    assert answer.returncode == 0
    (work / "answer.md").write_text(answer.stdout)
    ok = step("kernel-profiler", "critique", "answer.md", "--artifacts", "t1", "t2", "t3")
    assert ok.returncode == 0 and ok.stdout.startswith("ACCEPT"), ok.stdout
    assert "bank conflict" in answer.stdout.lower()
    # The answer the same steps produced on the H200 is accepted against these captures too.
    (work / "h200.md").write_text((data / "answer.md").read_text())
    assert step("kernel-profiler", "critique", "h200.md", "--artifacts", "t1", "t2", "t3").returncode == 0
    # A wrong answer is rejected: the check can fail.
    head, ev = answer.stdout.split("## Evidence", 1)
    ev, tail = ev.split("## Mechanism", 1)
    # Every measured number in the Evidence lines ten times what the captures hold.
    def tenfold(m: re.Match) -> str:
        v = float(m.group().replace(",", "")) * 10
        return f"{int(v):,}" if v == int(v) else f"{v:g}"

    ev = re.sub(r"(?<![\w./])\d[\d,]*(?:\.\d+)?(?![\w/])", tenfold, ev)  # numbers, not names or paths
    (work / "wrong.md").write_text(head + "## Evidence" + ev + "## Mechanism" + tail)
    assert step("kernel-profiler", "critique", "wrong.md", "--artifacts", "t1", "t2", "t3").returncode == 1
    assert sorted(p.name for p in work.iterdir()) == ["answer.md", "h200.md", "t1", "t2", "t3", "transpose", "wrong.md"]


# ---------------------------------------------------------------- the real Claude Code CLI loads what install wrote
class _StandInMessagesAPI:
    """A local stand-in for the Messages API, for the Claude Code CLI to talk to in a test: it records each request
    and answers the main session once with a call of the Agent tool for `subagent`, everything else with "ok".
    It checks what the CLI sends (the subagent's prompt, tools and preloaded skills); no model is involved and
    nothing here is presented as a Claude session."""

    def __init__(self, subagent: str):
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.requests: list[dict] = []
        self.subagent, self.spawned = subagent, False
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                self.send_response(404)
                self.end_headers()

            def do_POST(self):
                n = int(self.headers.get("content-length") or 0)
                try:
                    req = json.loads(self.rfile.read(n) or b"{}")
                except ValueError:
                    req = {}
                api.requests.append(req)
                if not self.path.startswith("/v1/messages") or "count_tokens" in self.path or not req.get("stream"):
                    body = json.dumps({"input_tokens": 1} if "count_tokens" in self.path else {
                        "id": "msg_stand_in", "type": "message", "role": "assistant", "model": req.get("model", ""),
                        "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
                        "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}).encode()
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.end_headers()
                    self.wfile.write(body)
                    return
                spawn = not api.spawned and "Agent" in [t.get("name") for t in req.get("tools", [])]
                api.spawned |= spawn
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()

                def ev(kind, data):
                    self.wfile.write(f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode())

                ev("message_start", {"message": {"id": "msg_stand_in", "type": "message", "role": "assistant",
                                                  "model": req.get("model", ""), "content": [], "stop_reason": None,
                                                  "stop_sequence": None,
                                                  "usage": {"input_tokens": 1, "output_tokens": 1}}})
                if spawn:
                    call = {"subagent_type": api.subagent, "description": "profile", "prompt": "Why is ./app slow?",
                            "run_in_background": False}
                    ev("content_block_start", {"index": 0, "content_block": {"type": "tool_use", "id": "toolu_1",
                                                                             "name": "Agent", "input": {}}})
                    ev("content_block_delta", {"index": 0, "delta": {"type": "input_json_delta",
                                                                     "partial_json": json.dumps(call)}})
                else:
                    ev("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}})
                    ev("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": "ok"}})
                ev("content_block_stop", {"index": 0})
                ev("message_delta", {"delta": {"stop_reason": "tool_use" if spawn else "end_turn",
                                               "stop_sequence": None}, "usage": {"output_tokens": 1}})
                ev("message_stop", {})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def _claude_cli() -> str:
    import os
    import shutil

    exe = shutil.which("claude")
    if exe is None:
        if os.environ.get("KP_REQUIRE_CLAUDE_CODE"):  # set by .ci/run, which installs the CLI
            pytest.fail("the Claude Code CLI is not on PATH although KP_REQUIRE_CLAUDE_CODE is set")
        pytest.skip("the Claude Code CLI is not installed (npm install -g @anthropic-ai/claude-code)")
    return exe


@pytest.mark.parametrize("where", ["project", "user", "plugin"])
def test_claude_code_gives_the_subagent_its_tools_and_skills(tmp_path, where):
    """With the real CLI: the installed subagent (project or --user install, or the plugin from the repository's
    marketplace) starts with Read/Write/Edit/Bash and both skills, each with a base directory that holds the
    pages its instructions name, whatever the working directory."""
    import os
    import subprocess

    claude = _claude_cli()
    home, work = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))}
    env.update(HOME=str(home), ANTHROPIC_API_KEY="sk-stand-in", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")

    def cli(*args, **kw):
        return subprocess.run([claude, *args], capture_output=True, text=True, env={**env, **kw}, cwd=work,
                              timeout=240)

    subagent = "kernel-profiler"
    if where == "project":
        install(work)
    elif where == "user":
        install(home)
    else:
        assert cli("plugin", "marketplace", "add", str(ROOT)).returncode == 0
        p = cli("plugin", "install", "kernel-profiler@kernel-profiler")
        assert p.returncode == 0, p.stdout + p.stderr
        subagent = "kernel-profiler:kernel-profiler"
    api = _StandInMessagesAPI(subagent)
    try:
        p = cli("-p", "Why is ./app slow?", "--model", "claude-opus-4-8", ANTHROPIC_BASE_URL=api.url)
    finally:
        api.close()
    assert p.returncode == 0, p.stdout + p.stderr

    def text(blocks) -> str:
        return blocks if isinstance(blocks, str) else "\n".join(b.get("text", "") for b in blocks or []
                                                                 if isinstance(b, dict))

    sub = [r for r in api.requests if "Your job is to establish" in text(r.get("system"))]
    assert sub, f"the CLI never started the subagent ({len(api.requests)} requests)"
    tools = {t.get("name") for t in sub[0].get("tools", [])}
    assert {"Read", "Write", "Edit", "Bash"} <= tools, tools
    first = text(sub[0]["messages"][0]["content"])
    bases = {name: Path(path) for path, name in re.findall(r"Base directory for this skill: (\S+?/skills/([a-z-]+))\s",
                                                           first)}
    assert set(bases) == {"kernel-optimization", "gpu-performance-engineering"}, first[:500]
    assert (bases["kernel-optimization"] / "profiling.md").is_file()
    assert (bases["kernel-optimization"] / "ref" / "ptx-sass-hopper.md").is_file()
    assert (bases["gpu-performance-engineering"] / "roofline.md").is_file()
    expected = {"project": work / ".claude", "user": home / ".claude", "plugin": None}[where]
    if expected is not None:
        assert all(b.parent.parent == expected for b in bases.values())
