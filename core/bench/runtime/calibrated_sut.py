"""One instance of the ``calibrated`` SUT: ``python -m bench.runtime.calibrated_sut SPEC.json``.

A plain Kafka consumer in the SUT's group that processes at most
``params["capacity"]`` records/s (token bucket) and commits what it processed about
every 0.05 s. Its capacity is known by construction, so a benchmark of it must find
demand = ceil(load / capacity): the check that a setup measures correctly.

``params["capacityMode"]``: ``share`` (default) gives the group of N instances
exactly N x capacity, split by partition share (see :meth:`Worker.rebalanced`);
``instance`` caps every process at ``capacity``, so an uneven partition split costs
capacity as it would in a real consumer group. ``params["keyCost"]`` with
``params["keys"]``: every key lowers the capacity (:func:`instance_capacity`).
``params["soloShare"]`` (default 1): a group of one instance processes only this share
of ``capacity``, as one Spark instance alone carries the fixed cost (JIT, collector,
driver) that more instances share: at an eighth of a core one failed 0.2 x what each of
two read.
``params["workUs"]`` (default 0): every record also costs this many microseconds of
CPU, spent computing, so that the instance's records/s follow its CPU limit (at most
``cpuPerInstance x 10^6 / workUs``) as a real job's do: a machine or a limit twice as
fast doubles them, which is what sizing for the machine must see.

Consumer settings come from what was measured on the embedded brokers: manual
commits (auto-commit consumers joining one at a time can hang in a rebalance on
noida-db) and a short session timeout (tansu's joins take half of it).

``params["delayMs"]`` (default 0): with an ``output`` topic, every processed record is
written there unchanged this many milliseconds after it was processed: a processing
delay known by construction, which the latency SLI (:mod:`bench.runtime.kafka.latency`) must
find again. The delay is a wait, not work: records wait concurrently, so it adds
latency without taking capacity, as an I/O-bound step of a real job would.

SPEC.json: ``{"bootstrap_servers", "topics": {"input": real name[, "output": real name]},
"group_id", "params", "instance", "instances"}``. Stdout: JSON lines (:mod:`bench.runtime.host.child_protocol`)
``started`` (first assignment), ``assigned`` (a later rebalance), ``progress``
(processed, rate, partitions, capacity), ``stopped``; ``error`` on failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import time
from collections.abc import Mapping
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, TopicPartition
from aiokafka.structs import ConsumerRecord

from bench.runtime.host import child_protocol
from bench.runtime.host.child_protocol import emit
from bench.runtime.kafka.security import current as kafka_security

DEFAULT_CAPACITY = 1000.0
#: the lag between two commits grows by rate x this: sampled once a second, a commit
#: period of 0.2 s aliased into a sawtooth of 0.2 x rate whose slope over a 10-s window
#: (the grid test's) swung by 1-2 % of the rate, across the lag-trend's 1 % threshold
COMMIT_EVERY_S = 0.05
#: records processed between two offset updates, in seconds of capacity
SLICE_S = 0.05
PROGRESS_EVERY_S = 5.0
#: credit a briefly idle instance may save up (s of capacity): keeps bursts small
BURST_S = 1.0
#: CPU seconds of ``workUs`` computed between two turns of the event loop (its
#: heartbeats and fetches go on while a slow instance works through a slice)
WORK_TURN_S = 0.005


async def work(cpu_s: float) -> None:
    """Compute for ``cpu_s`` seconds of this thread's CPU time: under a CPU limit that
    takes longer in wall time, as real work does."""
    end = time.thread_time() + cpu_s
    while (now := time.thread_time()) < end:
        turn = min(end, now + WORK_TURN_S)
        while time.thread_time() < turn:
            pass
        await asyncio.sleep(0)


class Pacer:
    """A token bucket as a virtual clock: each record costs 1/rate seconds."""

    def __init__(self, rate: float, burst_s: float = BURST_S) -> None:
        self.burst_s = burst_s
        self.free_at = time.monotonic()
        self.set_rate(rate)

    def set_rate(self, rate: float) -> None:
        if rate <= 0:
            raise ValueError(f"capacity must be > 0 records/s, got {rate}")
        self.rate = rate
        self.cost = 1.0 / rate

    async def take(self, n: int) -> None:
        now = time.monotonic()
        self.free_at = max(self.free_at, now - self.burst_s) + n * self.cost
        if self.free_at > now:
            await asyncio.sleep(self.free_at - now)


class Worker:
    """Consume, "process" at the paced rate, commit exactly what was processed.

    Fetching and processing are decoupled: one poll takes everything buffered, and
    it is processed in slices of ~``SLICE_S`` of capacity, each paced and its offsets
    recorded, so the fetch loop's own latency (large on a busy machine) never eats
    into the capacity, and the committed offsets (hence the lag) move smoothly.
    """

    def __init__(self, consumer: AIOKafkaConsumer, capacity: float, instances: int = 1, mode: str = "share",
                 output: Output | None = None, work_s: float = 0.0) -> None:
        if mode not in ("share", "instance"):
            raise ValueError(f"capacityMode must be 'share' or 'instance', got {mode!r}")
        self.consumer = consumer
        self.capacity = capacity
        self.instances = max(1, instances)
        self.mode = mode
        self.pacer = Pacer(capacity)
        self.slice = int(max(1, capacity * SLICE_S))
        self.done: dict[TopicPartition, int] = {}  # next offset to process, per partition
        self.committed: dict[TopicPartition, int] = {}
        self.processed = 0
        self.last_commit = time.monotonic()
        self.output = output
        #: CPU seconds each record costs (``workUs``)
        self.work_s = work_s
        #: set on SIGTERM: a worker that is behind holds seconds of fetched records, and
        #: paced through them it overran the platform's stop grace of 5 s; it stops
        #: between two slices instead and commits what it processed
        self.stopping: asyncio.Event | None = None

    def rebalanced(self, assigned: set[TopicPartition]) -> None:
        """In ``share`` mode the group's capacity instances x capacity is split by
        partition share, so it adds up exactly even when the partitions do not
        divide evenly among the instances (12 partitions, 5 instances: 3,3,2,2,2);
        in ``instance`` mode every process is capped at ``capacity`` regardless."""
        if self.mode != "share" or not assigned:
            self.pacer.set_rate(self.capacity)
            return
        topics = {tp.topic for tp in assigned}
        total = sum(len(self.consumer.partitions_for_topic(t) or ()) for t in topics) or len(assigned)
        self.pacer.set_rate(self.capacity * self.instances * len(assigned) / total)

    async def commit(self, only: set[TopicPartition] | None = None) -> None:
        offsets = {
            tp: off for tp, off in self.done.items() if self.committed.get(tp) != off and (only is None or tp in only)
        }
        if not offsets:
            return
        try:
            await self.consumer.commit(offsets)
            self.committed.update(offsets)
        except Exception:  # noqa: BLE001 - a rebalance in flight: the next commit retries
            pass

    async def step(self) -> None:
        batches = await self.consumer.getmany(timeout_ms=100)
        for tp, records in batches.items():
            for i in range(0, len(records), self.slice):
                if self.stopping is not None and self.stopping.is_set():
                    return
                if tp not in self.consumer.assignment():
                    break  # revoked meanwhile: its new owner resumes from our last commit
                chunk = records[i : i + self.slice]
                await self.pacer.take(len(chunk))  # "processing": at most capacity records/s
                if self.work_s > 0:
                    await work(len(chunk) * self.work_s)
                self.done[tp] = chunk[-1].offset + 1
                self.processed += len(chunk)
                if self.output is not None:
                    self.output.later(chunk)
                await self.maybe_commit()
        await self.maybe_commit()

    async def maybe_commit(self) -> None:
        if time.monotonic() - self.last_commit >= COMMIT_EVERY_S:
            self.last_commit = time.monotonic()
            await self.commit()


class Output:
    """Writes processed records to the output topic ``delay_s`` after they were processed."""

    def __init__(self, producer: AIOKafkaProducer, topic: str, delay_s: float) -> None:
        self.producer = producer
        self.topic = topic
        self.delay_s = delay_s
        self.pending: set[asyncio.Task[None]] = set()
        self.written = 0

    def later(self, records: list[ConsumerRecord]) -> None:
        task = asyncio.ensure_future(self._write(records, time.monotonic() + self.delay_s))
        self.pending.add(task)
        task.add_done_callback(self.pending.discard)

    async def _write(self, records: list[ConsumerRecord], due: float) -> None:
        wait = due - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        for record in records:
            await self.producer.send(self.topic, value=record.value, key=record.key)
        self.written += len(records)

    async def drain(self, timeout: float) -> None:
        if self.pending:
            await asyncio.wait(set(self.pending), timeout=timeout)
        await self.producer.flush()


class _Listener(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self) -> None:
        self.worker: Worker | None = None
        self.assigned: set[TopicPartition] = set()
        self.announced = False

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        # Processed records are committed before their partitions move to another member.
        if self.worker is not None:
            await self.worker.commit(set(revoked))
            for tp in revoked:
                self.worker.done.pop(tp, None)
                self.worker.committed.pop(tp, None)

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self.assigned = set(assigned)
        if self.worker is not None:
            self.worker.rebalanced(self.assigned)
        emit("assigned" if self.announced else "started", partitions=len(self.assigned))
        self.announced = True


def instance_capacity(spec: Mapping[str, Any]) -> float:
    """Records/s of one instance: ``capacity`` per core, times the instance's cores
    (resource type CoresPerInstance), so vertical scaling has a known demand too;
    divided by 1 + ``keyCost`` x ``keys`` (each key's state upkeep), so the demand grows
    with the number of keys beside the records/s (a second load dimension)."""
    params = spec.get("params") or {}
    per_key = float(params.get("keyCost") or 0.0) * float(params.get("keys") or 0.0)
    # a group of one carries a fixed cost more instances share (soloShare)
    solo = float(params.get("soloShare") or 1.0) if int(spec.get("instances") or 1) == 1 else 1.0
    return (float(params.get("capacity", DEFAULT_CAPACITY)) * max(1, int(spec.get("cores") or 1)) * solo
            / (1.0 + per_key))


async def run(spec: dict[str, Any], stop: asyncio.Event) -> int:
    params = spec.get("params") or {}
    capacity = instance_capacity(spec)
    session_ms = int(params.get("sessionTimeoutMs", 6000))
    topic = spec["topics"]["input"]
    consumer = AIOKafkaConsumer(
        bootstrap_servers=spec["bootstrap_servers"],
        **kafka_security().aiokafka(),
        group_id=spec["group_id"],
        client_id=f"calibrated-{spec.get('instance', 0)}",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        session_timeout_ms=session_ms,
        heartbeat_interval_ms=max(300, session_ms // 6),
        rebalance_timeout_ms=session_ms * 2,
        max_poll_interval_ms=60_000,
        fetch_max_wait_ms=100,
    )
    listener = _Listener()
    instances = int(spec.get("instances") or 1)
    mode = str(params.get("capacityMode", "share"))
    output: Output | None = None
    if spec["topics"].get("output"):
        producer = AIOKafkaProducer(bootstrap_servers=spec["bootstrap_servers"], linger_ms=5,
                                    **kafka_security().aiokafka())
        await producer.start()
        output = Output(producer, spec["topics"]["output"], float(params.get("delayMs", 0.0)) / 1000.0)
    listener.worker = worker = Worker(consumer, capacity, instances, mode, output,
                                      float(params.get("workUs") or 0.0) / 1e6)
    worker.stopping = stop
    consumer.subscribe([topic], listener=listener)
    await consumer.start()
    last_progress = start = time.monotonic()
    try:
        while not stop.is_set():
            await worker.step()
            now = time.monotonic()
            if now - last_progress >= PROGRESS_EVERY_S:
                last_progress = now
                emit(
                    "progress",
                    processed=worker.processed,
                    rate=worker.processed / (now - start),
                    partitions=len(listener.assigned),
                    capacity=worker.pacer.rate,
                )
        await asyncio.wait_for(worker.commit(), 5)
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(consumer.stop(), 10)
        if output is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(output.drain(output.delay_s + 2), output.delay_s + 5)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(output.producer.stop(), 10)
    emit("stopped", processed=worker.processed)
    return 0


def run_spec(spec: dict[str, Any]) -> int:
    """:func:`run` until SIGTERM or SIGINT asks it to stop."""

    async def _main() -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        return await run(spec, stop)

    return asyncio.run(_main())


def main(argv: list[str] | None = None) -> int:
    return child_protocol.main("bench.runtime.calibrated_sut", run_spec, argv)


if __name__ == "__main__":
    sys.exit(main())
