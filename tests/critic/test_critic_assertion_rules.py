"""What an answer claims is the cause it asserts (critic/claim.py), on real H200 captures, each with a twin that
must be rejected: a good state a fix left ("loads are now coalesced") and a block's barrier are not claims of
uncoalesced access or host synchronization; a kernel near its roofline that the answer leaves alone claims
near_peak (the ceiling it names, "the tensor-core roof", is not a cause), and needs no metric to move only when
the captures put it at its roofline."""
from __future__ import annotations

from critic_case import answer, case  # noqa: F401 (the fixture)

from kernel_profiler.answer import Answer
from kernel_profiler.critic.claim import claimed_mechanism

DRAM = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"
DUR = "gpu__time_duration.sum"


def _transpose_fixed(c, bottleneck: str, fix: str = "") -> str:
    m, gap = c.metrics("transpose_tile"), c.dg.roofline.stated_gap
    return answer(
        bottleneck.format(dram=m[DRAM], gap=gap),
        [f"DRAM throughput {m[DRAM]:.1f}% of peak (`{DRAM}`, ncu.ncu-rep)",
         f"kernel duration {m[DUR] / 1e3:.1f} us (`{DUR}`, ncu.ncu-rep)"],
        "Each tile is read by rows and written by rows, so every warp access fills whole sectors; the kernel moves "
        f"its bytes once and runs {gap:.2f}x its DRAM floor because each block waits at its barrier between the tile "
        "load and the store, which leaves fewer loads in flight.",
        fix or "Keep the layout; give each thread more independent loads (two tiles per block). `gpu__dram_throughput` "
               "should increase toward 85%, kernel time down about 1.2x.")


def test_a_fixed_state_and_a_block_barrier_are_not_the_claim(case):
    c = case("cu_transpose_fixed")
    ok = c.critique(_transpose_fixed(
        c, "`transpose_tile` is DRAM-bound at {dram:.1f}% of peak, {gap:.2f}x its memory floor; its global loads and "
           "stores are now coalesced and the padded tile has no bank conflicts, so what remains is the latency "
           "around the block-level synchronization of each tile."))
    assert ok.verdict == "accept", ok.reasons
    assert ok.mechanism not in ("uncoalesced_global", "host_sync", "shared_bank_conflict"), ok.mechanism
    uncoalesced = c.critique(_transpose_fixed(c, "`transpose_tile` is limited by uncoalesced global loads."))
    assert uncoalesced.verdict == "reject" and not uncoalesced.checks["signature"], uncoalesced.reasons
    host = c.critique(_transpose_fixed(c, "The GPU idles while the host synchronizes with the device after every "
                                          "launch."))
    assert host.mechanism == "host_sync" and host.verdict == "reject", (host.mechanism, host.reasons)


def _gemm(c, bottleneck: str, fix: str) -> str:
    m, gap = c.metrics("nvjet"), c.dg.roofline.stated_gap
    return answer(
        bottleneck.format(gap=gap),
        [f"kernel duration {m[DUR] / 1e6:.3f} ms (`{DUR}`, ncu.ncu-rep)",
         f"duration / roofline floor = {gap:.2f} (ncu.ncu-rep)"],
        f"The product's FLOPs over the bf16 tensor-core peak set its floor and the kernel takes {gap:.2f}x that, so "
        "the tensor pipes are busy almost every cycle: the math itself is what limits it.", fix)


def test_a_kernel_left_alone_at_its_roofline_claims_near_peak(case):
    c = case("ot_py_gemm_bf16")
    done = c.critique(_gemm(c, "None in the GEMM: the cuBLAS bf16 kernel runs near the tensor-core roof, {gap:.2f}x "
                               "its floor. Leave it.", "No kernel change: look at the next-largest cost on the timeline."))
    assert done.mechanism == "near_peak" and done.verdict == "accept", (done.mechanism, done.reasons)
    off = c.critique(_gemm(c, "The GEMM runs its math off the tensor cores.", "Enable tensor cores: the tensor pipe "
                                                                              "activity should increase."))
    assert off.mechanism == "no_tensor_cores" and not off.checks["signature"], off.reasons


def test_leave_it_needs_no_metric_only_at_the_roofline(case):
    c = case("cu_transpose_fixed")  # 1.34x its floor: not at the roofline, a fix must still say what moves
    assert c.dg.roofline.stated_gap > 1.25
    v = c.critique(_transpose_fixed(c, "`transpose_tile` is done: it is close to its roofline. Leave it.",
                                    fix="Leave it; nothing worth fixing."))
    assert not v.checks["fix"] and any("names no metric" in r for r in v.reasons), v.reasons


def test_an_asserted_cause_outranks_a_mention():
    def claim(b: str, m: str = "") -> str | None:
        return claimed_mechanism(Answer(bottleneck=b, explanation=m, fix=None))

    assert claim("`saxpy_grid_stride` launches only 16 blocks on a 132-SM GPU: 116 SMs have nothing to do.") \
        == "low_parallelism"
    assert claim("The step is transfer-bound: a 128 MiB pageable host-to-device copy per step.") == "pageable_transfer"
    # a cause the mechanism only mentions while explaining another is not the claim
    assert claim("The histogram is memory-latency-bound: each thread keeps one 4-byte load in flight.",
                 "Atomics now go to shared memory per block, and the scalar loads leave DRAM at half its bandwidth.") \
        is None
    assert claim("The histogram is slow.", "The kernel is limited by contended global atomics on a few bins.") \
        == "atomic_contention"
    assert claim("The step is slow.", "Host synchronization accounts for most of each step.") == "host_sync"
    assert claim("The step is slow.", "Host synchronization was removed, so each step now runs back to back.") is None


def _vec_copy(c, mechanism: str) -> str:
    r = c.dg.roofline
    return answer(
        "`scale_vec4` is done: it streams at its DRAM roofline; leave it alone.",
        [f"kernel duration {r.duration_ns / 1e3:.1f} us (`{DUR}`, ncu.ncu-rep)",
         f"DRAM throughput {c.metrics('scale_vec4')[DRAM]:.1f}% of peak (`{DRAM}`, ncu.ncu-rep)"],
        mechanism.format(gb=r.dram_bytes / 1e9, bw=r.peak_bandwidth / 1e12, floor=r.floor_ns / 1e3,
                         dur=r.duration_ns / 1e3, gap=r.gap),
        "Leave the kernel alone; store the data as bf16 to move fewer bytes: `dram__bytes` should decrease about 2x.")


def test_a_number_related_to_its_ceiling_is_a_causal_chain_and_a_list_is_not(case):
    c = case("cu_vec_copy")
    ok = c.critique(_vec_copy(c, "A scale reads and writes each element once: {gb:.3f} GB at the {bw:.2f} TB/s DRAM "
                                 "peak is a floor of {floor:.1f} us, and the kernel takes {dur:.1f} us, {gap:.2f}x the "
                                 "floor."))
    assert ok.checks["mechanism"] and ok.checks["not_a_dump"], ok.reasons
    listed = c.critique(_vec_copy(c, "The report shows {gb:.3f} GB, {dur:.1f} us, {bw:.2f} TB/s and a {gap:.2f}x "
                                     "gap to the floor for this kernel."))
    assert not (listed.checks["mechanism"] and listed.checks["not_a_dump"]), listed.reasons


def _no_fix_json(c, kernel: str) -> str:
    import json
    r = c.dg.roofline
    return json.dumps({"bound": "near_peak", "mechanism": "near_peak", "kernel": kernel,
                       "bottleneck": f"`{kernel}` is at its roofline, {r.stated_gap:.2f}x its floor: leave it.",
                       "evidence": [{"metric": DUR, "value": r.duration_ns, "unit": "ns", "artifact": "ncu.ncu-rep",
                                     "kernel": kernel, "meaning": "kernel duration"}],
                       "explanation": f"The kernel takes {r.duration_ns / 1e3:.1f} us against a floor of "
                                      f"{r.floor_ns / 1e3:.1f} us, {r.stated_gap:.2f}x: it runs at its roofline and "
                                      f"nothing in it limits it beyond the work itself.",
                       "fix": None})


def test_a_kernel_at_its_roofline_needs_no_fix_part(case):
    gemm = case("ot_py_gemm_bf16")
    v = gemm.critique(_no_fix_json(gemm, "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT"))
    assert v.checks["parts"], v.reasons
    transpose = case("cu_transpose_fixed")  # 1.34x its floor: a fix is still owed
    v = transpose.critique(_no_fix_json(transpose, "transpose_tile"))
    assert not v.checks["parts"] and any("fix part is missing" in r for r in v.reasons), v.reasons
