"""A Kafka streaming source for Spark written as a Python data source ("bench-kafka").

Why: the Spark Kafka connector JARs are not installable from PyPI, and Spark's own
connector commits no offsets to a consumer group, so consumer lag (the main SLI of the
method) could not be measured. This source reads Kafka partitions by offset range with
confluent-kafka (a synchronous client that works inside executor tasks) and
:class:`OffsetCommitter` commits the end offsets of every finished micro-batch to the
SUT's consumer group.

Offsets are ``{"topic": name, "offsets": {"<partition>": next_offset, ...}}``.
End offsets are read from Fetch high watermarks (:class:`EndOffsetProbe`), not from
ListOffsets, because tansu answers ListOffsets(latest) with the start of the last batch.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadLimit, ReadMaxRows
from pyspark.sql.types import (
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

SOURCE_NAME = "bench-kafka"

SCHEMA = StructType(
    [
        StructField("key", StringType()),
        StructField("value", StringType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
    ]
)

_ARROW_ROWS = 8192
_CONSUME_MAX = 8192
_FETCH_MAX_BYTES = 1024 * 1024
_READ_STALL_S = 60.0


def _client_conf(bootstrap: str, group_id: str = "bench-reader") -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "group.id": group_id,
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "enable.partition.eof": True,
        "fetch.wait.max.ms": 50,
        "socket.keepalive.enable": True,
        "log_level": 3,
    }


class EndOffsetProbe:
    """Reads (low, end) offsets of a topic's partitions from Fetch high watermarks.

    ListOffsets(latest) only positions the probe inside the last producer batch; one
    short fetch from there returns that batch and the true high watermark. The probe
    unassigns afterwards so it does not prefetch (and so re-read) the whole topic.
    """

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self._consumer: Any = None
        self._known: dict[tuple[str, int], int] = {}

    def _client(self) -> Any:
        if self._consumer is None:
            from confluent_kafka import Consumer

            self._consumer = Consumer(_client_conf(self.bootstrap, "bench-probe"))
        return self._consumer

    def partitions(self, topic: str, timeout: float = 5.0) -> list[int]:
        """Partition ids now; a brand-new topic may have none yet (never cached)."""
        md = self._client().list_topics(topic, timeout=timeout)
        meta = md.topics.get(topic)
        if meta is None or meta.error is not None:
            return []
        return sorted(meta.partitions)

    def offsets(self, topic: str, timeout: float = 10.0) -> dict[int, tuple[int, int]]:
        from confluent_kafka import KafkaError, TopicPartition

        c = self._client()
        parts = self.partitions(topic)
        if not parts:
            return {}
        result: dict[int, tuple[int, int]] = {}
        positions: dict[int, int] = {}
        for p in parts:
            low, listed = c.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout, cached=False)
            low = max(0, low)
            positions[p] = max(low, listed - 1, self._known.get((topic, p), 0) - 1)
            result[p] = (low, max(low, listed))
        c.assign([TopicPartition(topic, p, positions[p]) for p in parts])
        pending = set(parts)
        seen_end: dict[int, int] = {}
        deadline = time.monotonic() + timeout
        try:
            while pending and time.monotonic() < deadline:
                for msg in c.consume(num_messages=1000, timeout=0.05):
                    p = msg.partition()
                    err = msg.error()
                    if err is not None:
                        if err.code() == KafkaError._PARTITION_EOF:
                            pending.discard(p)
                            seen_end[p] = max(seen_end.get(p, 0), msg.offset())
                        continue
                    seen_end[p] = max(seen_end.get(p, 0), msg.offset() + 1)
                    if msg.offset() >= positions[p]:
                        pending.discard(p)
            for p in parts:
                _, high = c.get_watermark_offsets(TopicPartition(topic, p), cached=True)
                low, listed = result[p]
                end = max(listed, high, seen_end.get(p, 0), self._known.get((topic, p), 0))
                self._known[(topic, p)] = end
                result[p] = (low, end)
        finally:
            c.unassign()
        return result

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None


class KafkaRange(InputPartition):
    """One Kafka partition's offset range [start, end): one Spark task.

    ``columns``: the output columns, a subset of :data:`SCHEMA` in its order.
    """

    bootstrap: str
    topic: str
    partition: int
    start: int
    end: int
    columns: tuple[str, ...]

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        partition: int,
        start: int,
        end: int,
        columns: tuple[str, ...] = tuple(SCHEMA.fieldNames()),
    ) -> None:
        super().__init__((topic, partition, start, end))
        self.bootstrap = bootstrap
        self.topic = topic
        self.partition = partition
        self.start = start
        self.end = end
        self.columns = columns


class KafkaRanges(InputPartition):
    """Several partitions' ranges read one after another by one Spark task.

    Why: every Spark task of a Python source costs a round trip through a Python
    worker and an Arrow stream (~100 ms here); with more Kafka partitions than task
    slots, one task per Kafka partition pays that many times per micro-batch for no
    parallelism. ``tasks=N`` groups the ranges into N tasks of similar size.
    """

    ranges: list[KafkaRange]

    def __init__(self, ranges: list[KafkaRange]) -> None:
        super().__init__(tuple((r.partition, r.start, r.end) for r in ranges))
        self.ranges = ranges


def group_ranges(ranges: list[KafkaRange], tasks: int) -> list[KafkaRange | KafkaRanges]:
    """At most ``tasks`` groups, balanced by record count (largest range first into the
    lightest group); ``tasks <= 0`` or enough tasks: one task per range, as before."""
    if tasks <= 0 or len(ranges) <= tasks:
        return list(ranges)
    groups: list[list[KafkaRange]] = [[] for _ in range(tasks)]
    sizes = [0] * tasks
    for rng in sorted(ranges, key=lambda r: (-(r.end - r.start), r.partition)):
        i = sizes.index(min(sizes))
        groups[i].append(rng)
        sizes[i] += rng.end - rng.start
    return [KafkaRanges(sorted(g, key=lambda r: r.partition)) for g in groups if g]


def output_columns(schema: StructType | None) -> tuple[str, ...]:
    """The columns a reader produces for a user-specified ``schema`` (column pruning).

    Why: a Python data source gets no column pruning from Spark, and every column it
    yields is converted twice (Python -> Arrow -> JVM rows). Parsing measurements needs
    only ``value``, so ``read_topic(columns=...)`` asks for just that with
    ``.schema(...)``. Each requested field must be one of :data:`SCHEMA`'s, same type.
    """
    if schema is None:
        return tuple(SCHEMA.fieldNames())
    known = {f.name: f for f in SCHEMA.fields}
    for f in schema.fields:
        if f.name not in known:
            raise ValueError(f"bench-kafka has no column {f.name!r}; columns: {', '.join(known)}")
        if f.dataType != known[f.name].dataType:
            raise ValueError(
                f"bench-kafka column {f.name!r} is {known[f.name].dataType.simpleString()}, "
                f"not {f.dataType.simpleString()}"
            )
    wanted = set(schema.fieldNames())
    if len(wanted) != len(schema.fields):
        raise ValueError(f"bench-kafka schema names a column twice: {schema.simpleString()}")
    return tuple(name for name in SCHEMA.fieldNames() if name in wanted)


def select_columns(names: Sequence[str]) -> tuple[str, ...]:
    """``names`` checked against :data:`SCHEMA` and put in its order."""
    known = SCHEMA.fieldNames()
    bad = [c for c in names if c not in known]
    if bad:
        raise ValueError(f"unknown topic column(s) {', '.join(map(repr, bad))}; columns: {', '.join(known)}")
    return tuple(c for c in known if c in names)


def schema_of(columns: tuple[str, ...]) -> StructType:
    return StructType([f for f in SCHEMA.fields if f.name in columns])


def make_offset(topic: str, offsets: Mapping[int, int]) -> dict[str, Any]:
    return {"topic": topic, "offsets": {str(p): int(offsets[p]) for p in sorted(offsets)}}


def parse_offset(offset: Mapping[str, Any]) -> tuple[str, dict[int, int]]:
    return str(offset["topic"]), {int(p): int(v) for p, v in dict(offset["offsets"]).items()}


def parse_any_offset(offset: Mapping[str, Any]) -> dict[str, dict[int, int]]:
    """Topic -> partition -> next offset, from this source's or Spark's ``kafka`` source's JSON.

    Spark's connector writes ``{"topic": {"0": 12, "1": 7}}`` (several topics when it
    subscribes to several); this source writes ``{"topic": name, "offsets": {...}}``.
    """
    if isinstance(offset.get("topic"), str) and isinstance(offset.get("offsets"), Mapping):
        topic, offsets = parse_offset(offset)
        return {topic: offsets}
    return {str(t): {int(p): int(v) for p, v in dict(parts).items()} for t, parts in offset.items()}


class KafkaStreamReader(DataSourceStreamReader):
    def __init__(self, options: Mapping[str, str], schema: StructType | None = None) -> None:
        self.columns = output_columns(schema)
        self.bootstrap = options["bootstrap"]
        self.topic = options["topic"]
        raw_max = options.get("max_records_per_trigger") or ""
        self.max_records = int(raw_max) if raw_max and raw_max.lower() != "none" else None
        self.starting = options.get("starting_offsets", "earliest")
        self.fail_on_data_loss = options.get("fail_on_data_loss", "true").lower() != "false"
        raw_tasks = options.get("tasks") or "0"
        try:
            self.tasks = int(raw_tasks)
        except ValueError:
            raise ValueError(f"bench-kafka option tasks={raw_tasks!r}: expected a whole number") from None
        self._probe: EndOffsetProbe | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_probe"] = None  # a Kafka client is not picklable; executors need none
        return state

    @property
    def probe(self) -> EndOffsetProbe:
        if self._probe is None:
            self._probe = EndOffsetProbe(self.bootstrap)
        return self._probe

    def initialOffset(self) -> dict:
        offsets = self.probe.offsets(self.topic)
        if self.starting == "latest":
            return make_offset(self.topic, {p: end for p, (_, end) in offsets.items()})
        return make_offset(self.topic, {p: low for p, (low, _) in offsets.items()})

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.max_records:
            return ReadMaxRows(self.max_records)
        return super().getDefaultReadLimit()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        _, begin = parse_offset(start)
        offsets = self.probe.offsets(self.topic)
        if not offsets:
            return start
        ends = {p: max(end, begin.get(p, low)) for p, (low, end) in offsets.items()}
        for p, v in begin.items():  # a partition never disappears from the offset
            ends.setdefault(p, v)
        if isinstance(limit, ReadMaxRows):
            ends = _limit(begin, ends, {p: low for p, (low, _) in offsets.items()}, limit.max_rows)
        return make_offset(self.topic, ends)

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        _, begin = parse_offset(start)
        _, stop = parse_offset(end)
        ranges = [
            KafkaRange(self.bootstrap, self.topic, p, begin.get(p, 0), stop[p], self.columns)
            for p in sorted(stop)
            if stop[p] > begin.get(p, 0)
        ]
        return list(group_ranges(ranges, self.tasks))

    def read(self, partition: InputPartition) -> Iterator[Any]:
        if isinstance(partition, KafkaRanges):
            return (batch for rng in partition.ranges for batch in read_range(rng, self.fail_on_data_loss))
        assert isinstance(partition, KafkaRange)
        return read_range(partition, self.fail_on_data_loss)

    def commit(self, end: dict) -> None:
        """Nothing: Spark calls this one batch late; :class:`OffsetCommitter` commits."""

    def stop(self) -> None:
        if self._probe is not None:
            self._probe.close()


def _limit(begin: Mapping[int, int], ends: dict[int, int], lows: Mapping[int, int], budget: int) -> dict[int, int]:
    """Share ``budget`` records over the partitions in proportion to what each has."""
    avail = {p: ends[p] - begin.get(p, lows.get(p, 0)) for p in ends}
    total = sum(avail.values())
    if total <= budget:
        return ends
    out = {}
    for p, a in avail.items():
        share = max(1, budget * a // total) if a > 0 else 0
        out[p] = begin.get(p, lows.get(p, 0)) + min(a, share)
    return out


_heap_frozen = False


def freeze_worker_heap() -> None:
    """Move everything imported so far out of the garbage collector's sight, once per process.

    Why: a reused PySpark worker runs a full ``gc.collect()`` after *every* task
    (pyspark/daemon.py). With pyarrow, pandas and confluent-kafka imported that took
    ~150 ms on the loaded 2-core machine, and a UC1 micro-batch runs 2 Python stages x
    4 partitions: py-spy showed ~80 % of the Python workers' CPU in that one line.
    Frozen objects (modules, classes, functions: they live as long as the process
    anyway) are skipped by every later collection.
    """
    global _heap_frozen
    if _heap_frozen:
        return
    _heap_frozen = True
    import gc

    import pyarrow  # noqa: F401 - imported to be frozen
    import pyarrow.compute  # noqa: F401

    try:
        import pandas  # noqa: F401 - pyarrow's casts import it on first use
    except ImportError:
        pass
    gc.collect()
    gc.freeze()


class DataLossError(RuntimeError):
    """Records of a requested range are gone from the broker (retention, deletion).

    Real Kafka and noida-db delete records whose timestamps are older than the topic's
    ``retention.ms`` (7 days by default): data with old event times needs
    ``retention.ms=-1``. Like Spark's ``failOnDataLoss``, the default is to fail loudly
    rather than silently skip records; ``fail_on_data_loss=false`` skips them instead.
    """


def _reader_conf(bootstrap: str) -> dict[str, Any]:
    conf = _client_conf(bootstrap)
    # librdkafka's default reset ("latest") silently jumps to the end when the start
    # offset was deleted: the records in between vanished without a trace. "error"
    # surfaces it as _AUTO_OFFSET_RESET so that read_range decides.
    conf["auto.offset.reset"] = "error"
    conf["fetch.max.bytes"] = _FETCH_MAX_BYTES
    conf["max.partition.fetch.bytes"] = _FETCH_MAX_BYTES
    conf["fetch.min.bytes"] = 1
    # librdkafka postpones a partition's next fetch by this much (default 1000 ms) once
    # its pre-fetch queue is "full enough": a range reader that drains the queue right
    # away then sat idle ~1 s per 25k-record range (benchmarks/spark_source.py).
    conf["fetch.queue.backoff.ms"] = 5
    return conf


#: worker-process consumers by bootstrap: Spark reuses Python workers, and connecting
#: (metadata, broker connection) per task costs more than reading a small batch.
_READERS: dict[str, Any] = {}


def _reader(bootstrap: str) -> Any:
    consumer = _READERS.get(bootstrap)
    if consumer is None:
        from confluent_kafka import Consumer

        consumer = Consumer(_reader_conf(bootstrap))
        _READERS[bootstrap] = consumer
    return consumer


def close_readers() -> None:
    """Close this process's cached range readers (tests that stop their broker)."""
    for bootstrap in list(_READERS):
        _drop_reader(bootstrap)


def _drop_reader(bootstrap: str) -> None:
    consumer = _READERS.pop(bootstrap, None)
    if consumer is not None:
        try:
            consumer.close()
        except Exception:  # noqa: BLE001 - a broken client is being thrown away anyway
            pass


def read_range(rng: KafkaRange, fail_on_data_loss: bool = True) -> Iterator[Any]:
    """Fetch every record of [start, end) of one partition, once, as Arrow batches.

    Completion is by *position*, never by count: a fetch may return fewer records than
    asked, a partial batch, or records below the requested offset (a batch is returned
    whole); compacted topics have gaps. The range is done when a record at or past
    ``end`` arrives or the partition end (EOF) is at or past ``end``.
    """
    import pyarrow as pa
    from confluent_kafka import KafkaError, TopicPartition

    if rng.end <= rng.start:
        return
    freeze_worker_heap()
    consumer = _reader(rng.bootstrap)
    tp = TopicPartition(rng.topic, rng.partition, rng.start)
    consumer.assign([tp])
    ok = False
    try:
        keys: list[bytes | None] = []
        values: list[bytes | None] = []
        offsets: list[int] = []
        stamps: list[int] = []
        # only what the output columns need: a call and an append per record each
        want_key, want_value, want_stamp = ("key" in rng.columns, "value" in rng.columns, "timestamp" in rng.columns)
        pos = rng.start  # the next offset this range still needs
        stalled_since = time.monotonic()
        while pos < rng.end:
            # ask for no more than what is left: consume() waits for the full count
            msgs: list[Any] = consumer.consume(num_messages=max(1, min(_CONSUME_MAX, rng.end - pos)), timeout=0.5)
            before = pos
            for msg in msgs:
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        if msg.offset() >= rng.end:
                            pos = rng.end  # nothing left in range: the rest was compacted away
                        continue
                    if err.code() == KafkaError._AUTO_OFFSET_RESET or err.code() == KafkaError.OFFSET_OUT_OF_RANGE:
                        pos = _out_of_range(consumer, rng, pos, fail_on_data_loss)
                        break
                    raise RuntimeError(f"kafka read {rng.topic}/{rng.partition} at {pos}: {err}")
                off = msg.offset()
                if off < pos:
                    continue  # a whole batch was returned around the requested offset
                if off >= rng.end:
                    pos = rng.end
                    break
                pos = off + 1
                offsets.append(off)
                if want_key:
                    keys.append(msg.key())
                if want_value:
                    values.append(msg.value())
                if want_stamp:
                    stamps.append(msg.timestamp()[1])
            if pos != before:
                stalled_since = time.monotonic()
            elif time.monotonic() - stalled_since > _READ_STALL_S:
                raise RuntimeError(f"kafka read {rng.topic}/{rng.partition} stuck at {pos} before end {rng.end}")
            if len(offsets) >= _ARROW_ROWS:
                yield _batch(pa, rng, keys, values, offsets, stamps)
                keys, values, offsets, stamps = [], [], [], []
        if offsets:
            yield _batch(pa, rng, keys, values, offsets, stamps)
        ok = True
    finally:
        if ok:
            consumer.unassign()
        else:  # an error or an abandoned generator: do not reuse a client in an unknown state
            _drop_reader(rng.bootstrap)


def _out_of_range(consumer: Any, rng: KafkaRange, pos: int, fail_on_data_loss: bool) -> int:
    """The broker has no record at ``pos``: deleted (data loss) or not there yet."""
    from confluent_kafka import TopicPartition

    low, high = consumer.get_watermark_offsets(TopicPartition(rng.topic, rng.partition), timeout=10, cached=False)
    if low > pos:
        lost = f"{rng.topic}/{rng.partition} offsets [{pos}, {min(low, rng.end)}) were deleted by the broker"
        if fail_on_data_loss:
            raise DataLossError(
                f"{lost} before Spark read them (retention.ms shorter than the records' age?); "
                "set fail_on_data_loss=false to skip them"
            )
        pos = min(low, rng.end)
    else:
        time.sleep(0.1)  # above the high watermark for now (a lagging replica or probe): retry
    if pos < rng.end:
        consumer.assign([TopicPartition(rng.topic, rng.partition, pos)])
    return pos


def _strings(pa: Any, items: list[bytes | None]) -> Any:
    try:
        return pa.array(items, pa.binary()).cast(pa.string())
    except (pa.ArrowInvalid, UnicodeDecodeError):  # not UTF-8: keep the row, let parsing reject it
        return pa.array([None if b is None else b.decode("utf-8", "replace") for b in items], pa.string())


def _batch(
    pa: Any,
    rng: KafkaRange,
    keys: list[bytes | None],
    values: list[bytes | None],
    offsets: list[int],
    stamps: list[int],
) -> Any:
    n = len(offsets)
    build = {
        "key": lambda: _strings(pa, keys),
        "value": lambda: _strings(pa, values),
        "topic": lambda: pa.array([rng.topic] * n, pa.string()),
        "partition": lambda: pa.array([rng.partition] * n, pa.int32()),
        "offset": lambda: pa.array(offsets, pa.int64()),
        "timestamp": lambda: pa.array([s * 1000 for s in stamps], pa.timestamp("us", tz="UTC")),
    }
    return pa.RecordBatch.from_arrays([build[name]() for name in rng.columns], names=list(rng.columns))


class KafkaDataSource(DataSource):
    """``spark.readStream.format("bench-kafka")`` and ``writeStream.format("bench-kafka")``.

    Read options: ``bootstrap``, ``topic``, ``max_records_per_trigger``, ``tasks`` (Spark
    tasks per micro-batch; 0 = one per Kafka partition; see :class:`KafkaRanges`),
    ``starting_offsets`` (earliest | latest), ``fail_on_data_loss`` (true | false: raise
    :class:`DataLossError` or skip when records of a range were deleted). Write options: see
    :mod:`bench.runtime.kafka_sink`.
    """

    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def schema(self) -> StructType:
        return SCHEMA

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return KafkaStreamReader(self.options, schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> Any:
        from bench.runtime.kafka_sink import KafkaStreamWriter

        return KafkaStreamWriter(self.options, schema)


class OffsetCommitter:
    """Commits each finished micro-batch's end offsets to the SUT consumer group.

    Called from a StreamingQueryListener's ``onQueryProgress`` (see
    :mod:`bench.runtime.spark_session`): unlike ``reader.commit()``, which Spark calls
    only when the next batch starts, progress arrives right after a batch finishes,
    so the committed offsets equal the end offsets when the query is idle.
    """

    def __init__(self) -> None:
        self._groups: dict[str, tuple[str, str]] = {}  # topic -> (bootstrap, group)
        self._clients: dict[tuple[str, str], Any] = {}

    def watch(self, topic: str, bootstrap: str, group_id: str) -> None:
        self._groups[topic] = (bootstrap, group_id)

    def commit_progress(self, source_end_offsets: list[str | None]) -> None:
        from confluent_kafka import TopicPartition

        for raw in source_end_offsets:
            if not raw:
                continue
            try:
                per_topic = parse_any_offset(json.loads(raw))
            except (ValueError, KeyError, TypeError, AttributeError):
                continue  # another kind of source
            for topic, offsets in per_topic.items():
                target = self._groups.get(topic)
                if target is None or not offsets:
                    continue
                client = self._clients.get(target)
                if client is None:
                    from confluent_kafka import Consumer

                    client = Consumer(_client_conf(target[0], target[1]))
                    self._clients[target] = client
                client.commit(
                    offsets=[TopicPartition(topic, p, o) for p, o in sorted(offsets.items())],
                    asynchronous=False,
                )

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()
