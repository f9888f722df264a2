"""How a fix says the metric it names will move: "from 32 to 4", "32 -> 4", "should fall", "from 0% to a high share".

`fix_metric_direction(fix)` returns the metric the fix predicts (a profiler metric, a listed name such as "GPU busy",
or an outcome in plain words) and the direction it states for it.
"""
from __future__ import annotations

import re
from typing import Optional

from .metric_kinds import metric_direction
from .numbers import METRIC_TOKEN, family_and_factor, sentences

# a setting of the launch or the build: the change itself, not a measured effect of it
SETTING = re.compile(r"\blaunch__|grid[ _]size|block[ _]size|registers?[ _]per[ _]thread|threads per block|"
                     r"shared memory per block|\bBLOCK\b|num_warps|maxrregcount", re.I)

_DIR_WORDS = {"increase": "increase", "raise": "increase", "rise": "increase", "grow": "increase", "up": "increase",
              "higher": "increase", "more": "increase", "double": "increase", "climb": "increase",
              "decrease": "decrease", "lower": "decrease", "reduce": "decrease", "drop": "decrease",
              "down": "decrease", "fall": "decrease", "fewer": "decrease", "less": "decrease", "shrink": "decrease",
              "cut": "decrease", "eliminate": "decrease", "remove": "decrease", "disappear": "decrease",
              "halve": "decrease", "vanish": "decrease"}
_DIR_WORDS["half"] = "decrease"  # "half the bytes", "half as many launches"; not "the other half", "half-precision"
_DIR_WORD = re.compile(r"\b(" + "|".join(w for w in _DIR_WORDS if w != "half") +
                       r"|half(?=\s+(?:the|as\s+(?:many|much))\b))(s|es|ed|d|ing)?\b", re.I)
_IDIOM = re.compile(r"\s+(?:generally|specifically|importantly|likely|precisely|or less|than once|often than not)\b", re.I)
_MOTION = re.compile(r"\b(?:go(?:es|ing)?|went|gone|move[sd]?|climb\w*|jump\w*|ramp\w*|push\w*|bring\w*|come[s]?|"
                     r"ris\w*|shoot\w*|get[s]?)\s+$", re.I)


def _dir_search(text: str) -> Optional[re.Match]:
    """The first direction word of a text; "up to ~46%" bounds a size (at most) and says no rise, unless a verb of
    motion moves it ("goes up to 46%")."""
    for m in _DIR_WORD.finditer(text):
        if m.group(1).lower() in ("more", "less") and _IDIOM.match(text, m.end()):
            continue  # "or more generally": no rise
        if m.group(1).lower() in ("more", "less") and re.search(r"\b(?:by|no)\s+$", text[:m.start()]) and \
                re.match(r"\s+than\b", text[m.end():]):
            continue  # "can move it by more than ~7%", "no more than 5%": a size, not a direction
        if m.group(1).lower() == "up" and re.match(r"\s+to\b", text[m.end():]) and not _MOTION.search(text[:m.start()]):
            continue
        if m.group(1).lower() == "double" and re.match(r"[\s-]+(?:buffer\w*|precision|check\w*|loads?)\b", text[m.end():], re.I):
            continue  # "double buffering", "double precision": a kind of thing, no rise
        if m.group(1).lower() in ("up", "down") and text[m.start() - 1:m.start()] == "-":
            continue  # "start-up", "warm-up", "slow-down": a noun, no move
        return m
    return None


_NAMED_METRIC = re.compile(r"\b(kernel (?:time|duration)|kernel(?=\s+(?:(?:around|about|at|near|roughly|in)\s+)?[~≈]?\d)|(?:XU|FMA|ALU|FP64|fp64|DRAM|tensor)(?= ?(?:pipe ?)?(?:%|util\b|utili[sz]ation))|(?:XU|FMA|ALU|FP64|fp64|LSU)[- ]pipe\b|step time|(?:nsys )?step median|median step(?: time)?|(?:reported )?time per step|(?:gpu_)?busy[_ ]fraction|GPU busy|GPU utili[sz]ation|idle time|"
                           r"copy (?:time|ns|us|ms)(?: per step)?|(?:copy|transfer|PCIe|(?:host|device)[- ]to[- ](?:device|host)|[HD]2[HD]|[HD]to[HD]) bandwidth|(?:[HD]2[HD]|[HD]to[HD]|copy|PCIe) [GT]B/s|achieved occupancy|occupancy|sectors[- ]per[- ]request|bytes[- ]per[- ]sector|"
                           r"bank conflicts|wavefronts per (?:shared )?(?:instruction|request|load)|tensor[- ]pipe(?: (?!from\b|to\b|metric\b|should\b)[A-Za-z]\w*)?|"
                           r"tensor[- ]core (?:utili[sz]ation|activity)|DRAM (?:bytes|traffic|throughput)|"
                           r"local[- ]memory (?:traffic|sectors)|spills?|atomic requests|active threads|grid size|"
                           r"number of (?:launches|kernels)|launches|kernel count|kernels per (?:loop|step|iteration|call))\b", re.I)
# an outcome named in plain words, with up to two words that say which ("rank 0's all-reduce time", "per-op time",
# "host-to-device bytes per step", "busy"): read when the fix names no profiler metric or listed name
_OUTCOME = re.compile(r"\b((?:[\w'-]+ ){0,2}(?<!-)(?:time(?!\s+\d)|step(?: time)?(?=\s+(?:should|will|to|from|drops?|falls?|~?\d))|duration|lag|delay|bytes|traffic|bandwidth|throughput|busy(?: fraction)?|"
                      r"[\w-]*(?:active|busy|idle) fraction|utili[sz]ation|occupancy|launches|idle(?: time)?|rate|speed|T?FLOP/s|calls|stalls|wavefronts|sectors|"
                      r"requests|transactions|conflicts|instructions|count|migrations|(?:page[- ])?faults)(?: per (?:step|op|launch|call|iteration))?)\b",
                      re.I)


def clause_direction(clause: str) -> Optional[str]:
    """The direction the clause states first: a move from one value to another, or a direction word."""
    moves = [m for m in (_FROM_TO.search(clause), _ARROW.search(clause), _INSTEAD.search(clause))
             if m and _num(m["a"]) != _num(m["b"])]
    d = _dir_search(clause)
    w = _FROM_TO_WORD.search(clause)
    arrow = _UP_DOWN.search(clause)
    past = _PAST.search(clause) or _MUCH.search(clause)
    gone = _TO_NOTHING.search(clause)
    first = min(moves + [x for x in (d, w, arrow, past, gone) if x], default=None,
                key=lambda m: m.start(1) if m is past else m.start())  # "down by well over 10x": the word before
    if first is None:
        return None
    if first is gone:  # "host time per step -> ~0", "migrations -> a few"
        return "decrease"
    if first is past:  # "tensor-pipe active well above 30.7%": the value it will reach, past the one it has
        return "increase" if past.group(1).lower() in ("above", "over", "beyond", "≫", ">>") else "decrease"
    if first is arrow:  # "GPU busy ↑ to >80 %", "step ↓ 3.25 ms → ~2.45 ms"
        return "increase" if arrow.group(0) in _UP else "decrease"
    if first is w:  # "from 0% to a high share"
        return _magnitude(clause, w) or ("increase" if w.group("up") else "decrease")
    if first is d:
        return _DIR_WORDS[d.group(1).lower()]
    return "increase" if _rises(first) else "decrease"


_ORDER = {"tens": 10.0, "hundreds": 100.0, "thousands": 1000.0}
_FROM_VALUE = re.compile(r"(?P<a>\d+(?:\.\d+)?)\s*(?P<u>[A-Za-zµμ]+)\s*(?:→|->|=>|⟶|to)\s*$")


def _magnitude(clause: str, w: re.Match) -> Optional[str]:
    """"step median 2.03 ms → tens of microseconds": an order of magnitude in a unit of the value it replaces falls
    or rises by the two values, not by the word ("tens" is no rise from milliseconds)."""
    word = (w.group("up") or "").lower()
    after = re.match(r"\s+of\s+([A-Za-zµμ]+)", clause[w.end():])
    before = _FROM_VALUE.search(clause[:w.start("up")]) if word in _ORDER else None
    if not (after and before):
        return None
    (f1, k1), (f2, k2) = family_and_factor(before["u"]), family_and_factor(after.group(1))
    if f1 is None or f1 != f2:  # ("26 GB -> tens of MB" falls too)
        return None
    return "increase" if _ORDER[word] * k2 > float(before["a"]) * k1 else "decrease"


_TO_NOTHING = re.compile(r"(?:→|->|=>|⟶)\s*(?:~|≈|about\s+)?(?:0(?![\d.,]*\d)|zero\b|none\b|nothing\b|a few\b|a handful\b)|"
                         r"(?<!\bup )(?<!\bclose )\bto\s+(?:~|≈|about\s+|(?:near(?:ly)?|almost|essentially|roughly)\s+)?"
                         r"(?:0(?![\d.,]*\d)(?!\s*%?\s*(?:→|->|to)\b)|zero\b)", re.I)  # "should take UVM migrations to ~0"
_PAST = re.compile(r"^\W*(?:\w+\s+){0,2}?(?:well|far|much|clearly|comfortably)\s+(above|over|beyond|below|under)\s+~?\d", re.I)
_MUCH = re.compile(r"^\W{0,3}?(?:\w+\s+){0,2}?(≫|>>|≪|<<)\s*~?\d")  # "tensor pipe active ≫ 0": far past the value
_UP = "↑⬆▲"
_UP_DOWN = re.compile(r"[↑⬆▲↓⬇▼]")  # an arrow written beside the metric says which way it moves
_FROM_TO = re.compile(r"\bfrom\s+~?(?P<a>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+|[kKMG])?)\s*(?P<u1>\S*)\s+(?:\S+\s+)?to(?:wards?)?\s+(?:the\s+)?"
                      r"(?:~|(?:about|roughly|around|approximately|nearly|almost|near|close to)\s+~?|>=?\s*|<\s*|"
                      r"(?:well\s+)?(?:under|below|over|above)\s+)?(?P<b>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+|[kKMG])?)"
                      r"(?:\s?(?P<u2>[A-Za-zµμ]+(?:/s)?))?", re.I)
_SCALE = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}


def _num(text: str) -> float:
    """'598M' -> 5.98e8: a value of a move, with its scale letter."""
    text = text.replace(",", "").replace(" ", "")  # "4,096", "262 K"
    return float(text[:-1]) * _SCALE[text[-1]] if text[-1] in _SCALE else float(text)


def _rises(m: re.Match) -> bool:
    """Whether a move "from A u1 to B u2" (or "A u1 -> B u2") goes up, the units of one kind applied ("from ~0.5 ms
    to roughly 8 us" falls; "from 1 GiB down to 16 MB" falls)."""
    a, b = _num(m["a"]), _num(m["b"])
    u1, u2 = (re.match(r"[A-Za-zµμ]+(?:/s)?", m.groupdict().get(k) or "") for k in ("u1", "u2"))
    f1, f2 = (family_and_factor(u.group(0)) if u else None for u in (u1, u2))
    if f1 and f2 and f1[0] == f2[0] and f1[0] in ("time", "bytes", "byte_rate", "flop_rate"):
        a, b = a * f1[1], b * f2[1]
    return b > a


_IMPROVE = re.compile(r"\bimprov(?:e|es|ed|ing)\b", re.I)
_FROM_TO_WORD = re.compile(r"(?:\bfrom\s+(?:~|about\s+|nearly\s+)?\d+(?:\.\d+)?\s*\S*\s+to|(?<![\w.,])~?\d+(?:\.\d+)?\s*[^\s\d→>]*\s*"
                           r"(?:→|->|=>))\s+(?:a\s+|an\s+|the\s+|near\s+)?(?:(?P<up>high\w*|large\w*|"
                           r"most|majority|full|max\w*|saturat\w*|peak|busy|tens|hundreds|thousands|several|many|more)|(?P<down>low\w*|small\w*|little|less|fewer|zero|none|nothing|negligible|few|"
                           r"(?:a\s+)?handful|single[- ]digits?|sub-))\b",
                           re.I)
_ARROW = re.compile(r"(?<![\w.,])~?(?P<a>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+|[kKMG](?![A-Za-z]))?)\s*"
                    r"(?P<u1>[^\s\d→>]*)\s*(?:→|->|=>|⟶)\s*(?:~|about\s+|[<>]=?\s*~?|(?:(?:well|far)\s+)?(?:below|under|over|above)\s+~?)?"
                    r"(?P<b>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+|[kKMG](?![A-Za-z]))?)(?:\s?(?P<u2>[A-Za-zµμ]+(?:/s)?))?")
# (a count with its scale letter: "23.06M -> <=262k" falls)


# a move written as its outcome against what it replaces: "262 K instead of ~67 M updates", "~0.15 ms instead of 1.05 ms"
_INSTEAD = re.compile(r"(?<![\w.,])~?(?P<b>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s?[kKMG](?![A-Za-z]))?)"
                      r"(?:\s?(?P<u2>[A-Za-zµμ]+(?:/s)?))?\s+instead of\s+(?:the\s+)?~?"
                      r"(?P<a>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s?[kKMG](?![A-Za-z]))?)\s*(?P<u1>\S*)")


_TO_ONLY = re.compile(r"\s*(?:→|->|=>|⟶)\s*(?:~|≈|>=?|<=?)?\s*\d")
_QUALIFIER = re.compile(r"(?:during|per|each|every|in|within|over|across|to|from)\b", re.I)  # "during a step": when, not what


def _stated_move(plain: str) -> Optional[tuple[str, str]]:
    """The first metric the fix names with a direction in its own clause (from its name to the next metric named
    or the end of the sentence): a metric named only in passing ("padding avoids bank conflicts") is not the one the
    fix predicts ("expect sectors per request to go down from 32 to 4")."""
    found = [(m, m.group(0).replace(" ", "")) for m in METRIC_TOKEN.finditer(plain)] + \
            [(m, m.group(1)) for m in _NAMED_METRIC.finditer(plain)]
    named = [m.span() for m, _ in found]
    found += [(m, m.group(1).strip()) for m in _OUTCOME.finditer(plain)
              if not any(a < m.end() and m.start() < b for a, b in named) and not _QUALIFIER.match(m.group(1))
              and not re.match(r"[~≈]?\d[\d.,]*(?:-\d[\d.,]*)?\s", m.group(1))]  # "~145 -> ~550-700 TFLOP/s": a value's unit, not a name
    asides = [m.span() for m in re.finditer(r"\([^()]*\s[/÷=]\s[^()]*\)", plain)]  # a formula in parentheses
    named_outside = [(m, n) for m, n in found if not any(a < m.start() < b for a, b in asides)]
    found = named_outside or found  # "GPU busy fraction (kernel time / wall time of the loop) should rise": the
    # names in a formula define the metric before it, the move after the formula is that metric's
    starts = sorted(m.start() for m, _ in found)
    moves = []
    for m, name in found:
        nxt = [x for x in starts if x > m.start()] + [x.start() + m.end() for x in [re.search(r"[.;](\s|$)", plain[m.end():])] if x]
        clause = plain[m.end():min(nxt)] if nxt else plain[m.end():]
        if _TO_ONLY.match(clause):  # "GPU busy -> ~98 %, loop 24.3 ms -> ~13.5 ms": a target with no value to move
            clause = re.split(r"[,;]", clause)[0]  # from is that metric's; the move after the comma is another's
        d = clause_direction(re.split(r"\b(?:while|whereas)\b", clause)[0])  # "the step should stay ~1 ms while
        # tokens per second rise": the rise is another metric's
        if d:
            moves.append((name, d))
    # the launch setting a fix changes ("grid 16 -> 4,096") is the change; the metric after it is what it moves
    return next((mv for mv in moves if not SETTING.search(mv[0])), moves[0] if moves else None)


_FASTER = re.compile(r"\b(faster|quicker|shorter|slower|longer)\s+(kernel|step|loop|iteration|program|run|copy|"
                     r"transfer|matmul|GEMM|epoch)s?\b", re.I)
_EXPECT = re.compile(r"(?<!'s )(?<!\bis )(?<!\bas )(?<!\bbe )(?<!\bare )\bexpect\w*|\bpredict\w*|\bto watch\b|"
                     r"\bshould move\b", re.I)  # ("kernel time will go up, that's expected": no prediction)


def fix_metric_direction(fix: str) -> tuple[Optional[str], Optional[str]]:
    """The metric the fix says will move, and the direction it says (from `from A to B`, or the verb); a metric named
    with its own direction ("moving fewer bytes", "if more throughput is needed") moves that way."""
    metric, direction = _metric_direction(fix)
    if metric and direction is None and _IMPROVE.search(fix):  # "per-GEMM time can improve by a few percent": the
        direction = metric_direction(metric)  # way toward the roofline (a time falls, a rate rises; a pipe's use, none)
    said = _SELF_DIRECTED.match(metric or "")
    if said and not METRIC_TOKEN.search(metric):
        return said.group(2), _DIR_WORDS[said.group(1).lower()]
    return metric, direction


# a metric named with its direction: "(moving) fewer bytes", "(if) more throughput", "lower DRAM traffic"
_SELF_DIRECTED = re.compile(r"^(?:\w+\s+)?(fewer|less|more|lower|higher)\s+([A-Za-z][\w /-]*)$", re.I)


def _metric_direction(fix: str) -> tuple[Optional[str], Optional[str]]:
    if not fix.strip():
        return None, None
    plain = fix.replace("`", " ")
    if _DISMISSED.search(plain):  # ("Low sm__warps_active (14.8%) is not a problem to chase": no move)
        plain = " ".join(x for x in sentences(plain) if not _DISMISSED.search(x)) or plain
    expected = " ".join(x for x in sentences(plain) if _EXPECT.search(x))  # what the fix predicts, before its side effects
    stated = (_stated_move(expected) if expected else None) or _stated_move(plain)
    if stated:
        return _named(stated[0]), stated[1]
    m = METRIC_TOKEN.search(plain) or _NAMED_METRIC.search(plain) or _OUTCOME.search(plain)
    paced = _FASTER.search(plain) if m is None else None
    if paced:  # "Expected outcome: about 10x faster kernel": the kernel's time falls
        slower = paced.group(1).lower() in ("slower", "longer")
        return f"{paced.group(2).lower()} time", "increase" if slower else "decrease"
    metric = m.group(0).replace(" ", "") if m and m.re is METRIC_TOKEN else (m.group(1).strip() if m else None)
    direction = None
    sents = sentences(plain)
    own = [s for s in sents if m and m.group(0) in s]
    focus = own + sents
    if m:  # the clause that follows the metric, up to the next metric it names, speaks of that metric
        after = plain[m.end():]
        nxt = [x.start() for x in (METRIC_TOKEN.search(after), _NAMED_METRIC.search(after), re.search(r"[.;](\s|$)", after)) if x]
        focus = [after[:min(nxt)] if nxt else after] + focus
        own = [focus[0]] + own
    if m and _STAYS.match(focus[0]):
        return _named(metric), None  # "`gpu__time_duration.sum` should stay around 1.39 ms whatever you do"
    natural = metric_direction(_named(metric)) if m and _LABELLED.search(plain) else None
    for i, s in enumerate(focus):
        if natural and i >= len(own) and s not in own:
            direction = natural  # "fp8 inputs would double the tensor ceiling ... Metric: step time": a move of
            break  # something else; the metric named apart moves toward its roofline
        ft = _FROM_TO.search(s)
        if ft and _num(ft["a"]) != _num(ft["b"]):
            direction = "increase" if _rises(ft) else "decrease"
            break
        after = s[s.index(m.group(0)) + len(m.group(0)):] if m and m.group(0) in s else s
        d = _dir_search(after) or _dir_search(s)
        if d:
            direction = _DIR_WORDS[d.group(1).lower()]
            break
    if metric is None or direction is None:
        named = _named_move(plain)
        if named:
            return named
    return _named(metric) if metric else metric, direction


# a metric the fix sets aside: named to say it needs no change, not as what the change moves
_DISMISSED = re.compile(r"\bis not (?:a|the) problem\b|\bnot worth (?:chasing|fixing|touching)\b|\bnothing to chase\b|"
                        r"\bby design\b", re.I)
_LABELLED = re.compile(r"\bmetrics?(?: to watch)?\s*[:=]", re.I)
_STOP = re.compile(r"^(?:expect\w*|should|will|would|and|or|so|the|with|then|its|their|a|an|see|watch|metrics?|"
                   r"predict\w*|take|takes|bring\w*|drops?|falls?|goes|go|moves?|plus|also|both)$", re.I)


# the metric stays where it is: "should stay around 1.39 ms", "can't go meaningfully below ~480 us", "unchanged"
_STAYS = re.compile(r"\W*(?:[\w`'’.~-]+\s+){0,3}?(?:stays?|remains?|unchanged|(?:can(?:no|['’])t|won['’]t|will not)\s+"
                    r"(?:go|move|drop|fall|get)\b)", re.I)


def _named_move(plain: str) -> Optional[tuple[str, str]]:
    """A move written right after the words that name what moves ("local loads 33.55M -> 0", "threads/inst 4.28 → ~32",
    "`collective_enter_lag` 10.6 ms -> ~0"): those words, when they name a metric of a known kind, and the move's
    direction."""
    moves = sorted((m for m in (*_ARROW.finditer(plain), *_FROM_TO.finditer(plain)) if _num(m["a"]) != _num(m["b"])),
                   key=lambda m: m.start())
    for m in moves:
        head = re.split(r"[.;:,()\n=]|\s[-–—]\s", plain[:m.start()])[-1]
        words = re.findall(r"[\w/'’%-]+", head)
        while words and _STOP.match(words[0]):
            words = words[1:]
        name = " ".join(words[-3:])
        if name and not re.search(r"\d", name) and (METRIC_TOKEN.search(name) or metric_direction(name) is not None):
            return name, "increase" if _rises(m) else "decrease"
    return None


def _named(metric: str) -> str:
    """A metric named in shorthand, in full: 'kernel 2.2 ms -> 0.2 ms' is the kernel's time, 'XU%' its pipe."""
    metric = re.sub(r"(?<=\w)-per-(?=\w)", " per ", metric)  # "bytes-per-sector"
    if metric.strip().lower() == "kernel":
        return "kernel time"
    return f"{metric.strip()} pipe utilization" if _PIPE_NAME.fullmatch(metric.strip()) else metric


_PIPE_NAME = re.compile(r"XU|FMA|ALU|FP64|DRAM|tensor", re.I)
