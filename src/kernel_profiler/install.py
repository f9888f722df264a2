"""`kernel-profiler install claude`: put the subagent and its skills into a `.claude/` tree.

A manifest (`.claude/.kernel-profiler-install.json`) records what was installed
and the hash of each file, so that a file the user changed since is never
overwritten without `force`, and `uninstall` removes only unchanged files it put there.
"""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from .errors import UsageError

MANIFEST = ".kernel-profiler-install.json"


def source_root() -> Path:
    """The repository (or plugin) folder holding agents/ and skills/."""
    here = Path(__file__).resolve()
    for cand in (here.parents[2], here.parent / "data" / "claude"):
        if (cand / "agents" / "kernel-profiler.md").is_file():
            return cand
    raise UsageError("cannot find the agents/ and skills/ folders: install kernel-profiler from a clone "
                     "of its repository (pip install -e .)")


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _remove(target: Path, claude: Path) -> None:
    """Delete a file put there by install, and the folders it leaves empty (up to .claude/)."""
    target.unlink()
    parent = target.parent
    while parent != claude and parent.exists() and not any(parent.iterdir()):
        parent.rmdir()
        parent = parent.parent


def planned(root: Path) -> dict[str, Path]:
    """Target path relative to .claude/ -> source file.

    Only the agent and the skills: the agent loads the skills by name (its `skills:` front matter, so Claude
    Code gives it each skill's base directory) and profiles with `kernel-profiler profile ...`, so nothing in
    it depends on where these files land or on the directory the session runs in.
    """
    files = {f"agents/{p.name}": p for p in sorted((root / "agents").glob("*.md"))}
    for p in sorted((root / "skills").rglob("*")):
        if p.is_file():
            files[f"skills/{p.relative_to(root / 'skills')}"] = p
    return files


def install(dest: Path, force: bool = False) -> dict[str, list[str]]:
    claude = dest / ".claude"
    man_path = claude / MANIFEST
    old = json.loads(man_path.read_text()) if man_path.exists() else {}
    report: dict[str, list[str]] = {"installed": [], "unchanged": [], "kept": [], "removed": []}
    new_manifest = dict(old)
    plan = planned(source_root())
    for rel in sorted(set(old) - set(plan)):  # put there by an older version (e.g. tools/profile.sh)
        target = claude / rel
        if target.exists() and _sha(target) == old[rel]:
            _remove(target, claude)
            report["removed"].append(rel)
            del new_manifest[rel]
        elif not target.exists():
            del new_manifest[rel]
    for rel, src in plan.items():
        target = claude / rel
        if target.exists():
            current = _sha(target)
            if current == _sha(src):
                report["unchanged"].append(rel)
                new_manifest[rel] = current
                continue
            if old.get(rel) != current and not force:  # the user's own file, or one they changed
                report["kept"].append(rel)
                continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
        new_manifest[rel] = _sha(target)
        report["installed"].append(rel)
    claude.mkdir(parents=True, exist_ok=True)
    man_path.write_text(json.dumps(new_manifest, indent=1, sort_keys=True))
    return report


def uninstall(dest: Path) -> dict[str, list[str]]:
    claude = dest / ".claude"
    man_path = claude / MANIFEST
    if not man_path.exists():
        raise UsageError(f"nothing to uninstall: {man_path} does not exist")
    manifest = json.loads(man_path.read_text())
    report: dict[str, list[str]] = {"removed": [], "kept": []}
    for rel, digest in manifest.items():
        target = claude / rel
        if not target.exists():
            continue
        if _sha(target) == digest:
            _remove(target, claude)
            report["removed"].append(rel)
        else:
            report["kept"].append(rel)
    man_path.unlink()
    return report
