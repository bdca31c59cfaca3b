"""Benchmark and Execution: what to measure, and how.

The YAML shape follows the reference's Benchmark and Execution resources (a Kubernetes
style ``apiVersion/kind/metadata/spec`` wrapper is accepted and unwrapped), so existing
definitions need few edits. Pydantic checks types; ``validate_benchmark`` and
``validate_execution`` check names and SLO properties against what the loaded plugins
registered. Both run before anything starts, as does ``validate_params`` (use-case
parameters against what the plugin declared) and ``validate_deployment_paths``
(``--set OBJECT.FIELD=V`` against the objects).

Numbers are strict where a lax parse would hide a mistake: ``true`` is not 1
(``loadValues: [true]``), and ``inf``/``nan`` are no duration. An unknown field names
the nearest known one, because a typo is the usual cause.
"""

from __future__ import annotations

import difflib
import math
import typing
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from bench.errors import UserError
from bench.model_params import (  # noqa: F401  (re-exported: callers import them from bench.model)
    OBJECT_FIELDS,
    check_param,
    declared_params,
    names_of,
    validate_deployment_paths,
    validate_object_params,
    validate_params,
)
from bench.plugins import Registry


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

    @field_validator("name")
    @classmethod
    def _no_underscore(cls, v: str) -> str:
        # Result file names are split on "_" by the reference's analysis code.
        if "_" in v or not v:
            raise ValueError(f"SLO name {v!r} must be non-empty and contain no '_'")
        return v


class TopicDef(_Model):
    name: str
    numPartitions: Count = Field(default=4, ge=1)
    replicationFactor: Count = Field(default=1, ge=1)


class KafkaConfig(_Model):
    bootstrapServer: str | None = None
    topics: list[TopicDef] = Field(default_factory=lambda: [TopicDef(name="input")])


class ResourceSet(_Model):
    resources: list[dict[str, Any]] = Field(default_factory=list)


class Benchmark(_Model):
    name: str
    useCase: str
    sut: ResourceSet = Field(default_factory=ResourceSet)
    loadGenerator: ResourceSet = Field(default_factory=ResourceSet)
    loadTypes: list[TypeDef] = Field(min_length=1)
    resourceTypes: list[TypeDef] = Field(min_length=1)
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
    name: str
    properties: dict[str, Any] = Field(default_factory=dict)


#: accepted strategy names -> registered strategy name
STRATEGY_ALIASES = {
    "FullSearch": "full",
    "LinearSearch": "linear",
    "BinarySearch": "binary",
    "InitialGuessSearch": "initial-guess",
}


class StrategyDef(_Model):
    name: str = "linear"
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
    resources: ResourceDef
    slos: list[SloOverride] = Field(default_factory=list)
    execution: ExecutionParams = Field(default_factory=ExecutionParams)
    configOverrides: list[ConfigOverride] = Field(default_factory=list)
    params: dict[str, Any] = Field(default_factory=dict)


# --------------------------------------------------------------------------- loading


_M = TypeVar("_M", bound=_Model)


def _unwrap(doc: Any, what: str) -> dict[str, Any]:
    if not isinstance(doc, dict):
        raise ConfigError(f"{what}: expected a mapping at the top level, got {type(doc).__name__}")
    if "spec" in doc and isinstance(doc["spec"], dict) and ("kind" in doc or "apiVersion" in doc):
        spec = dict(doc["spec"])
        name = (doc.get("metadata") or {}).get("name")
        if name and "name" not in spec:
            spec["name"] = name
        doc = spec
    return dict(doc)


def _fields_at(model: type[BaseModel] | None, loc: tuple[Any, ...]) -> list[str]:
    """The field names of the model found at ``loc`` inside ``model`` (for suggestions)."""
    for part in loc:
        if model is None:
            return []
        if isinstance(part, int):
            continue
        info = model.model_fields.get(str(part))
        if info is None:
            return []
        candidates = [info.annotation, *typing.get_args(info.annotation)]
        model = next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)
    return list(model.model_fields) if model is not None else []


def format_validation_error(exc: ValidationError, prefix: str, model: type[BaseModel] | None = None) -> str:
    """All of pydantic's errors on one line (the CLI prints one line per error)."""
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown field" + nearest(str(err["loc"][-1]), _fields_at(model, tuple(err["loc"][:-1])))
        lines.append(f"{prefix}.{loc}: {msg}")
    return "; ".join(lines)


def _parse(model: type[_M], doc: Any, what: str) -> _M:
    data = _unwrap(doc, what)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, what, model)) from None


def parse_benchmark(doc: Any) -> Benchmark:
    return _parse(Benchmark, doc, "benchmark")


def parse_execution(doc: Any) -> Execution:
    return _parse(Execution, doc, "execution")


def load_yaml(path: str | Path) -> Any:
    try:
        with open(path, encoding="utf-8") as fh:
            return yaml.safe_load(fh)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {_yaml_problem(exc)}") from None


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """PyYAML's message on one line: the problem and where (its own text spans lines)."""
    problem = getattr(exc, "problem", None) or str(exc)
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return " ".join(f"{problem}{where}".split())


def kind_of(doc: Any) -> str:
    """'benchmark' or 'execution', from an explicit kind or the fields present."""
    if isinstance(doc, dict):
        kind = str(doc.get("kind", "")).lower()
        if kind in ("benchmark", "execution"):
            return kind
        body = doc.get("spec", doc) if isinstance(doc.get("spec"), dict) else doc
        if "loadTypes" in body or "resourceTypes" in body:
            return "benchmark"
        if "load" in body or "resources" in body:
            return "execution"
    raise ConfigError("cannot tell whether this is a benchmark or an execution: set kind")


# --------------------------------------------------------------------------- checks


def _one_of(field: str, value: str, allowed: Any, registry: Registry | None = None) -> ConfigError:
    names = ", ".join(sorted(allowed)) or "(none registered)"
    note = registry.excluded_note() if registry is not None else ""
    return ConfigError(f"{field}: {value!r} is not one of {names}{note}")


def validate_benchmark(bench: Benchmark, registry: Registry) -> None:
    if bench.useCase not in registry.use_cases:
        raise _one_of("benchmark.useCase", bench.useCase, registry.use_cases, registry)
    object_names = {
        str((obj.get("metadata") or {}).get("name", ""))
        for obj in bench.sut.resources + bench.loadGenerator.resources
    }
    for group in ("loadTypes", "resourceTypes"):
        for i, typedef in enumerate(getattr(bench, group)):
            for j, patcher in enumerate(typedef.patchers):
                where = f"benchmark.{group}[{i}].patchers[{j}]"
                if patcher.type not in registry.patchers:
                    raise _one_of(f"{where}.type", patcher.type, registry.patchers, registry)
                if patcher.resource and object_names and not _selects(patcher.resource, bench):
                    raise _one_of(f"{where}.resource", patcher.resource, object_names)
    seen: set[str] = set()
    for i, slo in enumerate(bench.slos):
        if slo.sloType not in registry.slos:
            raise _one_of(f"benchmark.slos[{i}].sloType", slo.sloType, registry.slos, registry)
        if slo.name in seen:
            raise ConfigError(f"benchmark.slos[{i}].name: {slo.name!r} is used twice")
        seen.add(slo.name)
        _validate_slo_props(f"benchmark.slos[{i}].properties", registry, slo.sloType, slo.properties)
    from bench.bounds import check_benchmark  # sane bounds of every number (docs/bounds.md)
    check_benchmark(bench, registry)


def _selects(resource: str, bench: Benchmark) -> bool:
    from bench.patching import select_indices

    objs = bench.sut.resources + bench.loadGenerator.resources
    return bool(select_indices(objs, resource))


def _validate_slo_props(where: str, registry: Registry, slo_type: str, props: dict[str, Any]) -> None:
    validate = registry.slos[slo_type].validate
    if validate is None:
        return
    try:
        validate(props)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def validate_execution(execution: Execution, bench: Benchmark, registry: Registry) -> None:
    if execution.benchmark != bench.name:
        raise ConfigError(f"execution.benchmark: {execution.benchmark!r} is not one of {bench.name}")
    load_types = {t.typeName for t in bench.loadTypes}
    if execution.load.loadType not in load_types:
        raise _one_of("execution.load.loadType", execution.load.loadType, load_types)
    resource_types = {t.typeName for t in bench.resourceTypes}
    if execution.resources.resourceType not in resource_types:
        raise _one_of("execution.resources.resourceType", execution.resources.resourceType, resource_types)
    slo_names = {s.name for s in bench.slos}
    for i, override in enumerate(execution.slos):
        if override.name not in slo_names:
            raise _one_of(f"execution.slos[{i}].name", override.name, slo_names)
    for slo in effective_slos(bench, execution):
        _validate_slo_props(f"slo {slo.name!r} properties", registry, slo.sloType, slo.properties)
    if not effective_slos(bench, execution):
        raise ConfigError("benchmark.slos: at least one SLO is needed to decide pass or fail")
    strategy, _ = execution.execution.strategy.resolved()
    if strategy not in registry.search_strategies:
        raise _one_of(
            "execution.execution.strategy.name",
            strategy,
            set(registry.search_strategies) | set(STRATEGY_ALIASES) | {"RestrictionSearch"},
        )
    for i, config_override in enumerate(execution.configOverrides):
        if config_override.patcher.type not in registry.patchers:
            raise _one_of(
                f"execution.configOverrides[{i}].patcher.type", config_override.patcher.type, registry.patchers
            )
    from bench.bounds import check_execution  # sane bounds of every number (docs/bounds.md)
    check_execution(execution, bench, registry)


def effective_slos(bench: Benchmark, execution: Execution) -> list[SloDef]:
    """The benchmark's SLOs with the execution's property overrides applied.

    An execution that names SLOs uses only those; one that names none uses them all.
    """
    overrides = {o.name: o.properties for o in execution.slos}
    slos = [s for s in bench.slos if not overrides or s.name in overrides]
    return [
        SloDef(name=s.name, sloType=s.sloType, properties={**s.properties, **overrides.get(s.name, {})})
        for s in slos
    ]


def load_intensity_order(bench: Benchmark, execution: Execution) -> list[float]:
    """The execution's load values from least to most load, as the search walks them.

    Values are stored ascending; for a load type whose ``direction`` is ``decreasing``
    (e.g. MessagePeriod: a shorter period is more records/s) the search must see them
    the other way round, or the lower-bound restriction would carry a demand from a
    heavier load to a lighter one.
    """
    values = list(execution.load.loadValues)
    load_type = next((t for t in bench.loadTypes if t.typeName == execution.load.loadType), None)
    return values[::-1] if load_type is not None and load_type.direction == "decreasing" else values
