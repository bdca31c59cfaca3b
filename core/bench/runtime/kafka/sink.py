"""Writing a result stream to Kafka.

A stream writer for the "bench-kafka" data source (Arrow batches in, confluent-kafka
producer out, one producer per task) because the Spark Kafka connector is not installable
here; :func:`write_stream` picks it or Spark's native ``kafka`` format (``connector``).
Rows need string columns ``key`` and ``value``; an optional string column ``topic``
holds a *logical* topic name (``output``, ``aggregation-feedback``, ...) that is mapped
to the real topic, so one query can feed several topics (UC4's feedback loop).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from bench.runtime.kafka.security import current as kafka_security

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming import DataStreamWriter


@dataclass
class Written(WriterCommitMessage):
    records: int


def _producer(bootstrap: str) -> Any:
    from confluent_kafka import Producer

    return Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 5,
            "batch.num.messages": 10000,
            "queue.buffering.max.messages": 500000,
            "enable.idempotence": False,
            "log_level": 3,
            **kafka_security().confluent(),
        }
    )


def produce_batches(batches: Iterator[Any], bootstrap: str, default_topic: str, topics: Mapping[str, str]) -> int:
    """Send Arrow batches (key, value[, topic]) to Kafka; returns the record count.

    Delivery errors fail the task (so Spark retries the batch): at-least-once output.
    """
    from bench.runtime.kafka.source.worker_heap import freeze_worker_heap

    freeze_worker_heap()
    producer = _producer(bootstrap)
    errors: list[str] = []

    def on_delivery(err: Any, _msg: Any) -> None:
        if err is not None and len(errors) < 5:
            errors.append(str(err))

    count = 0
    for batch in batches:
        cols = batch.schema.names
        keys = batch.column(cols.index("key")).to_pylist()
        values = batch.column(cols.index("value")).to_pylist()
        routes = batch.column(cols.index("topic")).to_pylist() if "topic" in cols else None
        for i, value in enumerate(values):
            topic = default_topic if routes is None or routes[i] is None else topics.get(routes[i], routes[i])
            while True:
                try:
                    producer.produce(topic, value=value, key=keys[i], on_delivery=on_delivery)
                    break
                except BufferError:
                    producer.poll(0.05)
            count += 1
        producer.poll(0)
    remaining = producer.flush(60)
    if errors or remaining:
        raise RuntimeError(f"kafka write failed ({remaining} undelivered): {'; '.join(errors)}")
    return count


class KafkaStreamWriter(DataSourceStreamArrowWriter):
    """Options: ``bootstrap``, ``topic`` (real default topic), ``topics`` (JSON map of
    logical -> real names for the ``topic`` column)."""

    def __init__(self, options: Mapping[str, str], schema: StructType) -> None:
        names = set(schema.fieldNames())
        if not {"key", "value"} <= names:
            raise ValueError(f"bench-kafka sink needs string columns key and value, got {sorted(names)}")
        self.bootstrap = options["bootstrap"]
        self.topic = options.get("topic", "")
        self.topics: dict[str, str] = json.loads(options.get("topics") or "{}")

    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        return Written(produce_batches(iterator, self.bootstrap, self.topic, self.topics))

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Nothing to do: records are visible as soon as they are produced."""

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Nothing to undo: Kafka has no transactions here (tansu lacks them)."""


def _columns(df: DataFrame) -> DataFrame:
    cols = ["key", "value"] + (["topic"] if "topic" in df.columns else [])
    return df.select(*cols)


def write_stream(
    df: DataFrame,
    bootstrap: str,
    topics: Mapping[str, str],
    connector: str = "python",
    output: str = "output",
) -> DataStreamWriter:
    """A configured ``writeStream`` for ``df`` to ``topics[output]`` (caller adds trigger,
    checkpoint and starts it)."""
    df = _columns(df)
    if connector == "native":
        return (
            _native(df, bootstrap, topics, output)
            .writeStream.format("kafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .options(**kafka_security().spark())
        )
    if connector != "python":
        raise ValueError(f"connector must be 'python' or 'native', got {connector!r}")
    return (
        df.writeStream.format("bench-kafka")
        .option("bootstrap", bootstrap)
        .option("topic", topics[output])
        .option("topics", json.dumps(dict(topics)))
    )


def foreach_batch_writer(
    bootstrap: str, topics: Mapping[str, str], output: str = "output"
) -> Callable[[DataFrame, int], None]:
    """A ``foreachBatch`` function writing each micro-batch to Kafka, for update mode.

    Spark accepts update mode only from sinks that declare SupportsStreamingUpdateAsAppend,
    which Python stream writers cannot ("bench-kafka does not support Update mode"). An
    update-mode plan (UC3's periodic early results) therefore goes through foreachBatch;
    the executors still produce the rows (mapInArrow), nothing is collected on the driver.
    """
    default_topic, routes = topics[output], dict(topics)

    def write(batch: DataFrame, batch_id: int) -> None:
        import pyarrow as pa

        def produce(batches: Iterator[Any]) -> Iterator[Any]:
            count = produce_batches(batches, bootstrap, default_topic, routes)
            yield pa.RecordBatch.from_pydict({"records": [count]}, schema=pa.schema([("records", pa.int64())]))

        _columns(batch).mapInArrow(produce, "records long").collect()

    return write


def _native(df: DataFrame, bootstrap: str, topics: Mapping[str, str], output: str) -> DataFrame:
    from pyspark.sql import functions as F

    real = F.lit(topics[output])
    if "topic" in df.columns:
        for logical, name in topics.items():
            real = F.when(F.col("topic") == logical, F.lit(name)).otherwise(real)
        df = df.withColumn("topic", real)
    else:
        df = df.withColumn("topic", real)
    return df


def write_batch(df: DataFrame, bootstrap: str, topics: Mapping[str, str], output: str = "output") -> int:
    """Write a static DataFrame to Kafka from ``foreachBatch`` code; returns the count."""
    default = topics[output]
    mapping = dict(topics)

    def send(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        n = produce_batches(batches, bootstrap, default, mapping)
        yield pa.RecordBatch.from_arrays([pa.array([n], pa.int64())], names=["n"])

    rows = _columns(df).mapInArrow(send, "n long").collect()
    return int(sum(r["n"] for r in rows))
