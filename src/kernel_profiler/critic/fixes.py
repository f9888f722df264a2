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
from .bound_words import HOST_BUSY_MAX, on_device, timeline_verdict
from .direction import SETTING as _SETTING, clause_direction
from .proposal import last_proposal
from .target import target_direction
from .metric_kinds import PIPE as _PIPE, metric_direction
from .scope import kernel_mentions
from .numbers import METRIC_TOKEN

from .context import subject  # noqa: F401 (re-exported: the kernel an answer is about)
from .wrong_way import wrong_way

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


_LEAVE = re.compile(r"\A\W*nothing\b|\A\W*not the kernel\b|\b(leave|no (?:kernel |code )?change|none\b|nothing (?:to|left|worth)|keep (?:it|the kernel) as|"
                    r"(?:not|never) (?:to )?touch)|n['’]t (?:to )?touch", re.I)  # ("don't touch": no \b before n't)


_STAYS = re.compile(r"\b(?:should|will|would|to)\s+(?:stay|remain)\b|\bstays?\s+(?:at|around|~|near)\b|\bunchanged\b", re.I)


def at_roofline(c: "Context") -> bool:
    """The answer claims near_peak and the captures agree: its kernel runs within NEAR_PEAK_GAP of its floor."""
    key = subject(c)
    r = c.facts.rooflines.get(key) if key else None
    return c.claimed == "near_peak" and r is not None and r.stated_gap <= catalog.NEAR_PEAK_GAP


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
# a fix's metric the reader could not take as a measured effect (critic.grounds: such a refusal is `unconfirmed`)
UNMEASURED = "is nothing the captures measure"
A_SETTING = "is a setting of the launch or the build"


def _proposed_elsewhere(c: "Context") -> Optional[tuple[str, str]]:
    """The move a fix states in a block of its own, when the part the layout gave the fix states none (a summary that
    ends "Recommended: ...; expect the step to fall toward ~0.13 ms" above an appendix of numbers; a closing paragraph
    "First, unroll the loop ...: smsp__inst_executed.sum should drop from 204.5M to ~155M")."""
    found = last_proposal(c.raw or "")
    return found[1:] if found else None


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
    if leave and (at_roofline(c) and (not metric or direction not in ("increase", "decrease") or not _real(c, metric)
                                      or _STAYS.search(a.fix_text))
                  or direction is None and _STAYS.search(a.fix_text)):
        return []  # a kernel the captures put at its roofline: "leave it" needs no metric to move (nor one the
        # captures cannot measure, "FLOP per DRAM byte"); "leave it: `gpu__dram_throughput` should stay at ~75%" says
        # its outcome
    if not metric or direction not in ("increase", "decrease"):
        metric, direction = _proposed_elsewhere(c) or target_direction(c, a.fix_text) or (metric, direction)
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
    idle = _kernel_fix_on_idle(c, metric, e)
    if idle:
        return [idle] + wrong_way(c)
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
            out.append(f"The fix's metric '{metric}' {A_SETTING}, the change itself, not "
                       f"a measured effect of fixing {what}: name what it moves (kernel time, the cause's counter).")
    elif not _real(c, metric):
        out.append(f"The fix's metric '{metric}' {UNMEASURED}: name a measured metric (kernel or "
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
    return out + _fix_size(c) + wrong_way(c)




_KERNEL_OUTCOME = re.compile(_KERNEL_RESOURCE.pattern + r"|kernel (?:time|duration)|gpu__time_duration", re.I)
# an outcome of the program's timeline: what a host- or transfer-bound program's fix moves
_PROGRAM_OUTCOME = re.compile(r"GPU busy|busy fraction|\bidle\b|\bsyncs\b|\bsync (?:time|count|calls)|step time|host time|"
                              r"launch overhead|\bcopies\b|copy time|transfer time", re.I)


def _kernel_fix_on_idle(c: "Context", metric: str, e) -> str:
    """A fix whose outcome is a kernel's own counter or time, for a program whose steady state idles the GPU on its
    host or its copies (when the answer claims no host or transfer cause itself, which the rule above covers): a
    faster kernel leaves the idle time. A GPU busy over HOST_BUSY_MAX of its window does not idle (zero-copy reads
    over the link run inside the kernels). A fix that first names an outcome of the timeline (busy fraction, idle or
    sync time) is measured there, whatever kernel counter it adds."""
    v, s = timeline_verdict(c.facts), c.facts.timeline
    if v not in ("host", "transfer") or s is None or (v == "transfer" and on_device(s)) or \
            s.busy_fraction > HOST_BUSY_MAX or (e is not None and set(e.bounds) & {"host", "transfer"}) or \
            not _KERNEL_OUTCOME.search(metric):
        return ""
    text = c.answer.fix_text
    kernel_at = _KERNEL_OUTCOME.search(text)
    program_at = _PROGRAM_OUTCOME.search(text)
    if program_at and (kernel_at is None or program_at.start() < kernel_at.start()):
        return ""
    return (f"The fix's metric '{metric}' measures the kernels' own work, but the timeline's steady state is {v}-bound "
            f"(GPU busy {s.busy_fraction:.0%} of the window): a faster kernel leaves the idle time; name what the "
            f"{v} costs per step (idle or copy time, the busy fraction).")


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
