"""The worker side of the source: reading one offset range of one partition, once.

Runs inside Spark's Python workers, with confluent-kafka because it is synchronous (an
executor task has no event loop). A range is read by position, so every record of it
arrives once, and a range whose records the broker deleted fails loudly by default.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from bench.runtime.kafka.source.arrow_batches import ARROW_ROWS, record_batch
from bench.runtime.kafka.source.client_conf import client_conf
from bench.runtime.kafka.source.ranges import KafkaRange
from bench.runtime.kafka.source.worker_heap import freeze_worker_heap

_CONSUME_MAX = 8192
_FETCH_MAX_BYTES = 1024 * 1024
_READ_STALL_S = 60.0


class DataLossError(RuntimeError):
    """Records of a requested range are gone from the broker (retention, deletion).

    Real Kafka and noida-db delete records whose timestamps are older than the topic's
    ``retention.ms`` (7 days by default): data with old event times needs
    ``retention.ms=-1``. Like Spark's ``failOnDataLoss``, the default is to fail loudly
    rather than silently skip records; ``fail_on_data_loss=false`` skips them instead.
    """


def _reader_conf(bootstrap: str) -> dict[str, Any]:
    conf = client_conf(bootstrap)
    # librdkafka's default reset ("latest") silently jumps to the end when the start
    # offset was deleted: the records in between vanished without a trace. "error"
    # surfaces it as _AUTO_OFFSET_RESET so that read_range decides.
    conf["auto.offset.reset"] = "error"
    conf["fetch.max.bytes"] = _FETCH_MAX_BYTES
    conf["max.partition.fetch.bytes"] = _FETCH_MAX_BYTES
    conf["fetch.min.bytes"] = 1
    # librdkafka postpones a partition's next fetch by this much (default 1000 ms) once
    # its pre-fetch queue is "full enough": a range reader that drains the queue right
    # away then sat idle for it on every range (docs/performance.md, "Spark Kafka source").
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
            if len(offsets) >= ARROW_ROWS:
                yield record_batch(pa, rng, keys, values, offsets, stamps)
                keys, values, offsets, stamps = [], [], [], []
        if offsets:
            yield record_batch(pa, rng, keys, values, offsets, stamps)
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
