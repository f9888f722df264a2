"""The critic's number-matching rules added for answers in other wording (critic/match.py, facts.py, numbers.py),
each on a real H200 capture, each with a twin (a fabricated or mis-attributed number in the same form) that must be
rejected. Values are read from the captures at test time."""
from __future__ import annotations

from critic_case import answer, case  # noqa: F401 (the fixture)

DUR = "gpu__time_duration.sum"
ST = ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")


def numbers_ok(v, written):
    hits = [n for n in v.numbers if n.written.replace(" ", "") == written.replace(" ", "")]
    assert hits, [n.written for n in v.numbers]
    return all(n.fact or n.derivation for n in hits)


# ----------------------------------------------------------------------------- lane stride of stores
def transpose(c, stride_sentence):
    m = c.metrics("naive_transpose")
    return answer(
        "`naive_transpose` is memory-bound on uncoalesced global stores.",
        [f"{m[ST[0]] / m[ST[1]]:.1f} sectors per store request (`{ST[0]}` / `{ST[1]}`, ncu.ncu-rep)",
         f"kernel duration {m[DUR] / 1e6:.2f} ms (`{DUR}`, ncu.ncu-rep)"],
        f"{stride_sentence} Every warp store is split into separate sector writes and most of each sector is wasted; "
        f"the kernel runs {c.dg.roofline.stated_gap:.1f}x its memory roofline floor.",
        "Transpose through a padded shared-memory tile. Expect store sectors per request to go down to 4.")


def test_a_store_stride_is_checked_against_the_sectors_per_store_request(case):
    """Lanes writing 32 KB apart touch 32 sectors per request: the stores of this kernel measure that; its loads
    (4 sectors per request) would not, nor would lanes 8 bytes apart (8 sectors)."""
    c = case("ho_strided_store")
    m = c.metrics("naive_transpose")
    assert round(m[ST[0]] / m[ST[1]]) == 32 and round(m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
                                                       / m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]) == 4
    ok = c.critique(transpose(c, "Consecutive threads of a warp write addresses one row (32 KB) apart."))
    assert ok.verdict == "accept", ok.reasons
    assert any(n.derivation and "stores" in n.derivation for n in ok.numbers), ok.numbers
    loads = c.critique(transpose(c, "Consecutive threads of a warp read addresses one row (32 KB) apart."))
    assert loads.verdict == "reject" and any("32 KB" in r for r in loads.reasons), loads.reasons
    near = c.critique(transpose(c, "Consecutive threads of a warp write addresses 8 bytes apart."))
    assert near.verdict == "reject", near.reasons


# ----------------------------------------------------------------------------- numbers only: one sentence, one check
def numbers_check(c, bottleneck, evidence, mechanism):
    """The verdict of an answer whose numbers are the point: `checks['numbers']` says whether every one matched."""
    return c.critique(answer(bottleneck, evidence, mechanism + " Because of this it runs far from its roofline.",
                             "Change the code. `gpu__time_duration.sum` should go down."))


def rep_kernels(c):
    return [k for k in c.arts.kernel_profiles if k.source.endswith(".ncu-rep")]


def test_the_device_limit_of_warps_per_sm_is_a_fact(case):
    """'8 of 64 warps': ncu's device__attribute_max_warps_per_multiprocessor of the profiled kernel."""
    c = case("cu_smem_occupancy")
    m = c.metrics("stream_scale")
    per_sm = m["device__attribute_max_warps_per_multiprocessor"]
    line = "theoretical occupancy {:.1f}% (`sm__maximum_warps_per_active_cycle_pct`): {:.0f} of {:.0f} warps per SM"
    pct, warps = m["sm__maximum_warps_per_active_cycle_pct"], m["sm__maximum_warps_avg_per_active_cycle"]
    ok = numbers_check(c, "`stream_scale` is limited by occupancy.", [line.format(pct, warps, per_sm)], "Few warps.")
    assert ok.checks["numbers"], ok.reasons
    assert any(n.fact and "max_warps_per_multiprocessor" in n.fact for n in ok.numbers), ok.numbers
    bad = numbers_check(c, "`stream_scale` is limited by occupancy.", [line.format(pct, warps, per_sm * 0.75)], "Few warps.")
    assert not bad.checks["numbers"], bad.reasons


def test_busy_and_idle_sms_of_a_small_grid(case):
    """A grid of 24 blocks on 132 SMs keeps 24 SMs busy and leaves 108 idle: min(grid, SMs) and SMs - grid."""
    c = case("ho_small_grid_compute")
    m = c.metrics("iterate")
    grid, sms = m["launch__grid_size"], m["launch__sm_count"]
    text = "{:.0f} blocks put work on {:.0f} SMs only; the other {:.0f} SMs sit idle."
    ok = numbers_check(c, "`iterate` has too few blocks.", [f"`launch__grid_size` = {grid:.0f} (ncu.ncu-rep)"],
                       text.format(grid, grid, sms - grid))
    assert ok.checks["numbers"], ok.reasons
    bad = numbers_check(c, "`iterate` has too few blocks.", [f"`launch__grid_size` = {grid:.0f} (ncu.ncu-rep)"],
                        text.format(grid, grid + 8, sms - grid - 8))
    assert not bad.checks["numbers"] and sum("SMs" in r for r in bad.reasons) == 2, bad.reasons


def test_a_range_over_every_kernel_and_its_misattributed_twin(case):
    """'each of the eight kernels takes 124-183 us': both ends are durations of profiled kernels, the first end in the
    unit written after the second; the same range given to one named kernel is refused."""
    c = case("py_unfused_gelu")
    durs = sorted(k.metrics["gpu__time_duration.sum"] for k in rep_kernels(c))
    lo, hi = durs[0] / 1e3, durs[-1] / 1e3
    line = "each of the {} kernels takes {:.0f}-{:.0f} us (`gpu__time_duration.sum`, ncu.ncu-rep)"
    ok = numbers_check(c, "The step is memory-bound on unfused elementwise kernels.", [line.format(len(durs), lo, hi)],
                       "Every kernel streams the tensor.")
    assert ok.checks["numbers"], ok.reasons
    bad = numbers_check(c, "The step is memory-bound on unfused elementwise kernels.",
                        [line.format(len(durs), lo, hi * 1.3)], "Every kernel streams the tensor.")
    assert not bad.checks["numbers"], bad.reasons
    tanh = next(k.metrics["gpu__time_duration.sum"] for k in rep_kernels(c) if "tanh" in k.name) / 1e3
    assert abs(tanh - hi) / hi > 0.1
    one = numbers_check(c, "The step is memory-bound on unfused elementwise kernels.",
                        [f"the `tanh` kernel takes {hi:.0f} us (`gpu__time_duration.sum`, ncu.ncu-rep)"],
                        "Every kernel streams the tensor.")
    assert not one.checks["numbers"], one.reasons


def test_a_sum_of_two_cited_values(case):
    """'67 MB read + 49 MB written = 116 MB': the sum of two cited byte counts is a declared derivation."""
    from kernel_profiler.critic import facts_for
    from kernel_profiler.critic.match import match_derived
    from kernel_profiler.critic.numbers import quantities

    c = case("cu_smem_occupancy")
    facts = facts_for(c.arts, c.dg)
    key = next(k for k in facts.kernels if "stream_scale" in k)
    cited = [f for name in ("dram__bytes_read.sum", "dram__bytes_write.sum") for f in facts.named(name, key)
             if f.kernel == key][:2]
    assert len(cited) == 2 and cited[0].metric != cited[1].metric
    total = sum(f.value for f in cited) / 1e6
    concepts = frozenset({"bytes", "dram_bytes"})
    ok = match_derived(quantities(f"{total:.1f} MB")[0], concepts, cited)
    assert ok and ok[0] == "sum of two cited values", ok
    assert match_derived(quantities(f"{total * 1.2:.1f} MB")[0], concepts, cited) is None


def alloc(c, mechanism, extra=""):
    s = c.dg.timeline
    n = s.top_kernels[0].count
    return numbers_check(
        c, f"Host-bound on allocator churn: `cudaMalloc` + `cudaFree` around each of its {n} kernel launches.",
        [f"GPU idle {s.idle_ns / 1e6:.2f} ms of the {s.window_ns / 1e6:.2f} ms steady window (nsys.sqlite){extra}"],
        mechanism)


def test_an_approximate_number_and_the_gpu_with_nothing_queued(case):
    """'about 220 us per launch' = idle time / launches, read to 5% because it says 'about'; the sentence
    describes idle time ('nothing queued')."""
    c = case("ot_cu_alloc_churn")
    s = c.dg.timeline
    per = s.idle_ns / s.top_kernels[0].count / 1e3
    off = per * 0.96  # 4% below: within 'about', outside the 2% of a number written plainly
    ok = alloc(c, f"The GPU has nothing queued for about {off:.0f} us per launch.")
    assert ok.checks["numbers"], ok.reasons
    assert any(n.derivation and "division" in n.derivation for n in ok.numbers), ok.numbers
    plain = alloc(c, f"The GPU has nothing queued for {off:.0f} us per launch.")
    assert not plain.checks["numbers"], plain.reasons
    bad = alloc(c, f"The GPU has nothing queued for about {per * 1.15:.0f} us per launch.")
    assert not bad.checks["numbers"], bad.reasons


def test_the_median_gap_between_consecutive_kernels(case):
    """timeline.kernel_gap_median_ns (metrics registry): read here from the nsys sqlite for the 50 launches."""
    import sqlite3

    import numpy as np

    c = case("ot_cu_alloc_churn")
    con = sqlite3.connect(c.folder / "nsys.sqlite")
    rows = con.execute("select k.start, k.end from CUPTI_ACTIVITY_KIND_KERNEL k join StringIds s on s.id = k.shortName "
                       "where s.value = 'scale' order by k.start").fetchall()
    con.close()
    gap = float(np.median([b[0] - a[1] for a, b in zip(rows, rows[1:])])) / 1e3
    ok = alloc(c, "The GPU idles between launches.", f"; the median gap between two consecutive kernels is {gap:.0f} us")
    assert ok.checks["numbers"], ok.reasons
    assert any(n.fact and n.fact.startswith("timeline.kernel_gap_median_ns") for n in ok.numbers), ok.numbers
    bad = alloc(c, "The GPU idles between launches.",
                f"; the median gap between two consecutive kernels is {gap * 1.3:.0f} us")
    assert not bad.checks["numbers"], bad.reasons


def test_a_backticked_word_of_one_kernel_name_scopes_its_numbers(case):
    """'`tanh` kernels (median 0.99 us)': `tanh` names the one timeline kernel whose full name holds that word; the
    median of the other kernel (the GEMM) given to `tanh` is refused."""
    c = case("ho_py_small_matmuls")
    rows = {r.name: r for r in c.dg.timeline.top_kernels}
    tanh = next(r for n, r in rows.items() if "tanh" in n)
    gemm = next(r for n, r in rows.items() if "nvjet" in n)
    line = "{} bf16 `tanh` kernels (median {:.2f} us, nsys.sqlite)"
    ok = numbers_check(c, "Host-bound on launch overhead.", [line.format(tanh.count, tanh.median_ns / 1e3)], "Tiny ops.")
    assert ok.checks["numbers"], ok.reasons
    bad = numbers_check(c, "Host-bound on launch overhead.", [line.format(tanh.count, gemm.median_ns / 1e3)], "Tiny ops.")
    assert not bad.checks["numbers"], bad.reasons


def test_per_op_time_from_a_step_and_its_ops(case):
    """'7.9 ms / 600 ops = 13 us': 'ops' counts launches; the step median over the kernels per step."""
    c = case("ho_py_small_matmuls")
    s = c.dg.timeline
    per_step = s.kernel_count / s.steps
    step = s.step_ns_median / 1e6
    text = "Steps last about {:.1f} ms: {:.1f} ms / {:.0f} ops = {:.0f} us of host time per op."
    ok = numbers_check(c, "Host-bound on launch overhead.", [f"GPU busy {s.busy_fraction:.0%} (nsys.sqlite)"],
                       text.format(step, step, per_step, step * 1e3 / per_step))
    assert ok.checks["numbers"], ok.reasons
    bad = numbers_check(c, "Host-bound on launch overhead.", [f"GPU busy {s.busy_fraction:.0%} (nsys.sqlite)"],
                        text.format(step, step, per_step, step * 1e3 / per_step * 1.5))
    assert not bad.checks["numbers"], bad.reasons


def test_the_result_of_an_expression_after_against_is_a_reference(case):
    """'against 540,672 FLOP per cycle x 1.59 GHz = 861 TFLOP/s': the ceiling at the measured clock, quoted as the
    reference of a comparison; a ceiling that is not the kernel's is refused."""
    c = case("py_gemm_bf16")
    m = c.metrics("nvjet")
    per_cycle = m["sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained"]
    clock = m["sm__cycles_elapsed.avg.per_second"]
    flops = m["sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum"]
    line = ("{:.3f} TFLOP of bf16 tensor work (`sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum`) in "
            "{:.2f} ms, against {:,.0f} dense bf16 FLOP per cycle x {:.2f} GHz (`sm__cycles_elapsed.avg.per_second`) = "
            "{:.0f} TFLOP/s")
    args = (flops / 1e12, m["gpu__time_duration.sum"] / 1e6, per_cycle, clock / 1e9)
    ok = numbers_check(c, "The bf16 GEMM is at its roofline.", [line.format(*args, per_cycle * clock / 1e12)], "Done.")
    assert ok.checks["numbers"], ok.reasons
    bad = numbers_check(c, "The bf16 GEMM is at its roofline.", [line.format(*args, per_cycle * clock / 1e12 * 1.08)],
                        "Done.")
    assert not bad.checks["numbers"], bad.reasons


def test_equal_facts_are_all_cited_for_a_derivation(case):
    """230 `cudaStreamSynchronize` calls (the same count as cudaMemcpyAsync's): the idle time after synchronizations
    divided by them is ~200 us of host time per synchronization."""
    c = case("py_item_sync")
    s = c.dg.timeline
    import sqlite3

    con = sqlite3.connect(c.folder / "nsys.sqlite")
    n = con.execute("select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME r join StringIds s on s.id = r.nameId "
                    "where s.value like 'cudaStreamSynchronize%'").fetchone()[0]
    con.close()
    sync = s.idle_by_cause["host_sync"]
    ev = [f"{n} `cudaStreamSynchronize` calls in the capture (nsys.sqlite)",
          f"{sync / 1e6:.2f} ms of GPU idle time follows a synchronization (nsys.sqlite)"]
    text = "The `.item()` read-back blocks the host, and then ~{:.0f} us of host bookkeeping runs while the GPU idles."
    ok = numbers_check(c, "Host-bound on synchronization.", ev, text.format(round(sync / n / 1e3, -1)))
    assert ok.checks["numbers"], ok.reasons
    assert any(x.derivation and x.written.startswith(f"{round(sync / n / 1e3, -1):.0f}") for x in ok.numbers), ok.numbers
    # 25% off that derivation, approximate ("~") and in prose: not credited with it, listed as unverified
    off = numbers_check(c, "Host-bound on synchronization.", ev, text.format(round(sync / n / 1e3 * 1.25, -1)))
    assert any(x.unverified and not x.derivation for x in off.numbers), off.numbers


def test_the_bytes_a_kernel_stores_are_its_output(case):
    """'the output is 16 MB': global store sectors x 32 bytes (derived.global_st_bytes), read as MiB where written MB."""
    c = case("ho_register_spill")
    m = c.metrics("many_accumulators")
    out = m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] * 32 / 2**20
    text = "Spilled values go out to DRAM: the output is {:.0f} MB, yet the kernel writes far more."
    ev = [f"`l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum` = {m['l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum']:,.0f} "
          f"local store sectors (ncu.ncu-rep)"]
    ok = numbers_check(c, "`many_accumulators` is memory-bound on register spills.", ev, text.format(out))
    assert ok.checks["numbers"], ok.reasons
    assert any(n.fact and n.fact.startswith("derived.global_st_bytes") for n in ok.numbers), ok.numbers
    bad = numbers_check(c, "`many_accumulators` is memory-bound on register spills.", ev, text.format(out * 2))
    assert not bad.checks["numbers"], bad.reasons


def test_timeline_facts_the_registry_defines_come_from_the_registry(case):
    """One definition per timeline value: the facts named in metrics.TIMELINE carry the registry's definition and
    equal `metrics.timeline_value` on the same view."""
    from kernel_profiler import metrics
    from kernel_profiler.analysis.consistency import main_timeline
    from kernel_profiler.analysis.timeline import triage
    from kernel_profiler.critic import facts_for

    c = case("py_item_sync")
    facts = facts_for(c.arts, c.dg)
    tl = main_timeline(c.arts.timelines)
    tres = triage(tl)
    view = metrics.TimelineView(c.dg.timeline, tl, tres.window, list(tres.step_ns or []))
    checked = 0
    for m in metrics.TIMELINE:
        if m.compute is None or m.name not in facts.by_metric:
            continue
        program = [f for f in facts.by_metric[m.name] if f.kernel is None]
        assert program and all(f.derivation.startswith("registry:") for f in program), (m.name, program)
        value, _ = metrics.timeline_value(m.name, view)
        assert any(abs(f.value - value) <= 1e-9 * max(1.0, abs(value)) for f in program), (m.name, value, program)
        checked += 1
    assert checked >= 10


def test_written_arithmetic_is_recomputed(case):
    """'2.13 GB / 4.81 TB/s = 442 us' holds; the same expression '= 575 us' is refused even though 575 us is some
    other fact of this capture (its first marked step), because it does not follow from its operands."""
    import sqlite3

    c = case("cu_vec_copy")
    m = c.metrics("scale_vec4")
    con = sqlite3.connect(c.folder / "nsys.sqlite")
    bw = float(con.execute("select memoryBandwidth from TARGET_INFO_GPU").fetchone()[0])
    con.close()
    moved = m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"]
    from kernel_profiler.critic import facts_for

    first = facts_for(c.arts, c.dg).by_metric["timeline.first_step_ns"][0].value
    text = "The floor at the device bandwidth is {:.2f} GB / {:.2f} TB/s = {:.0f} us; the kernel runs near it."
    ok = numbers_check(c, "`scale_vec4` is at its DRAM roofline.", [f"`gpu__time_duration.sum` = {m[DUR] / 1e3:.1f} us"],
                       text.format(moved / 1e9, bw / 1e12, moved / bw * 1e6))
    assert ok.checks["arithmetic"] and ok.checks["numbers"], ok.reasons
    bad = numbers_check(c, "`scale_vec4` is at its DRAM roofline.", [f"`gpu__time_duration.sum` = {m[DUR] / 1e3:.1f} us"],
                        text.format(moved / 1e9, bw / 1e12, first / 1e3))
    assert not bad.checks["arithmetic"] and any("does not hold" in r for r in bad.reasons), bad.reasons


def test_a_named_statistic_is_that_statistic(case):
    """'`cudaMalloc` takes a median of 58 us per call' is the median host time per call, never the mean (2.3 ms here,
    the first call creates the context) and vice versa."""
    import sqlite3

    import numpy as np

    c = case("ot_cu_alloc_churn")
    con = sqlite3.connect(c.folder / "nsys.sqlite")
    d = [r[0] for r in con.execute("select r.end - r.start from CUPTI_ACTIVITY_KIND_RUNTIME r join StringIds s on "
                                   "s.id = r.nameId where s.value like 'cudaMalloc%' and s.value not like "
                                   "'cudaMallocHost%'")]
    con.close()
    median, mean = float(np.median(d)) / 1e3, float(np.mean(d)) / 1e3
    assert mean > 2 * median
    line = "`cudaMalloc` takes a {} of {:.1f} us per call ({} calls, nsys.sqlite)"
    for stat, v in (("median", median), ("mean", mean)):
        ok = alloc(c, "The GPU idles between launches.", "; " + line.format(stat, v, len(d)))
        assert ok.checks["numbers"], ok.reasons
    swapped = alloc(c, "The GPU idles between launches.", "; " + line.format("median", mean, len(d)))
    assert not swapped.checks["numbers"], swapped.reasons
    swapped = alloc(c, "The GPU idles between launches.", "; " + line.format("mean", median, len(d)))
    assert not swapped.checks["numbers"], swapped.reasons


def test_a_number_with_a_unit_is_never_a_dimensionless_ratio(case):
    """4.65 GB over the 4-byte word is no byte count: a number written in bytes is not matched by a ratio of two
    values; a count of sectors times the 32-byte sector is (a product with an architecture constant)."""
    from kernel_profiler.critic import facts_for
    from kernel_profiler.critic.match import match_derived
    from kernel_profiler.critic.numbers import quantities

    c = case("py_unfused_gelu")
    facts = facts_for(c.arts, c.dg)
    total = max(f.value for f in facts.by_metric["derived.streaming_dram_bytes"])
    cited = [f for f in facts.by_metric["derived.streaming_dram_bytes"] if f.value == total][:1]
    concepts = frozenset({"bytes", "dram_bytes", "bank_conflict"})  # the 4-byte word is usable here
    assert match_derived(quantities(f"{total / 4 / 1e6:.0f} MB")[0], concepts, cited) is None
    key = next(k for k in facts.kernels if "tanh" in k and facts.named("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", k))
    sectors = [f for f in facts.named("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", key) if f.kernel == key][:1]
    got = match_derived(quantities(f"{sectors[0].value * 32 / 1e6:.1f} MB")[0], frozenset({"bytes", "sectors", "bytes_per_sector"}), sectors)
    assert got and "constant" in got[0], got
