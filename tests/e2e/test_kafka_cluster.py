"""The embedded Apache Kafka: one KRaft node by default, three for the cluster rehearsal."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from bench.runtime.host import procs
from bench.runtime.host.jars import kafka_jars
from bench.runtime.kafka.admin import create_topics
from bench.runtime.kafka.apache_kafka import KafkaCluster, KafkaStartError, start_sync

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(kafka_jars() is None, reason="Apache Kafka not installed (scripts/install fetches it)"),
]


@pytest.fixture(scope="module")
def cluster() -> Iterator[KafkaCluster]:
    handle = start_sync(3)
    try:
        yield handle
    finally:
        handle.stop_sync()


async def _replicas(bootstrap: str, topic: str) -> dict[int, list[int]]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        (described,) = await admin.describe_topics([topic])
        return {p["partition"]: sorted(p["replicas"]) for p in described["partitions"]}
    finally:
        await admin.close()


async def _produce_and_read(bootstrap: str, topic: str, n: int) -> list[bytes]:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    try:
        for i in range(n):
            await producer.send(topic, f"r{i}".encode(), key=f"s_{i}".encode())
        await producer.flush()
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                                enable_auto_commit=False)
    await consumer.start()
    got: list[bytes] = []
    try:
        while len(got) < n:
            batches = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), 30)
            got += [m.value for msgs in batches.values() for m in msgs if m.value is not None]
    finally:
        await consumer.stop()
    return got


async def test_three_nodes_replicate_every_partition(cluster: KafkaCluster) -> None:
    assert len(cluster.nodes) == 3 and cluster.alive()
    assert len(cluster.bootstrap_servers.split(",")) == 3
    topic = f"rf3-{uuid.uuid4().hex[:8]}"
    await create_topics(cluster.bootstrap_servers, [(topic, 4)])  # replication: min(3, brokers)
    replicas = await _replicas(cluster.bootstrap_servers, topic)
    assert sorted(replicas) == [0, 1, 2, 3]
    assert all(r == [1, 2, 3] for r in replicas.values()), replicas
    got = await _produce_and_read(cluster.bootstrap_servers, topic, 300)
    assert sorted(got) == sorted(f"r{i}".encode() for i in range(300))


async def test_a_killed_node_leaves_a_working_cluster(cluster: KafkaCluster) -> None:
    """Runs last in this module: it kills node 3 (the base of the broker-failure tests)."""
    topic = f"survive-{uuid.uuid4().hex[:8]}"
    await create_topics(cluster.bootstrap_servers, [(topic, 2)])
    cluster.nodes[2].kill()
    assert not cluster.nodes[2].alive() and not cluster.alive()
    # min.insync.replicas is 2: two nodes left still take acks=all writes
    got = await _produce_and_read(cluster.bootstrap_servers, topic, 100)
    assert len(got) == 100


def test_start_and_stop_leave_no_process_and_no_files() -> None:
    handle = start_sync(1)
    pids = [n.pid for n in handle.nodes]
    assert handle.kind == "kafka" and handle.version == kafka_jars().version  # type: ignore[union-attr]
    handle.stop_sync()
    assert not any(os.path.exists(f"/proc/{pid}") and "Z" not in Path(f"/proc/{pid}/stat").read_text()
                   for pid in pids)
    assert not os.path.exists(handle.root)
    assert not set(pids) & set(procs.live())


def test_a_broken_configuration_fails_with_the_broker_log(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_KAFKA_HEAP", "1k")  # the JVM refuses to start with it
    with pytest.raises(KafkaStartError, match="Apache Kafka"):
        start_sync(1)
