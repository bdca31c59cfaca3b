"""The SUT's streaming query, as a library: reading topics, starting, warming up, progress.

The SUT driver program (:mod:`bench.runtime.spark.driver`) and the test harness
(:mod:`bench.testing`) build the same query from a use case's topology; keeping it out
of the program lets tests and benchmarks import it without running a driver.

- :func:`read_topic`, :func:`parse_measurements`: a topic as a streaming DataFrame
  (Python ``bench-kafka`` source or Spark's native ``kafka`` connector);
- :func:`build_context`: the :class:`~bench.api.TopologyContext` a topology gets, its
  readers committing offsets to the SUT's consumer group;
- :func:`start_query`, :func:`wait_ready`, :func:`warm_up`: starting the plan;
- :class:`ProgressTotals`: cumulative counters and the driver's progress events.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from bench.api import StreamingPlan, TopologyContext, UseCase
from bench.runtime import instrumentation
from bench.runtime.kafka.security import current as kafka_security

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery

MALFORMED_PREFIX = "bench_malformed_"
MEASUREMENT_SCHEMA = "identifier string, timestamp long, valueInW double"
#: ``fetch.max.wait.ms`` of Spark's own Kafka source. Kafka's default (500 ms) made every
#: read task of a micro-batch wait about half a second with no CPU used: the consumer's
#: prefetch after its last record is held by the broker for that long, and the next fetch
#: of that consumer waits for it. UC4 at 64 records/s on one core: each of its 4 read
#: tasks took 540 ms (25 ms of CPU) and a batch 3.6 s; at 20 ms, 55-80 ms and 1.4-2.1 s
#: (docs/performance.md, "Spark's Kafka source: half a second per read task").
NATIVE_FETCH_MAX_WAIT_MS = 20
_observe_ids = itertools.count()


def read_topic(
    spark: SparkSession,
    bootstrap: str,
    topic: str,
    connector: str = "python",
    max_records_per_trigger: int | None = None,
    columns: Sequence[str] | None = None,
    tasks: int = 0,
) -> DataFrame:
    """The raw stream of one real topic: key, value, topic, partition, offset, timestamp.

    ``columns`` keeps only those (in that schema order); the Python source then never
    builds the others, which measurably shortens its micro-batches (docs/performance.md).
    ``tasks``: Spark tasks per micro-batch for the Python source (0: one per Kafka
    partition); the SUT uses its instance count, i.e. its task slots.
    """
    from bench.runtime.kafka.source import SCHEMA, schema_of, select_columns

    wanted = tuple(SCHEMA.fieldNames()) if columns is None else select_columns(columns)
    if connector == "native":
        from pyspark.sql import functions as F

        reader = (
            spark.readStream.format("kafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .options(**kafka_security().spark())
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .option("kafka.fetch.max.wait.ms", str(NATIVE_FETCH_MAX_WAIT_MS))
        )
        if max_records_per_trigger:
            reader = reader.option("maxOffsetsPerTrigger", str(max_records_per_trigger))
        native = {
            "key": F.col("key").cast("string").alias("key"),
            "value": F.col("value").cast("string").alias("value"),
        }
        return reader.load().select(*[native.get(c, F.col(c)) for c in wanted])
    if connector != "python":
        raise ValueError(f"connector must be 'python' or 'native', got {connector!r}")
    reader = spark.readStream.format("bench-kafka").option("bootstrap", bootstrap).option("topic", topic)
    if columns is not None:
        reader = reader.schema(schema_of(wanted))
    if tasks > 0:
        reader = reader.option("tasks", str(tasks))
    if max_records_per_trigger:
        reader = reader.option("max_records_per_trigger", str(max_records_per_trigger))
    return reader.load()


def parse_measurements(raw: DataFrame, name: str) -> DataFrame:
    """ActivePowerRecord JSON -> identifier, timestamp (TimestampType), valueInW.

    Parsing happens in the JVM (from_json); rows that do not parse or lack a field are
    counted through ``observe`` (``progress.observedMetrics[name]``) and dropped.
    """
    from pyspark.sql import functions as F

    parsed = raw.select(F.from_json(F.col("value"), MEASUREMENT_SCHEMA).alias("r"))
    bad = (
        F.col("r").isNull()
        | F.col("r.identifier").isNull()
        | F.col("r.timestamp").isNull()
        | F.col("r.valueInW").isNull()
    )
    flagged = parsed.withColumn("_bad", bad)
    observed = flagged.observe(name, F.sum(F.col("_bad").cast("long")).alias("malformed"))
    return observed.where(~F.col("_bad")).select(
        F.col("r.identifier").alias("identifier"),
        F.timestamp_millis(F.col("r.timestamp")).alias("timestamp"),
        F.col("r.valueInW").alias("valueInW"),
    )


def build_context(
    spark: SparkSession,
    bootstrap: str,
    topics: Mapping[str, str],
    group_id: str,
    params: Mapping[str, Any],
    instances: int = 1,
    connector: str = "python",
    max_records_per_trigger: int | None = None,
) -> TopologyContext:
    """A TopologyContext whose readers commit their offsets to ``group_id``."""
    from bench.runtime.spark.session import progress_listener

    committer = progress_listener(spark).committer

    def topic_of(logical: str) -> str:
        if logical not in topics:
            raise KeyError(f"unknown logical topic {logical!r}; known: {sorted(topics)}")
        return topics[logical]

    def _read_topic(logical: str, columns: Sequence[str] | None = None) -> DataFrame:
        real = topic_of(logical)
        if instrumentation.enabled("commits"):  # off only to measure what the commits cost (observer_effect.py)
            committer.watch(real, bootstrap, group_id)
        return read_topic(spark, bootstrap, real, connector, max_records_per_trigger, columns, tasks=instances)

    def _read_measurements(logical: str) -> DataFrame:
        name = f"{MALFORMED_PREFIX}{logical.replace('-', '_')}_{next(_observe_ids)}"
        return parse_measurements(_read_topic(logical, ("value",)), name)

    return TopologyContext(
        spark=spark,
        params=dict(params),
        topics=dict(topics),
        instances=instances,
        read_topic=_read_topic,
        read_measurements=_read_measurements,
    )


def start_query(
    plan: StreamingPlan,
    ctx: TopologyContext,
    bootstrap: str,
    checkpoint_dir: str,
    trigger_seconds: float,
    connector: str = "python",
    name: str | None = None,
    available_now: bool = False,
) -> StreamingQuery:
    from bench.runtime.kafka.sink import foreach_batch_writer, write_stream

    if callable(plan.sink):
        writer = plan.df.writeStream.foreachBatch(plan.sink)
    elif plan.sink == "kafka" and plan.output_mode != "append" and connector == "python":
        # Python stream writers support append only; see foreach_batch_writer
        writer = plan.df.writeStream.foreachBatch(foreach_batch_writer(bootstrap, ctx.topics))
    elif plan.sink == "kafka":
        writer = write_stream(plan.df, bootstrap, ctx.topics, connector)
    else:
        raise ValueError(f"StreamingPlan.sink must be 'kafka' or a callable, got {plan.sink!r}")
    writer = writer.outputMode(plan.output_mode).option("checkpointLocation", checkpoint_dir)
    if name:
        writer = writer.queryName(name)
    if available_now:
        return writer.trigger(availableNow=True).start()
    return writer.trigger(processingTime=f"{max(0.0, trigger_seconds)} seconds").start()


#: A record every use case's parser rejects (no field parses): the warm-up of a plan with
#: its own sink that its use case cannot point at a throw-away place
#: (:attr:`bench.api.UseCase.warmup_params`) runs the whole plan on it but stores nothing,
#: so that sink stays clean.
WARMUP_VALUE = b"{}"
WARMUP_RECORDS_PER_PARTITION = 4
#: A plan that writes to Kafka, or to its own sink pointed at a throw-away place, gets
#: valid measurements, so that its aggregation, state store and sink run too: with
#: rejected records only, a windowed query's first real micro-batches at a quarter core
#: took 13-19 s each (UC2 and UC3), compiling what the warm-up never ran, and the lag's
#: saw-tooth of that period made every verdict unstable.
WARMUP_ROUNDS = 4
WARMUP_VALID_PER_PARTITION = 2_000
WARMUP_SENSORS = 64


def _warmup_records(rnd: int) -> list[tuple[bytes, bytes]]:
    import json
    import time

    now = int(time.time() * 1000)
    return [(f"warmup-{i % WARMUP_SENSORS}".encode(),
             json.dumps({"identifier": f"warmup-{i % WARMUP_SENSORS}", "timestamp": now + rnd * 1000 + i % 1000,
                         "valueInW": float(i % 100)}).encode())
            for i in range(WARMUP_VALID_PER_PARTITION)]


def warm_up(
    spark: SparkSession,
    use_case: UseCase,
    bootstrap: str,
    topics: Mapping[str, str],
    group_id: str,
    params: Mapping[str, Any],
    instances: int,
    connector: str,
    timeout_s: float = 90.0,
) -> float:
    """Run the topology over throw-away topics, as batches (availableNow), before the
    experiment's query starts.

    Why: the first micro-batch of a fresh session takes many seconds (minutes on a
    loaded machine; docs/performance.md, "Spark start-up and the warm-up batch"), mostly
    JVM class loading and code generation plus starting Python workers. Without a
    warm-up the generator started while Spark was still compiling, and the first minute
    of every experiment measured the JIT, not the SUT. A plan writing to Kafka, or to its
    own sink pointed at a throw-away directory (:func:`warmup_params`), runs
    ``WARMUP_ROUNDS`` batches of valid records (its aggregation, state store and sink
    warm up too); any other plan with its own sink one batch of rejected records. A warm-up still
    running after ``timeout_s`` is stopped (the platform's start timeout must still be
    met on a loaded machine). Returns the seconds it took.
    """
    import shutil
    import tempfile
    import time
    import uuid

    from confluent_kafka import Producer

    from bench.runtime.kafka.admin import create_topics_sync, delete_topics_sync
    from bench.runtime.kafka.source import EndOffsetProbe

    began = time.monotonic()
    suffix = uuid.uuid4().hex[:8]
    warm = {logical: f"{real}-warmup-{suffix}" for logical, real in topics.items()}
    probe = EndOffsetProbe(bootstrap)
    try:
        sizes = {warm[k]: max(1, len(probe.partitions(real))) for k, real in topics.items()}
    finally:
        probe.close()
    create_topics_sync(bootstrap, sizes)
    producer = Producer({"bootstrap.servers": bootstrap, "log_level": 3, **kafka_security().confluent()})
    ckpt = tempfile.mkdtemp(prefix="bench-warmup-")
    scratch = tempfile.mkdtemp(prefix="bench-warmup-sink-")
    try:
        warm_params, redirected = warmup_params(use_case, params, scratch)
        ctx = build_context(spark, bootstrap, warm, f"{group_id}-warmup", warm_params, instances, connector)
        plan = use_case.topology(ctx) if use_case.topology is not None else None
        if plan is None:
            return 0.0
        valid = plan.sink == "kafka" or redirected
        for rnd in range(WARMUP_ROUNDS if valid else 1):
            rejected = [(b"warmup", WARMUP_VALUE)] * WARMUP_RECORDS_PER_PARTITION
            for logical, real in warm.items():
                if logical == "output":
                    continue
                # valid measurements to the input only; other topics (UC4's configuration) get "{}"
                records = _warmup_records(rnd) if valid and logical == "input" else rejected
                for p in range(sizes[real]):
                    for key, value in records:
                        producer.produce(real, value=value, key=key, partition=p)
            producer.flush(30)
            query = start_query(plan, ctx, bootstrap, ckpt, 0.0, connector, None, available_now=True)
            try:
                query.awaitTermination(max(1, int(timeout_s - (time.monotonic() - began))))
            finally:
                query.stop()
            if time.monotonic() - began > timeout_s:
                break
    finally:
        shutil.rmtree(ckpt, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)
        with contextlib.suppress(Exception):  # leftover warm-up topics are harmless
            delete_topics_sync(bootstrap, list(sizes))
    return time.monotonic() - began


def warmup_params(use_case: UseCase, params: Mapping[str, Any], scratch: str) -> tuple[Mapping[str, Any], bool]:
    """The parameters the warm-up's topology runs with, and whether its own sink stores
    into ``scratch`` (:attr:`bench.api.UseCase.warmup_params`): only then may the warm-up
    send it valid records, which the user's store must never get."""
    if use_case.warmup_params is None:
        return params, False
    return dict(use_case.warmup_params(params, scratch)), True


def wait_ready(query: StreamingQuery, stop: threading.Event, timeout_s: float = 120.0) -> None:
    """Until the query's first trigger has planned its offsets (or a batch ran)."""
    import time

    deadline = time.monotonic() + timeout_s
    while not stop.is_set() and time.monotonic() < deadline:
        if query.exception() is not None or not query.isActive:
            raise RuntimeError(str(query.exception() or "query stopped"))
        status = query.status
        if query.lastProgress is not None or not status.get("isTriggerActive") and "Waiting" in str(
            status.get("message")
        ):
            return
        stop.wait(0.1)


@dataclass
class ProgressTotals:
    """Cumulative counters over a query's progress events."""

    dropped_by_watermark: int = 0
    malformed: int = 0
    input_rows: int = 0
    batches: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)

    def add(self, progress: Any) -> dict[str, Any]:
        self.batches += 1
        self.input_rows += int(progress.numInputRows or 0)
        self.dropped_by_watermark += sum(int(op.numRowsDroppedByWatermark or 0) for op in progress.stateOperators)
        for metric, row in (progress.observedMetrics or {}).items():
            if metric.startswith(MALFORMED_PREFIX) and row is not None:
                self.malformed += int(row["malformed"] or 0)
        event = {
            "event": "progress",
            "timestamp": progress.timestamp,
            "batchId": progress.batchId,
            "numInputRows": progress.numInputRows,
            # cumulative: a windowed query's no-data batches (watermark only) shorten the
            # interval behind inputRowsPerSecond, so only rows over wall time give its throughput
            "inputRows": self.input_rows,
            "inputRowsPerSecond": _finite(progress.inputRowsPerSecond),
            "processedRowsPerSecond": _finite(progress.processedRowsPerSecond),
            "batchDurationMs": (progress.durationMs or {}).get("triggerExecution"),
            # when the batch ended (epoch s): two of these bound a span exactly, where the
            # samples that carry them are seconds apart (bench.slo.batch_progress)
            "batchEnd": batch_end(progress.timestamp, (progress.durationMs or {}).get("triggerExecution")),
            "droppedByWatermark": self.dropped_by_watermark,
            "malformed": self.malformed,
            "durationMs": dict(progress.durationMs or {}),
        }
        self.events.append(event)
        return event


def batch_end(started: Any, duration_ms: Any) -> float:
    """Epoch seconds at which a batch that started at ``started`` (Spark's ISO-8601
    progress timestamp) and ran ``duration_ms`` ended; 0.0 when either is unreadable."""
    try:
        start = datetime.fromisoformat(str(started).replace("Z", "+00:00"))
        return start.timestamp() + float(duration_ms or 0) / 1000.0
    except (TypeError, ValueError):
        return 0.0


def _finite(x: Any) -> float:
    try:
        value = float(x)
    except (TypeError, ValueError):
        return 0.0
    return value if value == value and value not in (float("inf"), float("-inf")) else 0.0
