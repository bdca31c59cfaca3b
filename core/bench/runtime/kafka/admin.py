"""Creating and deleting topics: the one place every part of bench does it.

The engine's platforms, the SUT driver's warm-up and the test harness all need topics
made and removed; this module is the only one that talks to the admin API for that,
so replication, topic settings and "already exists" are handled once. Sync callers
(the Spark driver process, the test harness) use the ``*_sync`` wrappers.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterable, Mapping
from typing import Any

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError, UnknownTopicOrPartitionError
from aiokafka.protocol.metadata import MetadataRequest

from bench.runtime.kafka.security import current as kafka_security

#: the replication factor asked for when a cluster has this many brokers or more
MAX_REPLICATION = 3
#: logical topics a SUT writes its results to (everything else is input it consumes)
RESULT_TOPICS = frozenset({"output"})
#: result topics take the broker's clock as record timestamp, so that latency = append
#: time - event time is measured on one clock (bench.runtime.kafka.latency)
OUTPUT_TOPIC_CONFIG: Mapping[str, str] = {"message.timestamp.type": "LogAppendTime"}


async def create_experiment_topics(bootstrap_servers: str, topics: Iterable[Any]) -> None:
    """An experiment's topics (``bench.api.TopicSpec``): result topics with :data:`OUTPUT_TOPIC_CONFIG`."""
    topics = list(topics)
    inputs = [(t.name, t.partitions) for t in topics if t.logical not in RESULT_TOPICS]
    outputs = [(t.name, t.partitions) for t in topics if t.logical in RESULT_TOPICS]
    if inputs:
        await create_topics(bootstrap_servers, inputs)
    if outputs:
        await create_topics(bootstrap_servers, outputs, config=OUTPUT_TOPIC_CONFIG)


def _replication(admin: AIOKafkaAdminClient) -> int:
    """min(3, brokers): a one-node broker needs 1, a three-node cluster gets 3 copies."""
    try:
        brokers = len(admin._client.cluster.brokers())  # metadata fetched at start()
    except Exception:  # noqa: BLE001 - older or partial brokers: one copy always works
        brokers = 1
    return max(1, min(MAX_REPLICATION, brokers))


async def create_topics(
    bootstrap_servers: str,
    topics: Iterable[tuple[str, int]],
    config: Mapping[str, str] | None = None,
    replication: int | None = None,
) -> None:
    """Create topics (name, partitions) and wait until they have their partitions.

    Existing ones are left alone. Use fresh names per experiment: brokers with topic
    auto-creation bring a deleted topic back while a straggling client still asks for it.
    """
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers, **kafka_security().aiokafka())
    await admin.start()
    try:
        factor = replication or _replication(admin)
        new = [
            NewTopic(name, num_partitions=parts, replication_factor=factor, topic_configs=dict(config or {}))
            for name, parts in topics
        ]
        if not new:
            return
        try:
            await admin.create_topics(new)
        except TopicAlreadyExistsError:
            pass
        await _wait_for_partitions(admin, {t.name: t.num_partitions for t in new})
    finally:
        await admin.close()


async def _wait_for_partitions(admin: AIOKafkaAdminClient, wanted: dict[str, int], timeout: float = 10) -> None:
    """Wait until every broker, not one, knows the topics with all their partitions.

    A new topic reaches the brokers' metadata caches one by one: asking a random broker
    (what ``describe_topics`` does) can say "ready" while the next client, sent to another
    broker of a cluster, is told the topic does not exist.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all([await _ready_on(admin, node, wanted) for node in _broker_ids(admin)]):
            return
        await asyncio.sleep(0.1)
    raise RuntimeError(f"topics {sorted(wanted)} have no partitions on every broker after {timeout} s")


def _broker_ids(admin: AIOKafkaAdminClient) -> list[int | None]:
    """The brokers' ids from the metadata fetched at start(); [None] (a random one) if unknown."""
    try:
        ids = sorted(b.nodeId for b in admin._client.cluster.brokers())
    except Exception:  # noqa: BLE001 - partial metadata: asking any broker is the old behaviour
        ids = []
    return ids or [None]


async def _ready_on(admin: AIOKafkaAdminClient, node: int | None, wanted: dict[str, int]) -> bool:
    """Whether ``node`` knows the topics; a node that cannot be asked (a broker that died)
    sends no client a wrong answer either, so it does not hold the wait up."""
    try:
        response = await admin._send_request(MetadataRequest(list(wanted)), node)
    except Exception:  # noqa: BLE001 - any connection or protocol error of that one node
        if node is None:
            raise
        return True
    described = response.to_object()["topics"]
    ready = {
        d["topic"]
        for d in described
        if d.get("error_code", 0) == 0 and len(d.get("partitions", [])) >= wanted[d["topic"]]
    }
    return ready >= set(wanted)


async def delete_topics(bootstrap_servers: str, names: Iterable[str]) -> None:
    """Delete topics; missing ones are fine."""
    names = list(names)
    if not names:
        return
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers, **kafka_security().aiokafka())
    await admin.start()
    try:
        with contextlib.suppress(UnknownTopicOrPartitionError):
            await admin.delete_topics(names)
    finally:
        await admin.close()


def create_topics_sync(
    bootstrap_servers: str, topics: Mapping[str, int], config: Mapping[str, str] | None = None
) -> None:
    """:func:`create_topics` for code without an event loop ({name: partitions})."""
    asyncio.run(create_topics(bootstrap_servers, list(topics.items()), config))


def delete_topics_sync(bootstrap_servers: str, names: Iterable[str]) -> None:
    asyncio.run(delete_topics(bootstrap_servers, names))
