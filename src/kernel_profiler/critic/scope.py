"""The kernels an answer speaks of: named in a text (by base name, a long-enough part of the key, elided, by
library prefix, by role, by a code word), and the scope of kernels a sentence's numbers may belong to."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional

from ..kernel_name import KernelName
from .facts import Facts


_ELIDED = re.compile(r"([\w:<>,]{6,})…([\w:<>,]{4,})")


def kernel_mentions(text: str, facts: Facts, roles: bool = True) -> set[str]:
    """Kernels (norm keys) named in a text: by base name, by a long-enough part of the key, or elided (`head…tail`);
    with `roles`, also by what it does ("its GEMMs"), where one kernel of the captures does that."""
    out = set()
    low = text or ""
    if not low.strip():
        return out
    squeezed = low.replace(" ", "")
    words = set(re.findall(r"[\w:]+", low))
    elided = _ELIDED.findall(low)
    for key, base in facts.kernels.items():
        if len(base) >= 3 and base in words or (len(base) >= 3 and base in low and re.search(
                rf"(?<![\w]){re.escape(base)}(?![\w])", low)):
            out.add(key)
        elif len(key) >= 8 and key in squeezed:
            out.add(key)
        elif any(key.startswith(h.split("<")[0]) and t in key for h, t in elided):
            out.add(key)
    for word in words & _LIBRARY_PREFIXES:  # "nvjet avg duration": the library prefix of exactly one kernel's name
        hits = [key for key in facts.kernels if key.startswith(word + "_")]
        if len(hits) == 1:
            out.add(hits[0])
    for role, kind in _ROLES if roles else []:  # "its GEMMs are ~1.53 ms": the capture's one matrix-product (or collective) kernel
        hits = [key for key in facts.kernels if kind.search(key)] if role.search(low) else []
        if len(hits) == 1:
            out.add(hits[0])
    for word in _CODE_WORD.findall(low) + _NAMED_KERNEL.findall(low):  # `tanh`, "the tanh kernel": a word of exactly
        # one kernel's full name (its functor, its op)
        hits = [key for key in facts.kernels if re.search(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])", key)]
        if len(hits) == 1:
            out.add(hits[0])
    return out


_ROLES = [(re.compile(r"\b(?:GEMMs?|matmuls?|matrix (?:products?|multipl\w+))\b", re.I),
           re.compile(r"gemm|nvjet|cutlass|xmma|matmul|hgmma|wgmma", re.I)),
          (re.compile(r"\b(?:all[- ]?reduces?|collectives?|NCCL)\b", re.I), re.compile(r"^nccl", re.I))]
_LIBRARY_PREFIXES = frozenset("nvjet cutlass xmma sm80 sm90 ampere hopper triton ncclDevKernel cudnn cublas flash".split())
_CODE_WORD = re.compile(r"`([A-Za-z_][A-Za-z0-9_]{2,})`")
_NAMED_KERNEL = re.compile(r"\b(?:the|a|its|each)\s+([A-Za-z_][A-Za-z0-9_]{3,})\s+kernels?\b", re.I)
# a sentence about several kernels at once ("each kernel", "every one of them", "the kernels are individually ...",
# "the four vectorized kernels run at 85.1-89.6%"):
# its numbers may be any profiled kernel's values of the metric it describes
_EACH = re.compile(r"\b(?:each|every|all|individually|both|per kernel)\b|"
                   r"\b(?:two|three|four|five|six|seven|eight|nine|ten|[2-9])\s+(?:[\w*-]+\s+){0,2}kernels\b", re.I)
# (a few kernels by kind; "6000 bf16 `tanh` kernels" counts the launches of one kernel)
_PLURAL = re.compile(r"\bkernels\b|\b(?:each|every|per) kernel\b|\bof them\b|\bones\b", re.I)


def several_kernels(sentence: str) -> bool:
    return bool(_EACH.search(sentence or "") and _PLURAL.search(sentence or ""))


@dataclass
class Scope:
    primary: set[str]  # the kernels the answer is about

    def allowed(self, sentence: str, facts: Facts) -> set[str]:
        if several_kernels(sentence):
            return set(facts.kernels)
        return kernel_mentions(sentence, facts) | self.primary


def answer_scope(bottleneck: str, whole: str, named: Iterable[Optional[str]], facts: Facts) -> Scope:
    prim = kernel_mentions(bottleneck, facts, roles=False)  # ("the GEMM is near peak": the answer's subject is what
    # it names; a role word makes a kernel a sentence's, not the answer's)
    for n in named:
        if n:
            prim |= ({KernelName(n).key} & set(facts.kernels)) or kernel_mentions(n, facts)
    if not prim:
        prim = kernel_mentions(whole, facts, roles=False)
    if not prim and facts.diagnosis is not None and facts.diagnosis.primary.kernel:
        prim = {KernelName(facts.diagnosis.primary.kernel).key}
    if not prim and len(facts.profiles) == 1:  # one kernel profiled (a SASS dump may list the binary's others)
        prim = set(facts.profiles)
    return Scope(primary={p for p in prim if p})
