"""How a local SUT gets its resources: the Spark driver's share of an experiment's shape,
and the cgroup CPU limit per instance (``cpuPerInstance``) with the moment it applies.

Kept apart from the platform's process bookkeeping because these rules decide what an
"instance" is, which every figure of a run depends on.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from bench.api import ExperimentSpec
from bench.platforms.children import Child
from bench.runtime.spark import cpu_limit
from bench.runtime.spark.cluster import InstanceShape

log = logging.getLogger(__name__)


def limit_cpu(
    options: Mapping[str, Any], spark_mode: str, spec: ExperimentSpec, sut_spec: Mapping[str, Any], replicas: int,
    previous: Mapping[str, Any],
) -> tuple[cpu_limit.CpuLimit | None, dict[str, Any]]:
    """The SUT's cgroup (``cpuPerInstance`` cores per task slot: instances x cores per
    instance) and the record of whether it applied, for the environment file."""
    per_instance = float(sut_spec.get("cpuPerInstance") or 0)
    if per_instance <= 0:
        return None, dict(previous)
    if cpu_limit.unlimitable(options, spark_mode, spec.use_case.topology is not None):
        return None, {"applied": False, "cpuPerInstance": per_instance,
                      "reason": "applies to local[N] Spark and SUT processes only"}
    slots = replicas * max(1, int(sut_spec.get("coresPerInstance") or 1))
    try:
        limit = cpu_limit.create(spec.experiment_id, per_instance * slots)
    except cpu_limit.CpuLimitUnavailable as exc:
        if previous.get("applied") is not False:
            log.warning("cpuPerInstance %s: %s; the SUT runs without a CPU limit", per_instance, exc)
        return None, {"applied": False, "cpuPerInstance": per_instance, "reason": str(exc)}
    return limit, {"applied": True, "cpuPerInstance": per_instance, "cgroupVersion": limit.version}


def join_limit(limit: cpu_limit.CpuLimit | None, sut: Sequence[Child]) -> None:
    """Once the SUT reported "started": its start-up and warm-up (JVM start, code
    generation) run unlimited, as they are not what is measured and took 80 s instead
    of 30 s at a quarter core; the limit holds for the measurement. Each SUT child
    moves with all its descendants: its JVM and the Python workers, whose daemon leaves
    the child's process group (``CpuLimit.add_tree``)."""
    if limit is not None:
        for child in sut:
            limit.add_tree(child.proc.pid)


def lift_limit(limit: cpu_limit.CpuLimit | None) -> None:
    """Once sampling is over, before the SUT is asked to stop: its shutdown runs
    unlimited, as its start-up did (``CpuLimit.lift``)."""
    if limit is not None:
        limit.lift()


def spark_warmup(options: Mapping[str, Any]) -> bool:
    """Whether the driver warms its query up (option ``spark_warmup``, default true). A
    platform constructed without :mod:`bench.cli.launch` (tests, scripts) gets the same
    refusal of a non-bool as ``bench run``, before anything starts: ``"false"`` as a
    string would otherwise be truthy and silently keep the warm-up."""
    value = options.get("spark_warmup")
    if value is None:
        return True
    if not isinstance(value, bool):
        raise ValueError(f"spark_warmup {value!r}: takes true or false")
    return value


def check_options(options: Mapping[str, Any]) -> None:
    """The local platforms' options that would only fail later, once a broker runs."""
    if str(options.get("spark_mode") or "local") not in ("local", "standalone"):
        raise ValueError(f"spark_mode must be 'local' or 'standalone', got {options.get('spark_mode')!r}")
    spark_warmup(options)


def spark_payload(
    options: Mapping[str, Any], spec: ExperimentSpec, shape: InstanceShape, master: str | None
) -> dict[str, Any]:
    """The Spark driver's spec for one experiment's resources (without broker and paths).

    ``instances`` is the task slots (instances x cores per instance, see
    :class:`InstanceShape`); ``executors``, ``cores_per_instance`` and
    ``memory_per_instance_mb`` record the shape itself. The shape's Spark settings
    override the same keys of ``--conf``: the resource value is what the experiment
    measures, so a stray ``spark.executor.cores`` must not silently replace it; ``--conf``
    overrides the use case's own settings (``UseCase.spark_conf``).
    ``warmup`` false skips the query's warm-up (:func:`spark_warmup`).
    """
    return {
        "use_case": spec.use_case.name,
        "topics": spec.topic_map(),
        "group_id": spec.group_id,
        "instances": shape.slots,
        "executors": shape.instances,
        "cores_per_instance": shape.cores,
        "memory_per_instance_mb": shape.memory_mb,
        "spark_master": master or None,
        "trigger_seconds": options.get("trigger_seconds"),
        "max_records_per_trigger": options.get("max_records_per_trigger"),
        "warmup": spark_warmup(options),
        "conf": {**spec.spark_conf(options), **shape.conf(master)},
    }

