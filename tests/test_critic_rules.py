"""The critic's matching and signature rules, one by one, on real H200 captures.

Every value below is read from the captures at test time (ncu metrics, the nsys sqlite, ptxas), never
typed in; every rule that lets a correct answer through has a twin it must still reject.
"""
from __future__ import annotations

import sqlite3

import pytest

from kernel_profiler import signatures as catalog  # signatures: Measured, check, PRESENT/ABSENT
from kernel_profiler.analysis.engine import diagnose
from kernel_profiler.artifacts import load_paths
from kernel_profiler.critic import critique, parse_answer
from kernel_profiler.critic.form import fix_metric_direction

DUR = "gpu__time_duration.sum"


@pytest.fixture(scope="module")
def case(captures):
    cache = {}

    def get(name):
        if name not in cache:
            d = captures.case_dir(name)
            arts = load_paths([d])
            cache[name] = (d, arts, diagnose(arts))
        return cache[name]
    return get


def kernel(arts, name):
    return max((k for k in arts.kernel_profiles if name in k.name and k.source.endswith(".ncu-rep")),
               key=lambda k: len(k.metrics))


def answer(bottleneck, evidence, mechanism, fix):
    ev = "\n".join(f"- {e}" for e in evidence)
    return f"## Bottleneck\n{bottleneck}\n\n## Evidence\n{ev}\n\n## Mechanism\n{mechanism}\n\n## Fix\n{fix}\n"


def verdict(c, text):
    _, arts, dg = c
    return critique(parse_answer(text), arts, dg, raw=text)


def numbers_ok(v, written):
    """The verdict found `written` (a number of the answer) matched by a fact or a declared derivation."""
    hits = [n for n in v.numbers if n.written.replace(" ", "") == written.replace(" ", "")]
    assert hits, [n.written for n in v.numbers]
    return all(n.fact or n.derivation for n in hits)


# ----------------------------------------------------------------------------- the softmax (uncoalesced loads)
def softmax(c, mech_extra, bw_sentence):
    _, arts, dg = c
    k = kernel(arts, "softmax_rows")
    m = k.metrics
    bps = m["smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"]
    return answer(
        "`softmax_rows` is memory-bound on uncoalesced global loads.",
        [f"{bps:.0f} useful bytes per 32-byte sector (`smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio`, "
         f"ncu.ncu-rep)",
         f"kernel duration {m[DUR] / 1e3:.1f} us (`{DUR}`, ncu.ncu-rep)"],
        f"Adjacent lanes read different rows, so each warp load touches many sectors and most fetched bytes are "
        f"wasted. {bw_sentence} The kernel runs {dg.roofline.gap:.1f}x its memory roofline floor.{mech_extra}",
        f"One warp per row with coalesced loads. `smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio` "
        f"should go up from {bps:.0f} to 32.")


def _device_bandwidth(d):
    con = sqlite3.connect(d / "nsys.sqlite")
    try:
        return float(con.execute("select memoryBandwidth from TARGET_INFO_GPU").fetchone()[0])
    finally:
        con.close()


def test_a_ceiling_matches_as_a_reference_never_as_achieved(case):
    c = case("cu_softmax_naive")
    d, arts, _ = c
    bw = _device_bandwidth(d)
    got = kernel(arts, "softmax_rows").metrics["dram__bytes.sum.per_second"]
    ok = verdict(c, softmax(c, "", f"DRAM delivers only {got / 1e12:.2f} TB/s of its {bw / 1e12:.2f} TB/s."))
    assert ok.verdict == "accept", ok.reasons
    assert any(n.fact and n.fact.startswith(("device.dram_bandwidth", "ceiling.dram")) for n in ok.numbers), ok.numbers
    bad = verdict(c, softmax(c, "", f"DRAM achieves {bw / 1e12:.2f} TB/s."))
    assert bad.verdict == "reject" and any(f"{bw / 1e12:.2f} TB/s" in r for r in bad.reasons), bad.reasons


def test_complement_of_a_ratio_with_an_architecture_constant(case):
    c = case("cu_softmax_naive")
    _, arts, _ = c
    bps = kernel(arts, "softmax_rows").metrics["smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"]
    wasted = 100 * (1 - round(bps) / 32)
    ok = verdict(c, softmax(c, f" So {wasted:.1f}% of each 32-byte sector is thrown away.", ""))
    assert ok.verdict == "accept", ok.reasons
    assert any(n.derivation and "complement" in n.derivation for n in ok.numbers), ok.numbers
    bad = verdict(c, softmax(c, f" So {wasted - 25:.1f}% of each 32-byte sector is thrown away.", ""))
    assert bad.verdict == "reject", bad.reasons


def test_time_at_the_device_bandwidth_is_a_declared_derivation(case):
    c = case("cu_softmax_naive")
    d, arts, _ = c
    bw = _device_bandwidth(d)
    moved = kernel(arts, "softmax_rows").metrics["dram__bytes_read.sum"]  # the reads alone: no roofline fact
    floor_us = moved / bw * 1e6
    text = "Its {:.0f} MB of DRAM reads alone would take about {:.0f} us at {:.2f} TB/s."
    ok = verdict(c, softmax(c, "", text.format(moved / 1e6, floor_us, bw / 1e12)))
    assert ok.verdict == "accept", ok.reasons
    assert any(n.derivation and "rate or ceiling" in n.derivation for n in ok.numbers), ok.numbers
    bad = verdict(c, softmax(c, "", text.format(moved / 1e6, floor_us * 1.5, bw / 1e12)))
    assert bad.verdict == "reject", bad.reasons


# ----------------------------------------------------------------------------- the histogram (atomics)
def test_a_cited_count_times_the_warp_size(case):
    c = case("cu_histogram_atomic")
    _, arts, dg = c
    m = kernel(arts, "histogram").metrics
    red = m["l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"]

    def text(lanes):
        return answer(
            "`histogram` is latency-bound on contended global atomics.",
            [f"{red:,.0f} global RED requests (`l1tex__t_requests_pipe_lsu_mem_global_op_red.sum`, ncu.ncu-rep); at "
             f"32 lanes per warp request that is {red * lanes:,.0f} atomic adds.",
             f"kernel duration {m[DUR] / 1e6:.2f} ms (`{DUR}`, ncu.ncu-rep)"],
            "All updates go to 4 addresses, so the L2 applies them one after another and warps stall waiting; the "
            f"kernel runs {dg.roofline.gap:.0f}x its memory roofline floor.",
            "Privatize the counts in shared memory. `l1tex__t_requests_pipe_lsu_mem_global_op_red.sum` should go "
            "down by 100x.")
    ok = verdict(c, text(32))
    assert ok.verdict == "accept", ok.reasons
    assert numbers_ok(ok, f"{red * 32:,.0f} atomic")
    bad = verdict(c, text(16))
    assert bad.verdict == "reject", bad.reasons


# ----------------------------------------------------------------------------- API statistics (nsys)
def _api_mean_ns(d, function):
    con = sqlite3.connect(d / "nsys.sqlite")
    try:
        return con.execute("select avg(r.end - r.start) from CUPTI_ACTIVITY_KIND_RUNTIME r join StringIds s "
                           "on s.id = r.nameId where s.value like ?", (function + "%",)).fetchone()[0]
    finally:
        con.close()


def tiny(c, api_line):
    _, _, dg = c
    s = dg.timeline
    return answer(
        "The program is host-bound on launch overhead: tiny kernels issued one by one.",
        [f"GPU busy {s.busy_fraction:.0%} of the {s.window_ns / 1e6:.3f} ms steady window (nsys.sqlite timeline)",
         api_line],
        "Each launch costs more host time than the kernel runs, so the GPU drains its queue and sits idle between "
        "launches; the step time is set by the launch rate, not by any kernel roofline.",
        "Capture the step in a CUDA graph. The GPU busy fraction should go up toward 90%.")


def test_api_call_statistics_are_facts_of_the_function_they_name(case):
    c = case("cu_tiny_launches")
    d = c[0]
    mean = _api_mean_ns(d, "cudaLaunchKernel")
    ok = verdict(c, tiny(c, f"`cudaLaunchKernel` costs {mean / 1e3:.2f} us of host time on average (nsys.sqlite)."))
    assert ok.verdict == "accept", ok.reasons
    assert any(n.fact and n.fact.startswith("api.cudaLaunchKernel.mean_ns") for n in ok.numbers), ok.numbers
    other = verdict(c, tiny(c, f"`cudaMemcpyAsync` costs {mean / 1e3:.2f} us of host time on average (nsys.sqlite)."))
    assert other.verdict == "reject", other.reasons  # the right value of the wrong function
    off = verdict(c, tiny(c, f"`cudaLaunchKernel` costs {mean * 1.3 / 1e3:.2f} us of host time on average."))
    assert off.verdict == "reject", off.reasons


# ----------------------------------------------------------------------------- ptxas facts: bytes, stack, spill
def spill(c, line):
    _, arts, dg = c
    m = kernel(arts, "many_accumulators").metrics
    return answer(
        "`many_accumulators` is memory-bound on register spills to local memory.",
        [line, f"kernel duration {m[DUR] / 1e6:.2f} ms (`{DUR}`, ncu.ncu-rep)"],
        "With a 32-register cap the compiler keeps the accumulators on the stack, so every round reloads and stores "
        f"them through L1/L2 to DRAM; the kernel runs {dg.roofline.gap:.1f}x its memory roofline floor.",
        "Remove the register cap. `l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum` should go down to ~0.")


def test_spill_bytes_are_not_the_stack_size(case):
    c = case("ho_register_spill")
    _, arts, _ = c
    r = next(r for r in arts.resources if "many_accumulators" in r.name)
    stack_limit = kernel(arts, "many_accumulators").metrics["launch__stack_size"]
    assert stack_limit != r.spill_store_bytes  # the two differ in this capture
    ok = verdict(c, spill(c, f"ptxas reports {r.spill_store_bytes} bytes of spill stores (ptxas.log)."))
    assert ok.verdict == "accept", ok.reasons
    bad = verdict(c, spill(c, f"ptxas reports {stack_limit:.0f} bytes of spill stores (ptxas.log)."))
    assert bad.verdict == "reject", bad.reasons


def test_a_byte_size_never_matches_a_register_count(case):
    c = case("cu_local_array")
    _, arts, dg = c
    m = kernel(arts, "table_lookup").metrics
    r = next(r for r in arts.resources if "table_lookup" in r.name)
    regs = m["device__attribute_max_registers_per_thread"]

    def text(stack):
        return answer("`table_lookup` keeps a run-time-indexed array in local memory.",
                      [f"ptxas reports a {stack:.0f}-byte stack frame for `table_lookup` (ptxas.log).",
                       f"kernel duration {m[DUR] / 1e6:.2f} ms (`{DUR}`, ncu.ncu-rep)"],
                      f"A {stack:.0f}-byte array indexed at run time cannot be register-allocated, so every access "
                      f"goes to local memory; the kernel runs {dg.roofline.gap:.1f}x its memory roofline floor.",
                      "Move the table to shared memory. `l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum` should go "
                      "down to ~0.")
    assert abs(regs + 1 - 2 * r.stack_bytes) < 2  # the invented size (a power of two) is next to the register limit
    ok = verdict(c, text(r.stack_bytes))
    assert ok.verdict == "accept", ok.reasons
    bad = verdict(c, text(regs + 1))
    assert bad.verdict == "reject", bad.reasons


# ----------------------------------------------------------------------------- signatures
def test_occupancy_needs_latency_the_warps_do_not_hide(case):
    lib = kernel(case("py_matmul_fp32")[1], "gemm")
    st, why = catalog.check("occupancy_limit", catalog.Measured(profile=lib, name=lib.name))
    assert lib.metrics["sm__warps_active.avg.pct_of_peak_sustained_active"] < 20  # occupancy is low ...
    assert st == catalog.ABSENT and "issue" in why, why  # ... but the schedulers issue nearly every cycle
    smem = kernel(case("cu_smem_occupancy")[1], "")
    st, why = catalog.check("occupancy_limit", catalog.Measured(profile=smem, name=smem.name))
    assert st == catalog.PRESENT, why


def test_transfer_volume_is_contradicted_by_pageable_copies(case):
    pageable = catalog.check("transfer_volume", catalog.Measured(timeline=case("cu_pageable_copy")[2].timeline,
                                                                 program={"timeline.pageable_share": 1.0}))
    assert pageable[0] == catalog.ABSENT and "pageable" in pageable[1]
    c = case("cu_pageable_copy")
    text = answer("The run is transfer-bound by sheer volume; the copies already run at link speed.",
                  [f"Copies take {c[2].timeline.copy_ns / 1e6:.2f} ms of the steady window (nsys.sqlite)."],
                  "The copies move at the bandwidth the host link allows, so the step time is bytes / link bandwidth "
                  "and only the volume matters; the GPU is idle otherwise.",
                  "Send less data. Copy time should go down 2x.")
    v = verdict(c, text)
    assert v.verdict == "reject" and any("pageable" in r for r in v.reasons), v.reasons
    pinned = case("cu_pinned_copy")
    v = verdict(pinned, text.replace(f"{c[2].timeline.copy_ns / 1e6:.2f}", f"{pinned[2].timeline.copy_ns / 1e6:.2f}"))
    assert v.checks["signature"], v.reasons  # pinned copies at the link's rate: volume is the claim to make


# ----------------------------------------------------------------------------- the fix's direction
@pytest.mark.parametrize("fix, direction", [
    ("Expect GPU idle time to go down from 77.28 ms toward a few ms per window and GPU busy to go up from 49% "
     "toward 90%.", "decrease"),
    ("Expect GPU idle time to go up and GPU busy to go down from 49% toward 10%.", "increase"),
])
def test_the_fix_direction_is_read_from_the_clause_of_its_metric(fix, direction):
    assert fix_metric_direction(fix) == ("idle time", direction)


# ----------------------------------------------------------------------------- a lane stride, an inequality, clauses
def test_a_lane_stride_must_imply_the_measured_sectors_per_request(case):
    c = case("cu_softmax_naive")
    _, arts, _ = c
    m = kernel(arts, "softmax_rows").metrics
    spr = m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] / m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]
    assert spr > 31  # every lane in its own sector: any stride of 32 bytes or more
    ok = verdict(c, softmax(c, " Adjacent lanes read rows 2 KB apart, so a warp load touches one sector per lane.", ""))
    assert ok.verdict == "accept", ok.reasons
    assert any(n.derivation and "lane stride" in n.derivation for n in ok.numbers), ok.numbers
    bad = verdict(c, softmax(c, " Adjacent lanes read rows 16 bytes apart, so a warp load touches many sectors.", ""))
    assert bad.verdict == "reject", bad.reasons  # 16-byte strides would give 16 sectors per request


def test_an_inequality_holds_for_a_declared_derivation(case):
    from kernel_profiler.devices import lookup

    c = case("cu_sgemm_fp32")
    _, arts, dg = c
    k = kernel(arts, "sgemm_tiled")
    tf32 = lookup(k.device or dg.device).tf32_tensor
    flops = dg.roofline.flops

    def text(bound_ms):
        return answer(
            "`sgemm_tiled` runs its FP32 matrix product on the FMA pipe while the tensor cores are idle.",
            [f"Tensor pipe active {k.metrics['sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active']:.2f}% "
             f"of peak (`sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active`, ncu.ncu-rep)",
             f"kernel duration {k.metrics[DUR] / 1e6:.2f} ms (`{DUR}`, ncu.ncu-rep)"],
            f"All the math runs as FFMA instructions, so the kernel is far from the tensor-core roofline: at the "
            f"datasheet TF32 peak of {tf32 / 1e12:.0f} TFLOP/s its {flops / 1e9:.1f} GFLOP would need well under "
            f"{bound_ms:g} ms.",
            "Use a TF32 tensor-core GEMM (cuBLAS). `sm__pipe_tensor_cycles_active` should go up from ~0% to above 50%.")
    need_ms = flops / tf32 * 1e3
    ok = verdict(c, text(round(need_ms * 3, 1)))
    assert ok.verdict == "accept", ok.reasons
    assert any(n.derivation and "upper bound" in n.derivation for n in ok.numbers), ok.numbers
    bad = verdict(c, text(round(need_ms / 2, 2)))
    assert bad.verdict == "reject", bad.reasons  # the derived time is above the claimed bound


def test_program_time_words_belong_to_their_own_clause(case):
    c = case("cu_transpose_conflict")
    _, arts, dg = c
    k = kernel(arts, "transpose_tile")
    med = next(r.median_ns for r in dg.timeline.top_kernels if "transpose_tile" in r.name)
    line = (f"{k.metrics[DUR] / 1e3:.1f} us per launch (`{DUR}`, ncu.ncu-rep); {med / 1e3:.1f} us median in the "
            f"application (nsys.sqlite)")
    text = answer("`transpose_tile` is bound by shared-memory bank conflicts.", [line],
                  "The warp reads a column of the tile, so all 32 lanes hit one bank and each load is replayed as "
                  f"32 wavefronts; the kernel runs {dg.roofline.gap:.1f}x its memory roofline floor.",
                  "Pad the tile to float[32][33]. Bank conflicts should go down to ~0.")
    ok = verdict(c, text)
    assert ok.checks["replay_time"], ok.reasons
    bad = verdict(c, text.replace(line, f"the application takes {k.metrics[DUR] / 1e3:.1f} us per step"))
    assert not bad.checks["replay_time"], bad.reasons


def test_a_number_derived_in_one_place_is_an_operand_elsewhere(case):
    c = case("cu_tiny_launches")
    _, _, dg = c
    s = dg.timeline
    row = max(s.top_kernels, key=lambda r: r.count)
    per_launch = s.window_ns / row.count

    def text(times):
        return tiny(c, f"{s.window_ns / 1e6:.3f} ms window / {row.count:,} launches = {per_launch / 1e3:.2f} us per "
                       f"launch, {times:.1f}x the median kernel of {row.median_ns:.0f} ns (nsys.sqlite).")
    ok = verdict(c, text(per_launch / row.median_ns))
    assert ok.verdict == "accept", ok.reasons
    derived = {n.written.replace(" ", ""): n.derivation for n in ok.numbers}
    assert derived[f"{per_launch / 1e3:.2f}us"] == "per-launch/per-step division"
    assert derived[f"{per_launch / row.median_ns:.1f}x"] == "ratio of two cited values"
    bad = verdict(c, text(per_launch / row.median_ns * 1.4))
    assert bad.verdict == "reject", bad.reasons
