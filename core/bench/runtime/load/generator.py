"""The ``active-power`` load generator: an open workload of ActivePowerRecords.

Open model: every key emits one record every ``period_ms`` with its own random phase,
on a schedule fixed at start and independent of how fast the SUT consumes. If the
generator itself cannot keep up it falls behind its schedule (it never drops records
silently) and its report says so: ``achieved_rate`` counts only records the broker
acknowledged, over the wall-clock time of the run.

Values are JSON (``{"identifier","timestamp","valueInW"}``, or a user's template with
``{key}`` and ``{timestamp}`` placeholders, param ``recordTemplate``): Spark parses JSON inside
the JVM with ``from_json``, while Avro would need the spark-avro JAR that the pyspark
wheel lacks. The Kafka record timestamp is the record's own timestamp (its scheduled
emission time, epoch ms), and the key is the identifier, partitioned with Kafka's
default murmur2 so any Kafka client would place it identically.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from aiokafka import AIOKafkaProducer
from aiokafka.partitioner import murmur2

from bench.api import (
    PROGRESS_EVERY_S,
    GeneratorControl,
    GeneratorReport,
    GeneratorSpec,
    GeneratorType,
    generator_control,
    sensor_keys,
)
from bench.runtime.kafka.security import current as kafka_security
from bench.runtime.load.record_batches import NO_HEADERS, Append, BatchFiller

#: most records one scheduling step produces; keeps the loop responsive when behind
MAX_STEP = 20_000
#: longest sleep between scheduling steps (s)
MAX_SLEEP = 0.05
#: shortest time from one scheduling step's start to the next (s) while on schedule:
#: below its maximum rate the generator otherwise woke for the next few records,
#: spinning a core on tiny batches (0.88 of a core at 25 % of its maximum rate). A step
#: that took this long already is followed at once: a fixed sleep after every step
#: would idle a generator whose steps take that long. Records keep their scheduled
#: timestamps; they leave up to this much later, as with the producer's linger.
MIN_STEP_S = 0.005
#: how often progress is reported (s): the contract's (:data:`bench.api.PROGRESS_EVERY_S`)
PROGRESS_EVERY = PROGRESS_EVERY_S
#: how long the end of a run waits for outstanding acks (s); well below
#: generator_main.STOP_GRACE_S, so that a slow broker still gets a report, not a kill
ACK_WAIT_S = 5.0


def current_control() -> GeneratorControl:
    """The running generator's control (:func:`bench.api.generator_control`)."""
    return generator_control()


def encode_record(identifier_json: str, timestamp_ms: int, value: float) -> bytes:
    return record_template(identifier_json, value) % timestamp_ms


def record_template(identifier_json: str, value: float) -> bytes:
    """A key's record with ``%d`` for its timestamp: everything else is fixed per key,
    so it is encoded once and each record costs one ``%`` (the per-record encoding
    was the generator's largest cost after aiokafka's own append)."""
    head = b'{"identifier":%s,"timestamp":' % identifier_json.encode().replace(b"%", b"%%")
    return head + b'%d,"valueInW":' + repr(float(value)).encode() + b"}"


#: placeholders of a user's record template (``--record-template``)
KEY_PLACEHOLDER = "{key}"
TIMESTAMP_PLACEHOLDER = "{timestamp}"


class _Formatted:
    """A key's template with ``n != 1`` timestamps: ``t % ts`` like the one-timestamp
    ``bytes`` templates of the hot loop, so the loop needs no branch per record."""

    __slots__ = ("n", "template")

    def __init__(self, template: bytes, n: int) -> None:
        self.template, self.n = template, n

    def __mod__(self, ts: int) -> bytes:
        return self.template % ((ts,) * self.n)


def user_record_template(text: str, key: str) -> bytes | _Formatted:
    """A key's record from a user's template: ``{key}`` becomes the key as it is (the
    template quotes it where JSON needs quotes), ``{timestamp}`` the epoch ms.

    Like :func:`record_template` it is built once per key, so template mode costs the
    hot loop nothing; only a template with no or several timestamps goes through
    :class:`_Formatted`.
    """
    escaped = text.replace("%", "%%").replace(KEY_PLACEHOLDER, key.replace("%", "%%"))
    n = escaped.count(TIMESTAMP_PLACEHOLDER)
    encoded = escaped.replace(TIMESTAMP_PLACEHOLDER, "%d").encode()
    return encoded if n == 1 else _Formatted(encoded, n)


def check_record_template(text: str) -> None:
    """Raise ValueError unless ``text`` is JSON once its placeholders are filled in
    (the SUT reads JSON; a template that is not would be found only as unparsed rows)."""
    sample = user_record_template(text, "s_0") % 1_700_000_000_000
    json.loads(sample)


def partition_of(key: bytes, partitions: int) -> int:
    return (murmur2(key) & 0x7FFFFFFF) % partitions


def assign_partitions(keys: Sequence[bytes], partitions: Sequence[int], params: Mapping[str, Any]) -> list[int]:
    """Partition of each key.

    ``murmur2`` (default) places keys as any Kafka client would. ``round-robin``
    spreads keys evenly by their index in the whole key space (``keyOffset`` is this
    instance's first index), so every partition carries the same load within one
    key: the calibrated SUT needs that for its capacity to add up exactly.
    """
    mode = str(params.get("partitioner", "murmur2"))
    if mode == "round-robin":
        offset = int(params.get("keyOffset", 0))
        return [partitions[(offset + i) % len(partitions)] for i in range(len(keys))]
    if mode != "murmur2":
        raise ValueError(f"generator param partitioner={mode!r}; allowed: murmur2, round-robin")
    return [partitions[partition_of(k, len(partitions))] for k in keys]


class Schedule:
    """Emission times of an open workload: key j emits at phase_j + k * period.

    Keys are sorted by phase so the n-th emission overall is key n % K in cycle
    n // K; "what is due until t" is then a counter, not a heap of timers.
    """

    def __init__(self, count: int, period_ms: float, rng: random.Random) -> None:
        self.period_ms = period_ms
        phases = sorted((rng.uniform(0, period_ms), i) for i in range(count))
        self.phases = [p for p, _ in phases]
        self.order = [i for _, i in phases]
        self.count = count
        self.emitted = 0  # emissions handed out so far

    def due_at(self, n: int) -> float:
        cycle, j = divmod(n, self.count)
        return cycle * self.period_ms + self.phases[j]

    def take(self, until_ms: float, limit: int) -> list[tuple[int, float]]:
        """Every (key index, due ms) due up to ``until_ms``, at most ``limit``."""
        out: list[tuple[int, float]] = []
        if self.count == 0:
            return out
        while len(out) < limit:
            due = self.due_at(self.emitted)
            if due > until_ms:
                break
            out.append((self.order[self.emitted % self.count], due))
            self.emitted += 1
        return out

    def spans(self, until_ms: float, limit: int) -> list[tuple[int, int, int]]:
        """Like :meth:`take` as (cycle, first, end) runs of phase-sorted positions.

        The hot path: one bisect per cycle instead of a tuple per record (profiling
        showed take() and due_at() at ~25 % of a saturated generator's CPU).
        """
        out: list[tuple[int, int, int]] = []
        if self.count == 0:
            return out
        remaining = limit
        while remaining > 0:
            cycle, first = divmod(self.emitted, self.count)
            base = cycle * self.period_ms
            if base + self.phases[first] > until_ms:
                break
            end = min(bisect.bisect_right(self.phases, until_ms - base, first, self.count), first + remaining)
            out.append((cycle, first, end))
            remaining -= end - first
            self.emitted += end - first
        return out

    def next_due(self) -> float:
        return self.due_at(self.emitted) if self.count else float("inf")

    def split(self, groups: Sequence[int]) -> dict[int, tuple[Schedule, list[int]]]:
        """One schedule per group (``groups[key index]``, e.g. its partition) with the
        key indices of its phase-sorted positions; together they emit exactly what
        this one would. A per-partition loop needs no per-record partition lookup."""
        members: dict[int, list[int]] = {}
        for pos, idx in enumerate(self.order):
            members.setdefault(groups[idx], []).append(pos)
        out: dict[int, tuple[Schedule, list[int]]] = {}
        for group, positions in sorted(members.items()):
            sub = Schedule(0, self.period_ms, random.Random(0))
            sub.phases = [self.phases[pos] for pos in positions]
            sub.order = list(range(len(positions)))
            sub.count = len(positions)
            out[group] = (sub, [self.order[pos] for pos in positions])
        return out


class Template(Protocol):
    """A key's record encoder: ``template % timestamp_ms`` is the record's value. ``bytes``
    with one ``%d`` is one (the built-in records, the hot path); :class:`RecordCall` makes
    any function one."""

    def __mod__(self, timestamp_ms: int) -> bytes: ...


class RecordCall:
    """A plugin's ``record(key, timestamp_ms)`` as a :class:`Template` of one key, so that
    its records go through the same loop as the built-in ones; a ``str`` is sent as UTF-8."""

    __slots__ = ("key", "record")

    def __init__(self, record: Callable[[str, int], bytes | str], key: str) -> None:
        self.record, self.key = record, key

    def __mod__(self, timestamp_ms: int) -> bytes:
        value = self.record(self.key, timestamp_ms)
        if isinstance(value, bytes):
            return value
        if isinstance(value, str):
            return value.encode()
        raise TypeError(f"the record function returned {type(value).__name__} for key {self.key!r}; "
                        "return bytes or str (json.dumps(...) for JSON)")


async def run_active_power(spec: GeneratorSpec) -> GeneratorReport:
    """The ``active-power`` generator: ActivePowerRecords, or the records of the
    ``recordTemplate`` param."""
    value = float(spec.params.get("valueInW", 10.0))
    template_text = spec.params.get("recordTemplate")
    encode: Callable[[str], Template] = (
        (lambda key: user_record_template(str(template_text), key)) if template_text
        else (lambda key: record_template(json.dumps(key), value))
    )
    return await run_open_workload(spec, encode)


async def run_records(spec: GeneratorSpec, record: Callable[[str, int], bytes | str]) -> GeneratorReport:
    """A plugin's record function through the open-workload loop (``bench.services.open_workload``)."""
    return await run_open_workload(spec, lambda key: RecordCall(record, key))


async def run_open_workload(spec: GeneratorSpec, encode: Callable[[str], Template]) -> GeneratorReport:
    """One generator instance's open workload: every key of ``spec.keys`` sends
    ``encode(key) % timestamp_ms`` every ``period_ms`` with its own random phase, to
    ``spec.topic`` keyed by the key, until ``duration_s`` or the stop request of
    :func:`bench.api.generator_control`, reporting progress every second."""
    params: Mapping[str, Any] = spec.params
    control = current_control()
    keys: Sequence[str] = list(spec.keys)
    period_ms = float(spec.period_ms)
    target = len(keys) * 1000.0 / period_ms if period_ms > 0 else 0.0
    rng = random.Random(params.get("seed"))
    schedule = Schedule(len(keys), period_ms, rng)
    key_bytes = [k.encode() for k in keys]

    linger_ms = int(params.get("lingerMs", 5))
    linger_s = linger_ms / 1000.0
    producer = AIOKafkaProducer(
        bootstrap_servers=spec.bootstrap_servers,
        acks=int(params.get("acks", 1)),
        linger_ms=linger_ms,
        max_batch_size=int(params.get("batchSize", 256 * 1024)),
        max_request_size=4 * 1024 * 1024,
        compression_type=params.get("compression"),
        **kafka_security().aiokafka(),
    )
    await producer.start()
    delivered = 0
    pending: set[asyncio.Future[Any]] = set()
    try:
        partitions = sorted(await producer.partitions_for(spec.topic))
        key_partition = assign_partitions(key_bytes, partitions, params)
        # One schedule per partition, with its keys' bytes and record templates in
        # phase order, so the hot loop below walks plain lists into one batch.
        # Timestamps are whole ms: the integer phases make a record's timestamp one int
        # addition (a record's timestamp is at most 2 ms below its exact due time).
        lanes = [
            (part, sub, [int(p) for p in sub.phases], [key_bytes[i] for i in idx],
             [encode(keys[i]) for i in idx])
            for part, (sub, idx) in schedule.split(key_partition).items()
        ]
        lane_step = max(1, MAX_STEP // max(1, len(lanes)))
        filler = BatchFiller(producer)
        loop = asyncio.get_running_loop()
        start = loop.time()
        epoch0_ms = time.time() * 1000.0
        last_progress = start
        stop_at = start + spec.duration_s if spec.duration_s else None

        def _done(fut: asyncio.Future[Any], count: int) -> None:
            nonlocal delivered
            pending.discard(fut)
            if not fut.cancelled() and fut.exception() is None:
                delivered += count

        def _track(fut: asyncio.Future[Any], count: int) -> None:
            pending.add(fut)
            fut.add_done_callback(lambda f: _done(f, count))

        async def send(part: int, batch: Any, n: int) -> None:
            filler.seal(batch, n)
            _track(await producer.send_batch(batch, spec.topic, partition=part), n)

        # A lane's part-filled batch waits up to the linger time for more records (until
        # the next sleep if the generator is behind): the raw loop sends only full batches,
        # and aiokafka queues one batch per partition, so every extra batch is a wait
        # for the sender. A saturated step of 5,000 records per partition made 1.5
        # batches; on schedule at 90 % of the maximum, steps made third-full ones.
        open_batches: dict[int, tuple[Any, Append, int, float]] = {}  # part -> batch, append, n, opened at
        finished = False
        ended_at: float | None = None  # when the first step at the end of the schedule began
        while not finished:
            now = step_started = loop.time()
            if control.stop.is_set():
                finished = True  # a stop request: one last step for what was due until now
            elif stop_at is not None and now >= stop_at:
                now, finished = stop_at, True  # emit what was due until the very end
            if finished and ended_at is None:
                ended_at = step_started
            due_to = now
            until_ms = (now - start) * 1000.0
            saturated = False  # some partition had more due than one step takes
            for part, sub, phases, lane_keys, templates in lanes:
                spans = sub.spans(until_ms, lane_step)
                if not spans:
                    continue
                held = open_batches.pop(part, None)
                # n: records in the batch so far
                batch, append, n, opened = held if held is not None else (*filler.open(), 0, step_started)
                for cycle, first, end in spans:
                    base = int(epoch0_ms + cycle * period_ms)
                    # zip over slices rather than indexing by position: ~40 % more records
                    # per CPU-second for this loop in isolation (docs/performance.md)
                    for key, template, phase in zip(
                        lane_keys[first:end], templates[first:end], phases[first:end], strict=True
                    ):
                        ts = base + phase
                        if append(n, ts, key, template % ts, NO_HEADERS) is None:
                            await send(part, batch, n)
                            batch, append = filler.open()
                            n, opened = 0, loop.time()
                            append(n, ts, key, template % ts, NO_HEADERS)
                        n += 1
                saturated = saturated or sum(end - first for _, first, end in spans) >= lane_step
                open_batches[part] = (batch, append, n, opened)
            finished = finished and (control.stop.is_set() or not saturated)
            if open_batches and (finished or not saturated):
                lingered = loop.time() - linger_s
                for part, (batch, _, n, opened) in sorted(open_batches.items()):
                    if finished or opened <= lingered:
                        await send(part, batch, n)
                        del open_batches[part]
            now = loop.time()
            if now - last_progress >= PROGRESS_EVERY:
                last_progress = now
                control.report(delivered, now - start, target,
                               max(0.0, (now - start) * 1000.0 - _next_due(lanes)))
            if finished:
                break
            if not saturated:  # on schedule: sleep until the next emission
                wait = max(_next_due(lanes) / 1000.0 - (now - start), step_started + MIN_STEP_S - now)
                if open_batches:  # wake up to send a held batch once it has lingered
                    wait = min(wait, min(b[3] for b in open_batches.values()) + linger_s - now)
                await control.wait_stop(max(0.0, min(MAX_SLEEP, wait)))
            else:
                await asyncio.sleep(0)
        # The schedule's time (what was due until the end) plus the steps that caught
        # up after it: a generator that fell behind took longer than its schedule, and
        # reports so. The handing over of the last batches is not counted: each waits for
        # the batch before it on its partition, a round trip that on a busy machine took
        # 1-2 % of a 5-s repetition and made a generator on schedule report a shortfall.
        seconds = (due_to - start) + (step_started - (ended_at if ended_at is not None else step_started))
        if pending:
            await asyncio.wait(set(pending), timeout=ACK_WAIT_S)
    finally:
        await producer.stop()
    achieved = delivered / seconds if seconds > 0 else 0.0
    return GeneratorReport(target_rate=target, achieved_rate=achieved, records=delivered, seconds=seconds)


def _next_due(lanes: Sequence[tuple[Any, Schedule, Any, Any, Any]]) -> float:
    return min((lane[1].next_due() for lane in lanes), default=float("inf"))


ACTIVE_POWER = GeneratorType(
    name="active-power",
    description="ActivePowerRecords as JSON, one per key every periodMs with a random phase (open model)",
    run=run_active_power,
    keys=sensor_keys,
)
