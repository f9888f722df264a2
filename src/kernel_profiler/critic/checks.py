"""The deterministic checks: pure functions of (answer, review context) returning one-line reasons.

  reviewer     no text addressed to the reviewer/critic (hidden parts included)
  parts        all four parts are present and non-empty
  numbers      number_check.py: a number is a measured value of what its words describe, a derivation (declared or
               written out), or knowledge nothing contradicts (listed unverified); contradicted numbers are refused
  mechanism    the mechanism is a causal chain: measurement -> cause -> gap to the roofline (or idle/copy time)
  not_a_dump   a list of counters without such a chain is not an answer
  signature    the claimed mechanism's signature is present in the captures (catalog.py, signatures.py)
  bound        the bound agrees with the timeline's steady-state verdict and with the kernel's memory throughput
  fix          the fix names a real metric moving toward the roofline, by a size the gap allows (fixes.py)
  replay_time  no ncu (replayed, serialized) kernel duration is quoted as program/step time
  ceilings     no achieved rate above its ceiling
  near_peak    a kernel at its roofline is not given an invented problem
  arithmetic   'A op B (op C ...) = R' written in the answer holds for its operands (arithmetic.py)
  share        kernels a program-level verdict blames carry a real share of the window's kernel time (share.py)
"""
from __future__ import annotations

import re
from typing import Optional

from .. import catalog, signatures
from ..catalog import CATALOG, KERNEL_BOUNDS
from ..kernel_name import KernelName
from ..signatures import Measured
from .answer import Answer
from .absent_work import blamed_absent_fp64
from .near_peak import check_near_peak
from .arithmetic import wrong_arithmetic
from .context import Context
from .number_check import check_numbers
from .share import check_share
from .claim import answer_claim, blamed_rank, named_straggler, named_wait
from .fixes import at_roofline, check_fix, subject
from .facts import REL_TOL, Facts
from .bound_words import HOST_BUSY_MAX, affirms, answer_bound, on_device, timeline_verdict
from .chain import causal_chain
from .kernel_bound import idle_pipe, stated_kernel_bound
from .visible import addressed_to_reviewer, clean
from .match import close
from .scope import answer_scope
from .numbers import METRIC_TOKEN, quantities, scrub, sentences
from .unverified import clause_of

DUMP_MIN_NUMBERS = 5  # evidence lines + numbers and metric names in the mechanism: beyond this, a list


# ----------------------------------------------------------------------------- form
def check_reviewer(c: Context) -> list[str]:
    hit = addressed_to_reviewer(c.raw)
    return [f"The answer addresses the reviewer ('{hit[:80]}'): an answer speaks to the user about the program; "
            f"remove text meant for the critic."] if hit else []


def check_parts(c: Context) -> list[str]:
    a, out = c.answer, []
    for name, val in (("bottleneck", a.bottleneck), ("mechanism", a.explanation), ("fix", a.fix_text)):
        if name == "fix" and at_roofline(c):
            continue  # a kernel the captures put at its roofline: there is nothing to change
        if not (val or "").strip():
            out.append(f"The {name} part is missing: add a `## {name.capitalize()}` section.")
    if not a.evidence:
        out.append("The evidence part is missing: cite two or three measured numbers, each with its artifact.")
    return out


# ----------------------------------------------------------------------------- mechanism
def check_mechanism(c: Context) -> list[str]:
    a = c.answer
    if not (a.explanation or "").strip() or _is_dump(c):
        return []
    if _inconclusive(a):
        return []
    why = causal_chain(a.explanation, _causes(c), a.bottleneck, a.fix_text, _evidence_text(a))
    return [f"Mechanism: {why}. Say why the code causes the measured numbers and how far that keeps it from the "
            f"roofline (or what idle/copy time it explains)."] if why else []


# a cause the catalog has no id for, named in prose ("too few bytes in flight", "the barrier after each tile")
_OTHER_CAUSE = re.compile(r"\b(latenc\w*|in flight|barrier|dependen\w+|issue[sd]?|pipe(line)?s?|waves?|tail|serial\w*|bookkeeping|"
                          r"contention|replay\w*|bandwidth|instructions?)\b", re.I)


def _causes(c: Context) -> list[str]:
    """The causes the answer names: its claim, else the catalogued ones its mechanism names, else a cause in words."""
    if c.claimed:
        return [c.claimed]
    text = scrub(c.answer.explanation or "")
    # a host or transfer claim may name its cause in plain words: the bound check holds it to the timeline
    plain = answer_bound(c) in ("host", "transfer") or _OTHER_CAUSE.search(text)
    return catalog.claimed(text) or (["other"] if plain else [])


def _evidence_text(a: Answer) -> str:
    """The evidence lines' words, one sentence each."""
    return "\n".join(e.meaning.rstrip(".") + "." for e in a.evidence if e.meaning)


def _inconclusive(a: Answer) -> bool:
    return (a.bound == "inconclusive" or bool(re.search(r"cannot (yet )?(separate|tell|distinguish|decide)|inconclusive",
                                                        f"{a.bottleneck} {a.explanation}", re.I)))


def _is_dump(c: Context) -> bool:
    a = c.answer
    n = len(a.evidence) + len(quantities(a.explanation)) + len(METRIC_TOKEN.findall(a.explanation or ""))
    return n >= DUMP_MIN_NUMBERS and causal_chain(a.explanation, _causes(c), a.bottleneck, a.fix_text, _evidence_text(a)) is not None \
        and not _inconclusive(a)


_FUNCTION_WORDS = frozenset("the a an is are was were be to of in on for by with as at from that this it its and or but so "
                            "because which than then into per not no".split())
KEYWORD_LIST_SHARE, KEYWORD_LIST_WORDS = 0.03, 25  # under 3% function words in 25 words or more: a list of keywords
# (the most clipped correct prose note across the answer sets has 6%; keyword dumps and stuffing, 0-3%)


def _keyword_list(text: str) -> bool:
    """Under 3% function words, and no chain written in arrows: a note as terse as "32 sectors/req -> 4" ... "4 -> 32;
    time -> ~0.13 ms" links its numbers, a keyword list never does."""
    words = re.findall(r"[A-Za-z][A-Za-z']*", re.sub(r"`[^`]*`", " ", text or ""))
    few = sum(w.lower() in _FUNCTION_WORDS for w in words) < KEYWORD_LIST_SHARE * len(words)
    return len(words) >= KEYWORD_LIST_WORDS and few and len(re.findall(r"->|→", text or "")) < 2


def check_not_a_dump(c: Context) -> list[str]:
    if _keyword_list(c.raw):
        return ["The answer is a list of keywords, metric names and numbers, not sentences: nothing in it says why the "
                "code causes the measured numbers; explain measurement -> mechanism -> gap in prose."]
    if not (c.answer.explanation or "").strip() or not _is_dump(c):
        return []
    why = causal_chain(c.answer.explanation, _causes(c), c.answer.bottleneck, c.answer.fix_text,
                       _evidence_text(c.answer))
    return [f"The answer lists counters without a causal chain ({why}): keep the two or three numbers that establish "
            f"the bottleneck and explain measurement -> mechanism -> gap."]


def _measured(c: Context, key: Optional[str]) -> Measured:
    f = c.facts
    prof = f.profiles.get(key) if key else None
    return Measured(profile=prof, roofline=f.rooflines.get(key) if key else None,
                    sass_ops=f.sass_ops.get(key, {}) if key else {}, spill=f.spills.get(key, (0, 0)) if key else (0, 0),
                    timeline=f.timeline, name=prof.name if prof else (key or ""),
                    program={m: fs[0].value for m, fs in f.by_metric.items() if fs and fs[0].kernel is None},
                    ranks=list(f.diagnosis.ranks) if f.diagnosis is not None else [])


def check_signature(c: Context) -> list[str]:
    mid = c.claimed
    missed = _missed_tensor_cores(c, mid) + blamed_absent_fp64(c)  # said beside what the claim's signature says
    if mid is None or mid not in CATALOG:
        return missed
    key = subject(c) if CATALOG[mid].scope == "kernel" else None
    x = _measured(c, key)
    status, txt = signatures.check(mid, x)
    for alt in catalog.REFINED_BY.get(mid, ()) if status == signatures.ABSENT else ():
        got, why = signatures.check(alt, _measured(c, subject(c) if CATALOG[alt].scope == "kernel" else None))
        if got == signatures.PRESENT:
            status, txt = got, f"{txt}, but the traffic crosses the link without a copy: {why}"
            break
    c.signature = f"{mid}: {status}" + (f" ({txt})" if txt else "")
    if status == signatures.ABSENT:
        who = f"`{c.facts.kernels.get(key, key)}`" if key else "the program"
        return [f"The answer claims {mid.replace('_', ' ')}, but the captures contradict it for {who}: {txt}."] + missed
    return (_wrong_rank(c, mid) + _no_spill(c, mid, x) if status == signatures.PRESENT else []) + \
        _not_thermal(c, mid) + missed


_TENSOR_WORDS = re.compile(r"tensor[- ]?cores?|tensor[- ]pipe|\b[HW]?G?MMA\b|\bwgmma\b|\bWMMA\b|\bTF32\b|allow_tf32|"
                           r"cublasLt|\bmatrix (?:cores?|units?)\b", re.I)


def _missed_tensor_cores(c: Context, mid: Optional[str]) -> list[str]:
    """A matrix product on the FMA pipe with no tensor-core instruction (the engine's primary finding for the kernel
    in question, and its signature present): the tensor-core path is the gap to its roofline. An answer that blames
    anything else and never names the tensor cores explains a part of the gap at most (padding away bank conflicts,
    more occupancy)."""
    if mid == "no_tensor_cores" or _TENSOR_WORDS.search(c.raw or ""):
        return []
    key, d = subject(c), c.facts.diagnosis
    if key is None or d is None or d.primary is None or d.primary.mechanism != "no_tensor_cores" or \
            KernelName(d.primary.kernel or "").key != key:  # the engine's finding for this kernel, and its signature
        return []
    status, txt = signatures.check("no_tensor_cores", _measured(c, key))
    if status != signatures.PRESENT:
        return []
    said = f"claims {mid.replace('_', ' ')}" if mid else "names no cause the captures could check"
    return [f"`{c.facts.kernels.get(key, key)}` is a matrix product on the FMA pipe with no tensor-core instruction "
            f"({txt}): the tensor-core path is the gap to its roofline, and the answer {said} without it."]


_HEAT = re.compile(r"\bthermal|\btemperature|\boverheat|\bheat\b|\bhot\b|\bcooling\b", re.I)


def _not_thermal(c: Context, mid: str) -> list[str]:
    """Clocks blamed on heat where the driver's reasons while busy are power, never thermal."""
    text = f"{c.answer.bottleneck} {c.answer.explanation}"
    thermal = c.facts.named("telemetry.thermal_reasons")
    power = c.facts.named("telemetry.power_reasons")
    if mid != "thermal_throttle" or not _HEAT.search(text) or re.search(r"\bpower", text, re.I) or \
            not thermal or not power or thermal[0].value or not power[0].value:
        return []
    return ["The answer blames temperature, but the clock-event reasons NVML reports while the GPU is busy are power "
            "reasons only (no thermal slowdown): the clock is held down by the power limit, not by heat."]


# local memory blamed on register pressure ("spills registers", "raise -maxrregcount"), not on an array on the stack
_PRESSURE = re.compile(r"register pressure|spill\w* (?:its |the )?registers|out of registers|register budget|"
                       r"(?:more|raise|increase)\w* (?:the )?(?:register|maxrregcount)|live values", re.I)
_STACK_WORDS = re.compile(r"stack frame|\barray\b|indexed|dynamic(?:ally)? index|run[- ]time index", re.I)


def _no_spill(c: Context, mid: str, x: Measured) -> list[str]:
    """Local-memory traffic said to come from register pressure, where the compiler spills nothing: the traffic
    is an array kept on the stack (indexed at run time), and more registers do not remove it."""
    stack, spilled = x.spill
    text = f"{c.answer.bottleneck} {c.answer.explanation} {c.answer.fix_text}"
    if mid != "local_memory_spill" or spilled or not stack or not _PRESSURE.search(text) or _STACK_WORDS.search(text):
        return []
    return [f"The answer blames register pressure, but the compiler spills nothing for `{x.name}` (ptxas: {stack}-byte "
            f"stack frame, 0 spill bytes): the local traffic is an array on the stack indexed at run time, which more "
            f"registers do not remove."]


def _wrong_rank(c: Context, mid: str) -> list[str]:
    """A straggler claim must blame the rank that enters the collectives late, not one that waits for it."""
    a = c.answer
    named = blamed_rank(a.bottleneck)
    if named is None:  # the rank a sentence elsewhere calls the straggler ("So the straggler is rank 0, and ...")
        named = next((r for r in (named_straggler(t) for t in [a.explanation, *(e.meaning for e in a.evidence),
                                                                a.fix_text]) if r is not None), None)
    st = signatures.straggler(Measured(ranks=list(c.facts.diagnosis.ranks))) if c.facts.diagnosis else None
    if mid not in catalog.BLAMES_A_RANK or named is None or st is None or named == st[0].rank:
        return []
    return [f"The answer blames rank {named}, but rank {st[0].rank} is the one that enters each collective late "
            f"({st[2] / 1e6:.2f} ms after the first): rank {named}'s long collective is time spent waiting for it."]


def check_bound(c: Context) -> list[str]:
    pipe = idle_pipe(c)  # "FP64 throughput bound" for a kernel whose FP64 pipe idles beside a saturated one
    if pipe:
        return pipe
    b, v, s = answer_bound(c), timeline_verdict(c.facts), c.facts.timeline
    if b is None or b in ("inconclusive", "comms"):
        return []
    if v is None or s is None:  # one kernel's profile, no timeline: the kernel's own counters still hold its bound
        return stated_kernel_bound(c, b) if b in KERNEL_BOUNDS else []
    if b == "host" and len(c.facts.diagnosis.ranks if c.facts.diagnosis else []) >= 2:
        return _host_of_ranks(c)
    busy = f"GPU busy {s.busy_fraction:.0%} of the {s.window_ns / 1e6:.1f} ms steady window"
    if c.claimed == "startup_dominated" and v in ("host", "transfer", "kernel") and s.window_ns:
        return [f"The answer blames start-up, but the timeline's steady state is {v}-bound ({busy}): the "
                f"{s.startup_ns / 1e9:.2f} s of start-up is paid once, the steady window is what a longer run repeats."]
    if v != "startup" and affirms(clean(c.raw), v):  # (a cause of start-up under the right bound is refused above)
        return stated_kernel_bound(c, b) if v == "kernel" and b in KERNEL_BOUNDS else []
    if v == "transfer" and b in ("memory", "near_peak") and on_device(s) or \
            v == "transfer" and b == "near_peak" and _LINK_WORDS.search(c.answer.bottleneck):
        return []  # device-to-device copies fill the window: DRAM work, bound by the memory the answer names; or the
        # copies run at the link's speed ("the upload ... is simply a lot of bytes for the link"): a transfer verdict
    if v in ("host", "transfer", "startup") and (b in KERNEL_BOUNDS or b == "kernel"):
        return [f"The answer calls it {b}-bound, but the timeline's steady state is {v}-bound ({busy}, copies "
                f"{s.copy_ns / max(s.window_ns, 1):.0%}): no kernel change can fix idle time; answer on the timeline."]
    if v == "kernel" and b in ("host", "transfer") and (b == "transfer" or s.busy_fraction > HOST_BUSY_MAX):
        # a GPU idle over a quarter of its steady window has host time to blame, even under the engine's threshold
        return [f"The answer calls it {b}-bound, but the timeline's steady state keeps the GPU busy ({busy}; copies "
                f"{s.copy_ns / max(s.window_ns, 1):.0%}): the dominant kernels are the cost, not the host."]
    if v == "startup" and b in ("host", "transfer") and c.claimed != "startup_dominated" and \
            s.busy_fraction > HOST_BUSY_MAX:
        return [f"The answer calls the program {b}-bound, but the host and copy time is start-up, paid once "
                f"({s.startup_ns / 1e9:.2f} s before the steady window); the steady state keeps the GPU busy ({busy}): "
                f"a longer run repeats the kernels, not the start-up."]
    if {v, b} == {"host", "transfer"}:
        return [f"The answer calls it {b}-bound, but the timeline says {v}-bound ({busy}, copies "
                f"{s.copy_ns / max(s.window_ns, 1):.0%})."]
    return stated_kernel_bound(c, b)


# what moves over the link, named as the limit ("copies fill the window ... at the roofline" names no link: refused)
_LINK_WORDS = re.compile(r"\b(?:upload\w*|download\w*|transfers?|H2D|D2H|HtoD|DtoH|host-to-device|device-to-host|PCIe|"
                         r"NVLink|link)\b", re.I)


def _host_of_ranks(c: Context) -> list[str]:
    """Several ranks: time a rank spends inside a collective waiting for a late peer is not work. A host claim stands
    when the last rank to enter the collectives computes (non-collective kernels) a small part of its step: its
    GPU waits for its host."""
    st = signatures.straggler(Measured(ranks=list(c.facts.diagnosis.ranks)))
    if st is None:
        return []
    last = st[0]
    if not last.compute_ns_per_step or not last.step_p50_ns:
        return []
    frac = last.compute_ns_per_step / last.step_p50_ns
    if frac <= HOST_BUSY_MAX:
        return []
    return [f"The answer calls it host-bound, but rank {last.rank}, the last to enter each collective, runs GPU "
            f"compute for {frac:.0%} of its {last.step_p50_ns / 1e6:.1f} ms step ({last.compute_ns_per_step / 1e6:.1f} "
            f"ms): its GPU work, not its host, is what the other ranks wait for."]


# ----------------------------------------------------------------------------- time and ceilings
_PROGRAM_TIME = re.compile(r"\b(program(?:'s)? (?:time|wall|run ?time|takes|took|runs|ran)|whole program|application|app|wall[- ]?(clock)?|step time|per step|each step|per iteration|"
                           r"iteration time|end[- ]to[- ]end|the run|whole run|total time|run time|runtime)\b", re.I)


_NCU_NAMED = re.compile(r"\bncu\b|Nsight Compute", re.I)
_KERNEL_AFTER = re.compile(r"\s*(?:[\w-]+\s+)?kernels?\b", re.I)


def check_replay_time(c: Context) -> list[str]:
    f, out = c.facts, []
    if not f.ncu_durations:
        return []
    for _, text in c.texts():
        for sent in (clause for s in sentences(text) for clause in re.split(r";\s+|\s+[—–]\s+|(?<=[a-z%)][.!?])\s+", s)):
            if not _PROGRAM_TIME.search(sent) or _NCU_NAMED.search(sent):  # the program-time words must belong to the
                continue  # number's own clause; a clause that names ncu knows where its time comes from
            for q in quantities(sent):
                if q.family != "time" or _KERNEL_AFTER.match(sent[q.end:]):  # "a 14 µs kernel": a kernel's time
                    continue
                if not _PROGRAM_TIME.search(clause_of(sent, q, aside=False) + " " + _glossed(sent, q)):
                    continue  # "against 15.49 ms measured (nsys median 15.07 ms per step)": the step is the aside's
                is_ncu = any(close(d, q.value, q.tol) for d in f.ncu_durations)
                # a value closer to a kernel's timeline statistic (its median launch) than to any ncu duration was
                # read from the timeline
                off_ncu = min(abs(d - q.value) for d in f.ncu_durations)
                is_prog = any(close(p, q.value, q.tol) for p in f.program_times) or any(
                    x.metric.startswith("timeline.kernel_") and abs(x.value - q.value) < off_ncu
                    for x in f.near("time", q.value, q.tol))
                if is_ncu and not is_prog:
                    ref = (f" (the timeline's step median is {min(f.program_times, key=lambda p: abs(p - q.value)) / 1e6:.4g} ms)"
                           if f.program_times else "")
                    out.append(f"'{q.written}' is an ncu kernel duration (replayed in isolation), quoted as program/"
                               f"step time{ref}: take program time from the timeline.")
    return out


def _glossed(sentence: str, q) -> str:
    """The words a parenthesis holding q glosses ("the step time (14.27 µs)": "the step time"), or ''."""
    i = sentence.rfind("(", 0, q.start)
    return sentence[max(0, i - 40):i] if i >= 0 and ")" not in sentence[i:q.start] else ""


def check_arithmetic(c: Context) -> list[str]:
    return [f"Arithmetic: {w}; recompute it from the measured values." for _, t in c.texts() for w in wrong_arithmetic(t)]


# a rate above DRAM's peak that the answer itself puts down to a cache: served from L2, not DRAM
_CACHED = re.compile(r"\bL[12]\b|\bcache[sd]?\b|more than (?:the )?(?:HBM|DRAM|device memory)", re.I)


def check_ceilings(c: Context) -> list[str]:
    f, out = c.facts, []
    rs = [f.rooflines[k] for k in c.scope.primary if k in f.rooflines] or list(f.rooflines.values())
    bw = max((r.peak_bandwidth for r in rs), default=None)
    ceilings = [x.value for x in f.items if x.family in ("byte_rate", "flop_rate") and "peak" in x.concepts]
    for _, text in c.texts():
        said = sentences(text)
        for i, s in enumerate(said):
            cached = _CACHED.search(" ".join(said[i:i + 2]))  # "7.6 TB/s, more than HBM can deliver: it stays in L2"
            for q in quantities(s):
                if any(close(v, q.value, q.tol) for v in ceilings):
                    continue
                if q.family == "byte_rate" and bw and q.value > bw * (1 + REL_TOL) + q.tol and not cached:
                    out.append(f"'{q.written}' exceeds the device-memory ceiling of {bw / 1e12:.2f} TB/s: an achieved "
                               f"rate cannot pass its peak; recheck bytes and time.")
            for m in re.finditer(r"(\d+(?:\.\d+)?)\s?%\s+of\s+(the\s+|its\s+)?(peak|ceiling|roofline|hardware|bandwidth|"
                                 r"dram bandwidth|sol|speed[- ]of[- ]light)", scrub(s), re.I):
                if float(m.group(1)) > 100.0:
                    out.append(f"'{m.group(0)}' is above 100% of its ceiling: a bug in the numbers, not a measurement.")
    return out


CHECKS = {
    "reviewer": check_reviewer, "parts": check_parts, "numbers": check_numbers, "mechanism": check_mechanism,
    "not_a_dump": check_not_a_dump, "signature": check_signature, "bound": check_bound, "fix": check_fix,
    "replay_time": check_replay_time, "ceilings": check_ceilings, "near_peak": check_near_peak,
    "arithmetic": check_arithmetic, "share": check_share,
}


def build_context(answer: Answer, facts: Facts, raw: str) -> Context:
    whole = " ".join([answer.bottleneck, answer.explanation] + [e.meaning for e in answer.evidence] +
                     [raw.split("\n", 1)[0]])  # the title ("# saxpy_grid_stride (FIXED build) — what is left")
    scope = answer_scope(answer.bottleneck, whole, [answer.kernel], facts)
    return Context(answer=answer, facts=facts, raw=raw, scope=scope,
                   claimed=named_wait(answer_claim(answer, raw), raw))
