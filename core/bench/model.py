"""Benchmark and Execution: what to measure, and how.

The YAML shape follows the reference's Benchmark and Execution resources (a Kubernetes
style ``apiVersion/kind/metadata/spec`` wrapper is accepted and unwrapped), so existing
definitions need few edits. Pydantic checks types; ``validate_benchmark`` and
``validate_execution`` check names and SLO properties against what the loaded plugins
registered. Both run before anything starts.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from bench.errors import UserError
from bench.plugins import Registry


class ConfigError(UserError, ValueError):
    """A configuration problem, phrased for the user (field path and allowed values)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class PatcherRef(_Model):
    type: str
    resource: str = ""
    properties: dict[str, Any] = Field(default_factory=dict)


class TypeDef(_Model):
    typeName: str
    patchers: list[PatcherRef] = Field(default_factory=list)


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
    numPartitions: int = Field(default=4, ge=1)
    replicationFactor: int = Field(default=1, ge=1)


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
PositiveValues = Annotated[list[float], Field(min_length=1), AfterValidator(_check_values)]


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
    duration: float = Field(default=300, gt=0)
    warmup: float = Field(default=60, ge=0)
    repetitions: int = Field(default=3, ge=1)
    loadGenerationDelay: float = Field(default=0, ge=0)
    afterTeardownDelay: float = Field(default=5, ge=0)
    sampleInterval: float = Field(default=5, gt=0)
    earlyStop: bool = True

    @model_validator(mode="after")
    def _warmup_fits(self) -> ExecutionParams:
        if self.warmup >= self.duration:
            raise ValueError(
                f"warmup ({self.warmup:g} s) must be shorter than duration ({self.duration:g} s)"
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


def format_validation_error(exc: ValidationError, prefix: str) -> str:
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown field"
        lines.append(f"{prefix}.{loc}: {msg}")
    return "; ".join(lines)


def _parse(model: type[_M], doc: Any, what: str) -> _M:
    data = _unwrap(doc, what)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, what)) from None


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
        raise ConfigError(f"{path} is not valid YAML: {exc}") from None


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


def _one_of(field: str, value: str, allowed: Any) -> ConfigError:
    names = ", ".join(sorted(allowed)) or "(none registered)"
    return ConfigError(f"{field}: {value!r} is not one of {names}")


def validate_benchmark(bench: Benchmark, registry: Registry) -> None:
    if bench.useCase not in registry.use_cases:
        raise _one_of("benchmark.useCase", bench.useCase, registry.use_cases)
    object_names = {
        str((obj.get("metadata") or {}).get("name", ""))
        for obj in bench.sut.resources + bench.loadGenerator.resources
    }
    for group in ("loadTypes", "resourceTypes"):
        for i, typedef in enumerate(getattr(bench, group)):
            for j, patcher in enumerate(typedef.patchers):
                where = f"benchmark.{group}[{i}].patchers[{j}]"
                if patcher.type not in registry.patchers:
                    raise _one_of(f"{where}.type", patcher.type, registry.patchers)
                if patcher.resource and object_names and not _selects(patcher.resource, bench):
                    raise _one_of(f"{where}.resource", patcher.resource, object_names)
    seen: set[str] = set()
    for i, slo in enumerate(bench.slos):
        if slo.sloType not in registry.slos:
            raise _one_of(f"benchmark.slos[{i}].sloType", slo.sloType, registry.slos)
        if slo.name in seen:
            raise ConfigError(f"benchmark.slos[{i}].name: {slo.name!r} is used twice")
        seen.add(slo.name)
        _validate_slo_props(f"benchmark.slos[{i}].properties", registry, slo.sloType, slo.properties)


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
