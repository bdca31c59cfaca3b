"""The Benchmark and Execution documents as pydantic models, and the error they raise.

Kept apart from :mod:`bench.config.model` (which re-exports every name here and holds the
parsing and the checks against the registry), so that the modules the checks need
(:mod:`bench.config.params`) can use the types without importing the checks.

Numbers are strict where a lax parse would hide a mistake: ``true`` is not 1
(``loadValues: [true]``), and ``inf``/``nan`` are no duration. An unknown field names
the nearest known one, because a typo is the usual cause.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from bench.errors import UserError


class ConfigError(UserError, ValueError):
    """A configuration problem, phrased for the user (field path and allowed values)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, allow_inf_nan=False)


def _not_bool(value: Any) -> Any:
    # pydantic's lax mode reads true as 1.0; in a load list or a duration it is a typo.
    if isinstance(value, bool):
        raise ValueError(f"{str(value).lower()} is not a number")
    return value


#: a float that refuses booleans
Number = Annotated[float, BeforeValidator(_not_bool)]
#: an int that refuses booleans
Count = Annotated[int, BeforeValidator(_not_bool)]


def nearest(name: str, known: Iterable[str]) -> str:
    """``; did you mean 'x'?`` for the closest known name, or a list of them."""
    names = sorted({str(k) for k in known})
    close = difflib.get_close_matches(name, names, n=1)
    if close:
        return f"; did you mean {close[0]!r}?"
    return f"; known: {', '.join(names)}" if names else ""


def check_slo_name(name: str) -> str:
    """An SLO's name is part of its result files' names (``exp0_100_1_sli_<name>_0.csv``):
    the reference's analysis splits them on ``_``, and a ``/``, a control character or a
    name such as ``..`` would put the file elsewhere than the results folder."""
    if not name or "_" in name:
        raise ValueError(f"SLO name {name!r} must be non-empty and contain no '_'")
    bad = next((c for c in name if c in "/\\:*?\"<>|" or not c.isprintable()), None)
    if bad is not None or name.strip(". ") == "" or name != name.strip():
        shown = f"{bad!r} " if bad is not None else ""
        raise ValueError(f"SLO name {name!r}: {shown or 'the name '}cannot be part of a file name; use letters, "
                         "digits, '-', '.' and spaces")
    if len(name) > 100:
        raise ValueError(f"SLO name {name[:20]!r}...: at most 100 characters (it is part of file names)")
    return name


def _unique_types(types: list[TypeDef], group: str) -> list[TypeDef]:
    """A type given twice would be found by its first definition only; the second, with
    its own patchers, would be silently ignored."""
    seen: set[str] = set()
    for typedef in types:
        if typedef.typeName in seen:
            raise ValueError(f"{typedef.typeName!r} is given twice in {group}; each type once, with all its patchers")
        seen.add(typedef.typeName)
    return types


class PatcherRef(_Model):
    type: str
    resource: str = ""
    properties: dict[str, Any] = Field(default_factory=dict)


class TypeDef(_Model):
    typeName: str
    patchers: list[PatcherRef] = Field(default_factory=list)
    #: which way load (or resources) grows: ``increasing`` when a larger value means more
    #: (sensors, window size), ``decreasing`` when a smaller one does (a message period, a
    #: window's advance). Searches, the lower-bound restriction and capacity follow it.
    direction: Literal["increasing", "decreasing"] = "increasing"


class SloDef(_Model):
    name: str
    sloType: str
    properties: dict[str, Any] = Field(default_factory=dict)
    #: the reference's Prometheus address and time offset (h) of the SLI query; bench
    #: samples its SLIs itself, so these are accepted and not needed
    prometheusUrl: str | None = None
    offset: float | None = None
    query: str | None = None

    @field_validator("name")
    @classmethod
    def _no_underscore(cls, v: str) -> str:
        return check_slo_name(v)


class TopicDef(_Model):
    name: str
    numPartitions: Count = Field(default=4, ge=1)
    replicationFactor: Count = Field(default=1, ge=1)


class KafkaConfig(_Model):
    bootstrapServer: str | None = None
    topics: list[TopicDef] = Field(default_factory=lambda: [TopicDef(name="input")])
    #: the reference's ``removeOnly`` topics (patterns it deletes after each experiment);
    #: bench deletes every topic of a repetition anyway
    removeOnly: list[str] = Field(default_factory=list)


class ResourceSet(_Model):
    resources: list[dict[str, Any]] = Field(default_factory=list)
    #: the reference's ConfigMap resource sets (name, files), which live in a cluster
    configMaps: list[dict[str, Any]] = Field(default_factory=list)
    #: the oldest schema's manifest file names, when they are not next to the benchmark file
    files: list[str] = Field(default_factory=list)
    beforeActions: list[dict[str, Any]] = Field(default_factory=list)
    afterActions: list[dict[str, Any]] = Field(default_factory=list)


class Benchmark(_Model):
    name: str
    #: the bench use case that runs; a reference benchmark names none (see model_reference.refusal)
    useCase: str = ""
    sut: ResourceSet = Field(default_factory=ResourceSet)
    loadGenerator: ResourceSet = Field(default_factory=ResourceSet)
    infrastructure: ResourceSet = Field(default_factory=ResourceSet)
    waitForResourcesEnabled: bool = False
    #: the reference's SLI definitions (current schema), which its SLOs name
    slis: list[dict[str, Any]] = Field(default_factory=list)
    loadTypes: list[TypeDef] = Field(min_length=1)
    resourceTypes: list[TypeDef] = Field(min_length=1)

    @field_validator("loadTypes", "resourceTypes")
    @classmethod
    def _types_once(cls, v: list[TypeDef], info: Any) -> list[TypeDef]:
        return _unique_types(v, str(info.field_name))
    slos: list[SloDef] = Field(default_factory=list)
    kafkaConfig: KafkaConfig = Field(default_factory=KafkaConfig)
    params: dict[str, Any] = Field(default_factory=dict)
    #: an optional execution used when the user gives none (laptop-sized defaults)
    defaultExecution: dict[str, Any] | None = None


def _check_values(values: list[float]) -> list[float]:
    for value in values:
        if not math.isfinite(value) or value <= 0:
            raise ValueError(f"value {value!r} must be a positive number")
    if len(set(values)) != len(values):
        raise ValueError(f"values {values} contain duplicates")
    return sorted(values)


#: load or resource values: at least one, each positive and finite, no duplicates, sorted
PositiveValues = Annotated[list[Number], Field(min_length=1), AfterValidator(_check_values)]


class LoadDef(_Model):
    loadType: str
    loadValues: PositiveValues


class ResourceDef(_Model):
    resourceType: str
    resourceValues: PositiveValues


class SloOverride(_Model):
    """An execution's SLO: properties for a benchmark's SLO of that name, or, with a
    ``sloType`` (the reference's older executions), an SLO of its own."""

    name: str
    properties: dict[str, Any] = Field(default_factory=dict)
    sloType: str | None = None
    prometheusUrl: str | None = None
    offset: float | None = None
    query: str | None = None

    @field_validator("name")
    @classmethod
    def _file_name(cls, v: str) -> str:
        return check_slo_name(v)


#: bench's default search (bench.search.bracket): it needs the lower bound
BRACKET = "bracket"

#: accepted strategy names -> registered strategy name
STRATEGY_ALIASES = {
    "FullSearch": "full",
    "LinearSearch": "linear",
    "BinarySearch": "binary",
    "InitialGuessSearch": "initial-guess",
}


class StrategyDef(_Model):
    #: bench's own default; a reference file always names its strategy (model_reference)
    name: str = BRACKET
    restrictions: list[Literal["LowerBound"]] = Field(default_factory=lambda: ["LowerBound"])  # type: ignore[arg-type]
    searchStrategy: str | None = None
    guessStrategy: str | None = None

    def resolved(self) -> tuple[str, bool]:
        """(registered strategy name, lower bound) from either naming style."""
        name = self.name
        if name == "RestrictionSearch":
            name = self.searchStrategy or "LinearSearch"
        return STRATEGY_ALIASES.get(name, name), "LowerBound" in self.restrictions


class ExecutionParams(_Model):
    metric: Literal["demand", "capacity"] = "demand"
    strategy: StrategyDef = Field(default_factory=StrategyDef)
    duration: Number = Field(default=300, gt=0)
    warmup: Number = Field(default=60, ge=0)
    repetitions: Count = Field(default=3, ge=1)
    loadGenerationDelay: Number = Field(default=0, ge=0)
    afterTeardownDelay: Number = Field(default=5, ge=0)
    sampleInterval: Number = Field(default=5, gt=0)
    earlyStop: bool = Field(default=True, strict=True)
    #: with early stopping on, the SLIs are also sampled this often between the
    #: recorded samples; those extra samples only feed the early decision of SLOs on a
    #: trend (and are not stored), so verdicts and result files keep ``sampleInterval``.
    #: Ten samples 5 s apart took 50 s before a repetition could be decided; ten 1 s
    #: apart take 10 (20 s of span are still required). 0 or None: the recorded ones only.
    earlySampleInterval: Number | None = Field(default=1, ge=0)

    @model_validator(mode="after")
    def _warmup_fits(self) -> ExecutionParams:
        if self.warmup >= self.duration:
            raise ValueError(
                f"warmup ({self.warmup:g} s) must be shorter than duration ({self.duration:g} s)"
            )
        # A lag trend needs two samples after the warm-up; fewer and every SLO on a
        # trend is undecidable, which the run would only say at its end.
        if 2 * self.sampleInterval > self.duration - self.warmup:
            raise ValueError(
                f"sampleInterval ({self.sampleInterval:g} s) must leave two samples between warmup "
                f"({self.warmup:g} s) and duration ({self.duration:g} s): at most "
                f"{(self.duration - self.warmup) / 2:g} s"
            )
        return self


class ConfigOverride(_Model):
    patcher: PatcherRef
    value: Any


class Execution(_Model):
    name: str = "execution"
    benchmark: str
    load: LoadDef
    #: a second load dimension (bench.search.grid): the demand is measured at every
    #: (load, load2) point; ``loads2`` is accepted as its name too
    load2: LoadDef | None = Field(default=None, validation_alias=AliasChoices("load2", "loads2"))
    resources: ResourceDef
    slos: list[SloOverride] = Field(default_factory=list)
    execution: ExecutionParams = Field(default_factory=ExecutionParams)
    configOverrides: list[ConfigOverride] = Field(default_factory=list)
    params: dict[str, Any] = Field(default_factory=dict)

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        """Without ``load2`` when there is none: a one-dimensional execution's stored
        configuration stays what it was (``--resume`` compares it field by field)."""
        data = super().model_dump(**kwargs)
        if self.load2 is None:
            data.pop("load2", None)
        return data
