"""Consumer lag of the SUT's group (topic housekeeping: :mod:`bench.runtime.kafka.admin`).

Lag = sum over the input partitions of (end offset - committed offset), each term
clamped at 0. End offsets come from one ListOffsets(latest) request per broker
(``end_offsets="listoffsets"``, the default: exact on Kafka and noida-db), or, for
tansu, from the high watermark of a Fetch response (``end_offsets="fetch"``): tansu
answers ListOffsets(latest) with the start of the last batch + 1, which makes lag low
by up to one producer batch per partition and negative after catch-up
(ENVIRONMENT.md). That fetch is positioned at the almost-end offset, so it returns at
most a batch per partition, but decoding it costs 4-5x the CPU of ListOffsets
(benchmarks/lag_sampling.py).

Committed offsets come from the admin API with explicit ``partitions=`` (aiokafka
without it drops the connection on tansu).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterable, Sequence

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import CoordinatorLoadInProgressError, GroupCoordinatorNotAvailableError, KafkaError

from bench.runtime.kafka.admin import create_topics, delete_topics  # noqa: F401 - re-exported
from bench.runtime.kafka.security import current as kafka_security

FETCH_WAIT_S = 5.0
#: how often a fetch-method sample checks whether every partition has answered (s)
FETCH_POLL_S = 0.002
#: how long a sample waits for a group coordinator that is still being set up (s)
COORDINATOR_WAIT_S = 15.0
END_OFFSET_METHODS = ("listoffsets", "fetch")


class LagSampler:
    def __init__(
        self,
        bootstrap_servers: str,
        group_id: str,
        topics: Sequence[str],
        always: Iterable[str] | None = None,
        end_offsets: str = "listoffsets",
    ) -> None:
        """``always``: topics whose partitions count even before the group committed
        anything (the input: lag = everything produced). Partitions of the other
        topics count only once the group commits for them, so that a side topic
        the SUT reads without committing (a registry, a feedback loop) does not add
        a lag that only grows. ``None``: every topic always counts.

        ``end_offsets``: ``listoffsets`` or ``fetch`` (brokers whose ListOffsets(latest)
        is not the end offset: tansu)."""
        if end_offsets not in END_OFFSET_METHODS:
            raise ValueError(f"end_offsets={end_offsets!r}; allowed: {', '.join(END_OFFSET_METHODS)}")
        self.end_offset_method = end_offsets
        self.bootstrap_servers = bootstrap_servers
        self.group_id = group_id
        self.topics = list(topics)
        self.always = set(self.topics if always is None else always)
        self._admin: AIOKafkaAdminClient | None = None
        self._consumer: AIOKafkaConsumer | None = None
        self._partitions: list[TopicPartition] = []
        self._coordinator: int | None = None
        #: per-partition values of the last sample (for diagnostics and tests)
        self.last_end: dict[TopicPartition, int] = {}
        self.last_committed: dict[TopicPartition, int] = {}

    async def start(self) -> None:
        self._admin = AIOKafkaAdminClient(bootstrap_servers=self.bootstrap_servers, **kafka_security().aiokafka())
        await self._admin.start()
        # A dedicated, group-less consumer: its only job is to read high watermarks.
        self._consumer = AIOKafkaConsumer(
            bootstrap_servers=self.bootstrap_servers,
            enable_auto_commit=False,
            fetch_max_wait_ms=100,
            max_partition_fetch_bytes=64 * 1024,
            auto_offset_reset="latest",
            **kafka_security().aiokafka(),
        )
        await self._consumer.start()
        await self._refresh_partitions()

    async def _refresh_partitions(self) -> None:
        """(Re)assign every partition; a brand-new topic can report none yet, so
        this runs again on each sample until every topic has partitions."""
        assert self._consumer is not None
        found: list[TopicPartition] = []
        missing = False
        for topic in self.topics:
            parts = self._consumer.partitions_for_topic(topic)
            if not parts:
                with contextlib.suppress(KafkaError):
                    await self._consumer._client.force_metadata_update()  # noqa: SLF001
                parts = self._consumer.partitions_for_topic(topic)
            if not parts:
                missing = True
                continue
            found.extend(TopicPartition(topic, p) for p in sorted(parts))
        if found != self._partitions:
            self._partitions = found
            if self.end_offset_method == "fetch":
                self._consumer.assign(found)
                self._consumer.pause(*found)
        self._complete = not missing

    async def end_offsets(self) -> dict[TopicPartition, int]:
        """End offsets by ListOffsets(latest), or high watermarks of one fresh fetch."""
        consumer = self._consumer
        assert consumer is not None
        tps = list(self._partitions)
        if not tps:
            return {}
        if self.end_offset_method == "listoffsets":
            return {tp: int(off) for tp, off in (await consumer.end_offsets(tps)).items()}
        started_ms = int(time.time() * 1000)
        await consumer.seek_to_end(*tps)
        consumer.resume(*tps)
        deadline = time.monotonic() + FETCH_WAIT_S
        waiting = list(tps)
        try:
            # The consumer's background fetcher updates a partition's high watermark and
            # poll timestamp when a fetch response for it arrives, records or not; so
            # this only waits for every partition to have answered since the seek. No
            # getmany(): it decoded fetched records nobody reads, and when no record came
            # it waited out its 100 ms timeout at full CPU (noida-db, idle topic: 106 ms
            # CPU per sample, now 13; benchmarks/lag_sampling.py --rate 0). The next
            # seek_to_end() discards what was fetched.
            while waiting and time.monotonic() < deadline:
                await asyncio.sleep(FETCH_POLL_S)
                waiting = [tp for tp in waiting if (consumer.last_poll_timestamp(tp) or 0) < started_ms]
        finally:
            consumer.pause(*tps)
        return {tp: int(consumer.highwater(tp) or 0) for tp in tps}

    async def committed(self) -> dict[TopicPartition, int]:
        assert self._admin is not None
        if not self._partitions:
            return {}
        # The coordinator is looked up once, not on every sample (py-spy: FindCoordinator
        # was ~12 % of the sampler's CPU at 1 s); a failure forgets it for the next try.
        if self._coordinator is None:
            self._coordinator = await self._find_coordinator()
        try:
            offsets = await self._admin.list_consumer_group_offsets(
                self.group_id, group_coordinator_id=self._coordinator, partitions=self._partitions
            )
        except Exception:
            self._coordinator = None
            raise
        return {tp: meta.offset for tp, meta in offsets.items() if meta is not None and meta.offset >= 0}

    async def _find_coordinator(self, timeout: float = COORDINATOR_WAIT_S) -> int:
        """The group's coordinator; waits while a fresh Apache Kafka still creates
        ``__consumer_offsets`` (it answers COORDINATOR_NOT_AVAILABLE for a second or two)."""
        assert self._admin is not None
        deadline = time.monotonic() + timeout
        while True:
            try:
                return int(await self._admin.find_coordinator(self.group_id))
            except (GroupCoordinatorNotAvailableError, CoordinatorLoadInProgressError):
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.2)

    async def sample(self) -> float:
        if not self._partitions or not self._complete:
            await self._refresh_partitions()
        end, committed = await asyncio.gather(self.end_offsets(), self.committed())
        self.last_end, self.last_committed = end, committed
        return float(
            sum(max(0, end[tp] - committed.get(tp, 0)) for tp in end if tp.topic in self.always or tp in committed)
        )

    async def close(self) -> None:
        for client in (self._consumer, self._admin):
            if client is not None:
                with contextlib.suppress(Exception):
                    await client.stop() if isinstance(client, AIOKafkaConsumer) else await client.close()
        self._consumer = self._admin = None

    async def __aenter__(self) -> LagSampler:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
