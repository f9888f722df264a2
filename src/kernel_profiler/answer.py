"""The answer kernel-profiler gives, as pydantic models with a published JSON schema (`kernel-profiler schema`).

`Answer` is the one answer model: the four parts of every answer -- the bottleneck in one sentence, two or three
measured numbers as evidence (each traceable to a file and a kernel), the mechanism, and the fix with the metric
it should move -- with ids and prose under distinct names (`bound`, `mechanism`: ids; `bottleneck`,
`explanation`: prose). Every path gives it: the engine (`Diagnosis`, an Answer with the findings and
measurements behind it: `analyze --json`), the `submit_answer` tool (its input schema), the critic (answers
parsed from Markdown or JSON) and `ask` (`AskResult`, an Answer with the run behind it: `ask --json`). Every
renderer (render/) reads it.
"""
from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import BaseModel, Field, field_validator, model_validator

from .agent.protocol import Usage
from .catalog import MECHANISM_IDS

SCHEMA_VERSION = "1.2"  # 1.1: Roofline.needed_* (the floor for the bytes the work needs); 1.2: one Answer shape
# for analyze and ask (top-level kernel, also_found; evidence metric/unit/artifact optional; fix metric/direction
# optional; Diagnosis.primary absent for a recorded run's accepted answer)

Bound = Literal["host", "transfer", "memory", "compute", "latency", "near_peak", "comms", "inconclusive"]
Mechanism = Literal[MECHANISM_IDS]  # type: ignore[valid-type]  # the ids of the catalog (catalog.py)
BOUNDS: tuple[str, ...] = Bound.__args__  # type: ignore[attr-defined]
MECHANISMS: tuple[str, ...] = Mechanism.__args__  # type: ignore[attr-defined]


class Evidence(BaseModel):
    """A measured number and its source."""

    # No descriptions: this model is part of the submit_answer tool schema a model reads with every request (the
    # system prompt says how to fill each field). metric: as the artifact spells it, or timeline.*/derived.*;
    # unit: ns, byte, byte/s, flop/s, %, ratio, count, ...; artifact: the file it was read from; meaning: what the
    # number shows, in words.
    metric: Optional[str] = None
    value: float
    unit: Optional[str] = None
    artifact: Optional[str] = None
    kernel: Optional[str] = None
    meaning: str = ""


class Roofline(BaseModel):
    """Floor time of one kernel against the ceilings of the path it really uses."""

    kernel: str
    math_path: str = Field(description="fp32, fp64, fp16/bf16 tensor, tf32 tensor, int/other")
    flops: float = Field(description="floating-point operations the kernel executed on that path")
    dram_bytes: float = Field(description="bytes read from and written to device memory")
    duration_ns: float
    arithmetic_intensity: Optional[float] = Field(description="flops per DRAM byte")
    peak_flops: float = Field(description="FLOP/s ceiling of the math path")
    peak_bandwidth: float = Field(description="byte/s ceiling of device memory")
    ceiling_source: str = Field(description="where the ceilings came from (ncu peak-sustained metrics, device table, ...)")
    achieved_flops: float = Field(description="FLOP/s achieved")
    achieved_bandwidth: float = Field(description="byte/s achieved")
    floor_ns: float = Field(description="max(flops / peak_flops, bytes / peak_bandwidth)")
    gap: float = Field(description="duration / floor: 1.0 is the roofline")
    limiter: Literal["memory", "compute"] = Field(description="which term sets the floor")
    # Since schema 1.1: the floor for the bytes the work needs (absent in older JSON).
    needed_bytes: Optional[float] = Field(default=None, description="bytes the work needs to move: the smallest of "
                                          "the DRAM bytes moved, the bytes the threads requested (useful bytes per "
                                          "sector x sectors) and the device memory allocated when it ran")
    needed_source: str = Field(default="", description="which of those bounds set needed_bytes")
    needed_floor_ns: Optional[float] = Field(default=None, description="max(flops / peak_flops, needed_bytes / "
                                             "peak_bandwidth): the time the work needs")
    needed_gap: Optional[float] = Field(default=None, description="duration / needed_floor_ns: the gap answers state")
    needed_limiter: Optional[Literal["memory", "compute"]] = Field(default=None, description="which term sets the "
                                                                   "needed floor: the roofline label")

    @property
    def stated_floor_ns(self) -> float:
        """The floor answers state: the needed one when known, else the one at the measured traffic."""
        return self.needed_floor_ns if self.needed_floor_ns else self.floor_ns

    @property
    def stated_gap(self) -> float:
        return self.needed_gap if self.needed_gap else self.gap

    @property
    def stated_limiter(self) -> str:
        return self.needed_limiter or self.limiter

    @property
    def moved_floor_differs(self) -> bool:
        """The floor at the measured DRAM traffic differs (by over 2%) from the floor for what the work needs,
        so both are worth stating."""
        return self.needed_floor_ns is not None and abs(self.floor_ns - self.needed_floor_ns) > 0.02 * self.needed_floor_ns


class Fix(BaseModel):
    """The change and the metric that should confirm it."""

    change: str
    metric: Optional[str] = None  # the metric expected to move
    direction: Optional[Literal["increase", "decrease"]] = None
    expected: str = ""  # rough size of the move, in words
    current_value: Optional[float] = None
    target_value: Optional[float] = None

    @property
    def text(self) -> str:
        """The change and its expected size as one piece of prose."""
        return self.change + (f" Expected: {self.expected}." if self.expected else "")


class Finding(BaseModel):
    """One diagnosed problem (or the statement that a kernel is done)."""

    bound: Bound
    mechanism: Optional[Mechanism] = None
    bottleneck: str = Field(description="one sentence")
    kernel: Optional[str] = None
    share: Optional[float] = Field(default=None, description="fraction of steady-state GPU (or wall) time it concerns")
    evidence: list[Evidence] = Field(default_factory=list)
    explanation: str = Field(default="", description="the mechanism: why the code causes it, tied to the gap")
    fix: Optional[Fix] = None
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    missing: list[str] = Field(default_factory=list, description="metrics or captures that would settle it")
    roofline: Optional[Roofline] = None


class KernelRow(BaseModel):
    name: str
    count: int
    total_ns: float
    median_ns: float
    share: float = Field(description="fraction of steady-state GPU-busy time")


class TimelineSummary(BaseModel):
    source: str
    capture_ns: float = Field(description="whole capture span")
    startup_ns: float = Field(description="capture start to first GPU work")
    window_ns: float = Field(description="steady-state window analyzed")
    window_source: str = Field(description="how the window was chosen (NVTX steps, ProfilerStep, first-to-last GPU op)")
    busy_ns: float = Field(description="union of kernel, copy and set intervals inside the window")
    busy_fraction: float
    kernel_ns: float
    copy_ns: float
    idle_ns: float
    idle_by_cause: dict[str, float] = Field(default_factory=dict, description="ns of idle GPU time per host cause")
    kernel_count: int
    copy_bytes: dict[str, float] = Field(default_factory=dict)
    steps: Optional[int] = None
    step_ns_median: Optional[float] = None
    top_kernels: list[KernelRow] = Field(default_factory=list)
    onetime_ns: float = Field(default=0.0, description="one-time work apart from the steady window (after start-up)")
    onetime_by_class: dict[str, float] = Field(default_factory=dict, description="ns of one-time work per class: "
                                               "jit, library_init, module_loading, allocator, upload, download, "
                                               "sync, warm_up, host")
    repeats: Optional[int] = Field(default=None, description="repetitions of the GPU work found without step markers")


class RankRow(BaseModel):
    """One rank of a multi-process job."""

    rank: int
    pid: Optional[int] = None
    device: Optional[int] = None
    steps: int = 0
    step_p50_ns: Optional[float] = None
    step_p90_ns: Optional[float] = None
    step_p99_ns: Optional[float] = None
    step_max_ns: Optional[float] = None
    compute_ns_per_step: Optional[float] = None
    collective_ns_per_step: Optional[float] = None
    collective_enter_lag_ns: Optional[float] = Field(default=None, description="median delay entering the collective "
                                                     "after the first rank entered it (0 = first)")
    sm_clock_mhz_median: Optional[float] = None
    throttle_reasons: list[str] = Field(default_factory=list)
    source: str = ""


# The answer as `ask` gave it before schema 1.2 (critic.Answer): `mechanism` prose, `mechanism_id` the id, `fix` a
# string with `fix_metric`/`fix_direction` beside it, evidence `text`. Recorded transcripts hold it; it is read, never
# written.
_LEGACY_KEYS = ("mechanism_id", "fix_metric", "fix_direction")


def _from_legacy(data: dict) -> dict:
    legacy = (any(k in data for k in _LEGACY_KEYS) or isinstance(data.get("fix"), str)
              or any(isinstance(e, dict) and "text" in e and "meaning" not in e for e in data.get("evidence") or [])
              or ("explanation" not in data and isinstance(data.get("mechanism"), str)
                  and data["mechanism"] not in MECHANISMS))
    if not legacy:
        return data
    out = dict(data)
    if "explanation" not in out and (isinstance(out.get("mechanism"), str) and out["mechanism"] not in MECHANISMS
                                     or "mechanism_id" in out):
        out["explanation"] = out.pop("mechanism", None) or ""
    if "mechanism_id" in out:
        out["mechanism"] = out.pop("mechanism_id")
    fix = out.get("fix")
    metric, direction = out.pop("fix_metric", None), out.pop("fix_direction", None)
    if isinstance(fix, str):
        out["fix"] = {"change": fix, "metric": metric, "direction": direction} if fix.strip() or metric else None
    out["evidence"] = [{**{k: v for k, v in e.items() if k != "text"}, "meaning": e.get("meaning") or e.get("text") or ""}
                       if isinstance(e, dict) else e for e in out.get("evidence") or []]
    return out


# What the engine fills, left out of what a model is asked to write.
_ENGINE_FILLED = {"Answer": ("schema_version", "confidence", "missing", "also_found"),
                  "Fix": ("current_value", "target_value")}


def _compact(schema: dict, name: str) -> None:
    """One object schema as a model reads it: no engine-filled fields, no description (the system prompt says how
    to fill each part; the Claude adapter's slim_schema drops titles and null alternatives)."""
    schema.pop("description", None)
    for field in _ENGINE_FILLED.get(name, ()):
        schema.get("properties", {}).pop(field, None)


class Answer(BaseModel):
    """The four-part answer: bound and mechanism are ids; bottleneck and explanation are prose."""

    # The one shape every path gives: `analyze` (a Diagnosis is an Answer with the findings behind it), `ask` (the
    # `submit_answer` tool's input; an AskResult is an Answer with the run behind it), the critic (answers parsed
    # from Markdown or JSON) and every renderer. Descriptions are kept short: the model reads this schema every
    # turn (the system prompt says how to fill each part).
    schema_version: str = SCHEMA_VERSION
    bound: Optional[str] = None  # an id of BOUNDS (checked; an enum in json_schema())
    mechanism: Optional[str] = None  # an id of MECHANISMS (checked)
    bottleneck: str  # one sentence
    kernel: Optional[str] = None
    evidence: list[Evidence] = Field(default_factory=list)  # two or three measured numbers
    explanation: str  # the mechanism in words, tied to the gap to the roofline (or the idle/copy time)
    fix: Optional[Fix]  # null: no change can be named from this evidence
    confidence: Optional[float] = Field(default=None, ge=0.0, le=1.0)
    missing: list[str] = Field(default_factory=list)  # metrics or captures that would settle it
    also_found: list[str] = Field(default_factory=list)  # reported apart (one-time work)

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Answer's own schema is submit_answer's input, sent with every model request: compact (see `_compact`).
        The published outputs (Diagnosis, AskResult: `json_schema()`) keep every field."""
        schema = super().model_json_schema(*args, **kwargs)
        if cls is Answer:
            _compact(schema, "Answer")
            for name, sub in schema.get("$defs", {}).items():
                _compact(sub, name)
        return schema

    @model_validator(mode="before")
    @classmethod
    def _read_legacy(cls, data: Any) -> Any:
        return _from_legacy(data) if isinstance(data, dict) else data

    @field_validator("bound")
    @classmethod
    def _known_bound(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and v not in BOUNDS:
            raise ValueError(f"{v!r} is not a bound id: one of {', '.join(BOUNDS)}")
        return v

    @field_validator("mechanism")
    @classmethod
    def _known_mechanism(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and v not in MECHANISMS:
            raise ValueError(f"{v!r} is not a mechanism id: one of {', '.join(MECHANISMS)}")
        return v

    @property
    def fix_text(self) -> str:
        return self.fix.text if self.fix is not None else ""

    def as_answer(self) -> "Answer":
        """The four-part answer alone (a Diagnosis or AskResult without what is behind it)."""
        return Answer.model_validate(self.model_dump(include=set(Answer.model_fields)))


class Diagnosis(Answer):
    """kernel-profiler's answer from the engine: the Answer (`bound`/`mechanism` repeat the primary finding's) and
    the findings and measurements behind it."""

    bound: Bound  # the engine always decides one
    mechanism: Optional[Mechanism] = None
    evidence: list[Evidence] = Field(description="two or three measured numbers")
    explanation: str = Field(description="the mechanism, tied to the gap to the roofline")
    roofline: Optional[Roofline] = None
    primary: Optional[Finding] = Field(default=None, description="the engine's primary finding (absent when the answer "
                                       "was given by a model: a recorded run's accepted answer)")
    secondary: list[Finding] = Field(default_factory=list, description="ranked by share of time")
    timeline: Optional[TimelineSummary] = None
    artifacts: list[str] = Field(default_factory=list)
    device: Optional[str] = None
    straggler_rank: Optional[int] = Field(default=None, description="multi-rank jobs: the slow rank, if any")
    straggler_verdict: Optional[Literal["straggler", "no straggler"]] = Field(
        default=None, description="multi-rank jobs: whether one rank holds the others back beyond noise")
    straggler_cause: Optional[str] = Field(default=None, description="uneven_work | host | throttle:<reason>")
    ranks: list[RankRow] = Field(default_factory=list, description="multi-rank jobs: per-rank table")
    warnings: list[str] = Field(default_factory=list, description="inputs skipped or set apart (not combined with "
                                "the others: another device, program, job or time), and why")

    @classmethod
    def from_findings(cls, primary: Finding, secondary: list[Finding], **extra) -> "Diagnosis":
        return cls(
            bound=primary.bound,
            mechanism=primary.mechanism,
            bottleneck=primary.bottleneck,
            kernel=primary.kernel,
            evidence=primary.evidence[:3],
            explanation=primary.explanation,
            fix=primary.fix,
            confidence=primary.confidence,
            missing=primary.missing,
            also_found=[f.bottleneck + (f" Fix: {f.fix.change}" if f.fix else "") for f in secondary
                        if f.mechanism == "startup_dominated" and f is not primary],
            roofline=primary.roofline,
            primary=primary,
            secondary=sorted(secondary, key=lambda f: -(f.share or 0.0)),
            **extra,
        )


class AskResult(Answer):
    """What `ask` and `replay` return: the final answer (the same Answer fields `analyze --json` has: `bound` and
    `mechanism` ids at the top level) and the run behind it. When no answer was submitted, `answered` is false and
    the answer fields are empty."""

    bottleneck: str = Field("", description="Bottleneck: one sentence (empty when no answer was submitted)")
    explanation: str = ""
    fix: Optional[Fix] = None
    answered: bool = Field(False, description="an answer was submitted (accepted or not)")
    accepted: bool = Field(False, description="the critic accepted the answer")
    inconclusive: bool = Field(False, description="no answer passed the critic (or the run hit a limit), or the "
                               "accepted answer says the evidence cannot decide")
    settle: Optional[str] = Field(None, description="the experiment that would settle it, when inconclusive")
    source: str = Field("program", description="what the answer is about: `program` (the command after `--`), "
                                              "`artifacts` (the given captures), `demo` (the bundled capture, not "
                                              "the user's program) or `transcript` (a replayed recording)")
    source_note: Optional[str] = Field(None, description="said first when the answer is not about the user's program")
    question: str
    model: str = Field(description="the backend that wrote the final answer")
    verdicts: list[dict] = Field(default_factory=list, description="every critic verdict: stage, verdict, reasons")
    notices: list[str] = Field(default_factory=list, description="fallbacks and refusals the user should know about")
    tool_calls: list[str] = Field(default_factory=list, description="tools called, in order")
    stopped_after_timeline: bool = False
    usage: Usage = Field(default_factory=Usage)
    transcript: Optional[str] = None
    replayed: bool = False

    @classmethod
    def of(cls, answer: Optional[Answer | dict], **run: Any) -> "AskResult":
        """The result of a run whose final answer is `answer` (None: no answer was submitted)."""
        if answer is None:
            return cls(answered=False, **run)
        a = answer if isinstance(answer, Answer) else Answer.model_validate(answer)
        return cls(**a.as_answer().model_dump(), answered=True, **run)


def json_schema() -> dict:
    """The JSON schema of what `analyze --json` (a Diagnosis) and `ask --json` / `replay --json` (an AskResult)
    print: both are an Answer (`bound`, `mechanism`, `bottleneck`, `evidence`, `explanation`, `fix`, ...) with what
    is behind it."""
    from pydantic.json_schema import models_json_schema

    _, defs = models_json_schema([(Diagnosis, "serialization"), (AskResult, "serialization")],
                                 ref_template="#/$defs/{model}")
    for name, ids in (("bound", BOUNDS), ("mechanism", MECHANISMS)):  # the ids Answer's validators accept
        defs["$defs"]["AskResult"]["properties"][name] = {"anyOf": [{"enum": list(ids), "type": "string"},
                                                                    {"type": "null"}], "default": None,
                                                          "description": f"{name} id"}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "kernel-profiler answer",
            "description": json_schema.__doc__.split("\n\n")[0].replace("\n    ", " ").strip(),
            "schema_version": SCHEMA_VERSION,
            "anyOf": [{"$ref": "#/$defs/Diagnosis"}, {"$ref": "#/$defs/AskResult"}], **defs}
