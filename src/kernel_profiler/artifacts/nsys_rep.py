"""Nsight Systems `.nsys-rep` reports: exported to sqlite with `nsys` when it is installed.

The report format is private to Nsight Systems; the only supported way to read
it is `nsys export --type sqlite`. The export is written next to a temporary
copy, never over the user's files.
"""
from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from ..errors import ArtifactError, ToolMissing
from ..toolpaths import find_nsys
from . import nsys_sqlite
from .tables import Timeline

MAGIC = b"NVIDIA Tegra Profiler Report"  # what .nsys-rep files start with (also on x86 hosts)
def sniff(path: Path, head: bytes) -> bool:
    return head.startswith(MAGIC)


def load(path: Path) -> Timeline:
    nsys = find_nsys()
    if nsys is None:
        raise ToolMissing(
            f"{path}: reading a .nsys-rep needs Nsight Systems (`nsys`), which is not installed here; "
            f"export it where nsys is (`nsys export --type sqlite -o {Path(path).stem}.sqlite {Path(path).name}`) "
            f"and pass the .sqlite instead"
        )
    with tempfile.TemporaryDirectory(prefix="kp-nsys-") as tmp:
        out = Path(tmp) / (Path(path).stem + ".sqlite")
        try:
            p = subprocess.run([nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "-o", str(out),
                                str(path)], capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired as e:
            raise ArtifactError(path, "nsys export took more than 10 minutes") from e
        if p.returncode != 0 or not out.exists():
            last = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["no output"]
            raise ArtifactError(path, f"nsys export failed: {last[0]}")
        tl = nsys_sqlite.load(out)
        tl.source = str(path)
        return tl
