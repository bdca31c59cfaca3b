"""The UC4 generator: publish the sensor registry, then emit measurements for the leaves
(and, with ``registryChangeIntervalMs``, change the registry while they run).

Only the registry is UC4-specific; the measurements go through the generic
active-power emitting loop (open workload model) so that both use cases measure the
same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from bench.api import (
    GeneratorReport,
    GeneratorSpec,
    GeneratorType,
    ParamSpec,
)
from bench.services import ACTIVE_POWER_PARAMS, kafka_security, run_active_power

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
    payload = document.encode()
    registry.check_event_size(payload)
    large = len(payload) > registry.COMPRESS_ABOVE
    # a large tree goes gzip'd (the broker checks the compressed batch), and the producer's
    # own limit, which it applies to the uncompressed record, must let it through
    sizing: dict[str, Any] = {"compression_type": "gzip", "max_request_size": len(payload) + 65_536} if large else {}
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap_servers, acks="all", **sizing,
                                **kafka_security().aiokafka())
    await producer.start()
    try:
        await producer.send_and_wait(topic, payload, key=registry.EVENT_KEY.encode())
    finally:
        await producer.stop()


async def prepare(spec: GeneratorSpec) -> None:
    topic = spec.topics.get("configuration", "configuration")
    await publish(spec.bootstrap_servers, topic, registry_for(spec))


def change_interval_s(params: Mapping[str, Any]) -> float:
    """``registryChangeIntervalMs`` in seconds; 0 (the default) means a fixed registry."""
    value = float(params.get("registryChangeIntervalMs") or 0)
    if value < 0:
        raise ValueError(f"registryChangeIntervalMs must not be negative, got {value:g}")
    return value / 1000.0


async def change_registry(
    spec: GeneratorSpec,
    interval_s: float,
    publish_fn: Callable[[str], Awaitable[None]] | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> int:
    """Publish a changed registry every ``interval_s`` until cancelled (:func:`registry.changed`:
    a sensor moved, then a group added, in turn); returns how many were published.

    Why the generator does it: the method describes the registry as changeable at run
    time, and the SUT's join must follow changes while under load, not only between
    runs. The first change comes one interval after the measurements start.
    """
    topic = spec.topics.get("configuration", "configuration")
    tree = registry.parse(registry_for(spec))
    seed = int(spec.params.get("registryChangeSeed") or 0)
    send = publish_fn or (lambda doc: publish(spec.bootstrap_servers, topic, doc))
    published = 0
    me = asyncio.current_task()
    try:
        while me is None or not me.cancelling():
            await sleep(interval_s)
            tree = registry.changed(tree, published + 1, seed)
            await send(registry.dumps(tree))
            published += 1
    except asyncio.CancelledError:
        pass
    # A cancel that lands inside the producer's start or stop can be swallowed by aiokafka;
    # the loop then must still end (seen: a test awaiting the cancelled task hung).
    return published


async def run(spec: GeneratorSpec) -> GeneratorReport:
    """The leaves' measurements (the generic active-power loop, unchanged) and, with
    ``registryChangeIntervalMs``, registry changes from the first instance alongside."""
    interval = change_interval_s(spec.params)
    if interval <= 0 or int(spec.params.get("keyOffset", 0)) != 0:
        return await run_active_power(spec)
    changes = asyncio.ensure_future(change_registry(spec, interval))
    try:
        return await run_active_power(spec)
    finally:
        changes.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            published = await changes
            sys.stderr.write(f"uc4-registry: {published} registry change(s) published\n")


#: UC4's own parameters plus those of the active-power loop it runs.
PARAMS: tuple[ParamSpec, ...] = (
    ParamSpec("nestedGroups", int, min=1, doc="levels of the sensor tree (the NumNestedGroups load)"),
    ParamSpec("childrenPerGroup", int, min=1, doc="children of each group"),
    ParamSpec("registry", object, doc="a sensor-registry JSON tree to publish instead of the full tree"),
    ParamSpec("registryChangeIntervalMs", float, min=0,
              doc="publish a changed registry this often during the run (a sensor moved, a group added "
              "in turn); 0: never"),
    ParamSpec("registryChangeSeed", int, min=0, doc="which sensors and groups the changes pick"),
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
