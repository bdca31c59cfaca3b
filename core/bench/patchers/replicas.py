"""Instance counts: SUT replicas and load-generator instances derived from the load."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from bench.api import Manifest
from bench.patchers.common import PatcherError, each, require, spec_of, text, to_int, to_number
from bench.patchers.env import set_env

#: the reference's instance capacity of one load generator (records/s)
DEFAULT_MAX_RECORDS = 150_000


def _set_replicas(obj: Manifest, replicas: int) -> None:
    """A SparkApplication scales by executor instances; everything else by spec.replicas."""
    if replicas < 0:
        raise PatcherError(f"replicas must not be negative, got {replicas}")
    spec = spec_of(obj)
    if obj.get("kind") == "SparkApplication":
        spec.setdefault("executor", {})["instances"] = replicas
    else:
        spec["replicas"] = replicas


def replica_patcher(objects: list[Manifest], value: Any, properties: Mapping[str, Any]) -> list[Manifest]:
    replicas = to_int(value)
    return each(objects, lambda obj: _set_replicas(obj, replicas))


def instances_for(load: float, max_records: float) -> int:
    if max_records <= 0:
        raise PatcherError(f"loadGenMaxRecords must be positive, got {max_records}")
    return max(1, math.ceil(load / max_records))


def _max_records(properties: Mapping[str, Any]) -> float:
    return to_number(properties.get("loadGenMaxRecords", DEFAULT_MAX_RECORDS))


def _sensors_and_replicas(sensors: int, replicas: int) -> Any:
    """A generator instance count; bench's own generator also gets the sensor count the
    reference's load generator reads from its environment (the value is the load)."""

    def apply(obj: Manifest) -> None:
        _set_replicas(obj, replicas)
        if obj.get("kind") == "BenchGenerator":
            spec_of(obj)["sensors"] = sensors

    return apply


def num_sensors_patcher(objects: list[Manifest], value: Any, properties: Mapping[str, Any]) -> list[Manifest]:
    sensors = to_int(value)
    replicas = instances_for(sensors, _max_records(properties))
    return each(objects, _sensors_and_replicas(sensors, replicas))


def nested_groups_sensors(levels: Any, properties: Mapping[str, Any]) -> float:
    """UC4's leaves: ``numSensors`` children per group (default 4) to the power of the levels."""
    base = to_number(properties.get("numSensors", 4))
    return float(base ** to_int(levels))


def num_nested_groups_patcher(
    objects: list[Manifest], value: Any, properties: Mapping[str, Any]
) -> list[Manifest]:
    sensors = nested_groups_sensors(value, properties)
    replicas = instances_for(sensors, _max_records(properties))
    return each(objects, _sensors_and_replicas(int(sensors), replicas))


def data_volume_patcher(objects: list[Manifest], value: Any, properties: Mapping[str, Any]) -> list[Manifest]:
    """Instances = ceil(load / maxVolume); each instance gets load // instances in an env var."""
    load = to_int(value)
    max_volume = to_number(require(properties, "maxVolume"))
    container = str(require(properties, "container"))
    variable = str(require(properties, "variableName"))
    replicas = instances_for(load, max_volume)
    share = load // replicas

    def apply(obj: Manifest) -> None:
        _set_replicas(obj, replicas)
        set_env(obj, container, variable, text(share))

    return each(objects, apply)


def generator_load_patcher(
    objects: list[Manifest], value: Any, properties: Mapping[str, Any]
) -> list[Manifest]:
    """For the embedded platform's BenchGenerator: sensors = load, instances from maxPerInstance.

    ``properties.maxPerInstance`` overrides the object's own ``spec.maxPerInstance``; with
    neither, the instance count is left as it is.
    """
    sensors = to_int(value)

    def apply(obj: Manifest) -> None:
        spec = spec_of(obj)
        spec["sensors"] = sensors
        per_instance = properties.get("maxPerInstance", spec.get("maxPerInstance"))
        if per_instance is not None:
            spec["replicas"] = instances_for(sensors, to_number(per_instance))

    return each(objects, apply)
