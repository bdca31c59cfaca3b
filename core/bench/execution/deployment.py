"""The deployment of one experiment: its objects, parameter values and per-attempt spec."""

from __future__ import annotations

import copy
from typing import Any

from bench.api import ExperimentSpec, Manifest, TopicSpec, UseCase
from bench.config.base import Benchmark, Execution
from bench.patchers.apply import apply_all, find_kind, select_indices
from bench.plugins import Registry


def build_objects(
    registry: Registry, bench: Benchmark, execution: Execution, params: dict[str, Any], load: float, resources: float
) -> list[Manifest]:
    """The deployment of one experiment: base objects, --set values, overrides, patchers."""
    objects: list[Manifest] = copy.deepcopy(bench.sut.resources + bench.loadGenerator.resources)
    for key, value in params.items():
        obj_name, _, path = key.partition(".")
        if path and select_indices(objects, obj_name):
            for i in select_indices(objects, obj_name):
                _set_path(objects[i].setdefault("spec", {}), path.split("."), value)
        else:
            for obj in objects:
                if obj.get("kind") in ("BenchSut", "BenchGenerator"):
                    obj.setdefault("spec", {}).setdefault("params", {})[key] = value
    patches: list[tuple[str, str, dict[str, Any], Any]] = [
        (o.patcher.type, o.patcher.resource, o.patcher.properties, o.value) for o in execution.configOverrides
    ]
    load_type = next(t for t in bench.loadTypes if t.typeName == execution.load.loadType)
    resource_type = next(t for t in bench.resourceTypes if t.typeName == execution.resources.resourceType)
    patches += [(p.type, p.resource, p.properties, _num(load)) for p in load_type.patchers]
    patches += [(p.type, p.resource, p.properties, _num(resources)) for p in resource_type.patchers]
    return apply_all(registry, objects, patches)


def load_decreasing(bench: Benchmark, execution: Execution) -> bool:
    """Whether the execution's load type has its heaviest load at the smallest value."""
    load_type = next((t for t in bench.loadTypes if t.typeName == execution.load.loadType), None)
    return load_type is not None and load_type.direction == "decreasing"


def _num(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _set_path(target: dict[str, Any], parts: list[str], value: Any) -> None:
    for part in parts[:-1]:
        target = target.setdefault(part, {})
    target[parts[-1]] = value


def merged_params(use_case: UseCase, bench: Benchmark, execution: Execution, objects: list[Manifest],
                  params: dict[str, Any]) -> dict[str, Any]:
    """Defaults < benchmark < execution < --set < what patchers wrote into the objects."""
    merged: dict[str, Any] = {**use_case.default_params, **bench.params, **execution.params}
    merged.update({k: v for k, v in params.items() if "." not in k})
    for kind in ("BenchGenerator", "BenchSut"):
        obj = find_kind(objects, kind)
        if obj is not None:
            merged.update((obj.get("spec") or {}).get("params") or {})
    return merged


def experiment_spec(use_case: UseCase, bench: Benchmark, objects: list[Manifest], params: dict[str, Any],
                    load: float, resources: float, exp: str) -> ExperimentSpec:
    """What the platform deploys for one attempt of one repetition.

    ``exp`` names the attempt's topics and consumer group: no two attempts share them,
    so records left over from a killed attempt cannot reach the next one.
    """
    topics = [
        TopicSpec(logical=t.name, name=f"{t.name}-{exp}", partitions=t.numPartitions)
        for t in bench.kafkaConfig.topics
    ]
    return ExperimentSpec(
        experiment_id=exp,
        use_case=use_case,
        objects=copy.deepcopy(objects),
        topics=topics,
        params=params,
        load=load,
        resources=resources,
        group_id=f"bench-sut-{exp}",
    )


def instance_cores(objects: list[Manifest], limit_applied: bool = True) -> float | None:
    """The CPU one SUT instance may use, in cores, as the deployment declares it.

    Cost and scaling efficiency are per core, so they need what an instance really had,
    not a count of instances: a ``BenchSut`` with ``cpuPerInstance`` C (a CPU limit per
    task slot) and ``coresPerInstance`` K has C x K; without a limit, K. A
    ``SparkApplication`` has its executors' ``coreLimit`` (the Kubernetes CPU limit),
    else ``cores``; any other SUT workload the CPU limit of its first container that has
    one. None when nothing declares it (the reader then falls back to one core and says so).
    ``limit_applied=False``: the platform could not enforce ``cpuPerInstance`` (no cgroup),
    so the instance had its cores unlimited, and K is what it had.
    """
    for obj in objects:
        kind = obj.get("kind")
        spec = obj.get("spec") or {}
        if kind == "BenchGenerator" or not isinstance(spec, dict):
            continue
        if kind == "BenchSut":
            cores = _cpu(spec.get("coresPerInstance")) or 1.0
            limit = _cpu(spec.get("cpuPerInstance")) if limit_applied else None
            return cores * limit if limit else cores
        if kind == "SparkApplication":
            executor = spec.get("executor") or {}
            found = _cpu(executor.get("coreLimit")) or _cpu(executor.get("cores"))
            if found:
                return found
            continue
        for container in _containers(spec):
            limit = _cpu(((container.get("resources") or {}).get("limits") or {}).get("cpu"))
            if limit:
                return limit
    return None


def _containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    pod = ((spec.get("template") or {}).get("spec") or {}) if isinstance(spec.get("template"), dict) else spec
    found = pod.get("containers") if isinstance(pod, dict) else None
    return [c for c in found if isinstance(c, dict)] if isinstance(found, list) else []


def _cpu(raw: Any) -> float | None:
    """A CPU amount in cores: 0.25, "250m", "2"; None when absent, unreadable or not positive."""
    if raw is None or isinstance(raw, bool):
        return None
    text = str(raw).strip()
    try:
        value = float(text[:-1]) / 1000.0 if text.endswith("m") else float(text)
    except ValueError:
        return None
    return value if value > 0 else None
