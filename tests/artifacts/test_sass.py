"""cuobjdump --dump-sass / nvdisasm / -res-usage readers on real captures."""
from __future__ import annotations

import pytest

from kernel_profiler.artifacts import ptxas, sass
from kernel_profiler.errors import ArtifactError, UnknownFormat


def _by_mangled(items):
    return {x.mangled: x for x in items}


def test_local_array_sass_has_local_memory(captures):
    funcs = _by_mangled(sass.load(captures.path("cu_local_array", "sass.txt")))
    res = _by_mangled(ptxas.load(captures.path("cu_local_array", "ptxas.log")))
    assert set(funcs) == set(res)  # independent: the ptxas log names the same kernels
    f = funcs["_Z12table_lookupPKiPKfPfi"]
    assert f.arch == "sm_90a"
    assert f.opcode_counts["LDL"] > 0 and f.opcode_counts["STL"] > 0
    assert sum(f.opcode_counts.values()) == len(f.instructions)
    ldg = [m for m in f.instructions if m.startswith("LDG")]
    assert ldg and all("." in m for m in ldg)  # modifiers kept (LDG.E...)
    # the fixed version has no local memory
    fixed = sass.load(captures.path("cu_local_array_fixed", "sass.txt"))
    assert all(x.opcode_counts.get("LDL", 0) == 0 for x in fixed)


def test_instruction_parsing():
    assert sass.parse_instruction("@!P0 LDG.E.128 R4, desc[UR4][R2.64]") == "LDG.E.128"
    assert sass.parse_instruction("  HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], R24") == "HGMMA.64x128x16.F32.BF16"
    assert sass.base_opcode("LDG.E.128") == "LDG"


def test_nvdisasm_style(tmp_path):
    text = """\t.headerflags\t@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
//--------------------- .text._Z3fooPf --------------------------
\t.section\t.text._Z3fooPf,"ax",@progbits
\t.global\t_Z3fooPf
_Z3fooPf:
.text._Z3fooPf:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/              @P0  LDG.E.128 R4, desc[UR4][R2.64] ;
.L_x_0:
        /*0020*/                   FFMA R0, R1, R2, R3 ;
        /*0030*/                   EXIT ;
"""
    p = tmp_path / "dis.txt"
    p.write_text(text)
    assert sass.sniff(p, p.read_bytes())
    (f,) = sass.load(p)
    assert f.mangled == "_Z3fooPf" and f.arch == "sm_90"
    assert f.instructions == ["LDC", "LDG.E.128", "FFMA", "EXIT"]


def test_triton_sass_and_res_usage(captures):
    (f,) = sass.load(captures.path("tr_atomic_hist", "triton/hist4.sass.txt"))
    (r,) = sass.load(captures.path("tr_atomic_hist", "triton/hist4.res_usage.txt"))
    assert f.mangled == r.mangled == "hist4"
    assert any(op.startswith(("ATOM", "RED")) for op in f.opcode_counts)


@pytest.mark.parametrize("case", ["cu_local_array", "cu_transpose_fixed", "cu_smem_occupancy"])
def test_res_usage_agrees_with_ptxas(captures, case):
    res = _by_mangled(sass.load(captures.path(case, "res_usage.txt")))
    log = _by_mangled(ptxas.load(captures.path(case, "ptxas.log")))
    assert res and set(res) == set(log)
    for k, r in res.items():
        assert r.registers == log[k].registers
        assert r.stack_bytes == log[k].stack_bytes
        assert r.arch == log[k].arch
    # cuobjdump's SHARED includes the driver-reserved shared memory per block;
    # ptxas prints the user's static smem only. Kernels that touch shared memory get
    # the reserve (1 KiB on sm_90: checked against ncu in the next test), others 0.
    gaps = {r.shared_bytes - log[k].shared_bytes for k, r in res.items()}
    assert gaps <= {0, 1024}


def test_res_usage_shared_includes_driver_reserve(captures):
    from kernel_profiler.artifacts import ncu_report
    (p,) = ncu_report.load(captures.path("cu_transpose_fixed", "ncu.ncu-rep"))
    res = {r.mangled: r for r in sass.load(captures.path("cu_transpose_fixed", "res_usage.txt"))}
    r = res[p.mangled]
    # ... and equals what ncu reports as static + driver shared memory per block
    assert r.shared_bytes == p.metrics["launch__shared_mem_per_block_static"] + p.metrics[
        "launch__shared_mem_per_block_driver"]
    assert r.registers == p.metrics["launch__registers_per_thread"]


def test_bad_files(tmp_path, captures):
    cases = {
        "empty.txt": (b"", ArtifactError),
        "binary.txt": (b"\x7fELF\x00\x00" * 100, UnknownFormat),
        "prose.txt": (b"hello world\n" * 10, UnknownFormat),
        "noinsn.txt": (b"\tcode for sm_90a\n\t\tFunction : foo\n", ArtifactError),
    }
    for name, (data, exc) in cases.items():
        p = tmp_path / name
        p.write_bytes(data)
        with pytest.raises(exc) as e:
            sass.load(p)
        assert name in str(e.value)


def test_sniffers_are_exclusive_on_real_files(captures):
    from kernel_profiler.artifacts import ncu_csv, ncu_report
    mods = {"ncu_report": ncu_report, "ncu_csv": ncu_csv, "sass": sass, "ptxas": ptxas}
    want = {"ncu.ncu-rep": ["ncu_report"], "ncu_raw.csv": ["ncu_csv"], "ncu_details.csv": ["ncu_csv"],
            "sass.txt": ["sass"], "res_usage.txt": ["sass"], "ptxas.log": ["ptxas"],
            "run.log": [], "nsys.sqlite": [], "meta.json": []}
    for name, expect in want.items():
        p = captures.path("cu_histogram_atomic", name)
        head = p.read_bytes()[:65536]
        assert [k for k, m in mods.items() if m.sniff(p, head)] == expect, name
