"""nvcc -Xptxas -v log reader."""
from __future__ import annotations

import shutil

import pytest

from kernel_profiler.artifacts import ptxas, sass
from kernel_profiler.errors import ArtifactError, UnknownFormat


def test_local_array_stack_frame(captures):
    log = {r.mangled: r for r in ptxas.load(captures.path("cu_local_array", "ptxas.log"))}
    res = {r.mangled: r for r in sass.load(captures.path("cu_local_array", "res_usage.txt"))}
    k = log["_Z12table_lookupPKiPKfPfi"]
    assert k.stack_bytes == res[k.mangled].stack_bytes == 128  # cuobjdump agrees
    assert k.spill_store_bytes == 0 and k.spill_load_bytes == 0  # a local array, not a spill
    assert k.arch == "sm_90a"
    fixed = ptxas.load(captures.path("cu_local_array_fixed", "ptxas.log"))
    assert all(r.stack_bytes == 0 for r in fixed)


def test_demangled_names(captures):
    rs = ptxas.load(captures.path("cu_local_array", "ptxas.log"))
    k = next(r for r in rs if r.mangled == "_Z12table_lookupPKiPKfPfi")
    if shutil.which("c++filt"):
        assert k.name.startswith("table_lookup(")
    else:
        assert k.name == k.mangled


def test_old_format_and_spills(tmp_path):
    text = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z6kernelPf' for 'sm_80'
ptxas info    : Function properties for _Z6kernelPf
    384 bytes stack frame, 380 bytes spill stores, 380 bytes spill loads
ptxas info    : Used 31 registers, 4096 bytes smem, 360 bytes cmem[0]
"""
    p = tmp_path / "old.log"
    p.write_text(text)
    assert ptxas.sniff(p, p.read_bytes())
    (r,) = ptxas.load(p)
    assert (r.registers, r.stack_bytes, r.spill_store_bytes, r.spill_load_bytes, r.shared_bytes, r.arch) == (
        31, 384, 380, 380, 4096, "sm_80")


def test_bad_files(tmp_path, captures):
    cases = {
        "empty.log": ("", ArtifactError),
        "other.log": ("just some compiler output\n", UnknownFormat),
        "sass.log": (captures.path("cu_local_array", "sass.txt").read_text()[:3000], UnknownFormat),
    }
    for name, (data, exc) in cases.items():
        p = tmp_path / name
        p.write_text(data)
        with pytest.raises(exc) as e:
            ptxas.load(p)
        assert name in str(e.value)
