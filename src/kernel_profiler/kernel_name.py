"""Kernel identity: one kernel's name, and the forms in which it is compared and shown.

nsys, ncu and Kineto spell the same kernel differently (`void` or not, the argument list or not,
`(int)4` and `2ul` in template arguments, `(anonymous namespace)` or `<unnamed>`, parameter types
`float` or `T2`). A `KernelName` holds the name as a tool wrote it; everything that compares,
matches or prints a kernel name goes through it:

- `qualified`: the function name with namespaces and template arguments, without `void`, the
  argument list and spaces (what SASS functions and launch tables are matched on);
- `key`: `qualified` made comparable across the formats' spellings (joins nsys, ncu and Kineto);
- `base`: the bare function name, no namespace or template arguments (as ncu's `-k` matches it);
- `display(width)`: for people, shortened with an ellipsis in the middle, never cut silently.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Optional

from .display import ellipsize

_CAST = re.compile(r"\((?:unsigned |signed )?(?:int|long|long long|short|char|bool|size_t)\)(?=-?\d)")
_ANON = re.compile(r"\(anonymous ?namespace\)|<unnamed>|\{anonymous\}")
_NCU_UNNAMED = re.compile(r"\s*unnamed>::")
_LAMBDA = re.compile(r"\[lambda\(([^)]*)\)\s*\(instance\s*(\d+)\)\]")
_PARENS = re.compile(r"\([^()]*\)")
_INT_SUFFIX = re.compile(r"(?<=[<,\s])(-?\d+)(?:ull|llu|ul|lu|ll|u|l)\b", re.IGNORECASE)


@dataclass(frozen=True)
class KernelName:
    """A kernel's name as a profiler wrote it (`raw`), with its derived forms."""

    raw: str

    def __init__(self, raw: Optional[str]):
        object.__setattr__(self, "raw", raw or "")

    def __str__(self) -> str:
        return self.raw

    @cached_property
    def qualified(self) -> str:
        """Function name without 'void', argument list and spaces; namespaces and template arguments kept."""
        return _without_arguments(self.raw)

    @cached_property
    def key(self) -> str:
        """`qualified` made comparable across nsys, ncu and Kineto spellings of template arguments.

        Drops `void`, integer casts `(int)4` and suffixes `2ul`, unifies anonymous namespaces and lambda
        spellings (`{lambda(float)#2}` vs `[lambda(float) (instance 2)]`), then removes every parenthesized
        list left inside the key (parameter types are spelled `float` by one tool and `T2` by another).
        """
        n = re.sub(r"\bvoid\s+", "", self.raw)
        if _NCU_UNNAMED.match(n):  # ncu's CSV drops "ns::<" before "unnamed>": "unnamed>::f<unnamed>::T<2>, ...>"
            n = re.sub(r"(?<![<\w])unnamed>::", "anon::", n).replace("<unnamed>::", "<anon::")
        n = _CAST.sub("", n)
        n = _ANON.sub("anon", n)
        n = _INT_SUFFIX.sub(r"\1", n)
        n = _LAMBDA.sub(r"{lambda(\1)#\2}", n)
        k = _without_arguments(n)
        prev = None
        while prev != k:
            prev, k = k, _PARENS.sub("", k)
        return k

    @cached_property
    def base(self) -> str:
        """The function's bare name: no namespace, template arguments or parameters (from `key`, so an
        anonymous namespace spelled `(anonymous namespace)` or `<unnamed>` does not hide it)."""
        return re.split(r"[<(]", self.key)[0].split("::")[-1]

    def display(self, width: int = 70) -> str:
        """For people: no 'void', argument list, PyTorch namespace or boilerplate template arguments; longer
        than `width`, its middle is replaced by an ellipsis (…) so both ends stay readable."""
        n = re.sub(r"^void\s+", "", self.raw.strip())
        depth = 0
        for i, ch in enumerate(n):  # cut the argument list (the first '(' outside template brackets)
            depth += (ch == "<") - (ch == ">")
            if ch == "(" and depth <= 0 and i > 0:
                n = n[:i].strip()
                break
        n = re.sub(r",\s*std::array<char \*, \(unsigned long\)\d+>", "", n)
        n = re.sub(r"<\(int\)\d+,\s*", "<", n)
        n = n.replace("at::native::", "").replace("void ", "")
        return ellipsize(n, width)


def _without_arguments(name: str) -> str:
    """The name up to its argument list (the first '(' outside template brackets), no 'void', no spaces."""
    n = re.sub(r"^void\s+", "", name.strip())
    depth = 0
    for i, ch in enumerate(n):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth <= 0:
            n = n[:i]
            break
    return re.sub(r"\s+", "", n)
