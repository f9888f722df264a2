"""What a number measures: one vocabulary of concepts for metric names and for the words of an answer.

A fact in the captures gets concepts from its metric name (`METRIC_CONCEPTS`); a number in an
answer gets concepts from the words next to it and from its unit (`TEXT_CONCEPTS`, `UNIT_CONCEPTS`).
A number can only match a fact that shares a concept with the words describing it, so an invented
percentage that happens to equal some unrelated counter does not pass.
"""
from __future__ import annotations

import re
from functools import lru_cache

from ..catalog import TENSOR_OPS

# A throughput, hit rate, byte count or bandwidth is a measure of one memory level (DRAM, L2, L1): a number whose own
# clause names a level matches only that level's metrics (match.describes), so "91.3% DRAM throughput" is not
# read as the L2's 91.5%. Sector and request counts carry no level (writers say "DRAM sectors" for L1's counts).
LEVELS = frozenset({"lvl_dram", "lvl_l2", "lvl_l1"})
_LEVELLED = r"^(?=.*(?:throughput|hit_rate|bytes|per_second|pct_of_peak|bandwidth)).*"
# metric-name pattern -> concepts (all patterns that match contribute)
METRIC_CONCEPTS: list[tuple[re.Pattern, frozenset[str]]] = [(re.compile(p), frozenset(c.split())) for p, c in [
    (r"gpu__time_duration|roofline_duration|streaming_duration|kernel_(median|mean|total|min|max)_ns", "duration"),
    (r"timeline\.kernel_ns", "duration busy"),
    (r"roofline_floor", "floor"),
    (r"roofline_gap|roofline_slack", "gap"),
    (r"roofline_pct_of_peak|fraction_of_peak", "peak gap sol"),
    (r"^dram__bytes(_read|_write)?\.sum$|roofline_dram_bytes|roofline_needed_bytes|streaming_dram_bytes", "dram_bytes bytes"),
    (r"dram__bytes_read", "read"), (r"dram__bytes_write", "write"),
    (r"dram__bytes\.sum\.per_second|achieved_bandwidth|copy_bandwidth", "bandwidth"),
    (r"achieved_flops|flops_per_second", "flop_rate"),
    (r"roofline_flops$", "flops"),
    (r"arithmetic_intensity", "intensity"),
    (r"^ceiling\.|peak_sustained$|^device\.(fp|tf|bf|dram)", "peak"),
    (r"ceiling\.dram|device\.dram", "bandwidth"),
    (r"ceiling\.(?!dram)|device\.(fp|tf|bf)", "flop_rate"),
    (r"^sm__throughput", "sol sol_sm"), (r"issue_active|issue_slot", "issue"),
    (r"gpu__compute_memory_throughput", "sol sol_mem"),
    (r"gpu__dram_throughput|dram__throughput|^dram__cycles_active\.avg\.pct", "sol sol_dram"),
    (r"^l1tex__throughput", "sol l1"), (r"^lts__throughput", "sol l2"),
    (r"^lts__t_sector\w*hit_rate", "l2 hit_rate"), (r"^l1tex__t_sector\w*hit_rate", "l1 hit_rate"),
    (r"sm__warps_active|achieved_occupancy|sm__maximum_warps_per_active_cycle_pct|occupancy_per|warps_per_sm|"
     r"theoretical_occupancy", "occupancy"),
    (r"launch__occupancy_limit", "occupancy occupancy_limit"),
    (r"registers", "registers"),
    (r"shared_mem|shared_bytes|smem", "shared_mem"),
    (r"launch__grid_size|grid_blocks|grid_[xyz]$|\.grid$", "grid"),
    (r"launch__block_size|\.block$|block_[xyz]$", "block"), (r"launch__thread_count", "block"),
    (r"issue_floor", "floor issue_floor"), (r"whole_run_overlap_pairs", "overlap streams launches"),
    (r"sm_count|multiprocessor_count|_sms$", "sm_count"), (r"idle_sms", "idle"), (r"busy_sms", "busy"),
    # the device's per-SM and per-block limits (ncu device__attribute_*): the ceilings of occupancy
    (r"device__attribute_max_(warps|threads|blocks)_per_(multiprocessor|scheduler)|limits_max_cta_per_sm",
     "occupancy peak"), (r"device__attribute_max_threads_per_block", "block peak"),
    (r"device__attribute_max_(registers_per_(thread|block|multiprocessor))", "registers peak"),
    (r"device__attribute_max_shared_memory_per", "shared_mem peak"),
    (r"kernels_per_step", "launches steps"), (r"^device\.link_bandwidth", "link peak bandwidth"),
    (r"kernel_gap", "idle"), (r"kernel_period", "period"), (r"median", "stat_median"), (r"_mean_|\.mean_ns$", "stat_mean"),
    (r"_max_ns$|\.max_ns$", "stat_max"), (r"_min_ns$|\.min_ns$", "stat_min"),
    (r"global_(ld|st)_bytes", "bytes global"), (r"global_ld_bytes", "read"), (r"global_st_bytes", "write"),
    (r"waves_per_multiprocessor", "waves"),
    (r"_sectors", "sectors"), (r"_requests", "requests"),
    (r"sectors_per_request", "sectors_per_request coalescing"),
    (r"bytes_per_sector", "bytes_per_sector coalescing"),
    (r"mem_global", "global"),
    (r"wavefronts", "wavefronts"),
    (r"bank_conflict|shared_ways", "bank_conflict"),
    (r"mem_shared|op_shared|sass\.(LDS|STS)", "shared_access"),
    (r"mem_local|spill|stack|sass\.(LDL|STL)|local_bytes|_local_(?:ld|st|loads|stores)\b", "local"),
    (r"stack", "stack"), (r"spill", "spill"),
    (r"thread_inst_executed_per_inst_executed", "divergence"),
    (r"tensor|sass\.(" + "|".join(TENSOR_OPS) + ")", "tensor"),
    (r"pipe_fma|sass\.FFMA", "fma"), (r"pipe_alu\b|pipe_alu_", "pipe_alu"), (r"pipe_xu\b|pipe_xu_", "pipe_xu"),
    (r"^l1tex__lsu_writeback_active\.", "l1"),  # ncu's "LSU" pipe utilization
    (r"inst_executed_pipe_lsu\b", "l1"),  # the LSU pipe's share of issued instructions ("LSU pipe 74.4%")
    (r"inst_executed\.sum$|^sass\.|sass_?_?inst_executed_(?:op_)?\w+\.sum$|sass__inst_executed_|"
     r"^smsp__inst_executed_op_\w+\.sum$", "inst"),  # warp instructions of one kind (shared atomics, ...)
    (r"stalled|pcsamp_sample_count", "stall"), (r"long_scoreboard", "scoreboard"), (r"mio_throttle", "mio"), (r"barrier", "barrier"),
    (r"atom|_red\.|sass\.(RED|ATOM)", "atomic"),
    (r"timeline\.(busy|gpu_busy)", "busy"),
    (r"timeline\.idle", "idle"),
    (r"idle_host_sync|sync_calls", "sync"),
    (r"idle_launch|launch_overhead", "launches"),
    (r"idle_host_work", "host_work"), (r"alloc", "allocator"),
    (r"timeline\.(window|step)", "window"),
    (r"timeline\.(first_step|steady_step_median)_ns$", "duration window steps"), (r"first_step", "startup"),
    (r"steps$", "steps"),
    (r"timeline\.startup", "startup"),
    (r"onetime", "startup onetime"), (r"onetime_module_loading", "module_loading"),
    (r"repeats$", "steps window"), (r"launches_per_step", "launches steps"),
    (r"timeline\.capture", "capture"),
    (r"timeline\.copy|copy_bytes|copy_count|copy_median", "copy"), (r"timeline\.copy_uvm", "migration"),
    (r"timeline\.copy_(uvm_)?htod", "read"), (r"timeline\.copy_(uvm_)?dtoh", "write"),
    (r"timeline\.copy_\w+_count_capture", "launches"),
    (r"pageable", "pageable"), (r"pinned", "pinned"), (r"memset", "memset"),
    (r"sysmem|host_read|pcie__", "host_memory copy"), (r"host_read_bytes|pcie__read", "read"),
    (r"pcie__\w+\.per_second|host_read_bandwidth", "bandwidth"), (r"host_read_share", "share"),
    (r"timeline\.migration", "migration copy"), (r"migration_htod", "read"), (r"migration_dtoh", "write"),
    (r"migration_count", "launches"), (r"migration_busy_share", "share busy"), (r"migration_ns", "duration"),
    (r"kernel_streams|overlapping_kernel|null_stream", "streams"), (r"overlapping_kernel", "overlap launches"),
    (r"null_stream", "null_stream"),
    (r"launches$|kernel_count|streaming_kernels", "launches"),
    (r"kernel_share|\.share$|_share$", "share"),
    (r"streaming_", "passes"),
    (r"cycles_elapsed\.avg\.per_second|sm_clock", "clock"),
    (r"cycles_(?:elapsed|active)\.(?:avg|max|min|sum)$", "cycles"),  # a count of cycles: "30.7K of 256.4K elapsed cycles"
    (r"^rule\.", "speedup"),
    (r"rank\.", "rank"), (r"collective", "comms"), (r"first_launch_lag", "lag launches"),
    (r"^rank\.compute_ns", "duration busy"), (r"^rank\.step_", "window"),  # a rank's GPU compute per step; its steps
    # the memory level a throughput, hit rate, byte count or bandwidth belongs to (`LEVELS`)
    (_LEVELLED + r"(?:dram|fbpa__)|achieved_bandwidth|fraction_of_peak_bandwidth|^ceiling\.(?:roofline_)?dram|"
     r"^device\.dram", "lvl_dram"),
    (_LEVELLED + r"(?:(?:^|[._])lts[._\d]|^LTS\.)", "lvl_l2"), (_LEVELLED + r"l1tex", "lvl_l1"),
    (r"(?<!dst_)fp32|ffma", "fp32"), (r"tf32", "tf32 tensor"), (r"bf16", "bf16 tensor"),
    (r"(?<![bd])fp16|(?<![bd])(?<!dst_)f16", "fp16 tensor"), (r"fp8", "fp8 tensor"), (r"fp64|dfma", "fp64"),
]]

# answer words -> concepts
TEXT_CONCEPTS: list[tuple[re.Pattern, frozenset[str]]] = [(re.compile(p, re.I), frozenset(c.split())) for p, c in [
    (r"duration|\btakes?\b|\btook\b|\bruns?\b|\blasts?\b|\bmeasured\b|kernel time|execution time|elapsed|"
     r"\bmedian\b|\bmean\b|\baverage\b|per launch|each launch|per call|spends?|spent|\blong\b|\bus\b|\bms\b", "duration"),
    (r"\bfloor|minimum time|ideal time|lower bound|could (run|finish)|would take|at best", "floor"),
    (r"\b(?:issue|instruction)[- ](?:floor|limit|bound time)", "issue_floor"),
    (r"\bgap\b|\bfloor\b|roofline|slower than|(away|far) from|\bwithin\b|off (the|its) (roofline|peak)|"
     r"\btimes (its|the)\b|\bx (its|the)\b|\bdone\b|headroom|\bgain|\bbuy(?:s|ing)?\b|\bbought\b|\bsav(e|ing)|improvement|at most", "gap"),
    (r"\bDRAM\b|\bHBM\b|device memory|global memory|bytes|traffic|\bmoved?\b|\bmoves\b|\bGB\b|\bMB\b|GiB|MiB|\bKB\b",
     "dram_bytes bytes"),
    (r"\bread\b|\breads\b|loaded|\bload", "read"), (r"\bwrit(e|es|ten)\b|\bstored?\b|\boutputs?\b", "write"),
    (r"bandwidth|[TGM]B/s|\bthroughput\b|sustain|\bstream", "bandwidth"),
    (r"FLOP/s|FLOPS|\bachiev|\bsustain|\brate\b|throughput|\bdelivers?\b", "flop_rate bandwidth"),
    (r"\bFLOPs?\b|\bflops\b|GFLOP|operations", "flops"),
    (r"intensity|FLOP(s)? per (DRAM )?byte|FLOP/byte", "intensity"),
    (r"\bpeak|ceiling|roofline|\bfloor\b|datasheet|\bmax(imum)?\b|theoretical|\boffers?\b|capable|\bspec\b|\bup to\b|"
     r"\bridge\b|hardware|\blimit\b|speed[- ]of[- ]light|\bSOL\b", "peak"),
    (r"\bissue(?:d|s)?\b.{0,12}(?:active|busy|slots?|utili|%)|\bissue (?:rate|activity)|issue-active", "issue"),
    (r"\bSM\b.{0,20}(throughput|busy|utili)|compute throughput|\bSOL\b|speed[- ]of[- ]light|"
     r"\bSMs?\b (are |is )?busy", "sol sol_sm"),
    (r"memory throughput|memory (unit|system|pipe)s? (is |are )?(busy|utili)|\bSOL\b|speed[- ]of[- ]light|"
     r"memory (is |are )?(busy|utili)", "sol sol_mem"),
    (r"DRAM (throughput|busy|utili)|\bDRAM (is |was )?(at |only |sits at )?(~|\*\*)?\d[\d.]*\s?%|\bbandwidth\b.{0,20}%|% of (the )?(DRAM|HBM|memory) (bandwidth|peak)",
     "sol sol_dram"),
    (r"\b(every|each|all|no) (unit|pipe|memory unit)s?\b", "sol"),
    (r"\b(?:L1(?:TEX)?|L2|LTS)\b(?: cache)?(?: is| was)? (?:throughput|busy|utili)", "sol"),
    (r"\bapart\b|\bpitch\b|\bstrided?\b", "stride"),
    (r"\blanes?\b|(?:consecutive|adjacent|neighbou?ring|successive) threads|threads of (a|the|each) warp", "lanes"),  # "every unit is under 2% busy": SOL of each unit
    (r"\blink\b|\bPCI-?e\b", "link"),
    (r"\bL1\b|L1TEX|shared[- ]memory pipe|\bLSU\b", "l1"), (r"\bL2\b", "l2"),
    (r"\bDRAM\b|\bHBM\w*|device memory|\bVRAM\b|frame ?buffer", "lvl_dram"), (r"\bL2\b|\bLTS\b", "lvl_l2"),
    (r"\bL1(?:TEX)?\b|\bL1/TEX\b", "lvl_l1"),
    (r"\bhit(?:s| rate|-rate)?\b", "hit_rate"),
    (r"occupancy|warps? (are )?(active|resident|in flight)|warp slots|warps per SM|active warps", "occupancy"),
    (r"blocks? per SM|\bcaps?\b|\blimit(s|ed|er|ing)?\b|allow", "occupancy_limit"),
    (r"register", "registers"),
    (r"shared memory|\bsmem\b|shared (array|tile|buffer)", "shared_mem"),
    (r"\bblocks?\b|\bgrid\b|\bCTAs?\b", "grid"),
    (r"threads? per block|block size|blocks? of|\bthreads\b", "block"),
    (r"\bSMs?\b|multiprocessors?", "sm_count"),
    (r"\bwaves?\b", "waves"),
    (r"sectors?", "sectors"), (r"requests?", "requests"),
    (r"sectors? per (warp )?(load |store )?(request|load|access|instruction)|coalesc|scatter", "sectors_per_request coalescing"),
    (r"bytes? per sector|useful bytes|of (every|each) 32[- ]byte|of every 32 bytes|bytes (of|in) (each|every) sector|"
     r"sector efficiency|coalesc|scatter", "bytes_per_sector coalescing"),
    (r"global", "global"),
    (r"wavefronts?|\bway\b|n-way|replays?|serializ", "wavefronts"),
    (r"bank|conflict|\bway\b|n-way", "bank_conflict"),
    (r"shared (load|store|access|memory instruction)|\bLDS\b|\bSTS\b|shared-memory instruction", "shared_access"),
    (r"local|spill|stack|\bLDL\b|\bSTL\b", "local"),
    (r"\bstack", "stack"), (r"spill", "spill"),
    (r"active threads|threads? per (?:(?:warp|executed|issued) )?instruction|threads?/inst|divergen|\blanes?\b|of 32 threads", "divergence"),
    (r"tensor|\bMMA\b|HMMA|HGMMA|WGMMA|wgmma|\bWMMA\b", "tensor"),
    (r"\bFMA\b|\bFFMA\b|FP32 pipe|fp32 pipe|FMA pipe", "fma"), (r"\bALU\b", "pipe_alu"),
    (r"\bXU\b|\bSFU\b|\bMUFU\b", "pipe_xu"),
    (r"instructions?|\binst\b|\bSASS\b", "inst"),
    (r"stall|waiting|cycles? per (issue|instruction)|scoreboard|throttle", "stall"),
    (r"scoreboard|memory latency|waiting on (memory|loads)", "scoreboard"), (r"\bMIO\b|mio", "mio"),
    (r"barrier|__syncthreads", "barrier"),
    (r"atomic|\bATOM\b|\bRED\b", "atomic"),
    (r"\bbusy\b|utili[sz]|\bactive\b|occupied|\bworking\b|kernel time|GPU time", "busy"),
    (r"\bidl(e|es|ed|ing)\b|\bempty\b|\bwaits?\b|\bgaps?\b|starv|nothing (queued|to do|to run|in the queue)|"
     r"no work|(queue|GPU) (is |runs |goes )?(empty|dry)", "idle"),
    (r"synchroni|\bsync\b|\.item\(|blocking", "sync"),
    (r"host work|CPU work|python|host[- ]side|bookkeeping", "host_work"),
    (r"allocat|cudaMalloc|cudaFree|\bmalloc", "allocator"),
    (r"window|\bsteps?\b|iteration|wall|\brun\b|\btotal\b|\bspan\b|steady|program|loop", "window"),
    (r"\bsteps\b|iterations", "steps"),
    (r"start[- ]to[- ]start|\bperiod\b|cadence|launch interval", "period"),
    (r"start-?up|before the first|\bimports?\b|initiali|context creation|set-?up|one-time|warm-?up", "startup"),
    (r"one-?time|first[- ](step|iteration|call|run)|lazy|\bJIT\b|compil|autotun|module load|warm-?up", "onetime"),
    (r"module load|lazy load|library load|cuModuleLoad|cuLibraryLoad", "module_loading"),
    (r"capture|whole run|profil(ed|ing) (run|span)|\btotal\b", "capture"),
    (r"cop(y|ies)|memcpy|transfer|\bH2D\b|\bD2H\b|HtoD|DtoH|PCIe|upload|download|pageable|pinned", "copy"),
    (r"pageable", "pageable"), (r"pinned|page-locked", "pinned"), (r"memsets?\b|cudaMemset", "memset"),
    (r"host memory|system memory|\bsysmem\b|PCIe|zero[- ]copy|\bmapped\b", "host_memory"),
    (r"migrat|unified[- ]memory|managed|page[- ]?faults?|\bUVM\b", "migration"),
    (r"\b(?:\d+|two|three|four|eight|several|multiple|separate|independent|different|other|all|CUDA|blocking|"
     r"non-blocking|kernel) streams\b|\bstreams? (?:#|id )?\d+\b", "streams"), (r"overlap|concurrent|side by side|at the same time", "overlap"),
    (r"default stream|legacy stream|null stream|\bstream 0\b", "null_stream"),
    (r"launch|\bkernels\b|\bcalls\b|invocations|\btimes\b", "launches"),
    (r"\bshare\b|of (the )?(GPU|kernel|total|busy|steady)[- ]?(time|window)|dominat|accounts? for|\bof GPU\b",
     "share"),
    (r"\bpass(es)?\b|fus(e|ion|ed)|round trips?", "passes"),
    (r"clock|GHz|MHz", "clock"),
    (r"speed-?up|estimat|guided|\brule\b", "speedup"),
    (r"\brank", "rank"), (r"collective|all-?reduce|NCCL|all-?gather", "comms"),
    (r"\blag\b|after (?:its|the|each|a) step (?:starts?|begins?|opens?)|first (?:kernel )?launch", "lag"),
    (r"\bFP32\b|fp32|single[- ]precision|\bFFMA\b|FMA pipe", "fp32"), (r"\bTF32\b", "tf32"),
    (r"\bBF16\b|bfloat16", "bf16"), (r"\bFP16\b|half[- ]precision", "fp16"), (r"\bFP8\b", "fp8"),
    (r"\bFP64\b|double[- ]precision", "fp64"),
    (r"\bmedian\b", "stat_median"), (r"\bmean\b|\baverage\b|\bavg\b|\bon average\b", "stat_mean"),
    (r"\bmax(?:imum)?\b|\blongest\b|\bslowest\b|\bworst\b", "stat_max"),
    (r"\bmin(?:imum)?\b|\bshortest\b|\bfastest\b|\bquickest\b", "stat_min"),
    (r"\bx\b|×|\btimes\b|fold|fraction|ratio|faster|slower|\bmore\b|\bfewer\b|\bless\b", "ratio"),
]]

# A count noun after the number says what it counts.
UNIT_CONCEPTS: list[tuple[re.Pattern, frozenset[str]]] = [(re.compile(p, re.I), frozenset(c.split())) for p, c in [
    (r"^sectors?(/|$)", "sectors"), (r"^sectors?/request", "sectors_per_request"),
    (r"^wavefronts?|^way$", "wavefronts bank_conflict"), (r"^requests?", "requests"),
    (r"^registers?|^regs?$", "registers"), (r"^(blocks?|CTAs?)$", "grid occupancy_limit"), (r"^(?:threads?|thr)$|^threads?", "block divergence"),
    (r"^warps?", "occupancy"), (r"^(launch|launches|kernels?)$", "launches"), (r"^calls?$", "launches sync"), (r"^steps?$|^iterations?", "steps"),
    (r"^SMs?$", "sm_count"), (r"^(instructions?|inst)|^warp-inst", "inst"), (r"^(?:warp[- ])?(?:stalls?|samples?)$", "stall"), (r"^conflicts?", "bank_conflict"),
    (r"^banks?", "bank_conflict"), (r"^cycles?", "stall cycles"), (r"^lanes?", "divergence"), (r"^atomics?", "atomic"),
    (r"^copies", "copy"), (r"^pass(es)?$", "passes"), (r"^waves?$", "waves"), (r"^[kKMGTP]?FLOPs?$|^flops?$", "flops"),
    (r"^(ops|operations)$", "launches"), (r"^(?:ops|operations|flops?|FLOPs?)/(?:clk|clock|cycle)", "peak flop_rate"),
    (r"/s$|/sec$", "bandwidth flop_rate"), (r"^[kKMGT]?i?B$|^bytes?$", "bytes"), (r"B/sector|byte/sector|^useful bytes?$", "bytes_per_sector"),
    (r"Hz$", "clock"), (r"^(ns|us|µs|μs|ms|s|sec|seconds?|[a-z]+seconds)$", "duration"),
]]


def _concepts(table: list[tuple[re.Pattern, frozenset[str]]], s: str) -> frozenset[str]:
    """Every concept whose pattern matches s."""
    out: set[str] = set()
    for pat, cs in table:
        if pat.search(s or ""):
            out |= cs
    return frozenset(out)


_API_FACT = re.compile(r"^api\.((?:\w+::)?\w+)\.(calls|\w+_ns)$")
# CUDA runtime/driver API functions named in prose (`cudaLaunchKernel`, `cuLaunchKernel_v2`, `cudaMemcpyAsync`)
# and the framework ops of a PyTorch profiler trace (`aten::item`, `aten::copy_`)
API_NAME = re.compile(r"\b(cu(?:da)?[A-Z]\w*?)(?:_v\d+)?\b|\b(aten::\w+)")


def api_concept(name: str) -> str:
    return "api:" + name.lower()


_API_KINDS = [(r"Synchroni[sz]e", "sync"), (r"Malloc|Free", "allocator"), (r"Launch", "launches"),
              (r"Memcpy|Memset", "copy")]  # what an API function's statistics are about


@lru_cache(maxsize=65536)
def metric_concepts(metric: str) -> frozenset[str]:
    m = _API_FACT.match(metric)
    if m:  # one API function's statistics: host time per call, or the number of calls
        kind = {c for pat, c in _API_KINDS if re.search(pat, m.group(1))}
        stat = {"median_ns": {"stat_median"}, "mean_ns": {"stat_mean"}}.get(m.group(2), set())
        return frozenset({api_concept(m.group(1)), "api", "duration" if m.group(2) != "calls" else "launches"} | kind | stat)
    return _concepts(METRIC_CONCEPTS, metric)


def text_concepts(text: str) -> frozenset[str]:
    return _concepts(TEXT_CONCEPTS, text) | {api_concept(a or b) for a, b in API_NAME.findall(text or "")}


@lru_cache(maxsize=4096)
def unit_concepts(unit: str) -> frozenset[str]:
    return _concepts(UNIT_CONCEPTS, unit)


# concepts many different measurements share: a number whose words meet a fact only in these is not pinned to it
GENERIC = frozenset("sol busy bytes dram_bytes peak ratio window launches share gap bandwidth flop_rate".split()) | LEVELS
