"""The fix check: the metric a fix names must move, in the direction it says, toward the roofline.

A fix is wrong when it names no metric or no direction, when its metric moves the wrong way for the claimed
mechanism (the catalog's own `fix_metrics`, else the metric's kind: a rate rises toward the roofline, a cost
falls), when the metric measures a resource the claim says is not the limit (instructions for a memory-bound
cause, DRAM bytes for a compute-bound one), when it is a launch setting the change makes rather than an
effect of fixing the cause (`launch__registers_per_thread` for local-memory traffic), when it is nothing the
captures measure, or when the size it promises is more than the gap allows. Any other real metric (one the
captures hold, or a plain outcome: kernel/step/wall time, busy fraction, throughput, bytes) is accepted even
when it is not the mechanism's own: a true fix may be measured in more than one way.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

from .. import catalog
from ..analysis.kernels import is_library_kernel
from ..catalog import CATALOG
from .direction import SETTING as _SETTING, clause_direction
from .metric_kinds import PIPE as _PIPE, metric_direction
from .match import kernel_mentions
from .numbers import METRIC_TOKEN
from .unverified import ruled_out

if TYPE_CHECKING:
    from .context import Context

# work done per second or per byte moved: rises toward the roofline, whatever it counts ("tokens per second")
_THROUGHPUT = re.compile(r"per[_ ]second|/s\b|\bintensity\b|FLOPs? per (?:DRAM )?byte|FLOP/B\b", re.I)
# the resource a metric measures (a memory-bound cause is not fixed by fewer instructions, and the reverse)
_RESOURCE = {"compute": re.compile(r"inst|issue|pipe|flop|fma|tensor|\bipc\b", re.I),
             "memory": re.compile(r"dram|bytes|sector|\bl2\b|lts__|l1tex|traffic|hit[ _]rate|memory throughput", re.I)}
# a kernel's own resources: what a kernel change moves, not what a host- or transfer-bound program waits on
_KERNEL_RESOURCE = re.compile(r"\bdram\b|dram__|sector|\bl2\b|lts__|l1tex|hit[ _]rate|inst|issue|pipe|flop|\bfma\b|tensor|"
                              r"occupancy|warps", re.I)
_SPEEDUP = re.compile(r"(\d+(?:\.\d+)?)\s?(?:x|×)\s*(?:faster|speed-?up|shorter|less time|lower (?:kernel |step )?time)|"
                      r"(?:speed-?up|faster|time (?:down|drops?|falls?)) (?:by|of) (?:up to |about |~)*(\d+(?:\.\d+)?)\s?(?:x|×)",
                      re.I)


_ENGINE_NAME = re.compile(r"(?:multirank|timeline|telemetry|rank|derived|sass|device|nvtx)\.\w")  # kernel-profiler's own


def _resource(metric: str) -> Optional[str]:
    hits = [r for r, p in _RESOURCE.items() if p.search(metric)]
    return hits[0] if len(hits) == 1 else None


MINOR_KERNEL_SHARE = 0.10  # a kernel under this share of the step cannot move a host- or transfer-bound step


def _minor_kernel(c: "Context", metric: str, e) -> Optional[str]:
    """A fix of a host- or transfer-bound program measured on one kernel that takes a small share of the step."""
    if e is None or not set(e.bounds[:1]) & {"host", "transfer"} or e.scope != "program":
        return None
    step = c.facts.named("timeline.steady_step_median_ns")
    text = c.answer.fix_text.replace("`", " ")
    for key in kernel_mentions(f"{metric} {text}", c.facts):
        name = c.facts.kernels.get(key, key) or key
        at = text.find(name)
        said = re.split(r"[;,\n]|\.(?!\d)", text[at + len(name):], maxsplit=1)[0] if at >= 0 else ""
        if name not in metric and not (clause_direction(said) and re.search(r"\btime\b|duration|\d\s?(?:us|µs|ms)\b", said)):
            continue  # named in passing (a table row, "`work` stays"), not as the time the fix moves
        per = [f for f in c.facts.named("timeline.kernel_ns_per_step", key) if f.kernel == key]
        if step and per and per[0].value < MINOR_KERNEL_SHARE * step[0].value:
            return (f"The fix's metric is `{c.facts.kernels.get(key, key)}`'s time, {per[0].value / 1e3:.1f} us of a "
                    f"{step[0].value / 1e6:.2f} ms step ({per[0].value / step[0].value:.1%}): the answer says "
                    f"{e.id.replace('_', ' ')} ({e.bound}-bound) is the limit, so that kernel cannot move the step.")
    return None


def _at_zero(c: "Context", metric: str) -> Optional[str]:
    """The kernel in question, when the fix's metric (named in full) is measured as 0 for it."""
    key = subject(c)
    fs = [f for f in c.facts.by_metric.get(metric.replace("`", "").strip(), []) if f.kernel == key] if key else []
    return c.facts.kernels.get(key, key) if fs and all(f.value == 0 for f in fs) else None


def _real(c: "Context", metric: str) -> bool:
    """A metric the captures hold, a profiler metric name, or a plain outcome (its kind is known)."""
    token = METRIC_TOKEN.search(metric.replace("`", " ")) or _ENGINE_NAME.match(metric)
    return bool(token or metric in c.facts.by_metric or metric_direction(metric) or _PIPE.search(metric) or
                re.search(r"\btensor[- ](?:pipe|cores?)\b", metric, re.I))  # ncu's tensor pipe utilization


_LEAVE = re.compile(r"\b(leave|no (?:kernel |code )?change|none\b|nothing (?:to|left|worth)|keep (?:it|the kernel) as|"
                    r"(?:not|n't|never) (?:to )?touch)", re.I)


_STAYS = re.compile(r"\b(?:should|will|would|to)\s+(?:stay|remain)\b|\bstays?\s+(?:at|around|~|near)\b|\bunchanged\b", re.I)


def at_roofline(c: "Context") -> bool:
    """The answer claims near_peak and the captures agree: its kernel runs within NEAR_PEAK_GAP of its floor."""
    key = subject(c)
    r = c.facts.rooflines.get(key) if key else None
    return c.claimed == "near_peak" and r is not None and r.stated_gap <= catalog.NEAR_PEAK_GAP


def subject(c: "Context") -> Optional[str]:
    """The profiled kernel the answer is about: of the kernels its bottleneck names, the one named first (a set's
    order changes from run to run with Python's hash seed; the verdict must not)."""
    text = c.answer.bottleneck or ""

    def first(k: str) -> tuple[int, str]:
        at = text.find(c.facts.kernels.get(k, k) or k)
        return (at if at >= 0 else len(text) + 1, k)
    prim = sorted((k for k in c.scope.primary if k in c.facts.profiles), key=first)
    return prim[0] if prim else (min(c.scope.primary, key=first) if c.scope.primary else None)


# a change to code the user does not own: patching, editing or forking the library's kernel (or the library)
_EDIT = re.compile(r"\b(?:patch|modify|edit|fork|hack)\w*\b[^.;]{0,60}?\b(?:kernel|template|library|source|PyTorch|"
                   r"cuBLAS|cuDNN|ATen|CUTLASS|NCCL)\b|\b(?:rewrite|rewriting|re-write)\s+(?:PyTorch|cuBLAS|cuDNN|ATen|"
                   r"CUTLASS|the library)", re.I)


_REFUSED = re.compile(r"\b(?:don['’]?t|do not|never|no need to|without|rather than|instead of|not|nor|cannot|can['’]t|"
                      r"won['’]t|shouldn['’]t)\b\W*(?:\w+\W+){0,2}$", re.I)  # "(we don't edit ATen)": an edit refused


def _library_edit(c: "Context") -> list[str]:
    """A fix that edits a library kernel (ATen, cuBLAS, cuDNN, CUTLASS, NCCL, Inductor's output): the user does not
    own that code; the change belongs at the call site (shape, dtype, layout, a fused op, another API)."""
    k = subject(c)
    name = c.facts.kernels.get(k, k) if k else None
    full = c.facts.profiles[k].name if k in c.facts.profiles else name  # "anon::softmax_warp_forward<c10::BFloat16..>"
    fix = c.answer.fix_text
    m = next((x for x in _EDIT.finditer(fix) if not _REFUSED.search(fix[max(0, x.start() - 30):x.start()])), None)
    if not name or m is None or not (is_library_kernel(full) or is_library_kernel(name)):
        return []
    return [f"The fix edits library code ('{m.group(0)[:60]}'), but `{name[:60]}` is a library kernel the user does not "
            f"own: change the call site instead (the shape, dtype or layout of the call, a fused op, another API)."]


# a fix that states no measured outcome: a failure of how the answer reads, not of what it claims
NO_METRIC = "The fix names no metric: say which measured metric should move (e.g. gpu__time_duration.sum)."
NO_DIRECTION = "The fix gives no direction: say whether the metric should increase or decrease, and by about how much."


def check_fix(c: "Context") -> list[str]:
    a = c.answer
    if not a.fix_text.strip():
        return []
    out = _library_edit(c)
    if out:
        return out
    metric, direction = (a.fix.metric, a.fix.direction) if a.fix is not None else (None, None)
    metric = (metric or "").strip()
    leave = _LEAVE.search(a.fix_text)
    if leave and (at_roofline(c) and (not metric or direction not in ("increase", "decrease") or not _real(c, metric))
                  or direction is None and _STAYS.search(a.fix_text)):
        return []  # a kernel the captures put at its roofline: "leave it" needs no metric to move (nor one the
        # captures cannot measure, "FLOP per DRAM byte"); "leave it: `gpu__dram_throughput` should stay at ~75%" says
        # its outcome
    if not metric:
        out.append(NO_METRIC)
    if direction not in ("increase", "decrease"):
        out.append(NO_DIRECTION)
    if out:
        return out
    e = CATALOG.get(c.claimed or "")
    what = e.id.replace("_", " ") if e is not None else "the cause it names"
    minor = _minor_kernel(c, metric, e)
    if minor is not None:
        return [minor]
    zero = _at_zero(c, metric) if direction == "decrease" else None
    if zero is not None:
        return [f"The fix says '{metric}' will decrease, but the captures measure it as 0 for `{zero}`: a metric at 0 "
                f"cannot fall, so it is not what the change moves."]
    own = next(((p, d) for p, d in e.fix_metrics if re.search(p, metric, re.I)), None) if e is not None else None
    if own is not None and own[1] == "decrease" and _THROUGHPUT.search(metric):
        own = None  # "tokens per second (FLOP per byte)": a rate of the thing the catalog counts as a cost
    if own is not None:
        if own[1] != direction:
            out.append(f"The fix says '{metric}' will {direction}, but fixing {what} moves it the other way "
                       f"({own[1]}), toward the roofline.")
    elif _SETTING.search(metric):
        if e is not None and e.id != "near_peak":
            out.append(f"The fix's metric '{metric}' is a setting of the launch or the build, the change itself, not "
                       f"a measured effect of fixing {what}: name what it moves (kernel time, the cause's counter).")
    elif not _real(c, metric):
        out.append(f"The fix's metric '{metric}' is nothing the captures measure: name a measured metric (kernel or "
                   f"step time, GPU busy fraction, a profiler counter).")
    else:
        toward = metric_direction(metric)
        if toward is not None and toward != direction:
            out.append(f"The fix says '{metric}' will {direction}, but toward the roofline it moves the other way "
                       f"({toward}): a fix of {what} cannot make it {'fall' if toward == 'increase' else 'rise'}.")
        elif e is not None and set(e.bounds) & {"host", "transfer"} and _KERNEL_RESOURCE.search(metric):
            out.append(f"The fix's metric '{metric}' measures the kernels' own work, but the answer says {what} "
                       f"({e.bound}-bound) is the limit: the GPU waits on the {e.bound}, so the kernels' counters do "
                       f"not move the step time; name the idle/copy time or the busy fraction.")
        elif e is not None and _resource(metric) is not None:
            bounds = set(e.bounds) & {"memory", "compute"}
            relieved = bounds == {"compute"} and _resource(metric) == "memory" and direction == "increase"
            # (a kernel freed of its compute limit runs toward the memory roof: its DRAM throughput rises as its
            # time falls)
            if len(bounds) == 1 and _resource(metric) not in bounds and "near_peak" not in e.bounds and not relieved:
                out.append(f"The fix's metric '{metric}' measures {_resource(metric)}, but the answer says "
                           f"{what} ({bounds.pop()}-bound) is the limit: moving it does not move the kernel's time.")
    return out + _fix_size(c) + _wrong_way(c)


def _wrong_way(c: "Context") -> list[str]:
    """A change the catalog knows to move the claimed cause away from the roofline (more threads on contended words),
    and, whatever cause the answer claims, a synchronization per launch or a lower register cap for a kernel that
    already spills."""
    out = []
    causes = dict.fromkeys([c.claimed, _measured_cause(c)])  # the cause claimed, and the one the captures show
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
    out += [x for x in (_block_over_register_file(c, key), _wider_dtype(c, causes)) if x]
    return out


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
    if not grid or dram is None or dram < STREAMING_PCT:
        return None
    fix = c.answer.fix_text
    named = [int(m.group(1).replace(",", "")) for m in _GRID.finditer(fix)]  # "grid 132", "one block per SM"
    named += [int(sms)] if sms and _BLOCK_PER_SM.search(fix) else []
    n = min(named) if named else max((int(m.group(1).replace(",", "")) for m in _BLOCKS.finditer(fix)), default=0)
    if 0 < n < grid:
        return (f"The fix launches {n} blocks, fewer than the {grid:g} the kernel has now (ncu), for a kernel that moves "
                f"DRAM at {dram:.1f}% of its peak: fewer threads keep fewer loads in flight, so DRAM throughput falls "
                f"and the time rises.")
    return None


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


_ADD_SYNC = re.compile(r"CUDA_LAUNCH_BLOCKING\s*=\s*1|\b(?:cuda(?:Stream|Device))?synchroni[sz]e\w*(?:\([^)]*\))?(?:;\s*[\w.]+\([^)]*\);?)?`?\s+"
                       r"(?:right |immediately |directly )?after "
                       r"(?:each|every)(?: one)?(?: of the)?\s+(?:\w+\s+)?(?:op|launch|kernel|call|matmul|gemm|layer|pass)|"
                       r"\bsynchroni[sz]\w* (?:early and often|more often|more frequently)|"
                       r"\bafter (?:each|every)(?: one of the)? `?[\w.]+(?:\([^)]*\))?`?,? (?:call |add |insert )?`?(?:cuda(?:Stream|Device)"
                       r"Synchronize|torch\.cuda\.synchronize)|"
                       r"\bmake (?:every|each|all) (?:launch|kernel|op)\w* (?:synchronous|blocking)", re.I)
_LOWER_CAP = re.compile(r"\b(?:lower|reduce|cut|tighten|decrease|drop|shrink)\w*\b[^.;]{0,30}\bregister (?:cap|limit|count|budget)"
                        r"|\bregister (?:cap|limit|budget)\b[^.;]{0,20}\b(?:lower|down|reduc\w*|from \d+ to)\b"
                        r"|\b(?:lower|reduce|tighten|cut)\w*\b[^.;]{0,15}\bmaxrregcount", re.I)


def _fix_size(c: "Context") -> list[str]:
    m = _SPEEDUP.search(c.answer.fix_text)
    if not m:
        return []
    factor = float(m.group(1) or m.group(2))
    key = subject(c)
    r = c.facts.rooflines.get(key) if key else None
    s = c.facts.timeline
    kernels = s.kernel_ns / s.window_ns if s is not None and s.window_ns else 0.0
    program = c.claimed in catalog.HOST_MECHANISMS and catalog.CATALOG[c.claimed].scope == "program"
    # (a kernel that reads host memory over PCIe, zero_copy_reads, is a transfer cause inside the kernel's own time)
    if program and "transfer" in catalog.CATALOG[c.claimed].bounds and kernels > 0:
        # a faster copy shortens the copies themselves: the kernels' own time is what stays
        limit, what = 1 / kernels, f"the kernels alone take {kernels:.0%} of the window"
    elif program and s is not None and s.busy_fraction > 0:
        limit, what = 1 / s.busy_fraction, f"the GPU is already busy {s.busy_fraction:.0%} of the window"
    elif r is not None and c.claimed != "no_tensor_cores":
        limit, what = max(r.gap, r.stated_gap), f"the kernel runs {r.stated_gap:.1f}x its roofline floor"
    else:
        return []
    if factor > limit * 1.5 + 0.5:
        return [f"The fix promises {factor:g}x, but {what}: removing the whole gap gives at most ~{limit:.1f}x."]
    return []
