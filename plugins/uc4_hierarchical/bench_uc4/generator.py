"""The UC4 generator: publish the sensor registry, then emit measurements for the leaves.

Only the registry is UC4-specific; the measurements go through the generic
active-power emitting loop (open workload model) so that both use cases measure the
same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.api import GeneratorReport, GeneratorSpec, GeneratorType, ParamSpec
from bench.builtin.generators import ACTIVE_POWER_PARAMS
from bench.runtime.kafka_security import current as kafka_security

from bench_uc4 import registry
from bench_uc4.params import integer

NAME = "uc4-registry"
DEFAULT_CHILDREN = 4
DEFAULT_LEVELS = 2


def tree_shape(load: float | None, params: Mapping[str, Any]) -> tuple[int, int]:
    """(nested levels, children per group).

    ``params.nestedGroups`` wins over ``load``: the NumNestedGroups load type sets it
    through a ParamPatcher, while the platform may pass the sensor count as ``load``.
    """
    fallback = int(load) if load is not None and "nestedGroups" not in params else DEFAULT_LEVELS
    levels = integer(params, "nestedGroups", fallback)
    children = integer(params, "childrenPerGroup", DEFAULT_CHILDREN)
    return levels, children


def keys(load: int, params: Mapping[str, Any]) -> list[str]:
    levels, children = tree_shape(load, params)
    return registry.leaf_keys(levels, children)


def registry_for(spec: GeneratorSpec) -> str:
    """The registry document to publish: ``params.registry`` (a JSON tree) or a full tree."""
    given = spec.params.get("registry")
    if given:
        return given if isinstance(given, str) else registry.dumps(registry.parse(given))
    levels, children = tree_shape(None, spec.params)
    return registry.dumps(registry.build_tree(levels, children))


async def publish(bootstrap_servers: str, topic: str, document: str) -> None:
    """Send one registry event and wait for the broker's acknowledgement."""
    from aiokafka import AIOKafkaProducer

    registry.parse(document)  # never publish something the SUT would skip
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap_servers, acks="all", **kafka_security().aiokafka())
    await producer.start()
    try:
        await producer.send_and_wait(topic, document.encode(), key=registry.EVENT_KEY.encode())
    finally:
        await producer.stop()


async def prepare(spec: GeneratorSpec) -> None:
    topic = spec.topics.get("configuration", "configuration")
    await publish(spec.bootstrap_servers, topic, registry_for(spec))


async def run(spec: GeneratorSpec) -> GeneratorReport:
    """The leaves' measurements: the generic active-power loop, unchanged."""
    from bench.runtime.generator import run_active_power

    return await run_active_power(spec)


#: UC4's own parameters plus those of the active-power loop it runs.
PARAMS: tuple[ParamSpec, ...] = (
    ParamSpec("nestedGroups", int, min=1, doc="levels of the sensor tree (the NumNestedGroups load)"),
    ParamSpec("childrenPerGroup", int, min=1, doc="children of each group"),
    ParamSpec("registry", object, doc="a sensor-registry JSON tree to publish instead of the full tree"),
    *ACTIVE_POWER_PARAMS,
)

GENERATOR = GeneratorType(
    name=NAME,
    description="UC4: publishes a full sensor-registry tree (childrenPerGroup^nestedGroups leaves) "
    "on 'configuration', then active-power records for the leaves",
    run=run,
    prepare=prepare,
    keys=keys,
    params=PARAMS,
)
