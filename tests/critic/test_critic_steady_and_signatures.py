"""Rules of 2026-12-01 (second session), each with a twin that must go the other way, on real captures:
  - shared-memory atomics: a float atomicAdd's CAS loop that keeps the shared pipe busy is contention; a privatized
    histogram's shared atomics (a few % of the pipe) are not;
  - collectives that run only before the steady window are one-time work, not what the program waits on;
  - an issue-slot ceiling on a kernel whose warps run a few of their 32 lanes is not near peak;
  - a change the catalog knows to move a cause the wrong way (more threads on contended words) is refused;
  - one-time work (lazy module loading) is a fact an answer may cite;
  - an evidence line that misses a program-level value by up to 4x is refused (prose about it stays unverified);
  - a GPU idle over a quarter of its steady window may be called host-bound;
  - a fix's direction in words ('from 598M to well under 1M', 'to a few ms');
  - 'issue N% active' is smsp__issue_active, not the SM throughput;
  - a partial last wave (133 blocks on 132 SMs) is low parallelism, a grid split into many waves is not;
  - memsets are facts of the timeline.
"""
from __future__ import annotations

from critic_case import answer, case  # noqa: F401 (the fixture)

from kernel_profiler.critic import facts_for
from kernel_profiler.critic.direction import fix_metric_direction


def _sig(c, bottleneck: str, mechanism: str, fix: str = "Fix it; `gpu__time_duration.sum` should decrease."):
    return c.critique(answer(bottleneck, [], mechanism, fix))


def test_contended_shared_atomics_are_contention_and_privatized_ones_are_not(case):
    claim = ("`{k}` is limited by atomic contention on shared memory.",
             "Many lanes update the same few shared words with atomics, so the updates serialize and the kernel runs "
             "far from its DRAM floor.")
    hot = _sig(case("h6_smem_float_atomic"), claim[0].format(k="class_sums"), claim[1])
    assert hot.mechanism == "atomic_contention" and hot.checks["signature"], hot.reasons
    assert "shared-memory atomic" in hot.signature
    cold = _sig(case("cu_histogram_fixed"), claim[0].format(k="histogram"), claim[1])
    assert cold.mechanism == "atomic_contention" and not cold.checks["signature"], cold.reasons


def test_collectives_outside_the_steady_window_are_not_what_it_waits_on(case):
    text = ("The program is communication-bound: the all-reduce (`ncclDevKernel_AllReduce_Sum_f32_RING_LL`) takes "
            "most of every rank's step.",
            "The collectives run on the compute stream with nothing to overlap them, so every step waits on the "
            "transfer and the GPUs sit in NCCL instead of computing.")
    once = _sig(case("ot_nccl_stretch"), *text)
    assert once.mechanism == "comms_wait" and not once.checks["signature"], once.reasons
    assert "one-time" in once.signature
    steady = _sig(case("mr_balanced"), *text)
    assert steady.mechanism == "comms_wait" and "one-time" not in (steady.signature or ""), steady.signature


def test_an_issue_ceiling_with_masked_lanes_is_not_near_peak(case):
    claim = ("`{k}` runs at the FMA pipe's ceiling: it is near peak.",
             "The schedulers issue nearly every cycle, so there is no latency left to hide and nothing to gain.")
    masked = _sig(case("cu_divergence"), claim[0].format(k="branchy"), claim[1])
    assert masked.mechanism == "near_peak" and not masked.checks["signature"], masked.reasons
    assert "lanes" in masked.signature
    full = _sig(case("cu_divergence_fixed"), claim[0].format(k="branchy"), claim[1])
    assert full.mechanism == "near_peak" and "lanes" not in (full.signature or ""), full.signature


def test_more_threads_on_contended_words_is_the_wrong_way(case):
    c = case("h6_smem_float_atomic")
    head = ("`class_sums` is limited by atomic contention on four shared-memory floats.",
            "Every element's atomicAdd on one of four shared words is a compare-and-swap retry loop; the lanes collide, "
            "so the updates serialize and the kernel runs far from its DRAM floor.")
    worse = _sig(c, *head, "Launch 1024 threads per block so more threads share each block's accumulators; "
                           "`gpu__time_duration.sum` should decrease.")
    assert not worse.checks["fix"] and any("wrong way" in r for r in worse.reasons), worse.reasons
    better = _sig(c, *head, "Privatize the sums in registers and reduce once per warp; `gpu__time_duration.sum` "
                            "should decrease.")
    assert better.checks["fix"], better.reasons


def test_one_time_module_loading_is_a_fact(case):
    c = case("ot_py_eager_lazy")
    ms = c.dg.timeline.onetime_by_class["module_loading"] / 1e6

    def cite(v: float):
        r = c.critique(answer(
            "The steady state runs five separate elementwise kernels per step: extra passes through DRAM.",
            [f"GPU busy {c.dg.timeline.busy_fraction:.1%} of the steady window (nsys.sqlite)"],
            f"Each op writes its result to DRAM and the next reads it back; the {v:.1f} ms of lazy module loading "
            "is one-time, left out of the steady window.",
            "Fuse the chain into one kernel; `dram__bytes.sum` should decrease."))
        return next(n for n in r.numbers if n.written.startswith(f"{v:.1f}"))
    assert "onetime_module_loading" in (cite(ms).fact or ""), cite(ms)
    assert cite(ms * 1.3).fact is None


def test_an_evidence_line_is_held_to_the_program_value_it_misses(case):
    c = case("py_pageable_copy")
    ms = c.dg.timeline.copy_ns / max(c.dg.timeline.steps or 1, 1) / 1e6  # one 256 MB copy per step

    def text(where: str, v: float):
        line = f"each 256 MB upload takes {v:.1f} ms (nsys.sqlite, CUPTI_ACTIVITY_KIND_MEMCPY)"
        return c.critique(answer(
            "Transfer-bound on a pageable host-to-device upload.",
            [f"copies take {c.dg.timeline.copy_ns / c.dg.timeline.window_ns:.1%} of the steady window (nsys.sqlite)"]
            + ([line] if where == "evidence" else []),
            "The host tensor is pageable, so the driver stages it through a pinned bounce buffer chunk by chunk."
            + (f" Here {line}." if where == "mechanism" else ""),
            "Pin the host tensor; the copy time per step should decrease."))
    assert text("evidence", ms).checks["numbers"], text("evidence", ms).reasons
    wrong = text("evidence", ms / 2.6)
    assert not wrong.checks["numbers"], wrong.reasons
    assert text("mechanism", ms / 2.6).checks["numbers"]  # prose: more than 2x off, left unverified


def test_a_quarter_idle_may_be_called_host_bound(case):
    host = ("The program is host-bound: the host's own per-iteration work keeps the GPU waiting.",
            "Each iteration the host runs bookkeeping before it launches the next ops, so the GPU drains its queue and "
            "idles between iterations.")
    idle = _sig(case("py_item_sync_fixed"), *host)  # GPU busy 72% of its window
    assert idle.checks.get("bound", True), idle.reasons
    busy = _sig(case("ot_py_gemm_bf16"), *host)  # GPU busy over 95%
    assert not busy.checks["bound"], busy.reasons


def test_directions_in_words():
    assert fix_metric_direction("Expected: shared-atomic wavefronts from 598M to well under 1M.") == \
        ("shared-atomic wavefronts", "decrease")
    assert fix_metric_direction("The number to watch is the D2H memcpy duration per step: from ~156 ms to a few ms.") \
        == ("D2H memcpy duration per step", "decrease")
    assert fix_metric_direction("Expect the steady conv from 2.61 ms to ~0.5 ms or less (tensor pipe from 0% to most "
                                "of the kernel).") == ("tensor pipe", "increase")  # 'from' is no part of the name
    assert fix_metric_direction("Bank conflicts from 900K to 2M.") == ("Bank conflicts", "increase")  # K and M scale


def test_issue_active_is_its_own_metric(case):
    """'issue 4.6% active' is smsp__issue_active, not the SM throughput (5.1% here): each value in its own place."""
    c = case("h7_aos_field")
    m = c.metrics("field_force")
    issue, sol = m["smsp__issue_active.avg.pct_of_peak_sustained_active"], \
        m["sm__throughput.avg.pct_of_peak_sustained_elapsed"]
    assert abs(issue - sol) > 0.3

    def text(v: float):
        return c.critique(answer(
            "`field_force` is memory-bound on uncoalesced loads of one field of an array of structs.",
            [f"issue {v:.1f}% active (ncu.ncu-rep)",
             f"{m['gpu__time_duration.sum'] / 1e3:.1f} us per launch (`gpu__time_duration.sum`, ncu.ncu-rep)"],
            "Each lane reads 4 bytes of a 32-byte sector, so most fetched bytes are wasted and the kernel runs far "
            "from its DRAM floor.",
            "Store the fields as separate arrays; `gpu__time_duration.sum` should decrease."))
    assert text(issue).checks["numbers"], text(issue).reasons
    assert not text(sol).checks["numbers"], text(sol).reasons


def test_a_partial_last_wave_is_low_parallelism(case):
    claim = ("`poly_tile` has too few blocks: a partial last wave leaves SMs idle.",
             "133 heavy blocks on 132 SMs run as two waves, the second with one block, so most SMs idle half the "
             "kernel and it runs far from its compute floor.")
    tail = _sig(case("h7_tail_wave"), *claim)
    assert tail.mechanism == "low_parallelism" and tail.checks["signature"], tail.reasons
    assert "last wave" in tail.signature
    split = _sig(case("h7_tail_wave_fixed"), *claim)
    assert split.mechanism == "low_parallelism" and not split.checks["signature"], split.signature


def test_memsets_are_facts(case):
    c = case("h7_memset_many")
    f = facts_for(c.arts, c.dg)
    median = f.named("timeline.memset_median_ns")[0].value / 1e3
    r = c.critique(answer(
        "The program is launch-bound: thousands of tiny memsets per step keep the GPU waiting on the host.",
        [f"each memset takes {median:.2f} us (nsys.sqlite)"],
        "Every cudaMemsetAsync is a separate launch, so launch overhead between them leaves the GPU idle.",
        "Clear the pool with one memset; the GPU busy fraction should increase."))
    assert any(n.fact and "memset_median" in n.fact for n in r.numbers), r.numbers
