"""Changes that move the limit the wrong way, whatever the answer's words for the metric: a change the catalog knows
to worsen the claimed (or measured) cause, a synchronization per launch, a lower register cap for a kernel that
spills, fewer blocks for an idle or streaming GPU, a block over the register file, a wider dtype for a memory-bound
kernel, 16-bit data widened to fp32 (a streaming kernel's bytes double, a tensor-core GEMM leaves its 16-bit path), a
streaming kernel split into more passes, work moved onto the straggler rank (fixes.check_fix)."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

from .. import signatures
from ..catalog import CATALOG, claimed as catalog_claimed
from ..signatures import TENSOR_CORE_NAME, Measured
from .bound_words import on_device
from .context import subject
from .unverified import ruled_out

if TYPE_CHECKING:
    from .context import Context


def wrong_way(c: "Context") -> list[str]:
    """A change the catalog knows to move the claimed cause away from the roofline (more threads on contended words),
    and, whatever cause the answer claims, a synchronization per launch or a lower register cap for a kernel that
    already spills."""
    out = []
    causes = dict.fromkeys([c.claimed, _measured_cause(c)] + _named_in_fix(c))  # the cause claimed, the one the
    # captures show, and a kernel's cause the fix itself names ("should remove those 150K conflicts")
    for cause in causes:
        e = CATALOG.get(cause or "")
        m = e.wrong_way[0].search(c.answer.fix_text) if e is not None and e.wrong_way else None
        if m:
            out.append(f"The fix's change '{m.group(0)}' moves {e.label} the wrong way: {e.wrong_way[1]}.")
            break
    key = subject(c)
    spilled = c.facts.spills.get(key, (0, 0))[1] if key else 0
    cap = _LOWER_CAP.search(c.answer.fix_text)
    sync = _ADD_SYNC.search(c.answer.fix_text)
    if sync:
        out.append(f"The fix's change '{sync.group(0)}' adds a synchronization per launch: the host then waits for "
                   f"every kernel and the GPU for the host, so idle time rises instead of falling.")
    if cap and spilled:
        out.append(f"The fix's change '{cap.group(0)}' lowers the register cap of a kernel that already spills "
                   f"{spilled} bytes (ptxas): fewer registers spill more, so local-memory traffic and time rise.")
    shrink = _smaller_grid(c, key) if "low_parallelism" in causes and not out else _starved_stream(c, key)
    if shrink:
        out.append(shrink)
    squeeze = _register_squeeze(c, key)
    if squeeze and not (cap and spilled):
        out.append(squeeze)
    out += [x for x in (_block_over_register_file(c, key), _wider_dtype(c, causes), _upcast_16bit(c, causes, key),
                        _unfused(c, key), _onto_straggler(c), _into_double(c, key), _fewer_warps(c, key),
                        _off_device(c)) if x]
    return out


_DOUBLE = re.compile(r"\bdouble(?:-precision)? literals\b|\b(?:back )?(?:to|in|into|as) (?:double|fp64|float64)\b|"
                     r"\b(?:use|split|move|offload|spread)\w*\b[^.;]{0,40}\bFP64 (?:pipe|units?)\b|\.double\(\)", re.I)
# (the FP64 pipe named as where work goes: "split the work between the FP32 and FP64 pipes"; not "FP64 pipe stays 0")
FP64_IDLE_PCT, BUSY_PIPE_PCT = 5.0, 40.0


def _into_double(c: "Context", key: Optional[str]) -> Optional[str]:
    """An FP32 kernel's math moved to double ("back to double literals", "split the work between the FP32 and FP64
    pipes"): on this GPU an FP64 op runs at a fraction of the FP32 rate and every mixed expression adds two
    conversions on the XU pipe, so a kernel busy on its FP32 pipes slows down."""
    fix = c.answer.fix_text
    m = next((m for m in _DOUBLE.finditer(fix) if not ruled_out(fix, m.start(), m.end()) and
              not _AWAY.search(fix[max(0, m.start() - 30):m.start()])), None) if key else None
    if m is None:
        return None
    fp64 = [f.value for f in c.facts.named("sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active", key)]
    busy = [f.value for name in ("smsp__issue_active.avg.pct_of_peak_sustained_active",
                                 "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active") for f in c.facts.named(name, key)]
    if not fp64 or max(fp64) >= FP64_IDLE_PCT or max(busy, default=0.0) < BUSY_PIPE_PCT:
        return None
    return (f"The fix's change '{m.group(0)}' moves an FP32 kernel's math to double: FP64 runs at a fraction of the "
            f"FP32 rate and each mixed expression adds float<->double conversions on the XU pipe, so the busy issue "
            f"slots ({max(busy):.0f}%) fill further and the time rises.")


_FEWER_WARPS = re.compile(r"\b(?:cap|capping|limit|limiting|reduce|reducing|lower|lowering|cut|cutting)\s+(?:the\s+)?"
                          r"(?:residency|occupancy|resident warps|warps (?:in flight|per SM)|blocks per SM)\b", re.I)
# (a verb and its object: "cap residency at 2 blocks"; not "the limit then rises to 8 blocks per SM")
_REGISTERS = re.compile(r"\bspill\w*|\bmore registers\b|\bregisters? (?:per|for each|each) thread\b", re.I)
LATENCY_SHARE, NOT_SATURATED_DRAM_PCT = 0.5, 80.0  # most samples waiting on memory, DRAM below its peak


def _fewer_warps(c: "Context", key: Optional[str]) -> Optional[str]:
    """Fewer resident warps for a kernel whose warps mostly wait on memory loads (long_scoreboard) with DRAM below its
    peak: the latency is hidden by the other warps' loads in flight, so fewer warps leave more of it exposed."""
    fix = c.answer.fix_text
    m = next((m for m in _FEWER_WARPS.finditer(fix) if not ruled_out(fix, m.start(), m.end())), None) if key else None
    if m is None or c.facts.spills.get(key, (0, 0))[1] or _REGISTERS.search(fix):
        return None  # fewer warps, more registers each: the fix of a spill, whose loads are the local memory's
    share = [f.value for f in c.facts.named("smsp__pcsamp_warps_issue_stalled_long_scoreboard.share_of_samples", key)]
    dram = [f.value for f in c.facts.named(_DRAM_PCT, key)]
    if not share or max(share) < LATENCY_SHARE or not dram or max(dram) >= NOT_SATURATED_DRAM_PCT:
        return None
    return (f"The fix's change '{m.group(0)}' leaves fewer warps resident, but {max(share):.0%} of the kernel's warp "
            f"samples wait on memory loads (long_scoreboard) with DRAM at {max(dram):.1f}% of its peak: other warps' "
            f"loads in flight hide that latency, so fewer warps expose more of it and the time rises.")


_UNFUSE = re.compile(r"\bsplit\w*\b[^.;]{0,60}?\binto\b[^.;]{0,40}?\b(?:passes|kernels|stages|launches)\b|\bunfus\w+|"
                     r"\b(?:one|a) (?:separate )?kernel (?:per|for each) (?:op|operation|stage|step of the formula)\b",
                     re.I)
UNFUSED_DRAM_PCT = 50.0  # a kernel moving DRAM at this share of its peak: every extra pass over its data costs as much


def _unfused(c: "Context", key: Optional[str]) -> Optional[str]:
    """A fix that splits a kernel streaming DRAM into more passes: each pass reads and writes the data again."""
    m = _UNFUSE.search(c.answer.fix_text)
    dram = [f.value for f in c.facts.named("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", key)] if key else []
    if m is None or not dram or max(dram) < UNFUSED_DRAM_PCT:
        return None
    return (f"The fix's change '{m.group(0)}' splits a kernel that moves DRAM at {max(dram):.0f}% of peak into more "
            f"passes: each pass reads and writes the data again, so DRAM bytes and time rise.")


REGISTER_FILE = 65536  # 32-bit registers per block when the capture does not say (every NVIDIA GPU since Kepler)
_BLOCK_OF = re.compile(r"\b(\d{3,4})[- ]thread blocks?\b|\bblocks? of (\d{3,4}) threads\b|\bblock size (?:of |to )?(\d{3,4})\b",
                       re.I)


def _block_over_register_file(c: "Context", key: Optional[str]) -> Optional[str]:
    """A fix that launches blocks whose threads need more registers than an SM has (ncu's registers per thread x the
    block size the fix asks for): such a block cannot be resident, so the launch fails instead of occupancy rising."""
    p = c.facts.profiles.get(key) if key else None
    regs = p.get("launch__registers_per_thread") if p is not None else None
    if not regs:
        return None
    limit = p.get("device__attribute_max_registers_per_block") or REGISTER_FILE  # the device's, from the capture
    for m in _BLOCK_OF.finditer(c.answer.fix_text):
        threads = int(next(g for g in m.groups() if g))
        if threads * regs > limit:
            return (f"The fix's change '{m.group(0)}' needs {threads} x {regs:g} = {threads * regs:,.0f} registers per "
                    f"block (ncu: {regs:g} per thread), more than the {limit:,.0f} an SM has: the block cannot be "
                    f"resident and the launch fails; lower the registers per thread first.")
    return None


_WIDEN = re.compile(r"\.double\(\)|\b(?:in|to|into|as|use|using|switch\w* to|cast\w* to|convert\w* to|promot\w* to|"
                    r"upcast\w* to)\s+(?:`)?(?:torch\.)?(?:float64|fp64|double)\b", re.I)
_AWAY = re.compile(r"\b(?:from|avoid\w*|drop\w*|remov\w*|stop\w*|eliminat\w*|away|undo\w*|revert\w*)\b[^.;]*$", re.I)
_MEMORY_CAUSES = frozenset(i for i, e in CATALOG.items() if e.bounds in (("memory",), ("near_peak",)))


def _wider_dtype(c: "Context", causes: dict) -> Optional[str]:
    """A fix that widens the data to fp64 for a memory-bound cost: every element moves twice the bytes, so DRAM bytes
    and time rise (intensity does not rise: the FLOPs per element are the same)."""
    memory = bool(set(causes) & _MEMORY_CAUSES) or c.facts.diagnosis is not None and c.facts.diagnosis.bound == "memory"
    text = c.answer.fix_text
    m = next((m for m in _WIDEN.finditer(text) if not ruled_out(text, m.start(), m.end()) and
              not _AWAY.search(text[max(0, m.start() - 30):m.start()])), None) if memory else None
    if m is None:  # ("compute in float32 instead of in float64", "move it from float64 to float32": away from it)
        return None
    return (f"The fix's change '{m.group(0)}' widens the data of a memory-bound cost to 8-byte doubles: every element "
            f"moves twice the bytes, so DRAM bytes and time rise.")


_UPCAST = re.compile(r"\bupcast\w*\b|\b(?:to|into|using|switch\w* to|"
                     r"cast\w* (?:\w+ ){0,3}?to|convert\w* (?:\w+ ){0,3}?to|promot\w* (?:\w+ ){0,3}?to|widen\w* (?:\w+ ){0,3}?to)"
                     r"\s+(?:`)?(?:torch\.)?(?:float32|fp32)\b", re.I)
_SIXTEEN_BIT = re.compile(r"\b(?:bf16|fp16|f16|bfloat16|float16)\b|\bhalf[- ]precision\b|__half|_h_|_bf16")
_ACCUMULATE = re.compile(r"\baccumulat\w*|\baccum\b|\bstatistic|\bsoftmax|\bnorm\b|\bprecision\b", re.I)
TENSOR_PIPE_PCT = "sm__pipe_tensor_cycles_active.max.pct_of_peak_sustained_active"
_DRAM_PCT = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"
STREAMING_DRAM_PCT = 25.0  # a kernel moving DRAM at this share of its peak pays for every byte it moves


def _upcast_16bit(c: "Context", causes: dict, key: Optional[str]) -> Optional[str]:
    """A fix that widens 16-bit data to fp32 for speed: a memory-bound cost moves twice the bytes, and a GEMM on the
    tensor cores falls to the FP32 path (without TF32) with a ceiling many times lower."""
    name = c.facts.kernels.get(key, key or "") if key else ""
    text = f"{c.answer.bottleneck or ''} {c.answer.explanation or ''}"
    if not (_SIXTEEN_BIT.search(name) or _SIXTEEN_BIT.search(text)):
        return None  # the data is not 16-bit (keeping fp32 math is no widening)
    fix = c.answer.fix_text
    m = next((m for m in _UPCAST.finditer(fix) if not ruled_out(fix, m.start(), m.end()) and
              not _AWAY.search(fix[max(0, m.start() - 30):m.start()]) and
              not _ACCUMULATE.search(fix[max(0, m.start() - 40):m.end() + 20])), None)
    if m is None:
        return None
    tensor = TENSOR_CORE_NAME.search(name) or any(f.value >= 10 for f in c.facts.named(TENSOR_PIPE_PCT, key)) \
        if key else False
    memory = bool(set(causes) & _MEMORY_CAUSES) or c.facts.diagnosis is not None and c.facts.diagnosis.bound == "memory" \
        or bool(key) and any(f.value >= STREAMING_DRAM_PCT for f in c.facts.named(_DRAM_PCT, key))
    if tensor:
        return (f"The fix's change '{m.group(0)}' widens 16-bit GEMM operands to fp32: the product leaves the tensor "
                f"cores' 16-bit path for the FP32 path, whose ceiling is many times lower, and moves twice the bytes.")
    if memory:
        return (f"The fix's change '{m.group(0)}' widens 16-bit data to fp32 for a memory-bound cost: every element "
                f"moves twice the bytes, so DRAM bytes and time rise.")
    return None


_BLOCKS = re.compile(r"(?<!over )(?<!across )(?<!into )\b(\d{1,3}(?:,\d{3})+|\d+)\s*(?:\*\*|__)?\s*(?:thread\s*)?"
                     r"(?:blocks|CTAs)\b(?!\s*(?:per\b|/|of (?:the|each|a|its)\b))", re.I)
# ("8 blocks of 1024 threads" is a grid; "each item over 16 blocks", "4 blocks per SM" are not)


def _smaller_grid(c: "Context", key: Optional[str]) -> Optional[str]:
    """A too-few-blocks kernel whose fix launches fewer blocks than it has now (ncu's grid): more SMs sit idle."""
    p = c.facts.profiles.get(key) if key else None
    grid = p.get("launch__grid_size") if p is not None else None
    if not grid:
        return None
    counts = [int(m.group(1).replace(",", "")) for m in _BLOCKS.finditer(c.answer.fix_text)]
    n = max(counts, default=0)  # the grid it proposes ("over 16 blocks (2,128 blocks)": 2,128)
    if 0 < n < grid:
        return (f"The fix launches {n} blocks, fewer than the {grid:g} the kernel has now (ncu): with too few blocks "
                f"the cause, a smaller grid leaves more SMs idle and the time rises.")
    return None


_GRID = re.compile(r"\bgrid(?: size)?\s*(?:of|=|:|to)?\s*\(?(\d{1,3}(?:,\d{3})+|\d+)\b(?!\s*(?:x|×|threads))", re.I)
_BLOCK_PER_SM = re.compile(r"\b(?:one|a single|1) (?:thread )?block(?: of \d+ threads)? (?:per|on each|for each) SM\b", re.I)
STREAMING_PCT = 70.0  # a kernel moving DRAM at this share of its peak needs the bytes its threads keep in flight


def _starved_stream(c: "Context", key: Optional[str]) -> Optional[str]:
    """A kernel that streams DRAM near its peak whose fix launches fewer blocks than it has now ("one block of 128
    threads per SM"): fewer threads keep fewer loads in flight, so DRAM throughput falls, whatever cause is claimed."""
    p = c.facts.profiles.get(key) if key else None
    grid, sms = (p.get("launch__grid_size"), p.get("launch__sm_count")) if p is not None else (None, None)
    dram = p.get("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed") if p is not None else None
    waits = [f.value for f in c.facts.named("smsp__pcsamp_warps_issue_stalled_long_scoreboard.share_of_samples", key)]
    if not grid or dram is None or dram < STREAMING_PCT and not (waits and max(waits) >= LATENCY_SHARE and
                                                                dram >= UNFUSED_DRAM_PCT):
        return None  # (or at half its peak, with warps that mostly wait on their loads: the loads in flight hide it)
    fix = c.answer.fix_text
    named = [int(m.group(1).replace(",", "")) for m in _GRID.finditer(fix)]  # "grid 132", "one block per SM"
    named += [int(sms)] if sms and _BLOCK_PER_SM.search(fix) else []
    n = min(named) if named else max((int(m.group(1).replace(",", "")) for m in _BLOCKS.finditer(fix)), default=0)
    if 0 < n < grid:
        return (f"The fix launches {n} blocks, fewer than the {grid:g} the kernel has now (ncu), for a kernel that moves "
                f"DRAM at {dram:.1f}% of its peak: fewer threads keep fewer loads in flight, so DRAM throughput falls "
                f"and the time rises.")
    return None


def _named_in_fix(c: "Context") -> list[str]:
    """The kernel causes the fix names, but a too-small grid: fewer, persistent blocks is a cure for a tail wave, so
    only the claim or the captures make a smaller grid wrong."""
    named = catalog_claimed(c.answer.fix_text.replace("_", " "))  # ("`l1tex__data_bank_conflicts_...` -> 0")
    return [x for x in named if CATALOG[x].scope == "kernel" and x != "low_parallelism"]


def _measured_cause(c: "Context") -> Optional[str]:
    """The cause the engine finds in the captures (its primary finding's mechanism), if any."""
    d = c.facts.diagnosis
    return getattr(d.primary, "mechanism", None) if d is not None and d.primary is not None else None


# a register cap the fix sets: "-maxrregcount=64", "caps regs at 64", "__launch_bounds__(1024" (65,536 / 1,024 = 64)
_CAP_AT = re.compile(r"maxrregcount\s*[= ]\s*(\d+)|\b(?:caps?|limits?|forces?|down to|at most)\b[^.;\d]{0,25}?(\d+)\s*"
                     r"(?:regs?|registers)\b|__launch_bounds__\s*\(\s*(\d+)", re.I)
SQUEEZE = 2.0  # a cap at half the registers a kernel uses (or less) spills its live values


def _register_squeeze(c: "Context", key: Optional[str]) -> Optional[str]:
    """A fix that caps registers at half or less of what the kernel uses (ncu's registers per thread): its live values
    spill to local memory, so local traffic and time rise."""
    p = c.facts.profiles.get(key) if key else None
    regs = p.get("launch__registers_per_thread") if p is not None else None
    if not regs:
        return None
    for m in _CAP_AT.finditer(c.answer.fix_text):
        given = m.group(1) or m.group(2)
        cap = int(given) if given else min(255, 65536 // max(int(m.group(3)), 1))  # 64K registers per block
        if 0 < cap and regs >= SQUEEZE * cap:
            return (f"The fix's change '{m.group(0)}' caps registers at {cap} per thread, but the kernel uses {regs:g} "
                    f"(ncu): the live values spill to local memory, so local traffic and time rise instead of falling.")
    return None


_ADD_SYNC = re.compile(r"CUDA_LAUNCH_BLOCKING\s*=\s*1|\bsynchroni[sz]e\w*(?:\([^)]*\))?`?\s+(?:at the end of|inside|within|in) "
                       r"(?:each|every) (?:inner )?(?:iteration|launch|kernel|call|op)\b|\b(?:cuda(?:Stream|Device))?synchroni[sz]e\w*(?:\([^)]*\))?(?:;\s*[\w.]+\([^)]*\);?)?`?\s+"
                       r"(?:right |immediately |directly )?after "
                       r"(?:each|every)(?: one)?(?: of the)?\s+(?:\w+\s+)?(?:op|launch|kernel|call|matmul|gemm|layer|pass)|"
                       r"\bsynchroni[sz]\w* (?:early and often|more often|more frequently)|"
                       r"\bafter (?:each|every)(?: one of the)? `?[\w.]+(?:\([^)]*\))?`?,? (?:call |add |insert )?`?(?:cuda(?:Stream|Device)"
                       r"Synchronize|torch\.cuda\.synchronize)|"
                       r"\bmake (?:every|each|all) (?:launch|kernel|op)\w* (?:synchronous|blocking)", re.I)
_LOWER_CAP = re.compile(r"\b(?:lower|reduce|cut|tighten|decrease|drop|shrink)\w*\b[^.;]{0,30}\bregister (?:cap|limit|count|budget)"
                        r"|\bregister (?:cap|limit|budget)\b[^.;]{0,20}\b(?:lower|down|reduc\w*|from \d+ to)\b"
                        r"|\b(?:lower|reduce|tighten|cut)\w*\b[^.;]{0,15}\bmaxrregcount", re.I)


# work moved onto a rank ("move two of rank 0's GEMMs over to rank 1", "shift layers onto rank 1")
_MOVE_ONTO = re.compile(r"\b(?:move|moving|shift|shifting|give|giving|hand|assign|migrat\w*|offload\w*)\b(?:[^.;]|\.(?=\d)){0,140}?"
                        r"\b(?:to|onto|over to)\s+rank\s*(\d+)\b", re.I)


def _onto_straggler(c: "Context") -> Optional[str]:
    """A fix that moves work onto the rank that enters the collectives late: every rank then waits longer for it."""
    onto = _MOVE_ONTO.search(c.answer.fix_text or "")
    d = c.facts.diagnosis
    st = signatures.straggler(Measured(ranks=list(d.ranks))) if onto and d is not None and len(d.ranks) >= 2 else None
    if st is None or st[2] < st[3] or int(onto.group(1)) != st[0].rank or \
            ruled_out(c.answer.fix_text, onto.start(), onto.end()):  # (no straggler: the ranks enter within noise)
        return None
    return (f"The fix moves work onto rank {st[0].rank} ('{onto.group(0)}'), but that rank is the one that enters each "
            f"collective late ({st[2] / 1e6:.2f} ms after the first): more work there makes every rank wait longer.")


_TO_HOST = re.compile(r"\b(?:(?:pinned|page-locked) host memory|host RAM|cudaHostAlloc|cudaMallocHost|"
                      r"device[- ]to[- ]host|D2H|DtoH|\.cpu\(\))", re.I)


def _off_device(c: "Context") -> Optional[str]:
    """A fix that moves the device-to-device copies filling the window into host memory: each byte then crosses the
    host link, tens of GB/s, instead of HBM, a few TB/s."""
    s = c.facts.timeline
    m = _TO_HOST.search(c.answer.fix_text or "")
    if s is None or m is None or not on_device(s) or not s.copy_ns or s.copy_ns < 0.2 * s.window_ns or \
            ruled_out(c.answer.fix_text, m.start(), m.end()):
        return None
    return (f"The fix's change '{m.group(0)}' moves the window's device-to-device copies ({s.copy_ns / s.window_ns:.0%} "
            f"of it) into host memory: every byte then crosses the host link at tens of GB/s instead of HBM at TB/s, "
            f"so the copy time rises; copy fewer bytes instead.")
