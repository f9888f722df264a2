"""The bound an answer states (in its own words, else the bound of the cause it claims) and the bound the timeline's
steady state shows, for the bound check (checks.check_bound)."""
from __future__ import annotations

import re
from typing import Optional

from .. import catalog
from ..catalog import CATALOG
from .context import Context
from .facts import Facts
from .hypotheses import accepted_block
from .unverified import answered_no, ruled_out

_BOUND_WORDS = [("host", r"host[- ]bound|CPU[- ]bound|launch[- ]bound|python[- ]bound|dispatch[- ]bound|GPU (is |sits )?idle|"
                          r"\b(?:reason|problem|culprit|limiter|bottleneck) is (?:the )?(?:host|CPU)\b|"
                          r"\b(?:host|CPU) (?:is|was) the (?:bottleneck|limiter|limit|problem)\b|"
                          r"\b(?:host|CPU)[- ]limited\b|\b(?:limited|bound) by the (?:host|CPU)\b(?![- ]to[- ]|[- ]side (?:copy|memory))|"
                          r"\b(?:host|CPU) can(?:no|')t keep up\b|\bkeep(?:ing)? the GPU fed\b"),
                ("transfer", r"transfer[- ]bound|copy[- ]bound|PCIe[- ]bound|copies dominate|"
                             r"\b(?:waits?|waiting|idles?|idling|sits? idle) (?:for|on|while) (?:the )?(?:copies|copy|"
                             r"transfers?|PCIe|link|uploads?|downloads?)\b"),
                ("memory", r"memory[- ](bandwidth[- ])?bound|bandwidth[- ]bound|DRAM[- ]bound|^\W*(?:DRAM|HBM|memory) "
                           r"bandwidth\b|(?:limited by|bound by|stalls? on|waits? on) (?:the )?(?:DRAM|HBM|memory) bandwidth|"
                           r"\b(?:memory(?: system| subsystem)?|DRAM|HBM) (?:is|was) the (?:bottleneck|limiter|limit)\b|"
                           r"\b(?:bottleneck|limiter) is (?:the )?(?:memory|DRAM|HBM)\b"),
                ("compute", r"compute[- ]bound|compute[- ]side (?:\([^)\n]{0,40}\) )?bound\b|math[- ]bound|FLOP[- ]bound|instruction[- ]bound|"
                            r"\b(?:SFU|XU|MUFU|FMA|ALU|FP64|FP32)(?: pipe| unit)?[- ](?:limited|bound)\b"),
                ("latency", r"latency[- ]bound|\blatency[- ]limited\b|\b(?:memory[- ])?latency (?:problem|issue|bottleneck)\b|"
                            r"\b(?:bound|limited) by (?:memory |DRAM |load )?latency\b|"
                            r"^\W*(?:memory|DRAM|HBM|load|global[- ]load) latency\b(?!\s+(?:is|was|isn['’]t)\b)"),
                ("kernel", r"(?<!not )(?<!not a )kernel[- ]bound|(?<!not )GPU[- ]bound|"
                           r"bound by (?:its|the|a|one) [\w`]*\s?(?:GEMM |matmul )?kernel")]


# a bound named to rule it out: "far from memory-bound", "..., not bandwidth-bound", "rather than latency-bound"
_FAR_FROM = re.compile(r"\b(?:far from|nowhere near|never|rather than|instead of|no longer|not|no|n['’]t|(?:should|would|could|"
                       r"ought to|is meant to|is supposed to) be)\s+(?:[\w-]+(?:\s+|/))?$", re.I)  # ("a kernel that should be
# FMA-bound is memory-bound": what it would be, not what it is)


def answer_bound(c: Context) -> Optional[str]:
    a = c.answer
    if a.bound:
        return a.bound
    label = _BOUND_LABEL.search(a.bottleneck or "")  # "**Bound: latency / atomic contention.** ... while the rest of
    said = _label_bound(label) if label else _stated(a.bottleneck or "")  # the GPU idles": the label is the verdict
    elsewhere = None if label else _BOUND_LABEL.search(c.raw or "")
    if said == "host" and elsewhere and not _SAYS_HOST.search(a.bottleneck or ""):
        return _label_bound(elsewhere)  # "~88% of the GPU idles during every step" over "**Bound:** latency (low
        # parallelism)" further down: the idle words describe, the label states the verdict
    if said:
        return said
    bare = _BARE_BOUND.fullmatch(a.bottleneck or "")
    if bare:
        return bare.group(1).lower()
    if c.claimed in CATALOG:
        return CATALOG[c.claimed].bounds[0]
    label = _BOUND_LABEL.search(c.raw or "")
    if label:  # "bound: memory (DRAM latency)" on a line of its own, under a title the layout took for the verdict
        return _label_bound(label)
    for b, pat in _BOUND_WORDS:  # a bottleneck that names neither bound nor cause: the bound its mechanism asserts
        for m in re.finditer(pat, a.explanation or "", re.I):
            if (b != "host" or "bound" in m.group(0).lower()) and _affirmed(a.explanation, m):
                return b  # ("The kernel is compute-bound: ..."; "the GPU idles" explains, it asserts nothing)
    return None


_BOUND_LABEL = re.compile(r"^[\s*_>#-]*(?:\*\*)?bound(?:\*\*)?\s*[:=]\s*(?:\*\*)?\s*(memory|compute|latency|host|cpu|"
                          r"transfer|copy|bandwidth|(?:GPU )?kernel|GPU)\b(?![\w-])", re.I | re.M)
_SAYS_HOST = re.compile(r"\b(?:host|CPU|launch|python|dispatch)[- ](?:bound|limited)\b", re.I)
_BARE_BOUND = re.compile(r"\W*(memory|compute|latency|host|transfer)\W*", re.I)  # a "bound" key's value read as the
# verdict: "compute"


def _label_bound(label: re.Match) -> str:
    said = label.group(1).lower()
    return {"cpu": "host", "copy": "transfer", "bandwidth": "memory", "gpu kernel": "kernel", "gpu": "kernel"}.get(said, said)


def _stated(text: str) -> Optional[str]:
    """The bound a verdict states: the first it names that it does not rule out ("latency-bound ..., not
    bandwidth-bound" is latency)."""
    found = sorted((m.start(), i, b, m) for i, (b, pat) in enumerate(_BOUND_WORDS) for m in re.finditer(pat, text, re.I))
    return next((b for _, _, b, m in found if not _FAR_FROM.search(text[max(0, m.start() - 25):m.start()]) and
                 not answered_no(text, m.end())), None)  # "[1] Kernel-bound? -- NO.": a hypothesis ruled out


KERNEL_SIDE = ("memory", "compute", "latency")
HOST_BUSY_MAX = 0.75  # a GPU that computes more of its step than this leaves no host time to blame (sig_host_idle)


def affirms(text: str, verdict: str) -> bool:
    """Whether the text states the timeline's verdict as its bound ("=> host-bound."; for a kernel verdict, any bound
    of the kernels) in words it does not rule out, question or call secondary: an answer that says the right bound
    in so many words is not refused for a bound read from its other sentences. In a hypothesis log, only the
    hypothesis it accepts states its bound."""
    text = text or ""
    text = accepted_block(text) or text
    wanted = {"kernel", *KERNEL_SIDE} if verdict == "kernel" else {verdict}
    if any(_label_bound(m) in wanted for m in _BOUND_LABEL.finditer(text)):
        return True  # "bound: host (launch/dispatch overhead)" on a line of its own
    return any(_affirmed(text, m) for b, pat in _BOUND_WORDS if b in wanted for m in re.finditer(pat, text, re.I)
               if b != "host" or re.search(r"bound|limit", m.group(0), re.I))  # ("the GPU sits idle" states no bound)


def _affirmed(text: str, m: re.Match) -> bool:
    """Whether the bound words matched at `m` are stated, not ruled out ("not host-bound", "far from memory-bound"),
    nor a question answered no or called secondary ("H2 host/launch-bound? — secondary.")."""
    return not ruled_out(text, m.start(), m.end()) and not answered_no(text, m.end()) and \
        not _FAR_FROM.search(text[max(0, m.start() - 25):m.start()])


def timeline_verdict(f: Facts) -> Optional[str]:
    """The engine's steady-state verdict on the timeline: host, transfer, startup, kernel (None without one)."""
    d, s = f.diagnosis, f.timeline
    v = getattr(s, "verdict", None) if s is not None else None
    if v:
        return v
    if s is None or d is None or not s.window_ns:
        return None
    if d.primary.mechanism == "startup_dominated":
        return "startup"
    if d.bound in ("host", "transfer") and d.primary.mechanism in catalog.HOST_MECHANISMS:
        return d.bound
    return "kernel"


def on_device(s) -> bool:
    """Whether most bytes the window's copies move stay on the device (DtoD): a copy that reads and writes DRAM."""
    kinds = getattr(s, "copy_bytes", None) or {}
    return sum(v for k, v in kinds.items() if k.endswith("DtoD")) > 0.5 * max(sum(kinds.values()), 1.0)
