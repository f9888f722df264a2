"""Reader for Nsight Compute ``.ncu-rep`` reports via the ``ncu_report`` wheel.

One KernelProfile per profiled launch (every action of every range), with all
numeric metrics converted to base units by :mod:`kernel_profiler.artifacts.units`
(the report already stores base units: ns, byte, byte/s, hz...). String metrics
(device name, kernel name...) are not in ``metrics``; they fill the dedicated
fields. ``rules`` are ncu's guided-analysis results as dicts with keys
``id, name, section, type ("OPT"|"INF"|"WRN"|"ERR"|"NONE"), title, message,
speedup_type ("local"|"global"|None), speedup`` -- the same keys the CSV
details reader produces.

SASS: :func:`load_sass` returns one SassFunction per kernel (:func:`load_all`, which
``load_paths`` uses, returns the profiles and the SASS in one pass), read with
``action.sass_by_pc`` at the instruction addresses that the ``inst_executed``
source-counter metric correlates (SourceCounters section, ``--set full``) or,
when the report has no source counters, from the function's entry address
(``launch__function_pcs``, a launch attribute) onwards, 16 bytes per instruction,
until the report has no instruction at the next address. Neither -> EmptyCapture.

The library does not raise on a bad file: an empty, garbage or wrong-format
file loads as 0 ranges, and a truncated one as a kernel with no name and no
metrics. Both are turned into ArtifactError/EmptyCapture here. The library runs
in-process: a native crash inside it cannot be caught (none seen on truncated,
garbage or byte-flipped copies of our captures).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator, Optional

from kernel_profiler.artifacts.sass import make_function
from kernel_profiler.artifacts.tables import SassFunction
from kernel_profiler.artifacts.tables import KernelProfile
from kernel_profiler.artifacts.units import to_base
from kernel_profiler.errors import ArtifactError, EmptyCapture, UnknownFormat

MAGIC = b"NVR\x00"
_MSG_TYPE = {0: "NONE", 1: "INF", 2: "OPT", 3: "WRN", 4: "ERR"}
_SPEEDUP_TYPE = {1: "local", 2: "global"}
_MARKUP = re.compile(r"@[a-z_]+:[^:@]*:([^@]*)@")


def sniff(path: Path, head: bytes) -> bool:
    return head.startswith(MAGIC)


def _import():
    try:
        import ncu_report  # type: ignore
    except Exception as e:  # ImportError, or the wheel's native library failing to load
        raise ArtifactError("ncu_report", f"cannot import the ncu_report module (pip install ncu-report): {e}") from None
    return ncu_report


def _check_file(path: Path) -> None:
    try:
        with open(path, "rb") as f:
            head = f.read(len(MAGIC))
    except OSError as e:
        raise ArtifactError(path, f"cannot read report: {e.strerror or e}") from None
    if not head:
        raise ArtifactError(path, "report file is empty")
    if head != MAGIC:
        raise UnknownFormat(path, "not an Nsight Compute .ncu-rep report (bad magic bytes)")


def _actions(path: Path) -> Iterator[tuple[int, Any]]:
    """(launch index, IAction) for every profiled launch; raises ArtifactError on bad files."""
    _check_file(path)
    ncu_report = _import()
    try:
        ctx = ncu_report.load_report(str(path))
        ranges = [ctx.range_by_idx(i) for i in range(ctx.num_ranges())]
        acts = [r.action_by_idx(j) for r in ranges for j in range(r.num_actions())]
    except Exception as e:
        raise ArtifactError(path, f"ncu_report cannot read this report ({type(e).__name__}: {e})") from None
    if not acts:
        raise EmptyCapture(path, "report holds no profiled kernel (ncu profiled nothing, or the file is truncated/corrupt)")
    for i, a in enumerate(acts):
        try:
            ok = bool(a.name()) and len(a.metric_names()) > 0
        except Exception:
            ok = False
        if not ok:
            raise ArtifactError(path, f"report is truncated or corrupt: kernel #{i} has no name or no metrics")
        yield i, a


def _rules(action) -> list[dict]:
    out = []
    for r in action.rule_results_as_dicts() or []:
        msg = r.get("rule_message") or {}
        sp = r.get("speedup_estimation") or {}
        out.append({
            "id": r.get("rule_identifier"),
            "name": r.get("name"),
            "section": r.get("section_identifier"),
            "type": _MSG_TYPE.get(msg.get("type"), str(msg.get("type"))),
            "title": msg.get("title"),
            "message": _MARKUP.sub(r"\1", msg.get("message") or ""),
            "speedup_type": _SPEEDUP_TYPE.get(sp.get("type")) if sp else None,
            "speedup": float(sp["speedup"]) if sp.get("speedup") is not None else None,
        })
    return out


def _dims(metrics: dict[str, float], prefix: str, total: str) -> Optional[tuple[int, int, int]]:
    xyz = [metrics.get(f"{prefix}_{c}") for c in "xyz"]
    if all(v is not None for v in xyz):
        return tuple(int(v) for v in xyz)  # type: ignore[return-value]
    if metrics.get(total) is not None:
        return (int(metrics[total]), 1, 1)
    return None


def _profile(path: Path, idx: int, a) -> KernelProfile:
    metrics: dict[str, float] = {}
    units: dict[str, str] = {}
    strings: dict[str, str] = {}
    for n in a.metric_names():
        m = a.metric_by_name(n)
        if m is None:
            continue
        v = m.value()
        if isinstance(v, str):
            strings[n] = v
            continue
        if v is None:
            continue
        try:
            fv = float(v)
        except (TypeError, ValueError):
            continue
        metrics[n], units[n] = to_base(fv, m.unit())
    name = a.name(a.NameBase_DEMANGLED) or a.name()
    return KernelProfile(
        source=str(path), name=name, launch_id=idx, metrics=metrics, units=units,
        rules=_rules(a),
        device=strings.get("device__attribute_display_name") or strings.get("device__attribute_device_name"),
        grid=_dims(metrics, "launch__grid_dim", "launch__grid_size"),
        block=_dims(metrics, "launch__block_dim", "launch__block_size"),
        mangled=a.name(a.NameBase_MANGLED) or None,
    )


def load(path: Path) -> list[KernelProfile]:
    path = Path(path)
    try:
        return [_profile(path, i, a) for i, a in _actions(path)]
    except ArtifactError:
        raise
    except Exception as e:
        raise ArtifactError(path, f"cannot read report ({type(e).__name__}: {e})") from None


MAX_SASS_INSTRUCTIONS = 200_000
INSTRUCTION_BYTES = 16  # every SASS instruction since Volta (sm_70)


def _pcs(action) -> list[int]:
    m = action.metric_by_name("inst_executed")
    if m is None or not m.has_correlation_ids():
        return []
    ids = m.correlation_ids()
    return sorted({ids.as_uint64(i) for i in range(ids.num_instances())})


def _walk_from_entry(action) -> list[str]:
    """The kernel's SASS without source counters: from its entry address (launch__function_pcs) to the first
    address the report holds no instruction for; the alignment NOPs after the end are dropped."""
    m = action.metric_by_name("launch__function_pcs")
    if m is None or not m.num_instances():
        return []
    pc = m.as_uint64(0)
    lines: list[str] = []
    while len(lines) < MAX_SASS_INSTRUCTIONS:
        ins = action.sass_by_pc(pc)
        if not ins:
            break
        lines.append(ins)
        pc += INSTRUCTION_BYTES
    while lines and lines[-1].strip() == "NOP":
        lines.pop()
    return lines


def _sass_function(path: Path, a) -> Optional[SassFunction]:
    """The SASS of one profiled kernel: at its source counters' addresses, else walked from its entry address;
    None when the report holds neither."""
    pcs = _pcs(a)
    lines = [a.sass_by_pc(pc) for pc in pcs] if pcs else _walk_from_entry(a)
    if not any(lines):
        return None
    arch = None
    cc = a.metric_by_name("device__attribute_compute_capability_major")
    cm = a.metric_by_name("device__attribute_compute_capability_minor")
    if cc is not None and cm is not None:
        arch = f"sm_{int(cc.value())}{int(cm.value())}"
    return make_function(str(path), a.name(a.NameBase_DEMANGLED) or a.name(), arch, [ln for ln in lines if ln],
                         mangled=a.name(a.NameBase_MANGLED))


def load_sass(path: Path) -> list[SassFunction]:
    """SASS of every profiled kernel (source counters' addresses, else walked from the entry address)."""
    path = Path(path)
    try:
        out = [f for _, a in _actions(path) if (f := _sass_function(path, a)) is not None]
    except ArtifactError:
        raise
    except Exception as e:
        raise ArtifactError(path, f"cannot read SASS from report ({type(e).__name__}: {e})") from None
    if not out:
        raise EmptyCapture(path, "report holds no SASS (profile with --section LaunchStats or --set full)")
    return out


def load_all(path: Path) -> list[KernelProfile | SassFunction]:
    """Everything the report holds, in one pass: a KernelProfile per profiled launch, then the SASS of each
    kernel (a kernel whose SASS cannot be read is left without it)."""
    path = Path(path)
    profiles: list[KernelProfile | SassFunction] = []
    fns: list[KernelProfile | SassFunction] = []
    try:
        for i, a in _actions(path):
            profiles.append(_profile(path, i, a))
            try:
                fn = _sass_function(path, a)
            except Exception:
                fn = None
            if fn is not None:
                fns.append(fn)
    except ArtifactError:
        raise
    except Exception as e:
        raise ArtifactError(path, f"cannot read report ({type(e).__name__}: {e})") from None
    return profiles + fns
