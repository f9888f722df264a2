"""How the critic reads a fix (critic/form.py `fix_metric_direction`, the catalog's fix metrics), on real captures.

Each rule has a twin that must still be rejected: the same answer whose fix moves the metric the wrong way.
"""
from __future__ import annotations

from critic_case import answer, case  # noqa: F401 (the fixture)

DUR = "gpu__time_duration.sum"
ST = ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")


def transpose(c, fix):
    m = c.metrics("naive_transpose")
    spr = m[ST[0]] / m[ST[1]]
    return answer(
        "`naive_transpose` is memory-bound on uncoalesced global stores.",
        [f"{m[ST[0]]:,.0f} store sectors for {m[ST[1]]:,.0f} store requests (`{ST[0]}` / `{ST[1]}`, ncu.ncu-rep) = "
         f"{spr:.1f} sectors per request",
         f"kernel duration {m[DUR] / 1e6:.2f} ms (`{DUR}`, ncu.ncu-rep)"],
        "Consecutive threads write addresses a whole row apart, so every warp store is split into separate sector "
        f"writes and most of each sector is wasted; the kernel runs {c.dg.roofline.stated_gap:.1f}x its memory "
        "roofline floor.", fix.format(spr=spr))


def test_the_fix_metric_is_the_one_given_a_direction_not_one_named_in_passing(case):
    c = case("ho_strided_store")
    fix = ("Transpose through a shared-memory tile padded to 33 columns, which avoids bank conflicts on the "
           "transposed read, so the stores become row-contiguous. Expect store sectors per request to go {} from "
           "{{spr:.0f}} to 4.")
    ok = c.critique(transpose(c, fix.format("down")))
    assert ok.verdict == "accept", ok.reasons
    bad = c.critique(transpose(c, fix.format("up").replace("from {spr:.0f} to 4", "from 4 to {spr:.0f}")))
    assert bad.verdict == "reject" and any("sectors per request" in r for r in bad.reasons), bad.reasons


def vec_copy(c, direction):
    m = c.metrics("scale_vec4")
    moved = m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"]
    return answer(
        "`scale_vec4` is done: it streams at its DRAM roofline, nothing is left to gain inside the kernel.",
        [f"kernel duration {m[DUR] / 1e3:.1f} us (`{DUR}`, ncu.ncu-rep)",
         f"{moved / 1e9:.2f} GB of DRAM traffic per launch (`dram__bytes_read.sum` + `dram__bytes_write.sum`)"],
        "A scale reads and writes each element once and has no reuse, so its floor is the DRAM bandwidth; it runs "
        f"{c.dg.roofline.stated_gap:.1f}x that floor, which is the usual DRAM efficiency loss.",
        f"Leave the kernel alone and reduce the work: store the data as bf16. Expect DRAM bytes per launch to go "
        f"{direction} about 2x.")


def test_a_near_peak_fix_may_reduce_the_work_it_moves(case):
    c = case("cu_vec_copy")
    ok = c.critique(vec_copy(c, "down"))
    assert ok.verdict == "accept", ok.reasons
    bad = c.critique(vec_copy(c, "up"))
    assert bad.verdict == "reject" and any("DRAM bytes" in r for r in bad.reasons), bad.reasons


# ----------------------------------------------------------------------------- fixes.py: what makes a fix wrong
def test_a_real_metric_that_is_not_the_mechanisms_own_is_judged_by_its_direction(case):
    c = case("ho_strided_store")
    ok = c.critique(transpose(c, "Transpose through a padded shared-memory tile so the stores are row-contiguous. "
                                 "Expect `gpu__dram_throughput` to go up and kernel time to fall about 3x."))
    assert ok.verdict == "accept", ok.reasons
    bad = c.critique(transpose(c, "Transpose through a padded shared-memory tile so the stores are row-contiguous. "
                                  "Expect `gpu__dram_throughput` to go down and kernel time to fall about 3x."))
    assert not bad.checks["fix"] and any("other way" in r for r in bad.reasons), bad.reasons


def test_a_launch_setting_or_another_resource_is_not_what_a_fix_of_the_cause_moves(case):
    c = case("ho_strided_store")
    setting = c.critique(transpose(c, "Launch twice the blocks: `launch__grid_size` should go up from 4096 to 8192."))
    assert not setting.checks["fix"] and any("setting" in r for r in setting.reasons), setting.reasons
    instructions = c.critique(transpose(c, "Store float4 values: `smsp__inst_executed.sum` should go down about 4x."))
    assert not instructions.checks["fix"] and any("measures compute" in r for r in instructions.reasons), \
        instructions.reasons
    ok = c.critique(transpose(c, "Transpose through a padded shared-memory tile: store sectors per request "
                                 "{spr:.0f} → 4."))
    assert ok.verdict == "accept", ok.reasons


def test_an_arrow_states_the_direction(case):
    c = case("ho_strided_store")
    ok = c.critique(transpose(c, "Transpose through a padded shared-memory tile. Bytes per sector for stores go "
                                 "4 → 32, and the store sectors drop about 8x."))
    assert ok.checks["fix"], ok.reasons
    bad = c.critique(transpose(c, "Transpose through a padded shared-memory tile. Bytes per sector for stores go "
                                  "32 → 4, and the store sectors drop about 8x."))
    assert not bad.checks["fix"], bad.reasons
