"""What an answer claims: the cause it ASSERTS as the limiter, not the first catalogue word it happens to use.

An answer names many causes: the one it blames, the ones it rules out ("the bank conflicts are gone"), the good
state a fix left ("loads are now coalesced"), the road not taken ("rather than uncoalesced access"), and the
ceilings it compares with ("near the tensor-core roof"). The claim is read in three steps, bottleneck first:

  1. the JSON `mechanism` id, when the answer gives one;
  2. in the bottleneck, a catalogued cause in a clause that ASSERTS it as the limiter (`ASSERT`: "limited by X",
     "X-bound", "stalls on X", "dominated by X", "X is the bottleneck", "because of X", "X limits it"); else a
     done/near-peak statement ("at its roofline", "nothing left", "leave it", "within N% of its floor") claims
     near_peak; else a catalogued cause the bottleneck names in a clause that does not rule it out;
  3. in the mechanism, only an asserted cause (or a near-peak statement): a cause the mechanism merely mentions
     while explaining something else is not the claim.

A cause in a clause that rules it out (negation, gone, fixed, rather than, ...: unverified.ruled_out), or that
only qualifies a ceiling ("near the FMA ceiling", "at the DRAM roofline"), or that the entry's `not_words` say
is another thing (a block's `__syncthreads` is not host synchronization) is never the claim. A specific cause
wins over a generic one (catalog.GENERIC_CLAIMS: "instruction-bound", "transfer-bound").
"""
from __future__ import annotations

import re
from typing import Optional

from ..answer import Answer
from .. import catalog
from ..catalog import CATALOG, GENERIC_CLAIMS
from .hypotheses import REJECTED
from .numbers import scrub, sentences
from .unverified import ruled_out
from .visible import clean

# words that assert what limits the program, before the cause ("limited by X") or after it ("X limits it")
_ASSERT_BEFORE = re.compile(
    r"\b(?:limited|bound|dominated|slowed(?: down)?|throttled|capped|gated|held back|starved|bottlenecked|governed|"
    r"set|dictated) (?:by|on)\b|-bound\b|\bbound\b|\bbottleneck(?:ed)?\b|\blimiter\b|\b(?:stall|wait)(?:s|ing|ed)? "
    r"(?:on|for)\b|\bbecause(?: of)?\b|\bdue to\b|\bcaused by\b|\bcomes? from\b|\bsuffer(?:s|ed|ing)?(?: from)?\b|\bincur(?:s|red|ring)?\b|"
    r"\bspends?\b|\bcosts?\b|\b(?:signature|symptom|hallmark|sign) of\b|\b(?:classic|textbook|typical)\b|"
    r"\b(?:culprit|root[- ]cause|cause)\s*(?:=|:|is\b)|"
    r"\bis\b|\bare\b", re.I)
_ASSERT_AFTER = re.compile(
    r"^[^.;:]{0,60}?\b(?:limits?|costs?|dominates?|serializ\w+|stalls?|starves?|throttles?|caps?|"
    r"is (?:the|what) (?:bottleneck|limiter|limit|cost|problem|cause)|sets? the time|explains?|accounts? for|eats?|"
    r"takes? (?:most|the bulk|nearly all|almost all)|which is why|(?:that's|that is|is) where the (?:remaining |rest of the |"
    r"missing |lost )?time goes)\b", re.I)
# a statement that the kernel (or program) is done: at its roofline, nothing left to gain, leave it
DONE = re.compile(
    r"\bnear[- ]peak\b|\bis done\b|^\s*done\b|[.;:—–-]\s*done\b|\b(?:basically|essentially|effectively|practically|pretty much|largely) done\b|"
    r"\bdon['’]t (?:touch|bother)\b|\bnothing (?:left )?(?:to|worth) (?:gain|fix|win)\w*|"
    r"\bnothing (?:left|more) to\b|\bnone worth fixing\b|\bno (?:headroom|gap) left\b|"
    r"\bleave (?:it|this|that|the|[\w`]+)(?: [\w`()-]+){0,3}? (?:alone|as it is|untouched|unchanged)\b|"
    r"\bleave (?:it|the kernel|this kernel)\b|^\s*leave\b|[.;:—–]\s*leave\b|"
    r"\b(?:at|on|near|close to|within [^.;:]{0,25}? of) (?:its|the|that|this) (?!(?:[\w./-]+ ){0,2}?"
    r"(?:latency|dependen\w*|chain|hop|serial\w*)[- ])([\w./-]+ ){0,3}?"
    r"(?:roofline|roof|ceiling|peak|floor|limit)\b(?! of \W{0,2}(?:its|the|a) (?:own )?(?:dependen|latency|serial|chain))", re.I)
# words inside a done statement that name the ceiling, not a cause ("near the tensor-core roof")
_CEILING_PHRASE = re.compile(r"\b(?:at|on|near|close to|within [^.;:]{0,25}? of) (?:its|the|that|this) "
                             r"([\w./-]+ ){0,3}?(?:roofline|roof|ceiling|peak|floor|limit)\b", re.I)
_CLAUSE = re.compile(r"[;:()\[\]]|[.!?](?=\s|$)|\s[—–]\s|,\s(?:and|but|while|whereas|so|which)\s|\s(?:but|while|whereas)\s",
                     re.I)


_SUBORDINATE = re.compile(r"\W*(?:once|after|when|until|before|unless|if|apart from|besides|except|other than|"
                          r"the only other|the other|another|a secondary)\b", re.I)
_NAMES = re.compile(r"\b\w+_\w*|\b(?:mma|bar|shfl|vote|match|cp\.async\.bulk|barrier)\.sync\b|\b\w+\.sync\.\w+")
# identifiers (`fused_chain`, `histogram_atomic`) and PTX instructions (`mma.sync`) name code, not causes
# "the fusion already cut the traffic", "now runs at full occupancy", "fully coalesced": a state reached, not a cause
_ALREADY = re.compile(r"\balready\b|\bat full\b|\bfully\b", re.I)


def _clause_span(text: str, start: int, end: int) -> tuple[int, int]:
    a = max([0] + [m.end() for m in _CLAUSE.finditer(text, 0, start)])
    m = _CLAUSE.search(text, end)
    return a, (m.start() if m else len(text))


# a limit the text names as a latency's, not the roofline's ("at the limit of its own dependency chain", "latency
# floor"): "nothing left to tune" then says the latency is the limit, not that the kernel is at its roofline
_LATENCY_LIMIT = re.compile(r"\b(?:limit|floor|bound)\s+of\s+\W{0,2}(?:its|the|a)\s+(?:own\s+)?(?:dependen\w*|latency|serial)|"
                            r"\b(?:latency|dependen\w*|chain)[- ](?:floor|limit|bound)\b|"
                            r"\blatency of (?:the |its |each )?(?:dependent|serial|chained)\b", re.I)  # "what remains is the
# latency of the dependent loads themselves ... leave the kernel": the latency is the limit


# the rate of one unit the roofline does not draw ("at the conversion-rate limit"): a limit of instruction issue
RATE_LIMIT = re.compile(r"(?:conversion|XU|SFU|MUFU|issue)[- ]rate (?:limit|ceiling)", re.I)


def _done(text: str) -> bool:
    """Whether the text says the kernel/program is done (at its ceiling), in a clause that does not negate it."""
    if _LATENCY_LIMIT.search(text) or RATE_LIMIT.search(text):
        return False
    quoted = _quoted(text)
    for m in DONE.finditer(text):
        if any(x <= m.start() < y for x, y in quoted):
            continue  # 'the reflex is "memory-bound, at the roofline, nothing to do". But ...': a view quoted
        a, b = _clause_span(text, m.start(), m.end())
        clause = text[a:b]
        if re.search(r"\b(not|never|far from|no longer|isn't|is not|nowhere near|away from)\b", clause, re.I):
            continue
        if re.search(r"\b(would|could|if|until|once)\b", text[a:m.start()], re.I):
            continue  # the road not taken: "it would be at its roofline if ..."
        if re.search(r"\blatency\b|\bdependen\w*|pointer[- ]chas\w*", text[max(0, m.start() - 80):m.start()], re.I) and \
                re.search(r"\b(?:floor|limit)\b", m.group(0), re.I):
            continue  # "latency (dependent pointer chase) at its floor": the floor of a latency, not the roofline
        return True
    return False


def _quoted(text: str) -> list[tuple[int, int]]:
    """Spans of text in double quotes: words the answer quotes (a reflex, a hypothesis, a colleague's), not its own."""
    return [m.span() for m in re.finditer(r'"[^"\n]{3,120}"|“[^”\n]{3,120}”', text)]


def _hits(text: str, raw: str) -> list[tuple[int, int, str]]:
    """(start, end, id) of every catalogued cause the text names in a clause that may claim it (`raw`: the text
    before scrubbing, same positions, where identifiers such as `__syncthreads` are still readable)."""
    out = []
    ceilings = [m.span() for m in _CEILING_PHRASE.finditer(text)]
    for i, e in CATALOG.items():
        for m in e.words.finditer(text):
            a, b = _clause_span(text, m.start(), m.end())
            if ruled_out(text, m.start(), m.end()) or _ALREADY.search(text[a:m.start()] + " " + text[m.end():b]):
                continue
            if _SUBORDINATE.match(text[a:m.start()]):
                continue  # "Once cuBLAS is initialised, ...": a condition set apart, not the claim
            if any(a <= m.start() < b for a, b in ceilings) and not RATE_LIMIT.match(text, m.start()):
                continue  # "near the FMA ceiling": the ceiling, not a cause
            if re.match(r"[- ]bound\b", text[m.end():m.end() + 7]) and any(a <= c < b for c, _ in ceilings):
                continue  # "tensor-core-bound at the roofline": the ceiling reached, not a cause
            if e.not_words is not None and e.not_words.search(raw[a:b]):
                continue
            if i == "uncoalesced_global" and _MEASURE_NAME.fullmatch(m.group(0)) and _COALESCED.search(_sentence(text, m.start())):
                continue  # "The loads are now fully coalesced: ... = 4 sectors per request": the measure, not a cause
            out.append((m.start(), m.end(), i))
    return sorted(out)


_MEASURE_NAME = re.compile(r"sectors? per request|bytes (?:used )?per (?:\d+-byte )?sector", re.I)
_COALESCED = re.compile(r"\b(?:fully|perfectly|properly|now|already|well|are|is|were|stay|remain)\s+coalesced\b", re.I)


def _sentence_ends(text: str) -> list[int]:
    """Where the text's sentences start and end: 0, each sentence's end, len(text)."""
    return [0] + [m.end() for m in re.finditer(r"[.!?](?:\s+|$)", text)] + [len(text)]


def _sentence_index(ends: list[int], at: int) -> int:
    return next(k for k in range(len(ends) - 1) if ends[k] <= at < ends[k + 1] or k == len(ends) - 2)


def _sentence_span(text: str, at: int) -> tuple[int, int]:
    """Where the sentence holding text[at] starts and ends."""
    ends = _sentence_ends(text)
    i = _sentence_index(ends, at)
    return ends[i], ends[i + 1]


def _sentence(text: str, at: int) -> str:
    return text[slice(*_sentence_span(text, at))]


_LIMITING_VERB = re.compile(r"(?:wait|stall)\w* (?:on|for)\b", re.I)  # a cause named by its verb ("waits for the CPU
# to enqueue")


def _asserted(text: str, start: int, end: int, copula: bool = True) -> bool:
    """Whether the cause at text[start:end] is asserted as the limiter: an assertion word before it in its clause,
    or a verb of limiting after it in its sentence ("X, which costs ...", "X limits it"), or it is a bound itself."""
    a, _ = _clause_span(text, start, end)
    stop = re.search(r"[.;!?](\s|$)", text[end:])
    before = [m for m in _ASSERT_BEFORE.finditer(text[a:start][-60:]) if copula or m.group(0).lower() not in ("is", "are")]
    return bool(re.search(r"bound\b", text[start:end + 8]) or before or _LIMITING_VERB.match(text[start:end]) or
                _ASSERT_AFTER.search(re.sub(r"\s+", " ", text[end:end + stop.start() if stop else len(text)])))
    # (blanked code spans count as one space: "bank conflicts (`l1tex__...`), and that's where the time goes")


def _pick(hits: list[tuple[int, int, str]]) -> Optional[str]:
    """A specific cause before a generic one, then the first named."""
    return min(((i in GENERIC_CLAIMS, s, i) for s, _, i in hits), default=(None, None, None))[2]


# a code span that is itself a cause ("`.item()` blocks the host", "`cudaDeviceSynchronize` after each launch"): read
# as words, where other code spans are blanked
_CAUSE_CODE = re.compile(r"`((?:\w+)?\.(?:item|cpu|tolist)\(\)|(?:torch\.cuda\.)?synchronize\(\)|"
                         r"cuda(?:Device|Stream|Event)?Synchronize|cuda(?:Malloc|Free)(?:Async|Host)?)`")


def _plain(text: str) -> str:
    """The text as the claim reader sees it: code, metric names and identifiers blanked (same positions), except
    code spans that name a cause."""
    shown = _CAUSE_CODE.sub(lambda m: " " + m.group(1).replace(")", " ") + " ", text or "")  # no ")" to end a clause
    shown = re.sub(r"(?<!\n)\n(?!\n)", " ", shown)  # a hard-wrapped line ("it was not\nallowed to use"): one line
    return _NAMES.sub(lambda m: " " * len(m.group(0)), scrub(shown))


# the text sets one-time work aside as not the limiter: it names start-up only to rule it out of the steady state
_SET_APART = re.compile(r"\b(?:is|are|was|were|it's|that's)(?:\s+not|n't)\s+the\s+(?:steady[- ]state\s+|real\s+|actual\s+)?"
                        r"(?:limiter|bottleneck|problem|cost that matters)\b|\bkeep\s+(?:those|these|them|it|that)\s+"
                        r"(?:apart|separate)\b|\bnot\s+(?:part of\s+|in\s+)?the\s+steady[- ]state\b|"
                        r"\b(?:is|it's|that's|that\s+is|this\s+is)\s+(?:a\s+|an\s+|the\s+)?(?:single|one-time|one-off)\b|"
                        r"\bnot\s+part\s+of\s+the\s+(?:repeated|recurring|steady|per-step|timed)\b|"
                        r"\bhappens?\s+(?:only\s+|exactly\s+|just\s+)?once\b|\bnot\s+steady[- ]state\b|"
                        r"\breport(?:ed|ing)?\s+(?:it\s+|them\s+|this\s+|that\s+)?(?:apart|separately)\b|"
                        r"^\W*separated\b|"
                        r"\b(?:is|are)\s+paid\s+(?:only\s+)?once\b|\b(?:must|should)\s+not\s+be\s+(?:mistaken|confused)\s+for\b|"
                        r"\bnot\s+to\s+be\s+(?:mistaken|confused)\s+(?:for|with)\b|"
                        r"\b(?:is|are|lies|lie|falls?)\s+outside\s+(?:of\s+)?(?:the|this)\s+(?:steady[- ]state\s+|timed\s+|measured\s+|"
                        r"repeated\s+|step\s+)?(?:window|loop|steps?|steady state)\b", re.I)
_BACK_REFERENCE = re.compile(r"\W*(?:keep\s+(?:those|these|them|it)\b|report\w*\s+(?:it|them|this|that)\b|(?:that|this|it|they|those|these)\b|"
                             r"the\s+(?:copy|upload|download|transfer|compil\w+|autotun\w+|warm-?up|one-time)\b)", re.I)
_STILL_DOMINANT = re.compile(r"\bdominat\w*|\bmost of\b|\bthe bulk\b|\bmajority\b|\bbottleneck\s+is\b|"
                             r"\bis\s+the\s+(?:real\s+)?(?:bottleneck|limiter)\b", re.I)  # "a one-time cost that
# dominates this short run" is the claim


def _set_apart(text: str, at: int) -> bool:
    """Whether the cause named at text[at] is in a sentence that sets it apart as not the limiter, or in the sentence
    before one ("Before it: ~120 ms of one-time work (two pageable uploads). Keep those apart: they happen once.")."""
    ends = _sentence_ends(text)
    i = _sentence_index(ends, at)
    near = [text[ends[i]:ends[i + 1]]]
    if i + 2 < len(ends) and _BACK_REFERENCE.match(text[ends[i + 1]:ends[i + 2]]):
        near.append(text[ends[i + 1]:ends[i + 2]])  # "Keep those apart", "That is paid once", "The copy is a single"
    if i + 2 < len(ends) and REJECTED.match(text[ends[i + 1]:ends[i + 2]]):
        return True  # a hypothesis log: 'H1: "compile time is the bottleneck". ... -> Rejected as the steady state.'
    return any(_SET_APART.search(x) for x in near) and not any(_STILL_DOMINANT.search(x) for x in near)


# one-time work the sentence says is repeated ("Doing that per step turns a one-time set-up cost into the steady
# state"): the repetition is the claim (a churn), not start-up
_REPEATED = re.compile(r"\b(?:turns?|turning|makes?|making)\b[^.;]{0,60}\binto\s+(?:the\s+)?steady[- ]state\b", re.I)
# start-up the text itself sets aside: "one-time, NOT the bottleneck: 895 ms JIT", "dominated by compile time ... But
# that's paid once per process; it's not what limits the loop"
_SET_ASIDE = re.compile(r"(?:one[- ]time|start[- ]?up|JIT|compil\w*|warm[- ]?up|initiali[sz]\w*|cold start)\b"
                        r"(?:(?!\n\s*\n)[\s\S]){0,250}?\bnot (?:the bottleneck|what limits|the limiter)", re.I)


_YES = re.compile(r"\W*(?:yes|yep|confirmed|correct|indeed|✔|✓)\b", re.I)


def _open_question(text: str, at: int) -> bool:
    """Whether the cause named at text[at] is in a question its text does not answer yes ("Is the occupancy cap still
    there? ... -> No."): a question asks, it claims nothing ("Occupancy-bound? YES." claims it)."""
    ends = _sentence_ends(text)
    i = _sentence_index(ends, at)
    return text[ends[i]:ends[i + 1]].rstrip().endswith("?") and not _YES.match(text[ends[i + 1]:])


def asserted_cause(text: str, mentions: bool = True) -> Optional[str]:
    """The cause `text` asserts (see the module doc); with `mentions` (the bottleneck), a cause it only names counts
    last and "X is Y" asserts Y; without (the mechanism), only a verb of limiting asserts."""
    plain = _plain(text)
    hits = _hits(plain, text or "")
    quoted = _quoted(plain)
    hits = [h for h in hits if not _set_apart(plain, h[0]) and not _open_question(plain, h[0]) and
            not any(x <= h[0] < y for x, y in quoted) and
            not (h[2] == "startup_dominated" and (_REPEATED.search(_sentence(plain, h[0])) or _SET_ASIDE.search(plain)))]
    strong = [h for h in hits if _asserted(plain, h[0], h[1], copula=mentions) and
              h[2] not in _ruled_out_causes(_sentence(plain, h[0]))]  # "idle time to host work, not to
    # synchronization: ... the per-step `cudaEventSynchronize` costs 7.8 us": a cost its own sentence rules out
    specific = [h for h in strong if h[2] not in GENERIC_CLAIMS]
    if specific:
        return _pick(specific)
    if _done(plain):
        return "near_peak"
    if mentions and not strong:  # "The contention ... is gone. ... one global atomic per block": a cause the text
        gone = _ruled_out_causes(plain, gone=True)  # says is gone is not claimed by the words of its fix
        opens_gone = bool(_GONE.search(_sentence(plain, 0))) if plain.strip() else False
        hits = [h for h in hits if h[2] not in gone and not opens_gone]  # ("The contention ... is gone. ...": a
        # text that opens with what is gone describes the fix after it)
    if mentions and any(h[2] not in GENERIC_CLAIMS for h in hits):
        if strong:  # "it is issue-limited ... fuse it into its consumer": a mention of another bound's cause (the
            return _refined(hits, {h[2] for h in strong}) or _pick(strong)  # fix's words) does not replace the claim
        return _pick(hits)  # "transfer-bound: a pageable copy per step": the mention refines the generic bound
    refined = _refined(hits, {h[2] for h in strong})
    if refined:  # the mechanism: "the program is transfer-bound ... every copy's source is Pageable": the generic
        return refined  # bound it asserts, refined by the cause of that bound it names
    return _pick(strong) or (_pick(hits) if mentions else None)


def _ruled_out_causes(plain: str, gone: bool = False) -> set[str]:
    """The catalogued causes a text names in a clause that rules them out ("not to synchronization"); with `gone`,
    only those it says are gone ("the contention ... is gone", "no longer")."""
    return {i for i, e in CATALOG.items() for m in e.words.finditer(plain) if ruled_out(plain, m.start(), m.end()) and
            (not gone or _GONE.search(_sentence(plain, m.start())))}


_GONE = re.compile(r"\b(?:gone|removed|eliminated|fixed|resolved|no longer|disappeared|went away)\b", re.I)


def _refined(hits: list[tuple[int, int, str]], claims: set[str]) -> Optional[str]:
    """The specific cause the hits name of the bound of a generic claim among `claims` ("transfer-bound" refined by
    "pageable"), or None."""
    bounds = {CATALOG[i].bounds[0] for i in claims if i in GENERIC_CLAIMS}
    return _pick([h for h in hits if h[2] not in GENERIC_CLAIMS and CATALOG[h[2]].bounds[0] in bounds])


def refinement(text: str, claim: Optional[str]) -> Optional[str]:
    """The specific cause of a generic claim's bound that `text` names, in a clause that may claim it."""
    return _refined(_hits(_plain(text), text or ""), {claim} if claim else set())


def claimed_mechanism(a: Answer) -> Optional[str]:
    """The mechanism the answer blames: its `mechanism` id, else the cause its bottleneck asserts (or names), else the
    cause its mechanism asserts; a generic claim ("transfer-bound") is refined by the cause of that bound the
    mechanism names ("the source is pageable memory")."""
    if a.mechanism:
        return a.mechanism
    labelled = re.match(r"\s*cause\s*:", a.explanation or "", re.I) is not None  # "Cause: ..." names the cause
    claim = asserted_cause(a.bottleneck) or asserted_cause(a.explanation, mentions=labelled) or \
        asserted_cause(_title(a.explanation)) or _targeted(a)
    return refinement(a.explanation, claim) or claim  # "you're transfer-bound" refined by the mechanism's "pageable"


def answer_claim(a: Answer, raw: str) -> Optional[str]:
    """The mechanism the answer blames (`claimed_mechanism`); for an answer whose parts blame none, the cause its title
    asserts ("# `row_sums`: bound by the shuffle traffic", not "— leave it" nor a question), else the cause of the
    first sentence that names the bottleneck ("that's the bottleneck imo: allocator cost on the managed buffer.",
    which a chat reply's layout puts in its fix; not read in JSON, whose keys say which part is which)."""
    claim = claimed_mechanism(a)
    if claim is not None:
        return claim
    title = _TITLE_LINE.match(raw or "")
    named = asserted_cause(title.group(1)) if title and "?" not in title.group(1) else None
    if named is not None and named != "near_peak":
        return named
    if (raw or "").lstrip().startswith(("{", "```")):
        return None
    said = [s for s in sentences(clean(raw or "")) if _BOTTLENECK.search(s) and not _NOT_IT.search(s)]
    return next((x for x in map(asserted_cause, said) if x), None)  # ("one-time work (not the bottleneck)": no claim)


_TITLE_LINE = re.compile(r"\s*#{1,3}[ \t]+([^\n]+)")
_BOTTLENECK = re.compile(r"\bbottleneck\b", re.I)
_NOT_IT = re.compile(r"\b(?:not|n['’]t|no|never)\b[^.;]{0,25}\bbottleneck", re.I)


def named_wait(claim: Optional[str], raw: str) -> Optional[str]:
    """Time in a collective blamed by an answer that names the late rank it waits for ("the all-reduce makes the
    faster rank wait ... Rank 1 is the straggler", anywhere in the text): the claim is that rank's imbalance."""
    if claim in _NAMED_WAIT and named_straggler(raw) is not None:
        return _NAMED_WAIT[claim]  # (not "every rank waits until the late rank arrives": no rank named)
    return claim


def named_straggler(text: str) -> Optional[int]:
    """The rank a sentence of the text calls the straggler ("Rank 1 is the straggler", "straggler = rank 1")."""
    return next((r for r in (blamed_rank(x) for x in sentences(text or "") if _STRAGGLER_NAMED.search(x))
                 if r is not None), None)


_NAMED_WAIT = {"comms_wait": "rank_imbalance"}
_STRAGGLER_NAMED = re.compile(r"\bstraggler (?:is|=|:) ?rank\b|\brank \d+ is (?:the |clearly the )?(?:straggler|slow\w*)\b",
                              re.I)


def _title(text: str) -> str:
    """The mechanism's opening words when they are a name, not a sentence ("**Mechanism:** pageable host memory.")."""
    first = re.split(r"(?<=[.!?;:])\s|\s[—–]\s", (text or "").strip(), maxsplit=1)[0]  # "pageable source — the ..."
    return first if len(re.findall(r"[A-Za-z]+", first)) <= 6 else ""


def _targeted(a: Answer) -> Optional[str]:
    """A cause no part asserts, but the mechanism names and the fix sets out to remove ("with 32-way conflicts every
    store is replayed 32 times" ... "pad the buffer; conflicts should vanish"): the cause the answer acts on."""
    named = asserted_cause(a.explanation)
    fix = _plain(a.fix_text)
    e = CATALOG.get(named or "")
    if e is None or named in GENERIC_CLAIMS or e.scope != "kernel":  # a kernel's cause: the program's causes share
        return None  # their words with what a fix says in passing ("launch/sync gaps", "the collective")
    own = [p for p, _ in e.fix_metrics if p != catalog.TIME_METRIC[0]][:1]  # the cause's own counter (not the time,
    # nor a throughput many causes move)
    moves = a.fix is not None and a.fix.metric and any(re.search(p, a.fix.metric, re.I) for p in own)
    return named if moves or any(not ruled_out(fix, m.start(), m.end()) and
                                 not _KEPT.search(fix[slice(*_clause_span(fix, m.start(), m.end()))])
                                 for m in e.words.finditer(fix)) else None


# a fix that keeps something as it is ("Leave the grid and the shared memory as they are", "do not touch the shared
# memory size"): it does not act on that cause
_KEPT = re.compile(r"\b(?:leave|keep)\b[^.;]{0,80}?\bas (?:they|it) (?:are|is|stands?)\b|"
                   r"\b(?:don['’]t|do not|no need to|never) (?:touch|change)\b", re.I)


_RANK = re.compile(r"\brank\s*(\d+)\b", re.I)
_BLAME = re.compile(r"straggler|slow|late|behind|lags?|throttl|power[- ]capped|holds? (the others|everyone|\w+ \d+) back",
                    re.I)


def blamed_rank(text: str) -> Optional[int]:
    """The rank a straggler claim blames: the rank named in the clause that calls it slow, late or the straggler."""
    for m in _RANK.finditer(text or ""):
        a, b = _clause_span(text, m.start(), m.end())
        if _BLAME.search(text[a:b]) and not ruled_out(text, m.start(), m.end()):
            return int(m.group(1))
    return None
