"""Rules of commit c3c7968 ('critic: reading what answers say in their own words'), on real H200 captures. Each test
has a twin, the same answer with one detail changed, that goes the other way; each was checked by reverting its
rule in a worktree and seeing the test fail. Which rule each test pins:
  1. claim.py `_refined`/`refinement`: test_a_generic_bound_is_refined_by_the_cause_the_mechanism_names
     (cu_pageable_copy: 'transfer-bound' + 'the source is pageable' is pageable_transfer, accepted; the same bound
     with a mechanism naming no cause stays transfer_volume, which the captures contradict);
  2. claim.py `_CAUSE_CODE`/`_plain`: test_a_code_span_that_names_a_cause_is_read_as_words (py_item_sync:
     '`.item()`' claims host_sync, accepted; '`cudaMalloc`' claims allocator_churn, refused);
  3. unverified.py `source_size`: test_a_size_of_the_code_is_unverified_not_refused (h5_shuffle_rowsum_fixed: the
     butterfly's 'N steps per row' is listed unverified; 'the butterfly takes N steps' is held to the step count);
     `_RULED_OUT` 'fix did its job': test_a_fix_that_did_its_job_rules_its_cause_out (py_item_sync_fixed);
  4. number_check.py/match.py API_CLAUSE: test_a_number_beside_an_api_name_is_that_apis_statistic
     (ho_py_sync_per_op: a `cudaDeviceSynchronize` median at the kernels' median is refused, at the API's accepted;
     '400 `cudaDeviceSynchronize` calls' is not matched to the 400 kernels);
  5. checks.py `_BOUND_WORDS`: test_host_bound_in_plain_words (cu_host_work accepted, cu_sgemm_fp32's busy timeline
     refuses the bound; without the words the mechanism names no cause);
  6. direction.py arrows and 'climb': test_an_arrow_or_climb_beside_a_metric_gives_the_fix_direction
     (h5_reg_occupancy: '↑'/'climb' accepted, '↓'/'fall' the wrong way);
  7. form.py `_FIX_WORDS`: test_more_fix_labels (cu_pageable_copy: 'Corrective actions:', 'Mitigation:', ... open
     the fix; 'Observations:' does not, and the fix is missing);
  8. roles.py `_DO`: test_the_only_thing_that_would_help_says_what_to_do (cu_pageable_copy, one paragraph);
  9. fixes.py `_block_over_register_file`: test_blocks_whose_registers_exceed_the_register_file_are_the_wrong_way
     (h5_reg_occupancy, 177 registers per thread: twice its block size is refused, half is not);
     `_wider_dtype`: test_float64_for_a_memory_bound_cost_is_the_wrong_way (py_fused_gelu);
 10. catalog.py occupancy_limit words: test_not_enough_resident_warps_claims_the_occupancy_limit
     (h5_reg_occupancy accepted; h5_reg_occupancy_fixed, at full occupancy, refuses it).
Every number in an answer is read from the capture at test time (ncu metrics, the diagnosis, the timeline facts,
the SASS listing).
"""
from __future__ import annotations

import re

import pytest
from critic_case import answer, case, engine_value  # noqa: F401 (the fixture)

from kernel_profiler.critic import facts_for, parse_answer
from kernel_profiler.critic.direction import fix_metric_direction


def _fact(c, metric: str, kernel: str | None = None) -> float:
    return next(x.value for x in facts_for(c.arts, c.dg).items if x.metric == metric and
                (kernel is None or (x.kernel and kernel in x.kernel)))


# ----------------------------------------------------------------------------- 1. a generic bound, refined
def test_a_generic_bound_is_refined_by_the_cause_the_mechanism_names(case):
    c = case("cu_pageable_copy")
    frac, bw = engine_value(c, "timeline.copy_fraction"), engine_value(c, "timeline.host_copy_bandwidth")

    def critique(cause: str):
        return c.critique(answer(
            "The program is transfer-bound: copies take almost the whole run.",
            [f"copies occupy {100 * frac:.1f}% of the window (nsys)",
             f"host-to-device copies run at {bw / 1e9:.2f} GB/s (nsys)"],
            f"Every host-to-device copy waits on the link, so the GPU idles while data moves; {cause}.",
            "Allocate the host buffers with cudaMallocHost; the host copy bandwidth should increase several-fold."))
    refined = critique("the copies' source is pageable memory, staged by the CPU through a bounce buffer")
    assert refined.mechanism == "pageable_transfer" and refined.verdict == "accept", refined.reasons
    generic = critique("the copies move the whole data set every step")
    assert generic.mechanism == "transfer_volume" and not generic.checks["signature"], generic.reasons


# ----------------------------------------------------------------------------- 2. code spans that name a cause
def test_a_code_span_that_names_a_cause_is_read_as_words(case):
    c = case("py_item_sync")
    busy, idle = engine_value(c, "timeline.gpu_busy_fraction"), engine_value(c, "timeline.idle_host_sync_ns")

    def critique(code: str):
        return c.critique(answer(
            f"The GPU is idle half the time: the loop stalls in {code} every step.",
            [f"GPU busy {100 * busy:.1f}% of the steady window (nsys)",
             f"{idle / 1e6:.2f} ms of GPU idle time is host sync (nsys)"],
            f"Each step the host waits in {code}, then the GPU sits idle while the host prepares the next step, so "
            "host and GPU time add up instead of overlapping.",
            f"Take {code} out of the loop; GPU busy should nearly double."))
    item = critique("`.item()`")
    assert item.mechanism == "host_sync" and item.verdict == "accept", item.reasons
    malloc = critique("`cudaMalloc`")
    assert malloc.mechanism == "allocator_churn" and not malloc.checks["signature"], malloc.reasons


# ----------------------------------------------------------------------------- 3. sizes of the code; a fix that worked
def test_a_size_of_the_code_is_unverified_not_refused(case):
    c = case("h5_shuffle_rowsum_fixed")
    m = c.metrics("row_sums")
    sass = (c.folder / "sass.txt").read_text()
    steps = len(set(re.findall(r"SHFL\.BFLY PT, R\d+, R\d+, (0x[0-9a-f]+)", sass)))  # the butterfly's offsets
    assert steps and steps != _fact(c, "timeline.steps"), steps

    def critique(size: str):
        return c.critique(answer(
            "`row_sums` is memory-bound: it streams the matrix from DRAM.",
            [(f"issue active {m['smsp__issue_active.avg.pct_of_peak_sustained_active']:.1f}% "
              "(ncu smsp__issue_active.avg.pct_of_peak_sustained_active)"),
             f"{m['gpu__time_duration.sum'] / 1e3:.1f} us per launch (ncu gpu__time_duration.sum)"],
            f"{size}, so instruction issue no longer limits it; each row's bytes are read once and the kernel runs "
            f"{c.dg.roofline.gap:.2f}x its DRAM floor.",
            "Stage the row sums in shared memory and store a warp's rows at once; store bytes per sector should "
            "increase several-fold."))
    code = critique(f"The SASS has `SHFL.BFLY` only ({steps} steps per row)")
    assert code.verdict == "accept", code.reasons
    assert any(n.unverified and n.written.startswith(f"{steps} step") for n in code.numbers), code.numbers
    run = critique(f"The butterfly takes {steps} steps")
    assert not run.checks["numbers"] and any("timeline.steps" in r for r in run.reasons), run.reasons


def test_a_fix_that_did_its_job_rules_its_cause_out(case):
    c = case("py_item_sync_fixed")
    busy = _fact(c, "timeline.gpu_busy_fraction")

    def critique(head: str):
        return c.critique(answer(
            head, [f"GPU busy {100 * busy:.1f}% of the steady window (nsys)"],
            "The host runs its bookkeeping between launches, so the GPU waits for work and sits idle between the "
            "GEMMs for a quarter of the window.",
            "Capture the step in a CUDA graph so launches no longer wait on the host; GPU busy should increase."))
    done = critique("The sync fix did its job: the remaining idle time is the host's bookkeeping between launches.")
    assert done.mechanism is None and done.verdict == "accept", done.reasons
    still = critique("The sync is still the problem: the remaining idle time is the host's bookkeeping between "
                     "launches.")
    assert still.mechanism == "host_sync" and not still.checks["signature"], still.reasons


# ----------------------------------------------------------------------------- 4. a number beside an API name
def test_a_number_beside_an_api_name_is_that_apis_statistic(case):
    c = case("ho_py_sync_per_op")
    busy = _fact(c, "timeline.gpu_busy_fraction")
    api_median, kernel_median = _fact(c, "api.cudaDeviceSynchronize.median_ns"), _fact(c, "timeline.kernel_median_ns")
    api_calls, kernels = _fact(c, "api.cudaDeviceSynchronize.calls"), _fact(c, "timeline.kernel_count")
    assert abs(api_median / kernel_median - 1) > 0.2 and abs(api_calls / kernels - 1) > 0.2

    def critique(evidence: str):
        return c.critique(answer(
            "The loop is host-bound: a device-wide synchronization after every op drains the GPU queue.",
            [f"GPU busy {100 * busy:.1f}% of the steady window (nsys)", evidence],
            "Each synchronization waits for the GPU to drain, then the GPU sits idle while the host issues the next "
            "op, so host and GPU time add up instead of overlapping.",
            "Remove the per-op synchronization and synchronize once per step; GPU busy should increase."))
    kernel_time = critique(f"the median `cudaDeviceSynchronize` call takes {kernel_median / 1e3:.1f} us (nsys)")
    assert not kernel_time.checks["numbers"], kernel_time.reasons
    assert any("api.cudaDeviceSynchronize.median_ns" in r for r in kernel_time.reasons), kernel_time.reasons
    api_time = critique(f"the median `cudaDeviceSynchronize` call takes {api_median / 1e3:.1f} us (nsys)")
    assert api_time.verdict == "accept", api_time.reasons

    def matched(v, n: float):  # the audit of the evidence line's call count
        return next(a for a in v.numbers if a.written.startswith(f"{n:.0f} call"))
    kernel_count = critique(f"{kernels:.0f} `cudaDeviceSynchronize` calls (nsys)")
    assert not (matched(kernel_count, kernels).fact or "").startswith("timeline."), kernel_count.numbers
    api_count = critique(f"{api_calls:.0f} `cudaDeviceSynchronize` calls (nsys)")
    assert (matched(api_count, api_calls).fact or "").startswith("api.cudaDeviceSynchronize.calls"), api_count.numbers


# ----------------------------------------------------------------------------- 5. host-bound in plain words
@pytest.mark.parametrize("head", ["The reason is the host: the GPU waits for each batch.",
                                  "The CPU can't keep up: the GPU waits for each batch.",
                                  "Keeping the GPU fed is the problem: it waits for each batch.",
                                  "The program is bound by the host: the GPU waits for each batch."])
def test_host_bound_in_plain_words(case, head):
    h = case("cu_host_work")
    busy, idle = engine_value(h, "timeline.gpu_busy_fraction"), engine_value(h, "timeline.idle_host_work_ns")

    def critique(c, bottleneck: str):
        return c.critique(answer(
            bottleneck,
            [f"GPU busy {100 * busy:.1f}% of the steady window (nsys)",
             f"{idle / 1e6:.2f} ms of GPU idle time is host work (nsys)"],
            "The GPU has nothing queued while the host prepares each batch, so most of every step is host time with "
            "the GPU idle; a faster kernel cannot move the step.",
            "Prepare the batch on the GPU; GPU busy should increase several-fold."))
    host = critique(h, head)
    assert host.verdict == "accept", host.reasons
    unnamed = critique(h, "The GPU waits for each batch.")
    assert not unnamed.checks["mechanism"], unnamed.reasons
    busy_gpu = critique(case("cu_sgemm_fp32"), head)
    assert not busy_gpu.checks["bound"], busy_gpu.reasons


# ----------------------------------------------------------------------------- 6. arrows and 'climb'
def _occupancy(c, head: str, fix: str):
    m = c.metrics("chase")
    return c.critique(answer(
        head,
        [f"{m['launch__registers_per_thread']:.0f} registers per thread (ncu launch__registers_per_thread)",
         (f"{m['sm__warps_active.avg.pct_of_peak_sustained_active']:.1f}% achieved occupancy "
          "(ncu sm__warps_active.avg.pct_of_peak_sustained_active)")],
        "Each SM has too few loads in flight to cover DRAM latency, so the kernel runs far from its memory floor.",
        fix))


_LATENCY = "`chase` is latency-bound: its registers cap occupancy, too few warps to hide the load latency."
_LIVE = "Keep only the tile's running sum live across the loop; "


@pytest.mark.parametrize("up,down", [("achieved occupancy ↑ several-fold", "achieved occupancy ↓ several-fold"),
                                     ("achieved occupancy should climb several-fold",
                                      "achieved occupancy should fall several-fold")])
def test_an_arrow_or_climb_beside_a_metric_gives_the_fix_direction(case, up, down):
    c = case("h5_reg_occupancy")
    rises = _occupancy(c, _LATENCY, _LIVE + up + ".")
    assert fix_metric_direction(up)[1] == "increase" and fix_metric_direction(down)[1] == "decrease"
    assert rises.checks["fix"] and rises.verdict == "accept", rises.reasons
    falls = _occupancy(c, _LATENCY, _LIVE + down + ".")
    assert not falls.checks["fix"] and any("decrease" in r for r in falls.reasons), falls.reasons


# ----------------------------------------------------------------------------- 7. more fix labels
_PINNED = ("Pinned host buffers (cudaMallocHost) in place of the pageable ones; the host copy bandwidth should "
           "increase several-fold.")
_SEEN = "The host buffers come from a plain malloc, so every copy is staged through the driver."


def _pageable(c) -> dict[str, str]:
    frac, bw = engine_value(c, "timeline.copy_fraction"), engine_value(c, "timeline.host_copy_bandwidth")
    return {"verdict": "The program is transfer-bound on copies from pageable memory.",
            "measured": f"nsys shows copies occupy {100 * frac:.1f}% of the window at {bw / 1e9:.2f} GB/s.",
            "evidence": f"- copies occupy {100 * frac:.1f}% of the window (nsys)\n"
                        f"- host-to-device copies run at {bw / 1e9:.2f} GB/s (nsys)",
            "why": "Every copy's source is pageable memory, so the driver stages it through a bounce buffer at "
                   "CPU-copy speed and the GPU idles while data moves."}


@pytest.mark.parametrize("label", ["Corrective actions", "Mitigation", "Treatment", "Proposed changes",
                                   "What we are going to try"])
def test_more_fix_labels(case, label):
    c = case("cu_pageable_copy")
    s = _pageable(c)

    def text(lab: str) -> str:
        return (f"Bottleneck: {s['verdict']}\n\nEvidence:\n{s['evidence']}\n\nMechanism: {s['why']}\n\n"
                f"{lab}: {_PINNED}\n")
    labelled = c.critique(text(label))
    assert labelled.verdict == "accept", labelled.reasons
    assert parse_answer(text(label)).fix_text == _PINNED
    other = c.critique(text("Observations").replace(_PINNED, _SEEN))  # (a change under any label, with the move it
    assert any("fix part is missing" in r for r in other.reasons), other.reasons  # predicts, is read as the fix)


# ----------------------------------------------------------------------------- 8. 'the only thing that would help'
@pytest.mark.parametrize("do", ["The only thing that would help is", "The one lever left is",
                                "The one change that remains is"])
def test_the_only_thing_that_would_help_says_what_to_do(case, do):
    c = case("cu_pageable_copy")
    s = _pageable(c)
    rest = " pinned host buffers (cudaMallocHost): host copy bandwidth should increase several-fold."
    helps = f"{s['verdict']} {s['measured']} {s['why']} {do}{rest}"
    said = c.critique(helps)
    assert said.verdict == "accept" and parse_answer(helps).fix_text == f"{do}{rest}", said.reasons
    seen = c.critique(f"{s['verdict']} {s['measured']} {s['why']} The only thing that stands out is pinned host "
                      "buffers (cudaMallocHost): they are not used.")  # (no change proposed, no move predicted)
    assert any("fix part is missing" in r for r in seen.reasons), seen.reasons


# ----------------------------------------------------------------------------- 9. wrong-way fixes
def test_blocks_whose_registers_exceed_the_register_file_are_the_wrong_way(case):
    c = case("h5_reg_occupancy")
    m = c.metrics("chase")
    regs, block = m["launch__registers_per_thread"], int(m["launch__block_size"])
    per_sm = m["device__attribute_max_registers_per_multiprocessor"]
    bigger, smaller = 2 * block, block // 2
    assert bigger * regs > per_sm >= smaller * regs, (regs, block, per_sm)
    for form in ("Launch blocks of {} threads", "Use {}-thread blocks"):
        fix = form + " so more warps are resident; achieved occupancy should increase several-fold."
        over = _occupancy(c, _LATENCY, fix.format(bigger))
        assert not over.checks["fix"] and any("registers per block" in r for r in over.reasons), over.reasons
        fits = _occupancy(c, _LATENCY, fix.format(smaller))
        assert fits.checks["fix"] and fits.verdict == "accept", fits.reasons


def test_float64_for_a_memory_bound_cost_is_the_wrong_way(case):
    c = case("py_fused_gelu")
    m = c.metrics("vectorized_elementwise_kernel")
    dram, read = m["gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"], m["dram__bytes_read.sum"]

    def critique(fix: str):
        return c.critique(answer(
            "The GELU kernel is DRAM-bandwidth bound and already close to its roofline.",
            [f"the kernel runs at {dram:.1f}% DRAM throughput (ncu)",
             f"reads {read / 1e6:.0f} MB from DRAM (ncu dram__bytes_read.sum)"],
            "Each element is read once and written once, so the kernel's time is its bytes over the DRAM bandwidth; "
            "it sits near the floor that bandwidth sets.", fix))
    for wider in ("Run the GELU in float64 at the call site", "Use `.double()` on the input"):
        wrong = critique(f"{wider}; the kernel time should decrease slightly.")
        assert not wrong.checks["fix"] and any("8-byte doubles" in r for r in wrong.reasons), wrong.reasons
    away = critique("Move the GELU from float64 to float32 at the call site; the kernel time should decrease slightly.")
    assert away.checks["fix"] and away.verdict == "accept", away.reasons


# ----------------------------------------------------------------------------- 10. the occupancy cause in plain words
@pytest.mark.parametrize("words", ["there are not enough resident warps", "there are too few active warps"])
def test_not_enough_resident_warps_claims_the_occupancy_limit(case, words):
    fix = "Keep fewer values live across the loop; achieved occupancy should increase several-fold."
    head = f"`chase` is latency-bound: {words} to hide the load latency."
    limited = _occupancy(case("h5_reg_occupancy"), head, fix)
    assert limited.mechanism == "occupancy_limit" and limited.verdict == "accept", limited.reasons
    fixed = case("h5_reg_occupancy_fixed")
    claimed = _occupancy(fixed, head, fix)
    assert claimed.mechanism == "occupancy_limit" and not claimed.checks["signature"], claimed.reasons
    other = _occupancy(fixed, "`chase` is latency-bound: too few loads are in flight to hide the load latency.", fix)
    assert other.checks["signature"] and other.verdict == "accept", other.reasons
