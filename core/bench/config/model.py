"""Benchmark and Execution: what to measure, and how.

The YAML shape follows the reference's Benchmark and Execution resources (a Kubernetes
style ``apiVersion/kind/metadata/spec`` wrapper is accepted and unwrapped), so existing
definitions need few edits. Pydantic checks types; ``validate_benchmark`` and
``validate_execution`` check names and SLO properties against what the loaded plugins
registered. Both run before anything starts, as does ``validate_params`` (use-case
parameters against what the plugin declared) and ``validate_deployment_paths``
(``--set OBJECT.FIELD=V`` against the objects).

The models themselves live in :mod:`bench.config.base` and the parameter checks in
:mod:`bench.config.params` (import them from there); documents in the reference's
schema are turned into bench's shape first (:mod:`bench.config.reference`).
"""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any, TypeVar

from pydantic import (
    BaseModel,
    ValidationError,
)

from bench.api import SearchStrategy
from bench.config.base import (
    STRATEGY_ALIASES,
    Benchmark,
    ConfigError,
    Execution,
    SloDef,
    _Model,
    nearest,
)
from bench.config.reference import benchmark_doc, execution_doc, is_reference, refusal
from bench.plugins import Registry

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
    doc = dict(doc)
    # bench validate asks for ``kind`` where a file's fields do not tell; a flat file that
    # gives it must then parse, and one that names the other kind is refused, not guessed.
    kind = doc.pop("kind", None)
    if kind is not None and str(kind).lower() != what:
        raise ConfigError(f"{what}: kind is {kind!r}, but this place needs a {what.capitalize()}")
    return doc


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
    if is_reference(doc):
        try:
            doc = benchmark_doc(doc, Path.cwd()) if model is Benchmark else execution_doc(doc)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    data = _unwrap(doc, what)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, what, model)) from None


def parse_benchmark(doc: Any) -> Benchmark:
    return _parse(Benchmark, doc, "benchmark")


def parse_execution(doc: Any) -> Execution:
    return _parse(Execution, doc, "execution")


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
    cannot_run = refusal(bench)
    if cannot_run is not None:
        raise ConfigError(cannot_run)
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
                check_patcher_properties(where, registry.patchers[patcher.type], patcher.properties)
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
    from bench.config.bounds import check_benchmark  # sane bounds of every number (docs/bounds.md)
    check_benchmark(bench, registry)


def check_patcher_properties(where: str, patcher: Any, properties: dict[str, Any]) -> None:
    """Properties a patcher does not read (its declared ``properties``) are refused with
    the nearest name: a misspelt ``factr`` would otherwise be ignored and every
    experiment patched without its factor."""
    known = getattr(patcher, "properties", None)
    if known is None:
        return
    for key in properties:
        if key not in known:
            hint = nearest(str(key), known) if known else "; this patcher takes no properties"
            raise ConfigError(f"{where}.properties.{key}: not a property of {patcher.name}{hint}")


def _selects(resource: str, bench: Benchmark) -> bool:
    from bench.patchers.apply import select_indices

    objs = bench.sut.resources + bench.loadGenerator.resources
    # a configMap set not read yet (--dry-run reaches no cluster) may hold the object
    return bool(select_indices(objs, resource)) or bool(bench.sut.configMaps or bench.loadGenerator.configMaps)


def _validate_slo_props(where: str, registry: Registry, slo_type: str, props: dict[str, Any]) -> None:
    from bench.config.slo_properties import check_keys

    validate = registry.slos[slo_type].validate
    try:
        check_keys(registry.slos[slo_type], props, registry.slos)  # a key the type never reads: refused, not ignored
        if validate is not None:
            validate(props)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def validate_execution(execution: Execution, bench: Benchmark, registry: Registry) -> None:
    if execution.benchmark != bench.name:
        raise ConfigError(f"execution.benchmark: {execution.benchmark!r} is not one of {bench.name}")
    load_types = {t.typeName for t in bench.loadTypes}
    if execution.load.loadType not in load_types:
        raise _one_of("execution.load.loadType", execution.load.loadType, load_types)
    if execution.load2 is not None:
        _check_load2(execution, load_types)
    resource_types = {t.typeName for t in bench.resourceTypes}
    if execution.resources.resourceType not in resource_types:
        raise _one_of("execution.resources.resourceType", execution.resources.resourceType, resource_types)
    slo_names = {s.name for s in bench.slos}
    for i, override in enumerate(execution.slos):
        if override.sloType is not None:
            if override.sloType not in registry.slos:
                raise _one_of(f"execution.slos[{i}].sloType", override.sloType, registry.slos, registry)
        elif override.name not in slo_names and override.name not in registry.slos:
            raise _one_of(f"execution.slos[{i}].name", override.name, slo_names)
    for slo in effective_slos(bench, execution):
        _validate_slo_props(f"slo {slo.name!r} properties", registry, slo.sloType, slo.properties)
    if not effective_slos(bench, execution):
        raise ConfigError("benchmark.slos: at least one SLO is needed to decide pass or fail")
    strategy, lower_bound = execution.execution.strategy.resolved()
    if strategy not in registry.search_strategies:
        raise _one_of(
            "execution.execution.strategy.name",
            strategy,
            set(registry.search_strategies) | set(STRATEGY_ALIASES) | {"RestrictionSearch"},
        )
    if registry.search_strategies[strategy].needs_lower_bound and not lower_bound:
        others = ", ".join(n for n, s in registry.search_strategies.items() if not s.needs_lower_bound)
        raise ConfigError(f"execution.execution.strategy.restrictions: the {strategy} search rests on the lower bound "
                          f"(LowerBound); without it use one that does not ({others})")
    _check_strategy_keys(execution.execution.strategy, registry.search_strategies[strategy])
    for i, config_override in enumerate(execution.configOverrides):
        if config_override.patcher.type not in registry.patchers:
            raise _one_of(
                f"execution.configOverrides[{i}].patcher.type", config_override.patcher.type, registry.patchers
            )
        check_patcher_properties(f"execution.configOverrides[{i}].patcher",
                                 registry.patchers[config_override.patcher.type], config_override.patcher.properties)
    from bench.config.bounds import check_execution, check_slos  # sane bounds of every number (docs/bounds.md)
    check_execution(execution, bench, registry)
    check_slos(effective_slos(bench, execution), execution.execution.duration)


def _check_load2(execution: Execution, load_types: set[str]) -> None:
    """A second load dimension (:mod:`bench.search.grid`): another load type of the
    benchmark, and the demand metric (capacity has no one greatest load on a grid)."""
    assert execution.load2 is not None
    if execution.load2.loadType not in load_types:
        raise _one_of("execution.load2.loadType", execution.load2.loadType, load_types)
    if execution.load2.loadType == execution.load.loadType:
        raise ConfigError(f"execution.load2.loadType: {execution.load2.loadType!r} is the first dimension's load "
                          "type; a second dimension needs another one")
    if execution.execution.metric != "demand":
        raise ConfigError("execution.execution.metric: a second load dimension (load2) is measured as demand "
                          "only; capacity has no one greatest load per resource amount on a grid")


def load2_intensity_order(bench: Benchmark, execution: Execution) -> list[float]:
    """The second dimension's values from least to most load (see :func:`load_intensity_order`)."""
    if execution.load2 is None:
        return []
    values = list(execution.load2.loadValues)
    load_type = next((t for t in bench.loadTypes if t.typeName == execution.load2.loadType), None)
    return values[::-1] if load_type is not None and load_type.direction == "decreasing" else values


def _check_strategy_keys(strategy: Any, declared: SearchStrategy) -> None:
    """``guessStrategy`` and ``searchStrategy`` mean something only beside the strategy
    that reads them; elsewhere, or naming a guess bench does not make, they are refused."""
    guess = strategy.guessStrategy
    if guess is not None:
        if not declared.guesses:
            raise ConfigError(f"execution.execution.strategy.guessStrategy: only InitialGuessSearch (initial-guess) "
                              f"reads it, not {strategy.name!r}; remove it")
        if guess not in declared.guesses:
            raise ConfigError(f"execution.execution.strategy.guessStrategy: {guess!r} is not one of "
                              f"{', '.join(declared.guesses)} (the guesses {declared.name} walks by)")
    if strategy.searchStrategy is not None and strategy.name != "RestrictionSearch":
        raise ConfigError(f"execution.execution.strategy.searchStrategy: only RestrictionSearch reads it, not "
                          f"{strategy.name!r}; remove it")


def effective_slos(bench: Benchmark, execution: Execution) -> list[SloDef]:
    """The benchmark's SLOs with the execution's overrides applied, by name.

    As the reference's ``SloFactory``: every SLO of the benchmark is judged; an
    execution SLO naming one of them merges its properties over that SLO's (a threshold
    it states replaces the benchmark's of any form); the others are kept as they are,
    so an execution that names one SLO never drops the rest. An execution SLO with a
    ``sloType`` (the reference's older executions), or named as an SLO type the
    benchmark has no SLO of (a reference execution's ``lag trend`` for a bench use
    case), is an SLO of its own, judged beside the benchmark's (in place of one of the
    same name).
    """
    from bench import slo_math

    names = {s.name for s in bench.slos}
    # an SLO the benchmark lacks, named as an SLO type ("lag trend"), is an SLO of that type
    own = {o.name: SloDef(name=o.name, sloType=o.sloType or o.name, properties=dict(o.properties))
           for o in execution.slos if o.sloType is not None or o.name not in names}
    overrides: dict[str, dict[str, Any]] = {}
    for o in execution.slos:
        if o.sloType is None and o.name in names:
            overrides[o.name] = slo_math.override_properties(overrides.get(o.name, {}), o.properties)
    judged = [own.pop(s.name) if s.name in own else
              SloDef(name=s.name, sloType=s.sloType,
                     properties=slo_math.override_properties(s.properties, overrides.get(s.name, {})))
              for s in bench.slos]
    return [*judged, *own.values()]


def threshold_overrides(registry: Registry, bench: Benchmark, slos: list[Any],
                         given: dict[str, Any]) -> list[Any]:
    """The execution's SLO entries with a threshold option applied to every SLO of the
    run (the benchmark's and the execution's own) whose type takes it and reads that
    form; the others stay as they are. Refused when no SLO takes it: the option would
    change nothing."""
    from bench import slo_math
    from bench.config.bounds import CLI_THRESHOLD_OPTIONS

    (key, value), = given.items()
    option = next(o for o, k in CLI_THRESHOLD_OPTIONS.items() if k == key).replace("_", "-")
    out = [dict(o) if isinstance(o, dict) else o for o in slos]
    names = {s.name for s in bench.slos}
    own = {str(o.get("name") or o.get("sloType")): o for o in out
           if isinstance(o, dict) and (o.get("sloType") is not None or o.get("name") not in names)}
    takers = []
    candidates = [(s.name, s.sloType, s.properties) for s in bench.slos if s.name not in own]
    candidates += [(name, str(o.get("sloType") or name), dict(o.get("properties") or {})) for name, o in own.items()]
    for name, slo_type, properties in candidates:
        stype = registry.slos.get(slo_type)
        if stype is None or not stype.takes_cli_threshold(properties):
            continue
        if stype.properties is not None and key not in stype.properties:
            raise ConfigError(f"--{option}: SLO {name!r} of type {slo_type!r} has no {key} (it takes "
                              f"{', '.join(k for k in stype.properties if k.startswith('threshold'))}); "
                              "use one of those forms")
        takers.append(name)
        if name in own:
            for form in slo_math.THRESHOLD_FORMS:  # the oldest schema writes them beside the type
                own[name].pop(form, None)
            own[name]["properties"] = {**slo_math.override_properties(own[name].get("properties") or {},
                                                                     {key: value})}
        else:
            out = [o for o in out if not (isinstance(o, dict) and o.get("name") == name)]
            # a threshold stated here replaces the benchmark's of any form (model.effective_slos)
            out.append({"name": name, "properties": {key: value}})
    if not takers:
        kinds = ", ".join(f"{n} ({t})" for n, t, _ in candidates) or "none"
        raise ConfigError(f"--{option}: no SLO of this run takes a threshold option (its SLOs: {kinds}); "
                          "set the threshold in the SLO's properties with an --execution file")
    return out


def decreasing_load(bench: Benchmark, execution: Execution) -> bool:
    """Whether the execution's load type counts down (a smaller value is more load)."""
    load_type = next((t for t in bench.loadTypes if t.typeName == execution.load.loadType), None)
    return load_type is not None and load_type.direction == "decreasing"


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
