"""One instance of the ``calibrated`` SUT: ``python -m bench.runtime.calibrated_sut SPEC.json``.

A plain Kafka consumer in the SUT's group that processes at most
``params["capacity"]`` records/s (token bucket) and commits what it processed about
every 0.5 s. Its capacity is known by construction, so a benchmark of it must find
demand = ceil(load / capacity): the check that a setup measures correctly.

Consumer settings come from what was measured on the embedded brokers: manual
commits (auto-commit consumers joining one at a time can hang in a rebalance on
noida-db) and a short session timeout (tansu's joins take half of it).

SPEC.json: ``{"bootstrap_servers", "topics": {"input": real name}, "group_id",
"params", "instance", "instances"}``. Stdout: JSON lines ``started`` (first
assignment), ``progress`` (processed, rate, partitions), ``stopped``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
import time
from typing import Any

from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition

DEFAULT_CAPACITY = 1000.0
COMMIT_EVERY_S = 0.5
PROGRESS_EVERY_S = 5.0
#: credit a briefly idle instance may save up (s of capacity): keeps bursts small
BURST_S = 0.1


def emit(event: str, **fields: Any) -> None:
    sys.stdout.write(json.dumps({"event": event, "time": time.time(), **fields}) + "\n")
    sys.stdout.flush()


class Pacer:
    """A token bucket as a virtual clock: each record costs 1/rate seconds."""

    def __init__(self, rate: float, burst_s: float = BURST_S) -> None:
        self.cost = 1.0 / rate if rate > 0 else 0.0
        self.burst_s = burst_s
        self.free_at = time.monotonic()

    async def take(self, n: int) -> None:
        now = time.monotonic()
        self.free_at = max(self.free_at, now - self.burst_s) + n * self.cost
        if self.free_at > now:
            await asyncio.sleep(self.free_at - now)


class _Listener(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, consumer: AIOKafkaConsumer) -> None:
        self.consumer = consumer
        self.assigned: set[TopicPartition] = set()
        self.announced = False

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        # Processed records are committed before they can move to another member.
        with contextlib.suppress(Exception):
            await self.consumer.commit()

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self.assigned = set(assigned)
        emit("assigned" if self.announced else "started", partitions=len(self.assigned))
        self.announced = True


async def run(spec: dict[str, Any], stop: asyncio.Event) -> int:
    params = spec.get("params") or {}
    capacity = float(params.get("capacity", DEFAULT_CAPACITY))
    session_ms = int(params.get("sessionTimeoutMs", 6000))
    topic = spec["topics"]["input"]
    consumer = AIOKafkaConsumer(
        bootstrap_servers=spec["bootstrap_servers"],
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
    listener = _Listener(consumer)
    consumer.subscribe([topic], listener=listener)
    await consumer.start()
    pacer = Pacer(capacity)
    per_poll = int(max(1, min(2000, capacity * 0.05)))
    processed = 0
    dirty = False
    last_commit = last_progress = start = time.monotonic()
    try:
        while not stop.is_set():
            batches = await consumer.getmany(timeout_ms=100, max_records=per_poll)
            n = sum(len(records) for records in batches.values())
            if n:
                await pacer.take(n)  # "processing": exactly capacity records/s at most
                processed += n
                dirty = True
            now = time.monotonic()
            if dirty and now - last_commit >= COMMIT_EVERY_S:
                with contextlib.suppress(Exception):  # a rebalance in flight: next time
                    await consumer.commit()
                    dirty = False
                last_commit = now
            if now - last_progress >= PROGRESS_EVERY_S:
                last_progress = now
                emit(
                    "progress",
                    processed=processed,
                    rate=processed / (now - start),
                    partitions=len(listener.assigned),
                )
        if dirty:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(consumer.commit(), 5)
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(consumer.stop(), 10)
    emit("stopped", processed=processed)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m bench.runtime.calibrated_sut SPEC.json", file=sys.stderr)
        return 2
    with open(argv[0]) as fh:
        spec = json.load(fh)

    async def _main() -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        return await run(spec, stop)

    return asyncio.run(_main())


if __name__ == "__main__":
    sys.exit(main())
