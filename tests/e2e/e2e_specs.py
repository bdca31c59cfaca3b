"""Experiment specs that several e2e tests run, built in one place.

Not a test module (no ``test_`` prefix); the e2e tests import it by name, as pytest
puts their rootless folder on ``sys.path``.
"""

from __future__ import annotations

import copy

from bench.api import ExperimentSpec, TopicSpec
from bench.builtin.calibrated import CALIBRATED, default_benchmark


def calibrated_spec(
    exp: str, sensors: int, instances: int, capacity: float, partitions: int | None = None
) -> ExperimentSpec:
    """The calibrated use case's default benchmark at one load and one instance count.

    ``partitions`` defaults to the benchmark's own input topic's.
    """
    bench = default_benchmark()
    sut = copy.deepcopy(bench["sut"]["resources"][0])
    sut["spec"]["replicas"] = instances
    sut["spec"]["params"]["capacity"] = capacity
    gen = copy.deepcopy(bench["loadGenerator"]["resources"][0])
    gen["spec"]["sensors"] = sensors
    if partitions is None:
        partitions = int(bench["kafkaConfig"]["topics"][0]["numPartitions"])
    return ExperimentSpec(
        experiment_id=exp,
        use_case=CALIBRATED,
        objects=[sut, gen],
        topics=[TopicSpec("input", f"input-{exp}", partitions)],
        params={"capacity": capacity},
        load=sensors,
        resources=instances,
        group_id=f"sut-{exp}",
    )
