"""Spark's Kafka I/O on the real broker and a real SparkSession: both connectors (Spark's
own ``kafka`` source and sink, and bench's Python ``bench-kafka`` source and sink) read
every record once, honour the per-trigger record limit, count and skip malformed
records and get their offsets committed; the Python source's reader on every broker kind."""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from collections.abc import Iterator

import pytest
from bench.api import StreamingPlan, TopologyContext, UseCase
from bench.runtime.kafka.broker import KINDS, running_broker
from bench.runtime.kafka.source import DataLossError, EndOffsetProbe, KafkaRange, close_readers, read_range
from bench.testing import create_topics, end_offsets, produce, run_topology

pytestmark = pytest.mark.e2e


def _bench() -> dict:
    return {"kafkaConfig": {"topics": [{"name": "input", "numPartitions": 3}, {"name": "output", "numPartitions": 2}]}}


def _raw_copy(ctx: TopologyContext) -> StreamingPlan:
    from pyspark.sql import functions as F

    raw = ctx.read_topic("input")
    value = F.concat_ws("|", F.col("value"), F.col("partition").cast("string"), F.col("offset").cast("string"))
    return StreamingPlan(raw.select("key", value.alias("value")))


def _parsed_copy(ctx: TopologyContext) -> StreamingPlan:
    from pyspark.sql import functions as F

    rec = ctx.read_measurements("input")
    value = F.to_json(F.struct(F.col("identifier"), F.unix_millis("timestamp").alias("ts"), F.col("valueInW")))
    return StreamingPlan(rec.select(F.col("identifier").alias("key"), value.alias("value")))


def _record(i: int) -> tuple[str, str, int]:
    key = f"s_{i % 7}"
    return key, json.dumps({"identifier": key, "timestamp": 1000 * i, "valueInW": float(i)}), 1000 * i


CONNECTORS = pytest.mark.parametrize("connector", ["native", "python"])


@CONNECTORS
def test_every_record_once_and_offsets_committed(kafka_bootstrap: str, spark: object, connector: str) -> None:
    uc = UseCase("raw-copy", "test", _bench, topology=_raw_copy)
    records = [_record(i) for i in range(900)]
    result = run_topology(
        uc,
        [{"input": records[:600]}, {"input": records[600:]}],
        bootstrap_servers=kafka_bootstrap,
        spark=spark,
        max_records_per_trigger=250,
        connector=connector,
    )
    sources = Counter(tuple(r["value"].rsplit("|", 2)[1:]) for r in result)
    assert sum(sources.values()) == 900
    assert all(n == 1 for n in sources.values()), "a Kafka record was read twice"
    assert sorted(r["value"].split("|")[0] for r in result) == sorted(v for _, v, _ in records)
    assert len([p for p in result.progress if p["numInputRows"]]) >= 4  # the limit split the input
    assert max(p["numInputRows"] for p in result.progress) <= 250
    assert result.committed["input"] == result.end_offsets["input"]
    assert sum(result.end_offsets["input"].values()) == 900


@CONNECTORS
def test_malformed_records_counted_and_skipped(kafka_bootstrap: str, spark: object, connector: str) -> None:
    uc = UseCase("parsed-copy", "test", _bench, topology=_parsed_copy)
    good = [_record(i) for i in range(40)]
    bad = [
        ("x", "not json", 1),
        ("x", '{"identifier": "s_1", "timestamp": 5}', 2),  # no valueInW
        ("x", '{"identifier": "s_1", "timestamp": "soon", "valueInW": 1.0}', 3),
        ("x", None, 4),
        ("x", "\udcff".encode("utf-8", "surrogatepass").decode("latin-1"), 5),
    ]
    result = run_topology(
        uc,
        [{"input": good[:20] + bad}, {"input": good[20:]}],  # the query must survive step 1
        bootstrap_servers=kafka_bootstrap,
        spark=spark,
        connector=connector,
    )
    assert result.malformed == len(bad)
    assert len(result) == len(good)
    docs = sorted((json.loads(r["value"])["ts"], r["key"]) for r in result)
    assert docs == sorted((ts, k) for k, _, ts in good)
    assert result.committed["input"] == result.end_offsets["input"]


# --- Regression: every offset of [start, end) exactly once, on both embedded brokers ---
# noida-db deleted records whose 1970 timestamps were past the default retention.ms, and
# librdkafka's default offset reset jumped silently to the end: records vanished.


@pytest.fixture(scope="module", params=list(KINDS))
def any_broker(request: pytest.FixtureRequest) -> Iterator[str]:
    with running_broker(request.param) as handle:
        try:
            yield handle.bootstrap_servers
        finally:
            close_readers()


@pytest.fixture
def retention_wait_s(any_broker: str, request: pytest.FixtureRequest) -> float:
    """How long a broker may take to apply time retention (tansu has none)."""
    return 10.0 if "noida" in request.node.callspec.id else 0.0


def _read(bootstrap: str, topic: str, p: int, start: int, end: int, fail_on_data_loss: bool = True) -> list[int]:
    rng = KafkaRange(bootstrap, topic, p, start, end)
    return [o for batch in read_range(rng, fail_on_data_loss) for o in batch.column(4).to_pylist()]


def test_read_range_every_offset_once_at_any_split(any_broker: str) -> None:
    topic = f"ranges-{uuid.uuid4().hex[:8]}"
    create_topics(any_broker, {topic: 2})
    records = [_record(i) for i in range(700)]  # 1970 timestamps: retention must not bite
    produce(any_broker, topic, records[:300])
    produce(any_broker, topic, records[300:])  # a second producer: batch boundaries differ
    ends = end_offsets(any_broker, topic)
    assert sum(ends.values()) == 700
    for p, end in ends.items():
        cuts = sorted({0, 1, 7, end // 3, end // 2 + 1, end - 1, end})  # inside producer batches
        got = [o for a, b in zip(cuts, cuts[1:], strict=False) for o in _read(any_broker, topic, p, a, b)]
        assert got == list(range(end))


def test_deleted_records_fail_loudly_or_are_skipped(any_broker: str, retention_wait_s: float) -> None:
    """Broker-default retention deletes 1970-stamped records on noida (within ~2 s, on
    partitions > 0) and on real Kafka; tansu keeps everything."""
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"retained-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": any_broker})
    for fut in admin.create_topics([NewTopic(topic, 3, 1)]).values():  # broker-default retention
        fut.result(10)
    produce(any_broker, topic, [_record(i) for i in range(300)])
    probe = EndOffsetProbe(any_broker)
    try:
        deadline = time.monotonic() + retention_wait_s
        while True:  # wait for the broker's retention pass, if it has one
            offsets = probe.offsets(topic)
            p, (low, end) = max(offsets.items(), key=lambda kv: kv[1][0])
            if low > 0 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    finally:
        probe.close()
    print(f"partition {p}: low {low}, end {end}")
    if low == 0:  # nothing deleted (tansu): everything is read
        assert _read(any_broker, topic, p, 0, end) == list(range(end))
        return
    with pytest.raises(DataLossError):
        _read(any_broker, topic, p, 0, end)
    assert _read(any_broker, topic, p, 0, end, fail_on_data_loss=False) == list(range(low, end))


def test_read_range_builds_only_the_requested_columns(any_broker: str) -> None:
    topic = f"cols-{uuid.uuid4().hex[:8]}"
    create_topics(any_broker, {topic: 1})
    records = [_record(i) for i in range(50)]
    produce(any_broker, topic, records)
    batches = list(read_range(KafkaRange(any_broker, topic, 0, 10, 50, ("value", "offset"))))
    assert [b.schema.names for b in batches] == [["value", "offset"]] * len(batches)
    assert [o for b in batches for o in b.column(1).to_pylist()] == list(range(10, 50))
    assert [v for b in batches for v in b.column(0).to_pylist()] == [v for _, v, _ in records[10:]]


def test_long_range_comes_in_several_arrow_batches_without_gaps(any_broker: str) -> None:
    from bench.runtime.kafka import source as kafka_source
    topic = f"long-{uuid.uuid4().hex[:8]}"
    create_topics(any_broker, {topic: 1})
    total = 2 * kafka_source._ARROW_ROWS + 500
    produce(any_broker, topic, [_record(i) for i in range(total)])
    batches = list(read_range(KafkaRange(any_broker, topic, 0, 3, total - 2, ("offset",))))
    assert len(batches) >= 3
    assert [o for b in batches for o in b.column(0).to_pylist()] == list(range(3, total - 2))
