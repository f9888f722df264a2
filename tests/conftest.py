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
        gz = CAPTURES / case / (name + ".gz")
        if not xz.exists() and gz.exists():  # "trace.json": the stored trace.json.gz, decompressed
            with gzip.open(gz) as fi, open(out, "wb") as fo:
                shutil.copyfileobj(fi, fo)
            return out
        if not xz.exists():
            raise FileNotFoundError(f"no test capture {case}/{name}")
        with lzma.open(xz) as fi, open(out, "wb") as fo:
            shutil.copyfileobj(fi, fo)
        return out

    def has(self, case: str, name: str) -> bool:
        return any((CAPTURES / case / (name + ext)).exists() for ext in ("", ".xz", ".gz"))

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


WILD = DATA / "wild"  # profiler files from other people's machines, copied where their licence allows
ROOT = Path(__file__).resolve().parents[1]
# The rest are read from the project's shared folder beside the clone (CI) or beside a worktree's parent.
SHARED_WILD = [ROOT / ".." / "shared" / "wild-formats", ROOT / ".." / ".." / "shared" / "wild-formats"]


def wild_path(name: str) -> Path:
    """A wild-format sample: tests/data/wild/ first, else ../shared/wild-formats/; skip (saying why) if absent."""
    for d in [WILD, *SHARED_WILD]:
        if (d / name).is_file():
            return d / name
    pytest.skip(f"wild-format sample {name} is neither in tests/data/wild/ nor in ../shared/wild-formats/ "
                f"(its licence does not allow copying it into the repository)")


@pytest.fixture(scope="session")
def wild():
    return wild_path
