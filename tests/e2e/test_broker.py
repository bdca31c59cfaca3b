"""Every embedded broker (Apache Kafka, noida, tansu) against every Kafka call the runtime makes."""

from __future__ import annotations

import asyncio
import os
import warnings
from collections.abc import Iterator

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from bench.runtime.kafka.broker import (
    END_OFFSETS_BY_KIND,
    KINDS,
    BrokerError,
    BrokerHandle,
    running_broker,
    start_broker,
)
from bench.runtime.kafka.lag import LagSampler, create_topics, delete_topics
from bench.runtime.load.generator import partition_of

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module", params=list(KINDS))
def broker(request: pytest.FixtureRequest) -> Iterator[BrokerHandle]:
    with running_broker(request.param) as handle:
        yield handle


#: how long a group consumer may take to read a test's records
CONSUME_S = 60.0


async def consume_all(bs: str, topic: str, group: str, total: int) -> tuple[int, list[int]]:
    """Records read by a group consumer (as the calibrated SUT reads) and its partitions,
    committing what it read. Bounded: a consumer that never gets its records returns
    after CONSUME_S instead of spinning until the per-test timeout (whose signal can land
    in aiokafka's own fetch task and end that instead of the test)."""
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bs, group_id=group, enable_auto_commit=False,
                                auto_offset_reset="earliest", session_timeout_ms=6000, heartbeat_interval_ms=1000)
    await consumer.start()
    try:
        seen = 0
        deadline = asyncio.get_running_loop().time() + CONSUME_S
        while seen < total and asyncio.get_running_loop().time() < deadline:
            batches = await consumer.getmany(timeout_ms=2000)
            for records in batches.values():
                assert all(r.timestamp >= 1_700_000_000_000 for r in records)
            seen += sum(len(r) for r in batches.values())
        if seen:
            await consumer.commit()
        return seen, sorted(tp.partition for tp in consumer.assignment())
    finally:
        await consumer.stop()


@pytest.mark.parametrize("method", ["by-kind", "fetch"])
async def test_every_call_the_runtime_makes(broker: BrokerHandle, method: str) -> None:
    """Lag is exact with the end-offset method chosen for the broker kind, and with
    fetch (which works on every kind)."""
    end_offsets = END_OFFSETS_BY_KIND[broker.kind] if method == "by-kind" else method
    bs = broker.bootstrap_servers
    topic = f"compat-{os.getpid()}-{method}"
    await create_topics(bs, [(topic, 4)])
    producer = AIOKafkaProducer(bootstrap_servers=bs, linger_ms=5)
    await producer.start()
    per_partition = [0, 0, 0, 0]
    try:
        for p in range(4):  # the generator's batch API, one batch per partition
            batch = producer.create_batch()
            for i in range(250 + 50 * p):
                key = f"s_{i}".encode()
                assert batch.append(key=key, value=b'{"v":1}', timestamp=1_700_000_000_000 + i) is not None
            per_partition[p] = batch.record_count()
            fut = await producer.send_batch(batch, topic, partition=p)
            await fut
    finally:
        await producer.stop()
    total = sum(per_partition)

    async with LagSampler(bs, f"compat-group-{method}", [topic], end_offsets=end_offsets) as sampler:
        assert await sampler.sample() == total  # nothing committed: everything is lag
        assert [sampler.last_end[TopicPartition(topic, p)] for p in range(4)] == per_partition

        seen, assigned = await consume_all(bs, topic, f"compat-group-{method}", total)
        if seen == 0:
            # Once in several whole-suite runs a noida-db group consumer was assigned every
            # partition and fetched nothing for 60 s (in one and in two test
            # processes; never alone: the module's noida cases passed 8 runs in a row, the whole
            # module 3). Cause unknown. A fresh consumer of the same group gets one more try,
            # and the test says it needed it; nothing read twice still fails.
            warnings.warn(f"{broker.kind}: a group consumer assigned {assigned} fetched nothing in "
                          f"{CONSUME_S:g} s; a fresh one tries again", stacklevel=1)
            seen, assigned = await consume_all(bs, topic, f"compat-group-{method}", total)
        assert seen == total, (f"consumed {seen} of {total} records from {broker.kind} in {CONSUME_S:g} s; "
                               f"partitions assigned: {assigned}")

        assert await sampler.sample() == 0  # exactly 0 after catch-up, never negative
        # and a sample right after new records sees them, not a stale end offset
        producer = AIOKafkaProducer(bootstrap_servers=bs, linger_ms=5)
        await producer.start()
        try:
            batch = producer.create_batch()
            for i in range(30):
                batch.append(key=b"late", value=b'{"v":2}', timestamp=1_700_000_001_000 + i)
            await (await producer.send_batch(batch, topic, partition=1))
        finally:
            await producer.stop()
        assert await sampler.sample() == 30
        assert await sampler.sample() == 30  # nothing new: the same lag again, not 0 or a stale value
        admin = AIOKafkaAdminClient(bootstrap_servers=bs)
        await admin.start()
        try:
            tps = [TopicPartition(topic, p) for p in range(4)]
            committed = await admin.list_consumer_group_offsets(f"compat-group-{method}", partitions=tps)
            assert [committed[tp].offset for tp in tps] == per_partition  # not moved by the sampler
        finally:
            await admin.close()
    await delete_topics(bs, [topic])


async def test_keyed_records_land_where_kafka_would_put_them(broker: BrokerHandle) -> None:
    bs = broker.bootstrap_servers
    topic = f"keyed-{os.getpid()}"
    await create_topics(bs, [(topic, 3)])
    producer = AIOKafkaProducer(bootstrap_servers=bs)
    await producer.start()
    try:
        meta = await producer.send_and_wait(topic, b"x", key=b"s_42")
    finally:
        await producer.stop()
    assert meta.partition == partition_of(b"s_42", 3)
    await delete_topics(bs, [topic])


async def test_async_start_and_stop_leave_nothing() -> None:
    handle = await start_broker()
    assert handle.alive()
    await handle.stop()
    assert not handle.alive()
    assert not os.path.exists(handle.data_dir)


def test_unknown_kind_is_a_clear_error() -> None:
    with pytest.raises(BrokerError, match="known: kafka, noida, tansu"):
        with running_broker("kafka-from-mars"):
            pass
