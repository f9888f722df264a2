"""Numbers the captures cannot check, told apart from numbers the captures contradict.

A number that matches no fact and no declared derivation (match.py) is one of two things:
  - a contradicted measurement: the words of its own clause name something the captures measure for the
    kernel in scope (or the program), the number is presented as that measurement (not as a reference, a
    ceiling, a bound, a floor or a prediction), and no measured value of it is within rounding. Rejected,
    with the value the capture holds.
  - an unverified number: knowledge (a link's ceiling, a size from the source, a tile size), a prediction,
    or something no capture measures, in a clause that says so (`hedged`) or in a sentence that cites no
    measured value. Not a reason to reject: the audit (`critique --json`) lists it as unverified, so a user
    sees exactly what the critic could not check. A number that sits among measured values of its sentence,
    unhedged, is arithmetic on them and must be a declared derivation (checks.py).
The headline value of an evidence line is the measurement the answer rests on: it must match (checks.py).
"""
from __future__ import annotations

import re
from typing import Optional

from .concepts import API_NAME, GENERIC, text_concepts, unit_concepts
from .facts import REL_TOL, Fact, Facts
from .match import candidates, close, counts, describes, is_ceiling, uncounted
from .scope import several_kernels
from .numbers import BARE, METRIC_TOKEN, QTY, Quantity, family_and_factor, metric_tokens, scrub, to_quantity
from .use import Use

# clause boundaries: punctuation, dashes, and the conjunctions that start another statement
_CLAUSE = re.compile(r"[,;:()\[\]]|\s[—–-]\s|\s(?:and|but|while|whereas|so|because|which|where)\s", re.I)
# words that make a number something other than a measurement of this run
_NOT_MEASURED = re.compile(
    r"\b(ideal\w*|"
    r"ceiling|peak|limit|theoretical\w*|max(?:imum)?|min(?:imum)?|target|at best|nominal|spec\w*|datasheet|rated|"
    r"practical|budget|need\w*|requir\w*|algorithm\w*|must|per the source|in the source|source code|allocat\w+|"
    r"array of|tensor of|"
    r"elements?|tile|shape|size of|expect\w*|toward|predict\w*|estimat\w*|projected|"
    r"old capture|previous (?:capture|run|profile)|before the fix|unfixed|originally|used to (?:be|take)|per clock|"
    r"(?:problem|issue|bug) is gone)\b|"
    r"/clk\b", re.I)
# (the last line: a value of another run, named as such: "went from 4.85 ms (old capture) to 3.25 ms")


def clause_of(sentence: str, q: Quantity, aside: bool = True) -> str:
    """The clause of `sentence` that holds the number (with the aside that follows it, if `aside`)."""
    return _clause(sentence, q.start, q.end, aside)


# a number that describes the code, not the run: "the 128-step loop", "5 steps per row", "160 floats kept live"
_CODE_NOUNS = r"(?:steps?|iterations?|elements?|entries|taps?|terms?|stages?|rounds?|floats?|doubles?|halfs?|ints?|values)"
# element types as programs name them: "64M int32" is a count of elements (a size from the source)
_DTYPES = r"(?:u?int(?:8|16|32|64)|fp(?:8|16|32|64)|bf16|bfloat16|float(?:16|32|64)|half2?|float[24])(?:\s+elements?)?"
_SOURCE_SIZE = re.compile(r"^[~≈]?[\d.,]+-" + _CODE_NOUNS + r"\b|^[~≈]?[\d.,]+\s+" + _CODE_NOUNS +
                          r"\s+per\s+(?:row|column|element|thread|lane|warp|block|tile|item|pixel|token|iteration)\b|"
                          r"^[~≈]?[\d.,]+\s*(?:[kKMG]i?\s+)?(?:floats?|doubles?|halfs?|ints?|" + _DTYPES + r")\b", re.I)


_REPEATED = re.compile(r"\b(?:repeated|unrolled|loops?|looped|iterated)\s+(?:over\s+)?$", re.I)
# a problem dimension set in the code: "with K = 8191", "N=4096", "`seq_len` = 2048"
_DIMENSION = re.compile(r"(?:(?:^|[\s(,`])(?:[A-Za-z]|batch|seq_?len|hidden|dim|rows|cols|width|height|[nN]_\w+|num_\w+)`?"
                        r"\s*=|(?:^|[\s(`])[A-Z]`?\s+is|\b(?:inner|outer|reduction|batch|hidden|sequence|leading)\s+"
                        r"(?:dimension|dim|size|length)(?:\s*\(`?[A-Z]`?\))?\s+(?:is|of))\s*$")


def source_size(sentence: str, q: Quantity) -> bool:
    """Whether the number is a size of the code (a trip count, an array length) rather than a measurement of the
    run: nothing in a capture measures it, so it is listed as unverified, never refused."""
    return source_size_at(sentence, q.start)


def source_size_at(text: str, start: int) -> bool:
    """`source_size` for the number written at text[start:] ("repeated 128 times", "the 160 floats kept live")."""
    return bool(_SOURCE_SIZE.match(text[start:start + 40]) or _REPEATED.search(text[max(0, start - 30):start]) or
                (_counted_integer(text, start) and _DIMENSION.search(text[max(0, start - 40):start])))


def _counted_integer(text: str, start: int) -> bool:
    """Whether the number written at text[start:] is a whole count ("8191", "4096 rows"), not a time, a size in
    bytes, a share or a fraction ("8191 ms", "8191 bytes", "32%", "4.2"), by the units numbers.py reads."""
    q = QTY.match(text, start)
    m = q if q is not None and q.start() == start else BARE.match(text, start)
    return m is not None and "." not in m["num"] and not m["exp"] and \
        (m.re is BARE or family_and_factor(m["unit"])[0] == "count")


def written_at(text: str, value: float) -> Optional[int]:
    """Where `text` writes `value` ("64M", "67,108,864", "8191"), or None."""
    for m in BARE.finditer(text):
        v = to_quantity(m["num"], m["exp"], m["mult"], None).value
        if abs(v - value) <= 1e-9 * max(abs(value), 1.0):
            return m.start()
    return None


def hedged(sentence: str, q: Quantity) -> bool:
    """Whether the number's clause presents it as something other than a measurement of this run (a ceiling, a
    prediction, a size from the source)."""
    return bool(_NOT_MEASURED.search(clause_of(sentence, q)))


# a rate its sentence disclaims as no measurement of this run ("typically reaches ~40-55 GB/s (not measured in this
# capture — an estimate)")
_DISCLAIMED = re.compile(r"\bnot measured\b|\bunmeasured\b|\btypical(?:ly)?\b|\ban estimate\b|\bestimated\b", re.I)
IDEAL = re.compile(r"\b(?:requir\w*|needs?|needed|ideal\w*|algorithmic\w*|at best|lower bound|best case|"
                   r"fastest (?:it|this|the kernel|the loop) (?:could|can|would)|(?:memory|dram|byte|compute) floor)\b",
                   re.I)  # what the work needs, the best it could do ("the fastest it could possibly go is ... ≈ 106 us")
_EXTREMES = frozenset({"stat_max", "stat_min"})
# a line that opens with a CUDA API's name as its label ("- `cudaLaunchHostFunc` (nsys):")
_API_LABEL = re.compile(r"^[\s*_>#|-]*`?cu(?:da)?[A-Z]\w*`?\s*(?:\([^)\n]{0,30}\))?\s*:")


def contradiction(q: Quantity, sentence: str, kernels: set[str], facts: Facts, use: Use,
                  headline: bool = False, evidence: bool = False) -> Optional[Fact]:
    """The measured fact the number claims to be but is not (its nearest value), or None when the number is not
    presented as a measurement the captures hold. `headline`: the number an evidence line cites, a measurement
    by its place (no hedge frees it, and a value far from the kernel's measured one is as wrong as a near one).
    `evidence`: a number of an evidence line (held to program-level values within EVIDENCE_MISS)."""
    if use.bound or (use.predicted and not headline) or uncounted(q):  # an inequality is checked as one
        return None  # (match.match_bound); a predicted target is no measurement; nor is a size of the problem ("62
        # elements", "131,072 rows"), which no capture counts
    clause = clause_of(sentence, q)
    base = _clause(sentence, q.start, q.end, aside=False)  # without the aside: a program-level value is pinned
    label = _API_LABEL.match(sentence)
    if label and not API_NAME.search(clause):  # "- cudaLaunchHostFunc: 10 calls ..., 1.8 ms each on average": the
        clause, base = f"{label.group(0)} {clause}", f"{label.group(0)} {base}"  # line's label names the API
    # only by the words of the clause itself (an aside such as "(imports, CUDA context)" tells no statistic)
    program_specific = text_concepts(base) - GENERIC - {"duration"}
    # what the whole sentence is about, read only for a clause that names nothing but a statistic ("median 70 us")
    subject = text_concepts(scrub(sentence)) - GENERIC - {"duration"} - _STATS \
        if program_specific and program_specific <= _STATS else frozenset()
    if (hedged(sentence, q) and not use.achieved and not headline) or (IDEAL.search(clause) and not use.achieved) or \
            (use.achieved and not headline and _DISCLAIMED.search(sentence)):
        return None  # (what the work needs, "Required traffic ... = 134.2 MB", is no measurement even on an evidence
        # line)
    if q.family == "time" and (_OFFSET.search(scrub(sentence)[:q.start]) or _STAGGER.search(clause)):
        return None  # a time stamp, or the spread of start times ("first-to-last kernel start 69-97 us")
    words, units = text_concepts(clause), unit_concepts(q.unit)
    concepts = frozenset(words | units)
    own = own_concepts(sentence, q)
    apis = own if label is None else concepts  # "~20 us bookkeeping + ~7 us launch (`cudaLaunchKernel` avg 7.1 us)":
    # the API is the other number's (each number's own words name its call)
    if label is None and len(_numbers(clause)) > 1:  # and so is the statistic ("avg")
        concepts = frozenset(x for x in concepts if x not in _STATS or x in own)
        words = frozenset(x for x in words if x not in _STATS or x in own)
    tokens = metric_tokens(clause)
    if not concepts - {"ratio"} and not tokens:
        return None
    counted = bool(units) and counts(q)  # "132 blocks": the noun names what is counted
    specific = words - GENERIC - {"duration"}
    timed_kernel = "duration" in words and not specific and bool(KERNEL_WORD.search(clause)) and \
        not HOST_SIDE.search(clause)  # "the launch call is 4.3 us": the host's call, not the kernel's time
    span = None if several_kernels(sentence) else _range(sentence, q)  # "each kernel takes 124-183 us": both
    # ends are measurements; "within ~10-20%" brackets one value
    if use.achieved:  # a datasheet ceiling presented as measured or achieved ("the measured 64 GB/s link")
        peak = next((f for fam, v, t in candidates(q) for f in facts.by_family.get(fam, [])
                     if is_ceiling(f) and f.kernel is None and close(f.value, v, t)), None)
        if peak is not None:
            return peak
    best: Optional[tuple[tuple, Fact]] = None
    for fam, v, t in candidates(q):
        if (q.family == "ratio" and fam != "ratio") or (q.family == "pct" and fam == "count"):
            continue  # "7.5x" compares two values: it is no count of anything; "50.4%" is a share, not 50 things
        for f in facts.by_family.get(fam, []):
            if f.kernel is not None and f.kernel not in kernels:
                continue
            if (is_ceiling(f) and not (use.achieved or use.reference)) or _combined(f) or _other_artifact(f, sentence):
                continue
            if not describes(f, q, concepts, tokens, use):
                continue
            if f.concepts & _EXTREMES - concepts and f.metric not in tokens:
                continue  # the longest or shortest launch is contradicted only by a clause that names that extreme
            if span and span[0] * (1 - REL_TOL) <= f.value / (v / q.value if q.value else 1) <= span[1] * (1 + REL_TOL):
                return None  # "within ~10-20%": a range that holds the measured value
            if span and f.concepts & {"stat_median", "stat_mean"}:
                continue  # "steps 2-5 = 0.56-0.71 ms": the ends are single items, not the median of all of them
            named = f.metric in tokens and not _given_beside(f, q, sentence) or (use.achieved and f.family != "ratio") or \
                any(x.startswith("api:") for x in f.concepts & concepts & apis) or \
                (counted and _LAUNCH_COUNT.match(f.metric) is not None and bool(f.concepts & units)) or \
                (f.metric == "timeline.gpu_busy_fraction" and _gpu_busy(base))  # "132 blocks", "GPU busy 13%"
            clock = fam == "hz" and "clock" in f.concepts and "clock" in words  # a clock rate has one reading
            if not named and not clock and f.kernel is None and not (program_specific and program_specific <= f.concepts):
                continue  # a program-level value (a window, a step, a count of steps) has many readings: its metric,
                # an API, an achieved rate or words that all describe it ("the median gap between kernels") pin it
            if not named and subject - f.concepts:
                continue  # "219 idle gaps > 5 us, median 70 us": a statistic of what its sentence is about (the gaps),
                # which this value (the kernels' median) is not
            if not named and not specific & f.concepts and \
                    not (timed_kernel and f.kernel is not None and "duration" in f.concepts):
                continue  # pinned only by a specific word of the clause that describes this fact ("61.5 ms" alone
                # names no measurement, nor does "DRAM 80% busy" name the GPU-busy fraction)
            if close(f.value, v, t) or 0 <= f.value - v <= 2 * t:
                return None  # the value of what its own clause describes ("`cuLaunchKernel` itself 7.3 us" in a
                # sentence that names another median), or that value cut rather than rounded (39.96 us written "39
                # us"): no contradiction
            off = abs(f.value - v) / max(abs(v), abs(f.value), 1e-30)
            far = EVIDENCE_MISS if headline or (evidence and f.kernel is None) or units & f.concepts & _PER_UNIT \
                else NEAR_MISS  # "delivers 9 useful bytes" (of each sector): a ratio of a small fixed range, misread
            if counted and f.kernel is None and f.concepts & units and _SCOPED.search(clause):
                far = 1.0  # "4,600 syncs in the capture", "12,400 kernel launches in the steady window": a count of
                # what the capture counts, over the span it names, is that count however far off
            static = f.metric.startswith("sass.") and abs(v) > f.value * PIN_SPAN  # executed vs listed instructions
            idle = f.kernel is None and f.family == "time" and "idle" in f.concepts  # per gap, per step, per cause...
            if static or not named and off > (IDLE_MISS if idle else far):
                continue  # far from what the words describe: likely about something else, left unverified. An
                # evidence line cites measurements, so a program-level value it misses by up to PIN_SPAN is a wrong
                # reading of it (a fixed twin's step time, 7x off); so is a kernel's value its headline misses by as
                # much. Further off, its words meet that metric only by chance ("1M independent chains" is no
                # barrier limit of 32, "the step median is 5 ms" no window of 413 ms).
            rank = (not named, not (counted and f.concepts & units), -len(f.concepts & concepts), off)
            if best is None or rank < best[0]:
                best = (rank, f)
    if best is not None and not concepts & _STATS and _within_spread(best[1], q, facts):
        return None  # "2.61 ms per conv": one launch, or another statistic, of what the clause describes
    return best[1] if best else None


def _numbers(text: str) -> list[Quantity]:
    """The numbers of a text, with or without a unit (imported here: evidence_lines imports this module's users)."""
    from .evidence_lines import numbers_of
    return numbers_of(text)


def own_concepts(sentence: str, q: Quantity) -> frozenset[str]:
    """The API functions and statistics named between the numbers either side of q (its own words)."""
    nums = [x for x in _numbers(sentence) if x.family == q.family]  # ("400 `cudaDeviceSynchronize` calls at 112 us
    # each": a count between the call and its time leaves the call the time's)
    before = max((x.end for x in nums if x.end <= q.start), default=0)
    after = min((x.start for x in nums if x.start >= q.end), default=len(sentence))
    return frozenset(x for x in text_concepts(sentence[before:after]) if x.startswith("api:") or x in _STATS)


def _given_beside(f: Fact, q: Quantity, sentence: str) -> bool:
    """Whether another number of the sentence is the named metric's value ("19,112 of the 21,565 sampled stalls
    (`..._long_scoreboard`)": the metric is 19,112's; 21,565 is something else the sentence counts)."""
    return any(x.start != q.start and close(f.value, v, t) for x in _numbers(sentence)
               for fam, v, t in candidates(x) if fam == f.family)


_STATS = frozenset({"stat_median", "stat_mean", "stat_max", "stat_min"})
PER_CALL = re.compile(r"^(api\.[^.]+\.|timeline\.kernel_)(?:median|mean|min|max)_ns$")


def _within_spread(f: Fact, q: Quantity, facts: Facts) -> bool:
    """Whether a time that names no statistic lies between the shortest and the longest call (or launch) of the thing
    whose statistic it missed: some launch, or some statistic of them, has that value."""
    m = PER_CALL.match(f.metric)
    if not m or q.family != "time":
        return False
    ends = facts.by_metric.get(f"{m.group(1)}min_ns", []) + facts.by_metric.get(f"{m.group(1)}max_ns", [])
    spread = [g.value for g in ends if g.kernel == f.kernel]
    return len(spread) >= 2 and min(spread) - q.tol <= q.value <= max(spread) + q.tol


_RANGE_AFTER = re.compile(r"^\s?(?:-|–|to)\s?~?(\d+(?:\.\d+)?)")
_RANGE_BEFORE = re.compile(r"(\d+(?:\.\d+)?)\s?(?:-|–|to)\s?~?$")


def _range(sentence: str, q: Quantity) -> Optional[tuple[float, float]]:
    """(low, high) in q's units when q is one end of a written range ("10-20%", "124.6-125.2 µs")."""
    t = scrub(sentence)
    num = float(re.match(r"[\d.,]+", q.written).group(0).replace(",", "")) if q.written[:1].isdigit() else None
    if num is None or not num:
        return None
    scale = q.value / num
    after = _RANGE_AFTER.match(t[q.start + len(q.written.split()[0]):])
    before = _RANGE_BEFORE.search(t[:q.start])
    other = float(after.group(1)) if after else float(before.group(1)) if before else None
    if other is None:
        return None
    lo, hi = sorted((num * scale, other * scale))
    return lo, hi


# facts made by combining others (sums over subsets of kernels, ratios of metrics, between ranks) or the engine's own
# readings (one-time work, steps, idle attributed to a cause): a number that misses one is not thereby wrong
_COMBINED = re.compile(r"ratio of two|sum of ncu|sum over|between ranks|largest kernel|number of profiled|ncu guided|"
                       r"one-time|/ steps|repeats|attributed to a host cause|cause / (?:window|idle time)")


def _combined(f: Fact) -> bool:
    """A fact made by combining others, or by the engine's reading (idle attributed to a cause), or a host API's
    call count or total time (over the capture: a writer counts the calls of a window or a step): matched, never
    contradicting (a per-call statistic of an API is one value, and is checked)."""
    return bool(f.derivation and _COMBINED.search(f.derivation)) or \
        (f.metric.startswith("api.") and f.metric.endswith((".calls", ".total_ns")))


# an artifact named in a sentence ("trace.json.gz", "nsys.sqlite"): its numbers are that artifact's
_ARTIFACT = re.compile(r"\b(nsys\.sqlite|nsys-rep|trace\.json(?:\.gz)?|ncu\.ncu-rep|ncu[\w.-]*\.csv|sass\.txt|ptxas\.log|"
                       r"res_usage\.txt|telemetry\w*\.json)\b", re.I)


def _other_artifact(f: Fact, sentence: str) -> bool:
    """The sentence names the artifacts it reads, and the fact comes from none of them."""
    named = {m.lower() for m in _ARTIFACT.findall(sentence)}
    return bool(named) and not any(n.split(".")[0] in f.artifact.lower() for n in named)


_STAGGER = re.compile(r"\bfirst[- ]to[- ]last\b|\bstarts?\s+(?:\w+\s+){0,2}?(?:late|later|after)\b|\b(?:start|launch)[- ]?"
                      r"(?:stagger|spread|skew|offsets?)\b|\bstagger\w*", re.I)
_OFFSET = re.compile(r"(?:\+|\bat\s+t\s*=\s*)$")  # "at +0.04 ms": a time stamp within a span, not a duration


_GPU_BUSY = re.compile(r"\bGPU(?:[- ]side)?\s+(?:(?:is|was|stays|sits|only|just|kept)\s+){0,2}(?:busy|utili[sz]\w*|active)\b|"
                       r"\b(?:busy|utili[sz]ation|active)\s+(?:fraction\s+)?(?:of\s+)?(?:the\s+)?GPU\b", re.I)
_UNIT_WORDS = re.compile(r"\b(?:DRAM|HBM|SMs?|pipe|tensor|L[12]|memory|copy|copies|PCIe|NVLink|rank|ranks|per[- ]rank|"
                         r"kernel|kernels)\b", re.I)


def _gpu_busy(clause: str) -> bool:
    """Whether a clause names the whole GPU's busy fraction ("GPU busy 13.1 %", "the GPU is busy only 17%"), not a
    unit's (DRAM, an SM pipe), a rank's or one kernel's share."""
    return bool(_GPU_BUSY.search(clause)) and not _UNIT_WORDS.search(clause)


_SCOPED = re.compile(r"\bin the (?:whole |entire |steady[- ]state |steady )?(?:capture|window|trace|run|profile)\b", re.I)
_PER_UNIT = frozenset({"bytes_per_sector", "sectors_per_request"})  # ratios between 1 and 32: a number its unit names
# as one of them ("9 useful bytes", "8 sectors/request") is that ratio, however far from its measured value
_LAUNCH_COUNT = re.compile(r"launch__(grid_size|block_size|thread_count|registers_per_thread)$")  # a launch's counts
HOST_SIDE = re.compile(r"\bcalls?\b|\bAPI\b|overhead|\bhost\b|\bCPU\b|dispatch", re.I)
KERNEL_WORD = re.compile(r"\bkernels?\b|\blaunch(es)?\b", re.I)  # "the kernel takes 160 us": a kernel's time
NEAR_MISS = 0.5  # a number within 2x of a measured value its words describe is a wrong reading of it
PIN_SPAN = 10.0  # a number its words tie to a kernel's metric lies within this factor of a value of it, or it is
# something else (a count of elements, a size from the source; executed instructions, not the listed ones)
IDLE_MISS = 0.25  # a program's idle time has many readings (per gap, per step, per cause): only a near miss is wrong
EVIDENCE_MISS = 1 - 1 / PIN_SPAN  # an evidence line's number within PIN_SPAN of the value its words describe: a
# misreading of it (a program-level value, or the kernel's when the number heads the line)


# a cause named to rule it out: negated, gone, fixed, residual, or the road not taken
_RULED_OUT = re.compile(
    r"\b(no|not|never|none|nor|without|isn't|aren't|wasn't|weren't|doesn't|don't|didn't|cannot|can't|no longer|"
    r"gone|removed|eliminated|fixed|resolved|ruled out|killed|got rid of|was the (?:whole |real |main |only )?problem|"
    r"used to|rather than|instead of|unlike|absent|negligible|residual|"
    r"neither|free of|rules? out|kept out|left out of|excluded|set aside|"
    r"fix (?:did its job|worked|helped|landed))\b|\w-free\b", re.I)  # "the `.item()` fix did its job"
_SENTENCE_END = re.compile(r"\.(?!\d)")


def _clause(text: str, start: int, end: int, aside: bool = True) -> str:
    """The clause of `text` around text[start:end] (bounded by `_CLAUSE` and sentence ends; with the parenthetical
    aside that follows it, if `aside`)."""
    code = re.sub(r"`[^`\n]*`", lambda m: "`" + "_" * (len(m.group(0)) - 2) + "`", text)  # "`aten::to`",
    # "`dram__bytes_read.sum`": no clause ends inside a name
    a = max([0] + [m.end() for pat in (_CLAUSE, _SENTENCE_END) for m in pat.finditer(code, 0, start)])
    if a and code[a - 1] == ":" and not re.search(r"\w", code[a:start]):  # "- kernel duration: 211 us": a short
        label = max([0] + [m.end() for pat in (_CLAUSE, _SENTENCE_END) for m in pat.finditer(code, 0, a - 1)])
        if _LABEL.fullmatch(code[label:a - 1]):  # label says what the number is ("Each step is 4096 calls: ~12 ms
            a = label  # of host time" is a statement, not a label)
    ends = [m.start() for pat in (_CLAUSE, _SENTENCE_END) if (m := pat.search(code, end))]
    b = min(ends, default=len(text))
    if aside and text[b:b + 1] == "(" and ")" in text[b:]:  # "1.12 ms per GEMM (nsys median of 20 launches)":
        b = text.index(")", b) + 1  # the aside says what the number is
    return text[a:b]


_LABEL = re.compile(r"[\s*_>#|-]*[A-Za-z][A-Za-z_`'./() -]{0,40}")  # a few words, no number: "kernel duration"


def ruled_out(text: str, start: int, end: int) -> bool:
    """Whether the words at text[start:end] name a cause inside a clause that rules it out (a negation inside the
    cause's own words, "no coalescing", "data it never uses", does not)."""
    masked = text[:start] + " " * (end - start) + text[end:]
    masked = _NOT_BECAUSE.sub(lambda m: m.group(0).replace(" ", "-").replace("\n", "-"), masked)  # "not because
    return answered_no(text, end) or bool(_RULED_OUT.search(_clause(masked, start, end, aside=False)))


_NOT_BECAUSE = re.compile(r"\bnot\s+(?:because|due to|since|from)\b", re.I)  # of X": one clause, X ruled out


def answered_no(text: str, end: int) -> bool:
    """Whether the words ending at text[end] are in a question the text answers no ("*Is the copy slow (pageable
    staging)?* No.", "[1] Kernel-bound? -- NO.")."""
    q = re.search(r"\?", text[end:end + 200])
    return bool(q and not re.search(r"[.!\n]", text[end:end + q.start()]) and _ANSWERED_NO.match(text, end + q.end()))


_ANSWERED_NO = re.compile(r"[*_\s:—–-]*(?:no|nope|not really|not it|secondary|minor)\b", re.I)  # ("Host-bound? — secondary.")


_BINDS = re.compile(r"`?\s*(?:=|:|is|of)\s*(?:~|about\s+)?$")


def bound_metric(sentence: str, q: Quantity) -> Optional[str]:
    """The metric a number is written as the value of ("`launch__grid_size` = 132"), if any."""
    before = sentence[:q.start].replace("`", " ")
    last = None
    for m in METRIC_TOKEN.finditer(before):
        last = m
    between = before[last.end():].replace("*", "") if last is not None else ""  # "`metric` = **4.79 TB/s**"
    if last is None or not _BINDS.fullmatch(between) or len(between) > 6:  # "(`metric`): 32.1 per ...": a gloss
        return None
    return last.group(0).replace(" ", "")
