"""Holding a run to what its platform declares (:class:`bench.api.PlatformType`): the
options it reads, what it honours, its checks. Generic over platforms, so the run's
preparation (:mod:`bench.cli.launch`) asks here and never names one; every refusal is one
line that names the platform, before anything starts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from bench.api import PlatformType, UseCase
from bench.config.base import Benchmark, ConfigError, Execution
from bench.config.model import effective_slos
from bench.config.options import parse_sets

if TYPE_CHECKING:
    from bench.plugins import Registry


def platform_type(registry: Registry, name: str) -> PlatformType:
    if name not in registry.platforms:
        raise ConfigError(f"--platform: {name!r} is not one of {', '.join(sorted(registry.platforms))}")
    return registry.platforms[name]


def _given(value: Any) -> bool:
    return value is not None and value != {} and value != () and value != []


def platform_options(registry: Registry, ptype: PlatformType, given: Mapping[str, Any]) -> dict[str, Any]:
    """The platform's options from ``given`` (values by option name, None: not given),
    each checked and defaulted. A value for an option that some platform reads but this
    one does not is refused: it would be ignored, and the run would measure something
    else than the user asked for."""
    declared = {o.name for o in ptype.options}
    for other in registry.platforms.values():
        for opt in other.options:
            if opt.name not in declared and _given(given.get(opt.name)):
                reads = ", ".join(o.flag for o in ptype.options if o.flag) or "none"
                raise ConfigError(f"{opt.flag or opt.name}: the {ptype.name} platform does not apply it "
                                  f"(its options: {reads})")
    options: dict[str, Any] = {}
    for opt in ptype.options:
        try:
            value = opt.check(given.get(opt.name), ptype.name)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        options[opt.name] = opt.default if value is None else value
    return options


def used_patchers(bench: Benchmark, execution: Execution) -> Iterator[tuple[str, str]]:
    """(where, patcher type) of every patcher the run applies: the chosen load and
    resource types' and the execution's configOverrides."""
    for group, chosen in (("loadTypes", execution.load.loadType), ("resourceTypes", execution.resources.resourceType)):
        for i, typedef in enumerate(getattr(bench, group)):
            if typedef.typeName == chosen:
                for j, patcher in enumerate(typedef.patchers):
                    yield f"benchmark.{group}[{i}].patchers[{j}]", patcher.type
    for i, override in enumerate(execution.configOverrides):
        yield f"execution.configOverrides[{i}].patcher", override.patcher.type


def refuse_unhonoured(registry: Registry, ptype: PlatformType, bench: Benchmark, execution: Execution,
                      opts: Mapping[str, Any]) -> None:
    """Refuse what the platform declares it would not honour."""
    caps = ptype.capabilities
    if opts.get("job") and not caps.local_job:
        able = sorted(p.name for p in registry.platforms.values() if p.capabilities.local_job)
        raise ConfigError(f"--job runs on the {' or '.join(able)} platform (the script is a local file), "
                          f"not on {ptype.name}")
    if (opts.get("kafka_config") or opts.get("kafka_config_file")) and not caps.kafka_security:
        raise ConfigError(f"--kafka-config: the {ptype.name} platform does not pass Kafka client security "
                          "to the clients it starts")
    resource_type = execution.resources.resourceType
    if caps.resource_types is not None and resource_type not in caps.resource_types:
        raise ConfigError(f"resource type {resource_type}: the {ptype.name} platform varies only "
                          f"{', '.join(sorted(caps.resource_types))}")
    for where, patcher in used_patchers(bench, execution):
        if patcher in caps.ignored_patchers:
            raise ConfigError(f"{where}: the {ptype.name} platform does not apply {patcher}")
    refuse_unknown_slis(registry, ptype, bench, execution)
    refuse_use_case_slis(registry, bench, execution, parse_sets(opts.get("sets") or ()))


def refuse_unknown_slis(registry: Registry, ptype: PlatformType, bench: Benchmark, execution: Execution) -> None:
    """Refuse an SLO whose SLI the platform never samples (a misspelt ``sli`` of a generic
    SLO): every experiment would fail it for want of data, after hours of measuring."""
    for slo in effective_slos(bench, execution):
        slo_type = registry.slos.get(slo.sloType)
        if slo_type is None:
            continue  # an unknown type is refused by the benchmark's validation, naming it
        sli = slo_type.sli_name(slo.properties)
        if sli not in ptype.capabilities.slis:
            raise ConfigError(f"SLO {slo.name!r}: SLI {sli!r} is not one the {ptype.name} platform samples "
                              f"(it samples {', '.join(sorted(ptype.capabilities.slis))})")


def refuse_use_case_slis(registry: Registry, bench: Benchmark, execution: Execution,
                         sets: Mapping[str, Any]) -> None:
    """Refuse an SLI that the use case declares it cannot produce with the run's parameters
    (``UseCase.check_slis``), naming the use case."""
    use_case = registry.use_cases.get(bench.useCase)
    if use_case is None or use_case.check_slis is None:
        return
    params = {**use_case.default_params, **bench.params, **execution.params, **sets}
    slis = {slo.name: registry.slos[slo.sloType].sli_name(slo.properties)
            for slo in effective_slos(bench, execution) if slo.sloType in registry.slos}
    try:
        use_case.check_slis(params, slis)
    except ValueError as exc:
        raise ConfigError(f"use case {use_case.name}: {exc}") from None


def read_config_map_sets(ptype: PlatformType, bench: Benchmark, opts: Mapping[str, Any]) -> None:
    """Put the manifests of the benchmark's configMap resource sets in their places, read
    from where the platform deploys, before the benchmark is validated and anything is
    created; on ``--dry-run``, which reaches no cluster, mark them with what would be read.
    A platform that reads none refuses them in one line naming it."""
    from bench.config.config_maps import add_config_map_manifests, config_map_sets, mark_config_maps_pending
    from bench.config.reference import config_map_refusal

    sets = config_map_sets(bench)
    if not sets or any(group == "infrastructure" for group, _ in sets):
        return  # the benchmark's validation refuses infrastructure, read or not
    if ptype.read_config_maps is None:
        group, cm = sets[0]
        raise ConfigError(config_map_refusal(group, cm, f"the {ptype.name} platform"))
    if opts.get("dry_run"):
        place = ptype.config_map_place(opts) if ptype.config_map_place is not None else "the cluster"
        mark_config_maps_pending(bench, place)
        return
    try:
        add_config_map_manifests(bench, ptype.read_config_maps([cm for _, cm in sets], opts))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def run_check(check: Callable[[Mapping[str, Any], UseCase], None] | None, options: Mapping[str, Any],
              use_case: UseCase) -> None:
    """A platform's ``validate`` or ``check_host``: its ValueError becomes the one-line refusal."""
    if check is None:
        return
    try:
        check(options, use_case)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
