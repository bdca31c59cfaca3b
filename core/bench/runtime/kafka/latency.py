"""Event-time latency of a SUT's output, read from its output topic(s).

Latency of one output record = the broker's append time of that record minus the
record's event time. Output topics are created with ``message.timestamp.type =
LogAppendTime`` (:data:`bench.runtime.kafka.admin.OUTPUT_TOPIC_CONFIG`), so the first
term is taken on the broker's clock when the record became readable, not on the SUT's
clock when it was handed to a producer (seed 003's "one clock" rule). The event time is
the output value's ``latestEventTime`` field (epoch ms): for a windowed result, the
latest event time of the records in the window, the time from which on a result could
have been computed at all; records without it use ``timestamp`` (a record passed
through, like the calibrated SUT's output). Values are found with a regular expression
instead of ``json.loads``: the sampler must keep up with one record per input record
(the calibrated SUT) on the same cores the SUT uses.

The sampler is a group-less consumer assigned to every partition from the beginning,
so no output is missed however late the first sample comes. A sample reads what was
appended since the previous one and yields p50, p95, p99 and max in milliseconds, and
the output rate. An interval without output yields no latency values: a windowed use
case writes only when a window closes, and an empty interval says nothing about how
late results are.

Decoding is the sampler's cost, and it runs on the cores the SUT uses. UC3 re-emits
every updated (sensor, window) aggregate each trigger: 3,158 records/s on average at
20,000 records/s of input, up to 30,012 in one interval, which cost bench's
process about 2 % of one core; a SUT writing a record per input record at a higher rate
could take the sampler a core, and a busy interval fell behind. So an interval with more than
:data:`MAX_RECORDS` new records is read as :data:`SEGMENTS` evenly spaced runs of
records across its offsets (a systematic sample: every part of the interval is
represented, early and late triggers alike), and the rest is skipped. ``output-rate``
counts offsets, so it stays exact; the percentiles are those of the sample, and the
informational SLI ``latency-share`` says which share of the output they were taken from.
Reading a busy interval for a fixed time and carrying the rest over is what this avoids:
its percentiles would be an older interval's, and ``output-rate`` would count only what was read.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import re
import time
from collections.abc import Sequence

import numpy as np
from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition
from aiokafka.errors import KafkaError

from bench.runtime.kafka.security import current as kafka_security

log = logging.getLogger(__name__)

#: output value fields holding the event time (epoch ms), in order of preference
EVENT_TIME_FIELDS = ("latestEventTime", "timestamp")
#: percentiles reported per sample interval, and the SLI names they are stored under
PERCENTILES: dict[str, float] = {"latency-p50": 50.0, "latency-p95": 95.0, "latency-p99": 99.0, "latency-max": 100.0}
#: how long one sample may spend reading output (s); the rest waits for the next sample
READ_BUDGET_S = 1.5
#: output records decoded per sample at most; an interval with more is sampled (module doc)
MAX_RECORDS = 2_000
#: evenly spaced runs of records a sampled interval is read as
SEGMENTS = 10
#: aiokafka's timestamp_type of a LogAppendTime record
LOG_APPEND_TIME = 1

_PATTERNS = tuple(re.compile(rb'"%s"\s*:\s*(-?\d+(?:\.\d+)?)' % name.encode()) for name in EVENT_TIME_FIELDS)


def event_time_ms(value: bytes | None) -> float | None:
    """The event time (epoch ms) an output value carries, or None."""
    if not value:
        return None
    for pattern in _PATTERNS:
        match = pattern.search(value)
        if match:
            return float(match.group(1))
    return None


def latency_stats(latencies_ms: Sequence[float] | np.ndarray, seconds: float | None = None,
                  records: int | None = None) -> dict[str, float]:
    """p50/p95/p99/max (ms) of one interval's latencies (NaN if none), and ``output-rate`` if ``seconds`` is given.

    Linear interpolation between order statistics (numpy's default), so p99 of fewer
    than 100 records is a value between the two largest, not simply the largest.
    ``records``: how many the interval wrote, where the latencies are a sample of them
    (default: one per latency).
    """
    values = np.asarray(latencies_ms, dtype=float)
    out: dict[str, float] = {}
    for name, q in PERCENTILES.items():
        # NaN for an interval without output: the series keeps its first sample at the
        # experiment's start, so the SLO's warm-up counts from there (slo_math.after_warmup)
        out[name] = float(np.percentile(values, q)) if values.size else math.nan
    if seconds is not None and seconds > 0:
        out["output-rate"] = float(values.size if records is None else records) / seconds
    if records:
        # the share of the interval's output the percentiles are taken from: 1 when read
        # whole, below it where the interval was sampled (a figure marked for what it is)
        out["latency-share"] = min(1.0, float(values.size) / records)
    return out


def sample_runs(start: int, end: int, budget: int = MAX_RECORDS, segments: int = SEGMENTS) -> list[tuple[int, int]]:
    """(offset, records) runs to read of the offsets ``[start, end)``: all of them within
    ``budget``, else ``segments`` runs of ``budget // segments`` records, evenly spaced
    from ``start`` so that each part of the interval is in the sample."""
    count = end - start
    if count <= 0:
        return []
    if count <= budget:
        return [(start, count)]
    pieces = max(1, min(segments, budget))
    step = count / pieces
    return [(start + int(i * step), max(1, budget // pieces)) for i in range(pieces)]


async def stop_consumer(consumer: AIOKafkaConsumer, timeout: float = 10.0) -> None:
    """Stop a group-less consumer, tolerating aiokafka 0.14's close race.

    Its group-less coordinator cancels a helper task and awaits it; when that task never
    ran, the await raises CancelledError into a caller nobody cancelled. Only that one
    is swallowed: a real cancellation of the caller still propagates.
    """
    try:
        await asyncio.wait_for(consumer.stop(), timeout)
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise
    except Exception:  # noqa: BLE001 - a consumer that cannot stop cleanly is closed anyway
        log.debug("consumer stop failed", exc_info=True)


class LatencySampler:
    """Reads the output topics and turns each interval's records into latency percentiles."""

    def __init__(self, bootstrap_servers: str, topics: Sequence[str], read_budget_s: float = READ_BUDGET_S,
                 max_records: int = MAX_RECORDS, segments: int = SEGMENTS) -> None:
        self.bootstrap_servers = bootstrap_servers
        self.topics = list(topics)
        self.read_budget_s = read_budget_s
        self.max_records = max_records
        self.segments = segments
        self._consumer: AIOKafkaConsumer | None = None
        #: every output partition, in order, once assigned (empty until then)
        self._assigned: list[TopicPartition] = []
        self._last: float | None = None
        self._warned_clock = False
        #: records read in total, and those without an event time (for tests and diagnostics)
        self.records = 0
        self.without_event_time = 0
        #: intervals whose percentiles came from a sample of their records (module doc)
        self.sampled = 0

    async def start(self) -> None:
        # max_partition_fetch_bytes: a sampled run is a few hundred records, and fetching
        # 1 MiB for each would make the broker read what is then skipped
        self._consumer = AIOKafkaConsumer(
            bootstrap_servers=self.bootstrap_servers,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            fetch_max_wait_ms=100,
            max_partition_fetch_bytes=256 * 1024,
            **kafka_security().aiokafka(),
        )
        await self._consumer.start()
        self._last = time.time()
        await self._assign()

    async def _assign(self) -> None:
        """Assign every partition of every topic once all of them have metadata.

        Once only: re-assigning would reset positions and read records twice; until then
        nothing is read, and nothing is lost either, as reading starts at the beginning.
        """
        consumer = self._consumer
        assert consumer is not None
        wanted: list[TopicPartition] = []
        for topic in self.topics:
            parts = consumer.partitions_for_topic(topic)
            if not parts:
                with contextlib.suppress(KafkaError):
                    await consumer._client.force_metadata_update()  # noqa: SLF001
                parts = consumer.partitions_for_topic(topic)
            if not parts:
                return
            wanted.extend(TopicPartition(topic, p) for p in sorted(parts))
        consumer.assign(wanted)
        await consumer.seek_to_beginning(*wanted)
        self._assigned = wanted

    def _latency(self, record: ConsumerRecord[bytes, bytes]) -> float | None:
        self.records += 1
        event = event_time_ms(record.value)
        if event is None:
            self.without_event_time += 1
            return None
        if record.timestamp_type != LOG_APPEND_TIME and not self._warned_clock:
            self._warned_clock = True
            log.warning("output topic %s has CreateTime timestamps: latency is on the SUT's clock, "
                        "not the broker's", record.topic)
        return float(record.timestamp) - event

    async def read(self) -> tuple[list[float], int]:
        """Latencies (ms) of the output appended since the last read, within the time
        budget, and how many records that output was (more than the latencies where the
        interval was sampled)."""
        consumer = self._consumer
        assert consumer is not None
        if not self._assigned:
            await self._assign()
        if not self._assigned:
            return [], 0
        deadline = time.monotonic() + self.read_budget_s
        partitions = self._assigned
        ends = await consumer.end_offsets(partitions)
        starts = {tp: await consumer.position(tp) for tp in partitions}
        appended = sum(max(0, ends[tp] - starts[tp]) for tp in partitions)
        if appended > self.max_records:
            self.sampled += 1
            return await self._read_sample(partitions, starts, ends, deadline), appended
        latencies: list[float] = []
        read = 0
        # Read up to the end offsets taken above, not until a fetch comes back empty: a SUT
        # that writes all the time never leaves one empty, and each sample read for the
        # whole budget (1.5 s), so a 1-s sample interval took 1.5 s.
        behind = {tp for tp in partitions if ends[tp] > starts[tp]}
        while behind and time.monotonic() < deadline:
            batches = await consumer.getmany(*behind, timeout_ms=100, max_records=10_000)
            if not batches:
                break
            for tp, records in batches.items():
                read += len(records)
                latencies.extend(v for v in map(self._latency, records) if v is not None)
                if records and records[-1].offset + 1 >= ends[tp]:
                    behind.discard(tp)
        return latencies, read

    async def _read_sample(self, partitions: list[TopicPartition], starts: dict[TopicPartition, int],
                           ends: dict[TopicPartition, int], deadline: float) -> list[float]:
        """The latencies of :func:`sample_runs` of each partition's new offsets; each
        partition then continues from its end offset, the rest skipped."""
        consumer = self._consumer
        assert consumer is not None
        budget = max(self.segments, self.max_records // len(partitions))
        latencies: list[float] = []
        for tp in partitions:
            for offset, count in sample_runs(starts[tp], ends[tp], budget, self.segments):
                consumer.seek(tp, offset)
                got = 0
                while got < count and time.monotonic() < deadline:
                    records = (await consumer.getmany(tp, timeout_ms=100, max_records=count - got)).get(tp, [])
                    if not records:
                        break
                    got += len(records)
                    latencies.extend(v for v in map(self._latency, records) if v is not None)
            consumer.seek(tp, ends[tp])
        return latencies

    async def sample(self) -> dict[str, float]:
        """Percentiles of this interval's output latency (none if nothing was written) and ``output-rate``."""
        now = time.time()
        latencies, records = await self.read()
        seconds = now - self._last if self._last is not None else None
        self._last = now
        return latency_stats(latencies, seconds, records)

    async def close(self) -> None:
        if self._consumer is not None:
            await stop_consumer(self._consumer)
        self._consumer = None

    async def __aenter__(self) -> LatencySampler:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
