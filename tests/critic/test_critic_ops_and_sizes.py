"""Numbers a PyTorch trace or the program's source gives (issue 10, item 1: facts with provenance), on real H200
captures, each with a twin that goes the other way:
  - facts.py `_op_facts`: a framework op's calls and per-call host time from the Kineto trace (cpu_op events,
    aggregated by the reader) are facts: quoted right they are matched, a per-call time off by 1.6x is refused
    (test_framework_op_statistics_are_facts);
  - unverified.py `_DTYPES`: "64M int32" counts elements of the program's arrays, a size from the source, listed as
    unverified; the same number given as bytes is held to the byte count (test_an_element_count_is_a_source_size);
  - unverified.py `_DIMENSION`: "with K = 8191" sets a dimension in the code, not a measurement
    (test_a_dimension_set_in_the_code_is_a_source_size);
  - unverified.py `EVIDENCE_MISS`: an evidence line's first number more than 10x from the only kernel metric its
    words meet is not a misreading of that metric; within 10x it is (test_a_headline_far_from_the_metric_it_meets);
    a number the words pin to a program statistic is a misreading of it up to 10x off, not 20x
    (test_a_program_statistic_misread_up_to_10x);
  - facts.py: the CUDA API statistics of a PyTorch trace beside an nsys capture are facts of the trace
    (test_api_statistics_of_a_trace_beside_nsys_are_facts);
  - numbers.py: "4 Mi floats" is a binary multiplier (test_a_binary_multiplier_in_arithmetic);
  - number_check.py `_PREDICTION`: an evidence line that opens with "Expect" has no headline measurement
    (test_an_evidence_line_that_predicts_has_no_headline);
  - evidence_lines.py `metric_values`: a line's named metric takes the number written at its name, with words,
    commas or bold markers between, not only the line's first number (test_a_named_metric_takes_the_number_at_its_name).
"""
from __future__ import annotations

from pathlib import Path

from critic_case import answer, case  # noqa: F401 (the fixture)

from kernel_profiler.critic import facts_for


DATA = Path(__file__).parent.parent / "data"


def _fact(c, metric: str) -> float:
    return next(f.value for f in facts_for(c.arts, c.dg).items if f.metric == metric)


def _audit(v, written: str):
    return [n for n in v.numbers if n.written.startswith(written)]


def _host_sync_answer(c, line: str):
    """An `.item()`-per-iteration answer about py_item_sync whose one evidence line is `line`."""
    return c.critique(answer(
        "The training step is host-bound: `.item()` blocks the host on every iteration.", [line],
        "Each `.item()` copies the loss to the host and waits for the stream to drain, so the host cannot queue the "
        "next iteration's kernels and the GPU idles between them.",
        "Accumulate the loss on the GPU and read it once per step; the number of `aten::item` calls should decrease "
        "10x and the step time decrease."))


def _item_answer(c, calls: float, median_us: float):
    return _host_sync_answer(c, f"The trace has {calls:.0f} `aten::item` calls, with a median of {median_us:.1f} us "
                                "per `aten::item` (trace.json.gz)")


def test_framework_op_statistics_are_facts(case):
    c = case("py_item_sync")
    calls, median = _fact(c, "api.aten::item.calls"), _fact(c, "api.aten::item.median_ns") / 1e3
    right = _item_answer(c, calls, median)
    assert right.checks["numbers"], right.reasons
    assert any(n.fact and "aten::item" in n.fact for n in _audit(right, f"{median:.1f}")), right.numbers
    assert any(n.fact and "aten::item.calls" in n.fact for n in _audit(right, f"{calls:.0f}")), right.numbers
    wrong = _item_answer(c, calls, median * 1.6)
    assert not wrong.checks["numbers"] and any("aten::item" in r for r in wrong.reasons), wrong.reasons


def _hist_answer(c, read_line: str):
    floor = c.dg.roofline
    return c.critique(answer(
        "`hist4` is latency-bound on contended global atomics.",
        [read_line,
         f"The kernel runs {floor.gap:.0f}x its roofline floor (ncu)"],
        "Every element adds 1 to one of four counters, so the atomics serialise in one L2 slice and the kernel waits "
        f"on their round trips; that keeps it {floor.gap:.0f}x from its memory floor.",
        "Count in shared memory per block and add each block's counts once; gpu__time_duration should decrease by "
        "over 10x."))


def test_an_element_count_is_a_source_size(case):
    c = case("tr_atomic_hist")
    read = _fact(c, "dram__bytes_read.sum")
    elements = read / 4 / 2**20
    counted = _hist_answer(c, f"It reads {elements:.0f}M int32 = {read / 1e6:.0f} MB (dram__bytes_read.sum)")
    assert counted.checks["numbers"], counted.reasons
    assert all(n.unverified for n in _audit(counted, f"{elements:.0f}")), counted.numbers
    as_bytes = _hist_answer(c, f"It reads {elements:.0f} MB from DRAM (dram__bytes_read.sum)")
    assert not as_bytes.checks["numbers"], as_bytes.reasons


def _gemm_row(c, opening: str):
    return c.critique(answer(
        "The GEMM runs off the tensor-core fast path because its rows are not 16-byte aligned.",
        [f"{opening}, a row of `a` is 16,382 bytes, which is not 16-byte aligned, so cuBLAS falls back from its Hopper "
         "(TMA + wgmma) kernels to an alignment-1 tensor-core kernel."],
        "An odd inner dimension leaves each bf16 row 2 bytes short of a 16-byte multiple, so cuBLAS picks a kernel "
        "that cannot use aligned vector loads.",
        "Pad K to 8192 at the call site; the GEMM time should decrease."))


def test_a_dimension_set_in_the_code_is_a_source_size(case):
    c = case("h8_py_bf16_odd_k")
    for opening in ("With K = 8191", "K is 8191", "The inner dimension (K) is 8191"):
        v = _gemm_row(c, opening)
        assert not any("'8191'" in r for r in v.reasons), (opening, v.reasons)
    bare = _gemm_row(c, "With 8191 per row")
    assert any("'8191'" in r for r in bare.reasons), bare.reasons


def test_a_headline_far_from_the_metric_it_meets(case):
    """blind31's b31_small_qa (a correct answer about ho_small_grid_compute) opens an evidence line with "The work is
    1M independent 200-iteration chains" under "Why is that the limit?": its words meet only the kernel's
    launch__occupancy_limit_barriers (32), 31,000x away, so the number is not a misreading of it. Written as 300
    (9.4x from 32) it is, and is refused."""
    c = case("ho_small_grid_compute")
    text = (DATA / "adversarial_blind31" / "answers" / "b31_small_qa.md").read_text(encoding="utf-8")
    assert "The work is 1M independent" in text
    far = c.critique(text)
    assert not any("launch__occupancy_limit_barriers" in r for r in far.reasons), far.reasons
    near = c.critique(text.replace("The work is 1M independent", "The work is 300 independent"))
    assert any("'300'" in r and "launch__occupancy_limit_barriers" in r for r in near.reasons), near.reasons


def _sync_answer(c, median_us: float):
    return _host_sync_answer(c, f"In trace.json.gz, `cudaStreamSynchronize` takes a median of {median_us:.1f} us per "
                                "call")


def test_api_statistics_of_a_trace_beside_nsys_are_facts(case):
    """py_item_sync holds an nsys capture and a PyTorch trace of another run: the trace's CUDA API statistics are
    facts of the trace (before, only the nsys capture's were), so its median is matched and a 1.6x one refused."""
    c = case("py_item_sync")
    medians = {f.artifact.rsplit("/", 1)[-1]: f.value / 1e3 for f in facts_for(c.arts, c.dg).items
               if f.metric == "api.cudaStreamSynchronize.median_ns"}
    traced = medians["trace.json.gz"]
    assert abs(traced - medians["nsys.sqlite"]) > 0.05 * traced  # two runs: the trace's value is its own
    right = _sync_answer(c, traced)
    assert right.checks["numbers"], right.reasons
    wrong = _sync_answer(c, traced * 1.6)
    assert not wrong.checks["numbers"], wrong.reasons


def _copy_answer(c, step_ms: float):
    return c.critique(answer(
        "The program is transfer-bound: every step uploads its input from pageable host memory.",
        [f"The step median is about {step_ms:.1f} ms (nsys.sqlite)"],
        "Pageable memory is staged through a bounce buffer by the driver, so each upload runs far below the link's rate "
        "and the GPU waits for it every step.",
        "Allocate the host buffer pinned (cudaMallocHost); the copy time should decrease several-fold."))


def test_a_program_statistic_misread_up_to_10x(case):
    """unverified.py EVIDENCE_MISS: an evidence line's number that the words pin to a program-level statistic ("the step
    median") and that misses it by 7x (a fixed twin's step time, say) is refused; 20x off it is something else."""
    c = case("cu_pageable_copy")
    step = _fact(c, "timeline.steady_step_median_ns") / 1e6
    seven = _copy_answer(c, step / 7)
    assert any("steady_step_median" in r for r in seven.reasons), seven.reasons
    twenty = _copy_answer(c, step / 20)
    assert not any("steady_step_median" in r for r in twenty.reasons), twenty.reasons


def _sector_answer(c, useful: float):
    m = c.metrics("gather_transpose")
    sectors, requests = (m[f"l1tex__t_{x}_pipe_lsu_mem_global_op_ld.sum"] for x in ("sectors", "requests"))
    return c.critique(answer(
        "`gather_transpose` is memory-bound on uncoalesced loads.",
        [f"{sectors / requests:.0f} sectors per load request ({sectors:,.0f} sectors / {requests:,.0f} requests) and "
         f"{useful:.1f} bytes used per sector, `smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio` "
         "(ncu.ncu-rep)"],
        "Neighbouring lanes read addresses a whole row apart, so each warp load touches 32 sectors and uses 4 bytes "
        "of each; the kernel moves 8x the bytes it needs and runs that far above its DRAM floor.",
        "Read the input along rows (or stage a tile through shared memory); sectors per request should fall from 32 "
        "to 4 and the kernel time decrease several-fold."))


def test_a_named_metric_takes_the_number_at_its_name(case):
    """A line that opens with another measurement (32 sectors per request) and names
    `..._bytes_per_sector_...ratio` after its own value ("4.0 bytes used per sector, `metric`") is not refused for
    the first number; the same line with 9.0 bytes per sector is."""
    c = case("ot_py_triton_jit")
    useful = c.metrics("gather_transpose")["smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"]
    right = _sector_answer(c, useful)
    assert not any("bytes_per_sector" in r for r in right.reasons), right.reasons
    wrong = _sector_answer(c, useful + 5)
    assert any("bytes_per_sector" in r for r in wrong.reasons), wrong.reasons


def _work_answer(c, total_mb: float):
    return c.critique(answer(
        "The Triton kernel runs too few programs to fill the GPU.",
        [f"Work needed: 3 x 4 Mi floats x 4 B = {total_mb:.1f} MB, ~10.5 us at 4.81 TB/s"],
        "Each program walks its chunks serially, so a handful of SMs do all the work while the rest idle; the kernel "
        "runs far above its DRAM floor.",
        "Launch one program per 1024-element block; the kernel time should decrease by over 10x."))


def test_a_binary_multiplier_in_arithmetic(case):
    """numbers.py: "4 Mi floats" is 4 x 2^20 (a binary multiplier, as "4 MiB" is a binary unit), so
    3 x 4 Mi x 4 B = 50.3 MB holds and 60.3 MB does not."""
    c = case("tr_low_parallelism")
    right = _work_answer(c, 3 * 4 * 2**20 * 4 / 1e6)
    assert right.checks["arithmetic"], right.reasons
    wrong = _work_answer(c, 60.3)
    assert not wrong.checks["arithmetic"], wrong.reasons


def _predicting_answer(c, opening: str):
    lanes = c.metrics("branchy")["smsp__thread_inst_executed_per_inst_executed.ratio"]
    inst = c.metrics("branchy")["smsp__inst_executed.sum"]
    return c.critique(answer(
        "`branchy` is compute-bound by warp divergence.",
        [f"{lanes:.1f} active threads per instruction (ncu smsp__thread_inst_executed_per_inst_executed.ratio)",
         f"{opening} `smsp__inst_executed.sum` to drop ~8x ({inst:.3g} -> ~{inst / 8:.2g}) once lanes agree"],
        "Lanes of each warp take different sides of the data-dependent branch, so each warp runs both paths with most "
        f"lanes masked off; the SM issues many instructions for little useful work and the kernel runs "
        f"{c.dg.roofline.gap:.1f}x its roofline floor.",
        "Sort the elements by branch so each warp takes one path; smsp__inst_executed.sum should decrease ~8x."))


def test_an_evidence_line_that_predicts_has_no_headline(case):
    """number_check._PREDICTION: an evidence line that opens with "Expect" predicts; its first number (~8x) is no
    measurement it cites, so it is not held as the line's headline. The same line as a statement of fact
    ("Measured: ... drops ~8x") is."""
    c = case("cu_divergence")
    expect = _predicting_answer(c, "Expect")
    assert expect.checks["numbers"], expect.reasons
    stated = _predicting_answer(c, "Measured:")
    assert not stated.checks["numbers"], stated.reasons
