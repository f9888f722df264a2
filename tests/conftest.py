"""Shared fixtures: real H200 captures from tests/data, decompressed on demand."""
from __future__ import annotations

import gzip
import lzma
import shutil
import tomllib
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
CAPTURES = DATA / "captures"
SUITE = Path(__file__).parent.parent / "suite" / "cases.toml"


def suite_cases() -> list[dict]:
    """Ground truth of the capture suite (suite/cases.toml)."""
    return tomllib.loads(SUITE.read_text())["case"]


class CaptureStore:
    """Decompresses tests/data/captures/<case>/<file>.xz into a temporary folder once."""

    def __init__(self, root: Path):
        self.root = root

    def path(self, case: str, name: str) -> Path:
        out = self.root / case / name
        if out.exists():
            return out
        src = CAPTURES / case / name
        out.parent.mkdir(parents=True, exist_ok=True)
        if src.exists():  # stored as is (e.g. trace.json.gz)
            shutil.copy(src, out)
            return out
        xz = CAPTURES / case / (name + ".xz")
        if not xz.exists():
            raise FileNotFoundError(f"no test capture {case}/{name}")
        with lzma.open(xz) as fi, open(out, "wb") as fo:
            shutil.copyfileobj(fi, fo)
        return out

    def has(self, case: str, name: str) -> bool:
        return (CAPTURES / case / name).exists() or (CAPTURES / case / (name + ".xz")).exists()

    def case_dir(self, case: str) -> Path:
        """Every file of a case, decompressed, in one folder."""
        for f in (CAPTURES / case).rglob("*"):
            if f.is_file():
                rel = f.relative_to(CAPTURES / case)
                name = str(rel)[:-3] if f.suffix == ".xz" else str(rel)
                self.path(case, name)
        return self.root / case


@pytest.fixture(scope="session")
def captures(tmp_path_factory) -> CaptureStore:
    return CaptureStore(tmp_path_factory.mktemp("captures"))


@pytest.fixture(scope="session")
def cases() -> list[dict]:
    return suite_cases()


def gunzip_text(path: Path) -> str:
    with gzip.open(path, "rt") as f:
        return f.read()
