"""What the ``active-power`` generator writes to a real broker, record by record."""

from __future__ import annotations

import json
import os
from collections import Counter, defaultdict
from collections.abc import Iterator

import pytest
from aiokafka import AIOKafkaConsumer
from bench.api import GeneratorSpec
from bench.runtime.kafka.broker import KINDS, BrokerHandle, running_broker
from bench.runtime.kafka.lag import create_topics, delete_topics
from bench.runtime.load import generator
from bench.runtime.load.generator import partition_of, run_active_power

pytestmark = pytest.mark.e2e

KEYS = 2_000
SECONDS = 2.0


@pytest.fixture(scope="module", params=list(KINDS))
def broker(request: pytest.FixtureRequest) -> Iterator[BrokerHandle]:
    with running_broker(request.param) as handle:
        yield handle


@pytest.mark.parametrize(
    ("period_ms", "max_step"),
    [(100.0, generator.MAX_STEP), (20.0, 300)],
    ids=["on-schedule", "saturated"],
)
async def test_every_scheduled_record_arrives_once_well_formed(
    broker: BrokerHandle, period_ms: float, max_step: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Small batches (4 KiB, ~50 records) make the generator split each step into many
    batches, so records at batch boundaries would show up missing or doubled. With
    steps of 300 records at 100k records/s the generator is saturated: it holds
    part-filled batches from one step to the next, and still sends each record once."""
    monkeypatch.setattr(generator, "MAX_STEP", max_step)
    bs = broker.bootstrap_servers
    topic = f"gen-out-{os.getpid()}-{max_step}"
    await create_topics(bs, [(topic, 3)])
    keys = [f"s_{i}" for i in range(KEYS)]
    spec = GeneratorSpec(bootstrap_servers=bs, topic=topic, keys=keys, period_ms=period_ms, duration_s=SECONDS,
                         params={"seed": 7, "batchSize": 4096, "valueInW": 12.5})
    report = await run_active_power(spec)

    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bs, auto_offset_reset="earliest", enable_auto_commit=False)
    await consumer.start()
    records = []
    try:
        while len(records) < report.records:
            batches = await consumer.getmany(timeout_ms=3000)
            if not batches:
                break
            for recs in batches.values():
                records.extend(recs)
    finally:
        await consumer.stop()
        await delete_topics(bs, [topic])

    assert report.records == len(records)
    per_partition: dict[int, list[int]] = defaultdict(list)
    stamps: dict[str, list[int]] = defaultdict(list)
    for r in records:
        value = json.loads(r.value)
        assert r.key is not None and value["identifier"] == r.key.decode()
        assert value["timestamp"] == r.timestamp
        assert value["valueInW"] == 12.5
        assert r.partition == partition_of(r.key, 3)
        per_partition[r.partition].append(r.offset)
        stamps[value["identifier"]].append(r.timestamp)
    for offsets in per_partition.values():
        assert offsets == list(range(len(offsets)))  # no gap, no duplicate
    # every key once per period from its phase until the end: 20 or 21 times in 2 s at 100 ms
    per_key = int(SECONDS * 1000 / period_ms)
    counts = Counter(len(v) for v in stamps.values())
    assert len(stamps) == KEYS and set(counts) <= {per_key, per_key + 1}, counts
    period = int(period_ms)
    for ts in stamps.values():
        gaps = {b - a for a, b in zip(ts, ts[1:], strict=False)}
        assert gaps <= {period - 1, period, period + 1}, gaps  # whole-ms timestamps
