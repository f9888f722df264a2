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
    assert (claude / "tools" / "profile.sh").stat().st_mode & 0o111
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
    f = tmp_path / ".claude" / "tools" / "profile.sh"
    f.write_text("changed\n")
    install(tmp_path, force=True)
    assert f.read_text() != "changed\n"
