"""A kernel's bound against its own counters: one called memory-bound must move DRAM (or a cache level) at a real
fraction of its peak; one called compute- or latency-bound must not be streaming DRAM near its peak; one called
compute-bound must keep some unit of its SM busy over the kernel's elapsed time."""
from __future__ import annotations

import re

from .. import signatures
from .bound_words import KERNEL_SIDE, affirms
from .context import Context
from .context import subject
from .numbers import sentences
from .unverified import ruled_out
from .visible import clean

DRAM_PCT = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"
MEMORY_PCTS = ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
               "lts__throughput.avg.pct_of_peak_sustained_elapsed", "l1tex__throughput.avg.pct_of_peak_sustained_active")
CACHE_SATURATED_PCT = 80.0  # an L1/L2 this busy is a throughput limit, not a wait
MEMORY_LIMITS_PCT = 70.0  # DRAM this busy is the limit
MEMORY_WEAK_PCT = 25.0  # DRAM under a quarter of its peak with every cache under half busy: not memory-bound (this
# holds whenever no level is even 15% busy, the rule it replaced)
SM_PCT = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
ISSUE_PCT = "smsp__issue_active.avg.pct_of_peak_sustained_active"
COMPUTE_WEAK_PCT = 40.0  # an SM under this busy, with DRAM busier, is not compute-bound (sm__throughput is the
# busiest of the SM's units: a saturated XU or FMA pipe shows in it)
SM_LIMITS_PCT, MEMORY_SATURATED_PCT = 80.0, 50.0  # an SM this busy with DRAM below half its peak is compute-limited


DRAM_IDLE_PCT = 10.0  # DRAM this idle is no limit, whatever a cache level does, for an answer that blames DRAM itself
# ("HBM bandwidth is the limiter" on a kernel whose L1 is busy with 17 sectors per request)
_DRAM_LIMIT = re.compile(r"\b(?:HBM|DRAM)[- _](?:bandwidth|throughput)\b|\b(?:HBM|DRAM)[- ]bound\b|"
                         r"\b(?:limited|bound) by (?:the )?(?:HBM|DRAM)\b", re.I)
_CACHE_NAMED = re.compile(r"\b(?:L1|L2|LSU|shared|smem|sectors?|texture|TEX|cache|wavefronts?|requests?)\b", re.I)


def _names_dram(c: Context) -> bool:
    """Whether the verdict and mechanism name DRAM (HBM) bandwidth as the limit and no cache level or access pattern."""
    said = f"{c.answer.bottleneck or ''}\n{c.answer.explanation or ''}\n{c.answer.mechanism or ''}"
    return bool(_DRAM_LIMIT.search(said)) and not _CACHE_NAMED.search(said)


SM_IDLE_PCT = 15.0  # an SM this idle over the kernel's elapsed time, with DRAM idle too, limits nothing


def _over_elapsed(c: Context, metric: str, key: str, value: float) -> float:
    """A level's busy % over the kernel's elapsed time where the capture has it: a rate of the active cycles only
    (l1tex ..._active) reads 97% for one warp on one SM of a 2 us kernel."""
    if not metric.endswith("_active"):
        return value
    over = c.facts.named(metric[:-len("active")] + "elapsed", key)
    return min(value, over[0].value) if over else value


def stated_kernel_bound(c: Context, b: str) -> list[str]:
    """`kernel_bound`, save for an answer that also states, in so many words it does not rule out, another bound of
    the kernel its counters allow ("no occupancy/latency problem ... DRAM bandwidth-bound, near peak"): the bound it
    states is its verdict, whatever bound its other sentences were read as."""
    out = kernel_bound(c, b)
    text = clean(c.raw)
    if out and any(other != b and affirms(text, other) and not kernel_bound(c, other) for other in KERNEL_SIDE):
        return []
    return out


def kernel_bound(c: Context, b: str) -> list[str]:
    """A kernel called memory-bound must move DRAM at a real fraction of its peak; one called compute- or
    latency-bound must not be streaming DRAM near its peak."""
    key = subject(c)
    fs = c.facts.named(DRAM_PCT, key) if key else []
    if not fs or b not in ("memory", "compute", "latency"):
        return []
    pct, who = fs[0].value, f"`{c.facts.kernels.get(key, key)}`"
    levels = [(_over_elapsed(c, m, key, f.value), m) for m in MEMORY_PCTS for f in c.facts.named(m, key)]
    # (% busy, metric) per level
    hierarchy = max([v for v, _ in levels] + [pct])
    sm = max([f.value for f in c.facts.named(SM_PCT, key)], default=None)
    if b in ("memory", "latency") and sm is not None and sm >= SM_LIMITS_PCT and pct < MEMORY_SATURATED_PCT:
        return [f"The answer calls {who} {b}-bound, but its SM is {sm:.1f}% busy ({SM_PCT}) while DRAM moves at "
                f"{pct:.1f}% of peak: the SM's issue and pipes are the limit, not waiting on memory."]
    if b == "memory" and pct < DRAM_IDLE_PCT and _names_dram(c):
        return [f"The answer blames DRAM bandwidth for {who}, but DRAM moves at {pct:.1f}% of peak ({DRAM_PCT}): "
                f"the bytes from memory are not what limits it."]
    if b == "memory" and pct < MEMORY_WEAK_PCT and hierarchy < MEMORY_SATURATED_PCT:
        return [f"The answer calls {who} memory-bound, but DRAM moves at {pct:.1f}% of peak and no level of its "
                f"memory hierarchy is half busy (at most {hierarchy:.1f}%: {', '.join(MEMORY_PCTS)}): memory bandwidth "
                f"is not what limits it."]
    if b == "compute" and sm is not None and sm < SM_IDLE_PCT and pct < MEMORY_WEAK_PCT:
        return [f"The answer calls {who} compute-bound, but its SM is {sm:.1f}% busy over the kernel's time ({SM_PCT}) "
                f"and DRAM moves at {pct:.1f}% of peak: neither is the limit; the kernel waits (latency, or too few "
                f"SMs in use)."]
    if b == "compute" and sm is not None and sm < COMPUTE_WEAK_PCT and pct > sm:
        return [f"The answer calls {who} compute-bound, but its SM is {sm:.1f}% busy ({SM_PCT}) while DRAM moves at "
                f"{pct:.1f}% of peak: no unit of the SM is the limit."]
    if b in ("compute", "latency") and pct >= MEMORY_LIMITS_PCT:
        return [f"The answer calls {who} {b}-bound, but it moves DRAM at {pct:.1f}% of peak ({DRAM_PCT}): "
                f"memory bandwidth is the limit."]
    busiest = max((x for x in levels if x[1] != MEMORY_PCTS[0]), default=None)  # a cache level, L2 or L1
    if b == "latency" and c.claimed is None and busiest is not None and busiest[0] >= CACHE_SATURATED_PCT:
        # a bare "latency-bound" (no catalogued cause: atomics and occupancy limits keep their own signatures)
        return [f"The answer calls {who} latency-bound, but its cache hierarchy is {busiest[0]:.1f}% busy "
                f"({busiest[1]}): the throughput of that level is the limit, not the wait for memory."]
    issue = max([f.value for f in c.facts.named(ISSUE_PCT, key)], default=None)
    if b == "latency" and c.claimed is None and issue is not None and issue >= signatures.ISSUE_HIDES_LATENCY:
        return [f"The answer calls {who} latency-bound, but its SM issues an instruction {issue:.1f}% of active "
                f"cycles ({ISSUE_PCT}): the warps are not waiting, the instructions are the work."]
    return []


# an SM pipe an answer names as the limit ("DFMA throughput is the limit", "saturate the double-precision units"),
# with the metrics of its utilisation
PIPES = {"FP64": (r"\bFP64 (?:units?|pipe|throughput|rate)|double[- ]precision (?:units?|pipe|throughput|rate)|"
                  r"\bDFMA (?:throughput|rate|units?|pipe)", r"pipe_fp64"),
         "FMA": (r"\bFMA (?:pipe|units?|throughput)|\bFP32 (?:pipe|units?|throughput)|\bFFMA (?:throughput|rate)",
                 r"pipe_fma(?!heavy|lite)"),
         "XU": (r"\b(?:XU|SFU|MUFU)(?: pipe| units?| throughput)?\b|special[- ]function units?", r"pipe_xu"),
         "ALU": (r"\bALU (?:pipe|units?|throughput)", r"pipe_alu"),
         "tensor": (r"\btensor (?:pipe|cores?|units?) (?:throughput|rate)", r"pipe_tensor(?:_op_hmma)?_cycles_active")}
_LIMIT = re.compile(r"saturat\w*|\bis the (?:limit|limiter|bottleneck)\b|\blimit(?:s|ed|ing)?\b|\bbound\b|pegged|"
                    r"maxed|bottleneck", re.I)
_CLAUSE = re.compile(r"[,;:()]|\b(?:while|whereas|but|and)\b")
PIPE_IDLE_PCT, PIPE_BUSY_PCT = 40.0, 80.0  # a named pipe under this while another is over that: not the limit


def _pipe_pct(c: Context, key: str, pattern: str) -> float | None:
    vals = [f.value for m, fs in c.facts.by_metric.items() if re.search(pattern, m) and "pct_of_peak" in m
            for f in fs if f.kernel == key and f.family == "pct"]
    return max(vals, default=None)


def idle_pipe(c: Context) -> list[str]:
    """A pipe the answer names as the compute limit must be busy: "FP64 throughput is the limit" for a kernel whose
    FP64 pipe is 10% busy while its XU pipe is 81% busy names the wrong unit (whatever bound the answer states)."""
    key = subject(c)
    if not key:
        return []
    who = f"`{c.facts.kernels.get(key, key)}`"
    heads = "\n".join(re.findall(r"^#{1,6}[ \t]+(.+)$", c.raw or "", re.M))  # "### damp: FP64 throughput bound"
    text = f"{heads}\n{c.answer.bottleneck}\n{c.answer.explanation}".replace("`", " ")  # (not scrubbed: "FP64" stays)
    busy = {name: _pipe_pct(c, key, pat) for name, (_, pat) in PIPES.items()}
    for s in sentences(text):
        for name, (words, _) in PIPES.items():
            m = re.search(words, s, re.I)
            pct = busy[name]
            if m is None or pct is None or pct >= PIPE_IDLE_PCT or ruled_out(s, m.start(), m.end()):
                continue
            a = max([0] + [x.end() for x in _CLAUSE.finditer(s, 0, m.start())])
            b = next((x.start() for x in _CLAUSE.finditer(s, m.end())), len(s))
            if not _LIMIT.search(s[a:b]) or re.search(r"\bonly\b|\bidle\b|\bnot\b", s[a:b], re.I):
                continue  # "... pegged, while the FP64 pipe is only 11.7% busy": the pipe named in contrast
            other = max(((v, n) for n, v in busy.items() if v is not None and n != name), default=None)
            if other is not None and other[0] >= PIPE_BUSY_PCT:
                return [f"The answer names the {name} pipe as what limits {who}, but it is {pct:.1f}% busy while the "
                        f"{other[1]} pipe is {other[0]:.1f}% busy: the busy pipe is the limit."]
    return []
