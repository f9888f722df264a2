"""The mechanism catalog: the one place each mechanism kernel-profiler can name is defined.

One `Entry` per mechanism id holds everything the rest of the package says about it:

  id, bounds     the id (the `Mechanism` type of the answer is derived from these ids) and the bound a finding
                 of it carries (first), then the other bounds an answer claiming it may state
  label          how reports name it
  scope          kernel (one kernel's ncu metrics) or program (the timeline, the ranks)
  detector       where the engine decides it ("module:function" under kernel_profiler)
  signature      what the captures must show for a claim of it to stand (a function in signatures.py,
                 checked by the critic), and `idle_cause`: the timeline's idle cause it is about
  words          the prose that claims it (the critic reads a free-text answer with these)
  fixes          the change to make (templates; `fix_text` fills in the measured values)
  fix_metrics    the metrics a fix of it moves and the direction toward the roofline (regexes over the fix's
                 metric or words; the engine's own fix metric matches one of them)
  ncu_rules      ncu guided-analysis rules that agree with it (a second, independent opinion)
  sass           SASS opcodes that confirm it (their count is the `sass.A+B` evidence)

The detectors (analysis/), the critic (critic/, signatures.py) and the renderers read this module; it imports
nothing from the package, so every module can.
"""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Callable, Optional

# SASS opcodes of tensor-core matrix math (Volta..Blackwell: HMMA/IMMA, Hopper warpgroup HGMMA/QGMMA,
# Blackwell UTC*MMA). The one list: the detectors, the critic's signatures and the agent's sass tool read it.
TENSOR_OPS: tuple[str, ...] = ("HMMA", "HGMMA", "IMMA", "QGMMA", "UTCHMMA", "UTCQMMA")
# Kernel names that are matrix products (GEMM, convolution, batched matmul, cuBLAS nvjet, CUTLASS).
GEMM_NAME = re.compile(r"gemm|matmul|xmma|mma|conv|sgemm|dgemm|_mm_|bmm|dot|nvjet|cutlass", re.I)
# A kernel within this factor of its roofline floor is done (method.md: "within ~20% of its floor").
NEAR_PEAK_GAP = 1.25
IDLE_CAUSE_SHARE = 0.15  # a host cause's real share of the idle time (the engine splits idle gaps roughly)
# Bounds of a kernel-level verdict (the others are the timeline's: host, transfer, comms).
# Claimed by an answer only when it names no more specific mechanism (their words are bound words: "transfer-bound").
GENERIC_CLAIMS = ("instruction_bound", "transfer_volume")
KERNEL_BOUNDS = frozenset({"memory", "compute", "latency", "near_peak"})


@dataclass(frozen=True)
class Entry:
    id: str
    bounds: tuple[str, ...]
    label: str
    scope: str  # kernel | program
    detector: str  # "module:function" under kernel_profiler
    signature: str  # function name in signatures.py
    words: re.Pattern
    fixes: dict[str, str]  # variant ("" = default) -> template
    fix_metrics: tuple[tuple[str, str], ...]  # (regex over the fix's metric or words, direction toward the roofline)
    ncu_rules: tuple[str, ...] = ()
    sass: tuple[str, ...] = ()
    idle_cause: Optional[str] = None
    not_words: Optional[re.Pattern] = None  # a clause with these names another thing ("__syncthreads": not the host)
    wrong_way: Optional[tuple[re.Pattern, str]] = None  # a change that moves this cause away from the roofline, and why

    @property
    def bound(self) -> str:
        """The bound a finding of this mechanism carries."""
        return self.bounds[0]

    def fix_text(self, variant: str = "", **values) -> str:
        """The fix, with the measured values filled in (`variant` picks an alternative where there is one)."""
        return self.fixes.get(variant, self.fixes[""]).format(**values)

    def detector_function(self) -> Callable:
        module, func = self.detector.split(":")
        return getattr(importlib.import_module(f"{__package__}.{module}"), func)

    @property
    def sass_metric(self) -> Optional[str]:
        """The evidence name of the SASS count that confirms it (sass.LDL+STL, ...)."""
        return "sass." + "+".join(self.sass) if self.sass else None


_TIME = (r"gpu__time_duration|kernel (time|duration)|duration|runtime|\btime\b", "decrease")
TIME_METRIC = _TIME  # every cause's last fix metric: the kernel's time


def _e(id: str, bounds: str, label: str, scope: str, detector: str, signature: str, words: str,
       fixes: str | dict[str, str], *fix_metrics: tuple[str, str], ncu_rules: tuple[str, ...] = (),
       sass: tuple[str, ...] = (), idle_cause: Optional[str] = None, not_words: Optional[str] = None,
       wrong_way: Optional[tuple[str, str]] = None) -> Entry:
    return Entry(id, tuple(bounds.split()), label, scope, detector, signature, re.compile(words, re.I),
                 fixes if isinstance(fixes, dict) else {"": fixes}, tuple(fix_metrics) + (_TIME,), ncu_rules, sass,
                 idle_cause, re.compile(not_words, re.I) if not_words else None,
                 (re.compile(wrong_way[0], re.I), wrong_way[1]) if wrong_way else None)


_MEM = "analysis.mechanisms.memory:"
_LAT = "analysis.mechanisms.latency:"
_CMP = "analysis.mechanisms.compute:"
_T = "analysis.timeline_findings:"
_R = "analysis.ranks:analyze_ranks"
_UM = "analysis.unified_memory:"
_LIFT = "; alternatively give each thread more independent loads in flight (unroll, vector loads)."
_LIB = "`{kernel}` is a library kernel: fix it at the call site, not in the kernel: "  # fixes["library"]

CATALOG: dict[str, Entry] = {e.id: e for e in [
    # ------------------------------------------------------------------ the program (timeline)
    _e("launch_overhead", "host", "launch overhead", "program", _T + "host_finding", "sig_idle_cause",
       r"(launch|dispatch)(es)?([/ ]\w+)?[ -](overhead|cost|latency)|tiny (kernels|launches)|launch[- ]bound|too many (small )?(kernels|launches)|"
       r"kernel launches|per[- ](call|op|operation|launch)( driver| API| launch| host)? (overhead|cost)|"
       r"wait\w* (on|for) the (CPU|host) to (enqueue|launch|issue|submit)|(tiny|many small|thousands of)\s+(\w+\s+)?calls|"
       r"(host|CPU) (is )?(issuing|enqueu\w+)|enqueue overhead|API[- ]call overhead|"
       r"\bthousands? (?:of )?(?:tiny |small )?(?:kernel )?launches",
       "Launch fewer, larger kernels: fuse the small ops (torch.compile, a fused/foreach op, or one hand-written "
       "kernel), batch small tensors together, or capture the sequence in a CUDA graph.",
       (r"busy|utili", "increase"), (r"idle", "decrease"), (r"kernel_count|launches|kernels", "decrease"),
       (r"step", "decrease"), idle_cause="launch_overhead",
       wrong_way=(r"\bsplit\w*\b[^.;]{0,40}\binto (?:\w+ ){0,2}(?:two|three|four|eight|sixteen|\d+|several|many|smaller)\b|"
                  r"\bone (?:launch|kernel|call|memset) per (?:element|row|item|tensor)\b|"
                  r"\b(?:run|launch)\w* as (?:two|three|four|\d+|several|many) separate kernels|"
                  r"\bdisabl\w+ (?:\w+ ){0,2}(?:fusion|fusing)\b|\bunfus\w+",
                  "more, smaller calls pay the per-call cost more times: the calls per step must fall, not rise")),
    _e("host_sync", "host", "host sync", "program", _T + "host_finding", "sig_idle_cause",
       r"synchroni[sz]|\.item\(|\bsyncs?\b|blocking (\S+ )?(cop|cudaMemcpy|memcpy)|returns only after the kernel|"
       r"host (?:callback|function)s?\b|cudaLaunchHostFunc|\bcallbacks? (?:after|per|on|in)\b",
       "Take the synchronization out of the loop: keep values on the GPU (accumulate losses/flags in a device "
       "tensor), read them back every N steps or asynchronously (non_blocking copy into pinned memory plus an "
       "event), and only synchronize where the host truly needs the value.",
       (r"idle|sync", "decrease"), (r"busy|utili", "increase"), (r"step", "decrease"), idle_cause="host_sync",
       not_words=r"__syncthreads|syncwarp|barrier|block[- ]level|warp[- ]level|(within|inside|of) (a|the|each) (thread )?block"),
    _e("host_work", "host", "host work", "program", _T + "host_finding", "sig_idle_cause",
       r"host work|CPU[- ](bound|work|side)|python (overhead|work|loop|objects?|lists?|interpreter)|\bGIL\b|"
       r"on (?:one|a single) (?:CPU )?(?:thread|core)\b|host[- ]side (work|computation)|"
       r"(?:host|CPU) comput(?:ation|e)\b|host's own|own computation|host code|data preparation|preprocessing|"
       r"wait\w* (?:on|for) (?:the )?(?:Python|interpreter|CPU)\b(?! to)|unbox\w*|python floats",
       "Overlap or remove the host work: prepare the next batch ahead of time on another thread or process "
       "(DataLoader workers, a prefetch queue), move the preprocessing to the GPU, or cache its results.",
       (r"busy|utili", "increase"), (r"idle", "decrease"), (r"step", "decrease"), idle_cause="host_work"),
    _e("allocator_churn", "host", "allocator", "program", _T + "host_finding", "sig_idle_cause",
       r"allocat(or|ion)|cudaMalloc(?!Managed)|cudaFree",
       "Allocate the buffers once outside the loop and reuse them (or use a caching or stream-ordered allocator: "
       "cudaMallocAsync/cudaFreeAsync with a memory pool, PyTorch's caching allocator).",
       (r"idle|alloc", "decrease"), (r"busy|utili", "increase"), (r"step", "decrease"), idle_cause="allocator",
       wrong_way=(r"NO_CUDA_MEMORY_CACHING\s*=\s*1|\bdisabl\w+ (?:the )?(?:caching allocator|allocator cach\w+)|"
                  r"\bcall\w*\b(?:[^.;]|\.(?=\w)){0,30}\bempty_cache\b(?:[^.;]|\.(?=\w)){0,40}\b(?:after (?:each|every)|"
                  r"more often)|"
                  r"\b(?:split\w*|chunk\w*|break\w*)\b[^.;]{0,60}\b(?:allocat\w+|buffers?|cudaMalloc)|\b(?:two|three|four|"
                  r"eight|several|multiple|more|\d+) (?:smaller )?(?:\d+ ?[MGK]i?B )?(?:chunks|buffers|allocations|cudaMalloc)"
                  r"\b[^.;]{0,40}\bper (?:step|iteration|repetition|rep|call)",
                  "turning the caching allocator off, emptying its cache more often, or more and smaller allocations "
                  "mean more cudaMalloc/cudaFree calls per step, each blocking: allocate once and reuse (or a "
                  "stream-ordered pool)")),
    _e("startup_dominated", "host", "start-up and one-time work", "program", _T + "startup_finding", "sig_startup",
       r"start-?up|one-time|warm-?up|initiali[sz]ation|(?:lazy|module|library) loading|\bJIT\b|compilation",
       {"": "Build, upload and warm up before timing; time many steady-state steps and report their median.",
        "onetime": "Keep it out of measurements and pay it once: {advice}."},
       (r"first_step|startup|step", "decrease")),
    _e("pageable_transfer", "transfer", "copies from pageable memory", "program", _T + "transfer_finding",
       "sig_pageable", r"pageable",
       "Allocate the host buffers pinned (cudaMallocHost / cudaHostAlloc, or tensor.pin_memory() and .to(device, "
       "non_blocking=True); DataLoader(pin_memory=True)), and keep data resident on the GPU where possible.",
       (r"bandwidth|copy_bandwidth", "increase"), (r"copy|transfer|pageable", "decrease"),
       wrong_way=(r"\b(?:split\w*|chunk\w*|break\w*)\b[^.;]{0,60}\binto (?:\w+ ){0,2}(?:\d[\d,]*|many|several|smaller)\b"
                  r"[^.;]{0,30}\b(?:chunks|pieces|slices|copies|calls|cudaMemcpyAsync)",
                  "a pageable copy stays staged through the driver's pinned buffer and synchronous with the host however "
                  "it is split: more, smaller copies add a per-call cost; pin the host buffer instead")),
    _e("transfer_volume", "transfer", "copy volume", "program", _T + "transfer_finding", "sig_transfer_volume",
       r"(?:transfer|copy|download|upload)[- ]volume|transfer,? by volume|volume of (the )?(copies|transfers)|already (run )?from pinned|"
       r"transfer[- ]bound|copies (dominate|fill|take up|occupy)|(?:it['’]?s|is) (?:all )?the (?:[\w-]+ +| +)?cop(?:y|ies)\b|"
       r"the only (?:knob|lever) is (?:the )?bytes|dominated by (the )?(moving|copying|transferring|"
       r"downloading|uploading|cop(y|ies)|transfers?|downloads?|uploads?)\b",
       "Move less: keep tensors resident on the GPU across steps, send compact dtypes, and overlap the remaining "
       "copies with compute on a separate stream (double buffering).",
       (r"bandwidth", "increase"), (r"copy|transfer|bytes", "decrease"), (r"busy", "increase"),
       wrong_way=(r"\b(?:drop|remov|disabl|avoid|skip|turn\w* off|get\w* rid of)\w*\b[^.;]{0,30}\bpin(?:_memory|ned|ning)\b|"
                  r"\bpin_memory\s*=\s*False\b|\bunpin\w*|\b(?:switch|mov|go)\w* (?:back )?to pageable\b",
                  "a pageable buffer is staged through the driver's pinned bounce buffer at a fraction of the pinned "
                  "rate, and synchronously: the same bytes take longer to move")),
    _e("managed_migration", "transfer host", "unified-memory page migrations", "program", _UM + "managed_finding",
       "sig_managed_migration",
       r"managed (?:memory|buffers?|allocations?|pages|records)|unified[- ]memory|cudaMallocManaged|\bUVM\b|"
       r"(?:page|on-demand|demand) migrations?|migrat\w+ (?:of )?(?:the |its |their )?(?:managed )?pages|"
       r"pages? (?:migrat|ping-?pong|bounc)\w*|(?:GPU|device|kernel)[- ]side page[- ]faults?|"
       r"page[- ]faults? (?:on|in|from) (?:the )?(?:GPU|device|kernel)",
       "Keep the data where it is used: produce it on the GPU (or keep it device-resident across steps); where the "
       "host must write it, write a pinned host buffer and copy it once per step (cudaMemcpyAsync); at least prefetch "
       "it (cudaMemPrefetchAsync to the device before the kernel) or advise it (cudaMemAdvise "
       "SetPreferredLocation/SetReadMostly) so pages stop faulting back and forth.",
       (r"migrat|unified|uvm|page|fault", "decrease"), (r"bandwidth", "increase"), (r"copy|transfer|bytes", "decrease"),
       (r"step|idle", "decrease"), (r"busy|utili", "increase")),
    # ------------------------------------------------------------------ one kernel (ncu), or a chain of them
    _e("zero_copy_reads", "transfer latency", "host memory read over PCIe (zero-copy)", "kernel",
       "analysis.mechanisms.host_memory:detect_zero_copy", "sig_zero_copy",
       r"zero[- ]copy|mapped (?:pinned |page-locked |host |system )*(?:memory|buffers?|pointers?|allocations?|tables?)|"
       r"cudaHostAlloc\w*Mapped|cudaHostGetDevicePointer|\bsysmem\b|system[- ]memory aperture|"
       r"(?:reads?|reading|loads?|loading|fetch\w*|pulls?|streams?) (?:[\w`,]+ ){0,6}?(?:straight |directly )?"
       r"(?:from|over|across|through) (?:the )?(?:PCIe|host memory over|system memory)|"
       r"host memory (?:over|across|through) (?:the )?PCIe",
       {"": "Copy the data to device memory once (cudaMalloc plus one cudaMemcpy before the loop, or keep the tensor "
            "on the GPU) and read it from there; keep zero-copy only for data read once per upload, coalesced and "
            "overlapped with other work."},
       (r"sysmem|pcie|aperture|host[- ]memory", "decrease"), (r"dram__bytes_read|dram.*read", "increase"),
       (r"bandwidth|throughput", "increase"),
       wrong_way=(r"\b(?:keep|use|switch\w* (?:\w+ )?to|move\w* (?:\w+ )?to|register\w*|allocat\w*|map\w*)\b(?:[^.;]|\.\.\.){0,40}\b(?:zero[- ]copy|"
                  r"mapped (?:pinned |host )*memory|cudaHostRegister|cudaHostAllocMapped)",
                  "reading mapped host memory from the kernel is the cause: every launch crosses PCIe again; copy "
                  "the data to device memory once")),
    _e("uncoalesced_global", "memory", "uncoalesced global accesses", "kernel", _MEM + "detect_uncoalesced",
       "sig_uncoalesced",
       r"uncoalesced|un-coalesced|non-?coalesced|(?:poorly|badly|not|never) coalesced|(poor|bad|broken) coalescing|scattered|"
       r"strided (global )?(access|load|store|read|write)|column-wise (access|load|read)|sectors? per request|"
       r"(touch|touches|hits?|fans? out to|spans?) (\d+|many|separate) (different |distinct |separate )?sectors|"
       r"bytes (used )?per (\d+-byte )?sector|partially used sectors?|own (32-byte )?sector|"
       r"unused (\d+ )?(fields|bytes)|(data|bytes) (it|the kernel) never uses|"
       r"(poor|low|bad) (global )?(load|store) efficiency",  # nvprof's gld/gst_efficiency: useful bytes per byte moved
       {"": "Map consecutive threads to consecutive addresses: e.g. one warp or block per row with the threads "
            "striding over columns (float4 loads where aligned), or stage a tile through shared memory and transpose "
            "it there.",
        "library": _LIB + "hand the op its operands in the layout it reads contiguously (.contiguous() once, or "
                          "keep the tensor in the transposed layout from where it is produced), or call an op that "
                          "accepts the layout you have."},
       (r"bytes_per_sector|bytes per sector|useful bytes", "increase"),
       (r"sectors?.*requests?|sectors per request|l1tex__t_sectors", "decrease"), (r"dram__bytes", "decrease"),
       ncu_rules=("UncoalescedGlobalAccess",), sass=("LDG",)),
    _e("shared_bank_conflict", "memory latency", "shared-memory bank conflicts", "kernel",
       _MEM + "detect_bank_conflicts", "sig_bank_conflict", r"bank[- ]conflict",
       {"": "Pad the shared array by one element per row (float tile[32][33]) or swizzle the index (XOR the column "
            "with the row) so a warp's addresses fall in distinct banks.",
        "library": _LIB + "change the shape, dtype or layout of the call so the library picks another kernel."},
       (r"wavefront|bank_conflict|conflict", "decrease"), (r"mio_throttle|shared.*stall", "decrease"),
       ncu_rules=("SharedMemoryConflicts", "UncoalescedSharedAccess"), sass=("LDS", "STS"),
       wrong_way=(r"(?<!n't )(?<!not )(?<!never )(?<!no )\bunpadded\b|(?<!n't )(?<!not )(?<!never )\b(?:remove|removing|drop|dropping|undo|undoing|revert|reverting|get rid of)\s+(?:the\s+)?(?:\+1\s+|extra\s+|one\s+)?"
                  r"(?:pad|padding|padded column)\b|\bback to (?:a |the )?(?:clean |plain |square )?`?(?:__shared__ )?"
                  r"(?:float )?\w*\[32\]\[32\]",
                  "a 32 x 32 float tile read along a column puts the 32 lanes of a warp in one bank: without the pad "
                  "the conflicts go back to 32-way")),
    _e("local_memory_spill", "memory", "local-memory traffic", "kernel", _MEM + "detect_local_memory", "sig_local",
       r"spill|local[- ]memory",
       {"": "Keep the data in registers or shared memory: index per-thread arrays only with compile-time constants "
            "(fully unrolled loops), or move the table to shared memory laid out [entry][thread]; for spills, lower "
            "register pressure or raise the limit (__launch_bounds__, -maxrregcount).",
        "library": _LIB + "change the shape or dtype of the call so the library picks another kernel."},
       (r"local|spill|LDL|STL", "decrease"), (r"dram__bytes", "decrease"),
       ncu_rules=("RegisterSpilling", "LocalMemorySpilling"), sass=("LDL", "STL"),
       not_words=r"global or local|local or global|\(L1TEX\)"),
    _e("low_parallelism", "latency", "too few blocks", "kernel", _LAT + "detect_low_parallelism", "sig_low_parallelism",
       r"too few (blocks|programs|CTAs)|parallelism|grid (is )?((far|much|way) )?(too )?small|SMs (never|don't|do not) get|idle SMs|fewer blocks than|launches only|only \d+ blocks|"
       r"blocks? on an? \d+-SM|block grid on an? \d+-SM|SMs (have nothing|have no work|get no block|sit idle|are idle)|"
       r"partial wave|less than one wave|(?:the )?(?:other|remaining) \d+ (?:SMs )?(?:have nothing|have no work|get nothing|get no block|sit idle|are idle|idle)\b|"
       r"how little of the GPU|\buses (?:only )?\d+ of (?:the )?(?:[\w'’]+ )?\d+ SMs\b",
       {"": "Launch at least one full wave, ideally several blocks per SM: grid >= {min_grid:.0f} (e.g. 2-8 x SM "
            "count with a grid-stride loop, or one block per tile of the data).",
        "timeline": "Launch at least {min_grid} blocks (several per SM), e.g. one block per tile of data.",
        "library": _LIB + "give each call more work (batch the calls or the inputs) or use an API sized for small "
                          "problems."},
       (r"grid|blocks|waves", "increase"), (r"throughput|bandwidth", "increase"),
       ncu_rules=("LaunchConfiguration", "WorkloadImbalance"),
       not_words=r"memory[- ]level parallelism|instruction[- ]level parallelism|\bMLP\b|\bILP\b|(bytes|loads) in flight",
       wrong_way=(r"\b(?:fewer|less) (?:blocks|CTAs)|(?:halve|shrink) the grid|smaller grid|"
                  r"launch (?:only )?\d+ blocks? instead of (?:more|\d+)",
                  "fewer blocks leave more SMs idle: the grid must grow, not shrink")),
    _e("occupancy_limit", "latency", "occupancy limit", "kernel", _LAT + "detect_occupancy_limit", "sig_occupancy",
       r"occupancy|(?:n't|not|never) (?:have |keep |hold )?enough (?:resident |active )?warps|"
       r"too few (?:resident |active )?warps",
       {"": "Lift the {limiter} limit: use smaller blocks or fewer per-block resources" + _LIFT,
        "shared memory": "Lift the shared memory limit: request only the shared memory the block uses (or less per "
                         "block, more blocks)" + _LIFT,
        "registers": "Lift the registers limit: cap registers with __launch_bounds__/-maxrregcount or simplify the "
                     "kernel" + _LIFT,
        "library": _LIB + "change the shape or dtype of the call (or the library's algorithm choice) so another "
                          "kernel is picked."},
       (r"warps_active|occupancy", "increase"), (r"dram__throughput|dram__bytes.*per_second|bandwidth", "increase"),
       (r"long_scoreboard", "decrease"), ncu_rules=("TheoreticalOccupancy", "AchievedOccupancy"),
       not_words=r"full occupancy|occupancy (is |was )?(fine|full|high|not (the|a) (limit|problem))|occupancy limit is gone|"
                 r"filled the SMs|even at (full|high|\d+% )occupancy"),
    _e("atomic_contention", "latency", "contended atomics", "kernel", _LAT + "detect_atomic_contention", "sig_atomic",
       r"atomic|\bCAS\b|compare[- ]and[- ]swap|"
       r"(?:contention|serializ\w+|contend\w*) on (?:the )?(?:same |a few |few |four |\d+ )?(?:address(?:es)?|words?|counters?|bins?)\b",
       {"": "Privatize the updates: accumulate per warp (warp shuffle / __reduce_add_sync) or per block in shared "
            "memory, then issue one global atomic per block and bin (in Triton: reduce within the program first, "
            "e.g. tl.histogram or tl.sum per bin).",
        "library": _LIB + "use an op that reduces without atomics (a sorted segment reduction, a deterministic "
                          "mode)."},
       (r"atom|_red|atomic", "decrease"), sass=("RED", "ATOM"),
       wrong_way=(r"\b(?:(?:larger|bigger|more)\s+(?:thread\s+)?blocks|(?:512|1024|1,024)[- ]thread blocks|"
                  r"(?:512|1024|1,024) threads per block|more threads (?:per block|share))\b|"
                  r"\b(?:every|each) thread\b[^.;]{0,40}\batomic\w*[^.;]{0,60}\b(?:straight|directly)\s+(?:to|into|on)\s+global\b|"
                  r"\bskip\w* the shared[- ]memory (?:staging|privati[sz]ation|histogram|copy)\b",
                  "more contenders on each word (more threads per block, or every thread straight to a few global "
                  "words instead of a per-block copy): contention rises"),
       # an atomic named as one step of the code, or counted per warp/block: the privatized state, not contention
       not_words=r"\b(?:one|a single|1|\d+|four)\s+(?:global\s+|shared\s+)?atomics?\s*(?:per|/)\s*(?:warp|block|"
                 r"program|CTA)\b|\batomics?\s+(?:are|is)\s+down\s+to\b|\b(?:followed by|before)\s+(?:a|its|the|one)\s+"
                 r"(?:dependent\s+)?(?:shared\s+|global\s+)?atomic\b"),
    _e("warp_divergence", "compute", "warp divergence", "kernel", _CMP + "detect_warp_divergence", "sig_divergence",
       r"diverg",
       {"": "Make branch decisions uniform per warp: assign work so that the branch condition depends on the warp "
            "index (or sort/bin elements by path before the kernel), or replace the branches with branch-free "
            "arithmetic.",
        "library": _LIB + "make the data the op sees uniform (sort or bucket it) or use a different API."},
       (r"thread_inst_executed_per_inst|active threads|threads per", "increase"),
       (r"inst_executed|instructions", "decrease"), ncu_rules=("ThreadDivergence",)),
    _e("no_tensor_cores", "compute", "matrix math off the tensor cores", "kernel", _CMP + "detect_no_tensor_cores",
       "sig_no_tensor_cores",
       r"(?:\bno|without|not (?:(?:allowed|permitted|able) to )?(?:on|using|use|run on|running on|touch\w*)|never (?:use|uses|run on|runs on|touch\w*)|"
       r"off|instead of|bypass\w*|skip\w*|miss\w*|away from|rather than|unused|idle)\b[^.;]{0,25}?tensor[- ]cores?|"
       r"tensor[- ](?:cores?|pipes?) (?:are |sit |stay |remain |is |were |was )?(?:idle|unused|off|never|not used|"
       r"dark|empty|at 0)|tensor[- ](?:cores?|pipes?)\b[^.;]{0,90}?\b(?:are|is|sit|sits|stay|remain|do|does)\s+"
       r"(?:doing\s+)?(?:literally\s+|basically\s+|essentially\s+)?(?:idle|unused|off|dark|nothing|not used|never used|never touched)|"
       r"(?:entirely|only|all) on the\s+(?:FP32\s+)?(?:FMA|FFMA) pipe|FMA pipe instead|\bTF32\b|"
       r"(?:\bno|\bwithout|\bzero|\bnot? (?:a )?single|(?<![\d.,])0)\s+(?:[\w`-]+\s+){0,2}?(?:HMMA|WGMMA|MMA|HGMMA)\b|"
       r"\b(?:HMMA|WGMMA|HGMMA|MMA)\w*\s*(?:instructions?\s*)?(?:count\s*)?(?:[:=]\s*0(?![.,]?\d)|(?:is|are)\s+(?:absent|missing|0)\b)",
       "Run the product on the tensor cores: in PyTorch set torch.backends.cuda.matmul.allow_tf32 = True (or "
       "torch.set_float32_matmul_precision('high')) or use bf16/fp16 inputs; in CUDA call cuBLAS/cuBLASLt with "
       "TF32/BF16 compute, or use WMMA/WGMMA (CUTLASS) instead of FFMA loops.",
       (r"tensor", "increase"), (r"flops?|FLOP/s|throughput", "increase"), (r"fma", "decrease"), sass=("FFMA",)),
    _e("excess_dram_traffic", "memory", "extra passes through DRAM", "program", "analysis.kernels:excess_dram_traffic",
       "sig_excess_traffic", r"(?<!after the )(?<!after )\bfusion\b(?! (?:worked|is done|held))|\bfuses?\b|\bfusing\b|"
       r"(?:\bbe|\bbeen|\bgets?|\bnot|n't)\s+fused\b|\bfused\s+(?:into|together|with)\b|\bunfused|extra pass|round[- ]trips? (?:through|to|via) (?:DRAM|HBM|global memory)|bounc\w+ through (?:DRAM|HBM)|intermediate|"
       r"(?:traffic|bytes) (?:that )?we create|"
       r"(?:traffic|bytes) that only exists?\b|(?:kernels|ops|launches) doing the work of one|unnecessary (?:DRAM |HBM )?(?:traffic|bytes|passes)|"
       r"(?:bytes|traffic) (?:it|they|we) (?:moves?|reads?|writes?) (?:is|are) unnecessary|"
       r"redundant (DRAM )?(traffic|bytes|passes|cop(y|ies))|cop(y|ies) of unchanged|unnecessary cop(y|ies)|re-?cop(y|ies)|separate ([\w-]+ ){0,2}(kernels|ops|passes)|more (DRAM |HBM )?traffic than|(excess|extra|wasted) (DRAM |HBM )?traffic|(full|extra) (DRAM )?pass(es)? over|"
       r"split (over|across|into) \d+ (\w+ )?kernels|written to DRAM and read back|read back (from DRAM )?by the next|"
       r"(?:should|need) never (?:exist|be written|be materiali[sz]ed) in (?:DRAM|HBM|global memory)",
       "Fuse the chain into one kernel that reads the input once and writes the output once (torch.compile, a fused "
       "library op such as F.gelu, a Triton/CUDA kernel).",
       (r"dram__bytes|bytes|traffic|passes", "decrease"), (r"kernel[_ ]count|launches|kernels", "decrease")),
    _e("instruction_bound", "compute", "instruction issue", "kernel", _CMP + "detect_instruction_bound",
       "sig_instruction",
       r"instruction[- ](issue|bound|limited|throughput)|issue[- ](bound|limited)|(?:XU|SFU|MUFU|conversion)(?: pipe| unit)?(?: \([\w ]+\))? "
       r"(?:is )?(?:saturated|pinned|busy|pegged)|(?:pipe|unit) (?:is )?(?:saturated|pinned) by (?:\S+ )?conversions|"
       r"(?:conversion|XU|SFU|MUFU|issue)[- ]rate (?:limit|ceiling)|shuffle[- ](?:bound|traffic|throughput|limited)|"
       r"bound by (?:the )?(?:shuffles?|SHFL)\b",
       {"": "Cut instructions per element: hoist index math out of loops, use vector loads, replace divisions/"
            "transcendentals with cheaper forms, unroll to amortize control flow.",
        "library": _LIB + "use a fused or lower-precision variant of the op."},
       (r"inst_executed|instructions", "decrease")),
    _e("near_peak", "near_peak", "at its roofline", "kernel", "analysis.mechanisms.near_peak:detect_near_peak",
       "sig_near_peak",
       r"near[- ]peak|near[- ]roofline|\bis done\b|at (its|the) roofline|at (?:the|its) (?:[\w'-]+ ){0,2}ceiling|close to (its|the) (roofline|peak|ceiling)|nothing (left )?to "
       r"(gain|fix)|leave (it|this kernel) alone|\bis finished\b|(?:isn't|is not|not) much (?:left )?to (?:find|gain|fix)|"
       r"as (?:well|good|fast) as (?:the hardware|the GPU|it) (?:allows|gets|can)|as \w+(?:[- ]\w+)* gets in practice|"
       r"within (about |~)?\d+(\.\d+)?\s?% of (its|the) ([\w-]+ )?(roofline|floor|peak|ceiling)",
       "Leave this kernel alone; look at the next-largest cost on the timeline, or reduce the work itself (fuse "
       "neighbouring passes, use a lower-precision path where accuracy allows).",
       (r"dram__bytes|DRAM (bytes|traffic)|bytes|traffic|passes|kernel_count|launches|flops?|FLOPs", "decrease")),
    _e("default_stream_serialization", "latency", "streams serialized by the legacy default stream", "program",
       "analysis.streams:serialization_finding", "sig_default_stream",
       r"(?:legacy|null|implicit|blocking) (?:default )?stream|default stream|\bstream 0\b|\bstream zero\b|"
       r"streams? (?:are |is |get |gets |were )?(?:serializ|sequentializ)\w*|serializ\w* (?:the |all )?(?:\w+ )?streams|"
       r"implicit(?:ly)? (?:synchroni[sz]\w*|serializ\w*|barriers?)|device-wide barrier",
       "Issue the memsets and copies on the kernels' own streams (cudaMemsetAsync(ptr, 0, n, stream)), create the "
       "streams with cudaStreamNonBlocking, or build with --default-stream per-thread, so the streams' kernels run "
       "side by side.",
       (r"overlap|concurren", "increase"), (r"step|idle|wall", "decrease"), (r"busy|utili|sm.*active", "increase"),
       wrong_way=(r"\b(?:all|every|each|the \w+) (?:\w+ ){0,3}(?:on|onto|into|to) (?:a single|one|the same|the default|"
                  r"the legacy) stream|\bsingle stream\b|cudaDeviceSynchronize\(\)? (?:between|after each|after every)",
                  "one stream, or a device-wide synchronization between them, serializes the kernels just as the "
                  "legacy default stream does: they must go on separate non-blocking streams")),
    # ------------------------------------------------------------------ several ranks
    _e("rank_imbalance", "comms", "straggler rank", "program", _R, "sig_straggler", r"straggler|imbalance|slow rank|late rank|(?:uneven|unequal|unbalanced) (?:work|load|split|shards?)|"
       r"\b(?:twice|double|2x) the (?:work|matrix products|GEMMs|matmuls|products)\b",
       {"": "Rebalance the work across ranks (even shards/sequence lengths/batch per rank, balanced pipeline "
            "stages), then re-measure per-rank compute time.",
        "host": "Profile rank {rank}'s host side (nsys with CPU sampling, py-spy): find the work before each step's "
                "launches and overlap or remove it; check CPU affinity and contention."},
       (r"step|collective|wait", "decrease")),
    _e("thermal_throttle", "comms", "throttled clocks", "program", _R, "sig_throttle",
       r"thermal|throttl|clocks? (drop|fell|reduced|lower)",
       "Check rank {rank}'s GPU cooling/power (nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER); move the job off "
       "that GPU or fix its power/thermal limits.",
       (r"clock", "increase")),
    _e("comms_wait", "comms", "waiting in collectives", "program", _R, "sig_comms", r"collective|all-?reduce|NCCL|communication[- ]bound|comms?[- ]bound",
       "Overlap communication with compute (bucketed/async all-reduce), compress or shrink gradients, or use a "
       "faster interconnect path.",
       (r"collective|wait|step", "decrease")),
]}

MECHANISM_IDS: tuple[str, ...] = tuple(CATALOG)
HOST_MECHANISMS = frozenset(i for i, e in CATALOG.items() if set(e.bounds) & {"host", "transfer"})
BLAMES_A_RANK = frozenset({"rank_imbalance", "thermal_throttle"})  # claims that name one rank as the straggler
BY_IDLE_CAUSE: dict[str, Entry] = {e.idle_cause: e for e in CATALOG.values() if e.idle_cause}


def label(mechanism: Optional[str], default: str = "") -> str:
    """How reports name a mechanism id."""
    e = CATALOG.get(mechanism or "")
    return e.label if e is not None else default


def claimed(text: str) -> list[str]:
    """Mechanism ids a prose bottleneck/mechanism claims, in catalog order."""
    return [i for i, e in CATALOG.items() if e.words.search(text or "")]

# A generic cause whose signature is absent may hold in a more specific form (the critic accepts the generic claim
# when the specific signature is present): host<->device volume with no copy at all, kernels reading mapped host
# memory or unified-memory pages migrating, is still volume over the link. Pageable staging copies are not a form of
# migration (tests/critic/test_critic_placement.py).
REFINED_BY = {"transfer_volume": ("zero_copy_reads", "managed_migration")}
