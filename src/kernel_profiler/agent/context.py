"""What every tool call of one investigation shares: the sandbox, the user's artifacts, what the tools made."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

from ..analysis.consistency import reconcile
from ..analysis.engine import diagnose as engine_diagnose
from ..analysis.timeline import TimelineResult
from ..artifacts import load_paths
from ..artifacts.tables import Artifacts, Timeline
from ..answer import Diagnosis
from ..errors import KernelProfilerError
from .order import order_violation
from .sandbox import Sandbox

if TYPE_CHECKING:
    from .tools import TimelineOutput


@dataclass
class ToolContext:
    """What every tool call of one investigation shares."""

    sandbox: Sandbox
    artifacts: list[str] = field(default_factory=list)  # paths the user gave (trusted, may lie outside the tree)
    insist: bool = False  # the user asked for kernel profiling even if the timeline says host/transfer-bound
    method_order: bool = True  # call_tool enforces the method's order (False only to test one tool on its own)
    produced: list[str] = field(default_factory=list)  # captures the tools wrote (nsys sqlite, ncu-rep, SASS)
    timeline_result: Optional[TimelineResult] = None
    timeline_output: Optional["TimelineOutput"] = None
    timeline: Optional[Timeline] = None  # the timeline triaged (its launches plan ncu's launch skip/count)
    _user_loaded: Optional[Artifacts] = None  # the user's artifacts as read, before `reconcile`
    _user_arts: Optional[Artifacts] = None
    # What the critic checks answers against, keyed by the paths it was loaded from (reloaded only when
    # `produced` changes): (paths, artifacts or None, the engine's diagnosis of them or None).
    _collected: Optional[tuple[tuple[str, ...], Optional[Artifacts], Optional[Diagnosis]]] = None

    def user_artifacts(self) -> Optional[Artifacts]:
        """The user's artifacts, read once by the artifact readers (`.xz` decompressed there, SASS of `.ncu-rep`
        reports included)."""
        if not self.artifacts:
            return None
        if self._user_arts is None:
            self._user_arts = reconcile(self._read_user())  # another device/run/program set apart
        return self._user_arts

    def _read_user(self) -> Artifacts:
        if self._user_loaded is None:
            self._user_loaded = load_paths(self.artifacts)
        return self._user_loaded

    def _collected_paths(self) -> tuple[str, ...]:
        return tuple(self.artifacts) + tuple(p for p in self.produced if p not in self.artifacts)

    def _load_collected(self) -> tuple[Optional[Artifacts], Optional[Diagnosis]]:
        paths = self._collected_paths()
        if self._collected is None or self._collected[0] != paths:
            arts = None
            if paths:
                try:  # only the user's captures (nothing made by the tools): read once, for the tools and the critic
                    arts = self._read_user() if paths == tuple(self.artifacts) else load_paths(list(paths))
                except KernelProfilerError:
                    arts = None
            self._collected = (paths, arts, None)
        return self._collected[1], self._collected[2]

    def collected_artifacts(self) -> Optional[Artifacts]:
        """Everything the answer may cite: the user's artifacts plus captures the tools made (loaded once, and
        again only when the tools have made new captures)."""
        return self._load_collected()[0]

    def collected_diagnosis(self) -> Optional[Diagnosis]:
        """The engine's diagnosis (engine.diagnose) of `collected_artifacts()`, cached with them."""
        arts, diag = self._load_collected()
        if arts is None:
            return None
        if diag is None:
            diag = engine_diagnose(arts)
            self._collected = (self._collected[0], arts, diag)
        return diag

    def order_violation(self, name: str, args: dict) -> Optional[str]:
        """Why the method refuses `name` now (see `order.order_violation`), or None. Every client goes through
        it: `call_tool` enforces it, so the MCP server's clients are held to the same order as `ask`."""
        tl = self.timeline_output.model_dump(mode="json") if self.timeline_output is not None else None
        return order_violation(tl, name, args, self.insist)
