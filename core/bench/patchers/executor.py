"""Cores and memory of one SUT instance: the vertical resource types.

``CoresPerInstance`` and ``MemoryPerInstance`` scale an instance up instead of adding
instances (the 2023 study scales both ways). What an "instance" is depends on the
object the patcher meets:

- ``BenchSut`` (every platform): ``spec.coresPerInstance`` / ``spec.memoryPerInstanceMb``;
  the platform turns them into Spark settings (embedded: worker cores, executor or
  driver memory; Kubernetes: the SparkApplication's or the standalone workers'
  executor cores and memory, see :mod:`bench.platforms.kubernetes.manifests`).
- ``SparkApplication``: ``spec.executor.cores`` / ``spec.executor.memory`` (the Spark
  operator turns them into ``spark.executor.cores`` / ``spark.executor.memory``).
- Any other workload (a hand-written standalone worker Deployment): the ``--cores`` /
  ``--memory`` arguments of the worker command, which is how a Spark worker learns
  what it may hand to executors. Pod requests and limits stay the job of
  ResourceRequestPatcher / ResourceLimitPatcher, because the pod needs more memory
  than the executor heap and only the benchmark author knows how much more.

Memory values are MiB (``factor`` scales them, e.g. 1024 for values in GiB).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.api import Manifest
from bench.patchers.common import PatcherError, containers, each, scaled, spec_of, to_int

CORES_FIELD = "coresPerInstance"
MEMORY_FIELD = "memoryPerInstanceMb"
#: Spark refuses an executor (or a local-mode driver) below 1.5 x its 300 MiB reserve
MIN_MEMORY_MB = 450


def cores_value(value: Any, properties: Mapping[str, Any]) -> int:
    cores = to_int(scaled(value, properties.get("factor")))
    if cores < 1:
        raise PatcherError(f"cores per instance must be at least 1, got {cores}")
    return cores


def memory_value(value: Any, properties: Mapping[str, Any]) -> int:
    memory = to_int(scaled(value, properties.get("factor")))
    if memory < MIN_MEMORY_MB:
        raise PatcherError(
            f"memory per instance is in MiB and must be at least {MIN_MEMORY_MB} (Spark's minimum "
            f"for an executor), got {memory}"
        )
    return memory


def _replace_flag(args: list[Any], flag: str, rendered: str) -> bool:
    """Set the argument after ``flag`` (``--cores 1`` -> ``--cores 4``); False if absent."""
    found = False
    for i, arg in enumerate(args[:-1]):
        if arg == flag:
            args[i + 1] = rendered
            found = True
    return found


def _worker_flag(obj: Manifest, container: str | None, flag: str, rendered: str) -> None:
    for target in containers(obj, container):
        for key in ("command", "args"):
            args = target.get(key)
            if isinstance(args, list):
                _replace_flag(args, flag, rendered)


def _shape_patcher(
    objects: list[Manifest], container: str | None, field: str, value: int,
    executor: tuple[str, Any], flag: tuple[str, str],
) -> list[Manifest]:
    """One instance-shape value to every kind that carries it: the BenchSut field, the
    SparkApplication's executor, a standalone worker's command-line flag."""

    def apply(obj: Manifest) -> None:
        kind = obj.get("kind")
        if kind == "BenchSut":
            spec_of(obj)[field] = value
        elif kind == "SparkApplication":
            spec_of(obj).setdefault("executor", {})[executor[0]] = executor[1]
        elif kind != "BenchGenerator":
            _worker_flag(obj, container, *flag)

    return each(objects, apply)


def cores_per_instance_patcher(
    objects: list[Manifest], value: Any, properties: Mapping[str, Any]
) -> list[Manifest]:
    cores = cores_value(value, properties)
    return _shape_patcher(objects, properties.get("container"), CORES_FIELD, cores, ("cores", cores),
                          ("--cores", str(cores)))


def memory_per_instance_patcher(
    objects: list[Manifest], value: Any, properties: Mapping[str, Any]
) -> list[Manifest]:
    memory = memory_value(value, properties)
    return _shape_patcher(objects, properties.get("container"), MEMORY_FIELD, memory, ("memory", f"{memory}m"),
                          ("--memory", f"{memory}m"))
