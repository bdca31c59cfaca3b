"""The testing kit's broker helpers (topics, producing, reading back, offsets) and its
runs of whole parts: a generator against its contract, and a one-experiment ``bench
run``. Re-exported by :mod:`bench.testing`, where plugin tests import them from; apart
from the topology harness, which uses the broker helpers too.
"""

from __future__ import annotations

import asyncio
import csv
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.api import (
    GENERATOR_SILENCE_S,
    GeneratorControl,
    GeneratorReport,
    GeneratorSpec,
    GeneratorType,
    sensor_keys,
    set_generator_control,
)
from bench.runtime.kafka.security import current as kafka_security

# --------------------------------------------------------------------------- broker

Record = tuple[str | None, str | None, int]

#: Test records carry event times near 1970 on purpose; Kafka (and noida-db) delete
#: records older than the default retention.ms (7 days), so test topics keep them all.
TEST_TOPIC_CONFIG = {"retention.ms": "-1", "retention.bytes": "-1"}


def create_topics(bootstrap: str, topics: Mapping[str, int], timeout: float = 10.0) -> None:
    """Create real topics {name: partitions} that never delete records; an existing topic is fine."""
    from bench.runtime.kafka.admin import create_topics_sync

    create_topics_sync(bootstrap, topics, TEST_TOPIC_CONFIG)


def produce(bootstrap: str, topic: str, records: Sequence[Record]) -> None:
    """Produce (key, value, timestamp_ms) records and wait until all are acknowledged."""
    from confluent_kafka import Producer

    producer = Producer(
        {"bootstrap.servers": bootstrap, "linger.ms": 5, "log_level": 3, **kafka_security().confluent()}
    )
    errors: list[str] = []

    def on_delivery(err: Any, _msg: Any) -> None:
        if err is not None:
            errors.append(str(err))

    for key, value, ts in records:
        while True:
            try:
                producer.produce(topic, key=key, value=value, timestamp=int(ts), on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.05)
    if producer.flush(60) or errors:
        raise RuntimeError(f"producing to {topic} failed: {errors[:3]}")


def end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    """True end offsets (from fetch high watermarks, not tansu's ListOffsets)."""
    from bench.runtime.kafka.source import EndOffsetProbe

    probe = EndOffsetProbe(bootstrap)
    try:
        return {p: end for p, (_, end) in probe.offsets(topic).items()}
    finally:
        probe.close()


def committed_offsets(bootstrap: str, group_id: str, topic: str) -> dict[int, int]:
    """The group's committed offsets per partition (-1001 = none)."""
    from confluent_kafka import Consumer, TopicPartition

    from bench.runtime.kafka.source import EndOffsetProbe

    probe = EndOffsetProbe(bootstrap)
    parts = probe.partitions(topic)
    probe.close()
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group_id, "enable.auto.commit": False,
                         **kafka_security().confluent()})
    try:
        got: list[Any] = consumer.committed([TopicPartition(topic, p) for p in parts], timeout=10)
        return {tp.partition: tp.offset for tp in got}
    finally:
        consumer.close()


def read_all(bootstrap: str, topic: str, timeout: float = 30.0) -> list[dict[str, Any]]:
    """Every record of a topic, from the beginning up to its end offsets."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    msg: Any
    ends = {p: e for p, e in end_offsets(bootstrap, topic).items() if e > 0}
    if not ends:
        return []
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"bench-read-{uuid.uuid4().hex[:8]}",
         **kafka_security().confluent(),
         "enable.auto.commit": False, "log_level": 3}
    )
    rows: list[dict[str, Any]] = []
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in ends])
        pending = dict(ends)
        deadline = time.monotonic() + timeout
        while pending and time.monotonic() < deadline:
            for msg in consumer.consume(num_messages=10000, timeout=0.5):
                if msg.error() is not None:
                    continue
                p, off = msg.partition(), msg.offset()
                if p not in pending or off >= ends[p]:
                    continue
                key, value = msg.key(), msg.value()
                rows.append(
                    {
                        "key": None if key is None else key.decode("utf-8", "replace"),
                        "value": None if value is None else value.decode("utf-8", "replace"),
                        "topic": topic,
                        "partition": p,
                        "offset": off,
                        "timestamp": msg.timestamp()[1],
                    }
                )
                if off >= ends[p] - 1:
                    pending.pop(p)
        if pending:
            raise RuntimeError(f"reading {topic}: partitions {sorted(pending)} did not reach their end")
    finally:
        consumer.close()
    rows.sort(key=lambda r: (r["partition"], r["offset"]))
    return rows


# --------------------------------------------------------------------------- generators


class GeneratorContractError(AssertionError):
    """A generator broke the contract of :class:`bench.api.GeneratorControl`: a real run
    would fault every repetition with it."""


@dataclass
class GeneratorRun:
    """What :func:`run_generator` saw: the report, every progress event and the records."""

    report: GeneratorReport
    progress: list[dict[str, Any]]
    records: list[dict[str, Any]]
    topic: str


def run_generator(
    generator: GeneratorType,
    bootstrap_servers: str,
    *,
    load: int = 10,
    period_ms: float = 100.0,
    seconds: float = 3.0,
    params: Mapping[str, Any] | None = None,
    partitions: int = 2,
) -> GeneratorRun:
    """Run ``generator`` as a generator process would, for ``seconds``, then stop it.

    Its keys are ``generator.keys(load, params)`` (default ``s_0 ...``), all in one
    instance, writing to a fresh topic (the spec's ``topics`` maps ``input`` to it);
    ``prepare`` runs first when given. Raises :class:`GeneratorContractError` (one
    line) when it goes silent for longer than a platform accepts (its first progress
    or any gap after more than half of :data:`bench.api.GENERATOR_SILENCE_S`), or does
    not return its report within 10 s of the stop signal.
    """
    merged = dict(params or {})
    topic = f"input-{uuid.uuid4().hex[:8]}"
    create_topics(bootstrap_servers, {topic: partitions})
    keys = (generator.keys or sensor_keys)(load, merged)
    spec = GeneratorSpec(bootstrap_servers, topic, keys, period_ms, None, merged, {"input": topic})
    limit = GENERATOR_SILENCE_S / 2
    stamps: list[float] = []
    events: list[dict[str, Any]] = []

    def progress(event: dict[str, Any]) -> None:
        stamps.append(time.monotonic())
        events.append(dict(event))

    async def drive() -> GeneratorReport:
        control = GeneratorControl(progress=progress)
        set_generator_control(control)
        if generator.prepare is not None:
            await generator.prepare(spec)
        started = time.monotonic()
        task = asyncio.ensure_future(generator.run(spec))
        done, _ = await asyncio.wait({task}, timeout=seconds)
        if task in done:  # ended by itself: fine when it reported, and it must report
            report = task.result()
        else:
            control.stop.set()
            done, _ = await asyncio.wait({task}, timeout=10.0)
            if not done:
                task.cancel()
                raise GeneratorContractError(
                    f"generator {generator.name}: still running 10 s after the stop signal; return when "
                    "bench.api.generator_control().stop is set (bench.services.open_workload does)")
            report = task.result()
        gaps = [b - a for a, b in zip([started, *stamps], stamps, strict=False)]
        if not stamps or max(gaps) > limit:
            worst = "no progress at all" if not stamps else f"a gap of {max(gaps):.1f} s between progress reports"
            raise GeneratorContractError(
                f"generator {generator.name}: {worst}; a platform faults a repetition after "
                f"{GENERATOR_SILENCE_S:g} s of silence: report through bench.api.generator_control().report(...) "
                "every second, or build it with bench.services.record_generator")
        if not isinstance(report, GeneratorReport):
            raise GeneratorContractError(f"generator {generator.name}: run returned {type(report).__name__}, "
                                         "not a bench.api.GeneratorReport")
        return report

    report = asyncio.run(drive())
    return GeneratorRun(report, events, read_all(bootstrap_servers, topic), topic)


# --------------------------------------------------------------------------- bench run


@dataclass
class BenchRunResult:
    """A finished ``bench run``: its exit code, output and demand table."""

    returncode: int
    stdout: str
    stderr: str
    results: Path
    #: the demand table: load value -> resources (None: no resource value sufficed)
    table: dict[float, float | None] = field(default_factory=dict)


def bench_run(
    plugin: str,
    results: str | Path,
    *,
    loads: Sequence[float] = (100,),
    resources: Sequence[float] = (1,),
    duration: float = 60.0,
    warmup: float = 20.0,
    bootstrap_servers: str | None = None,
    args: Sequence[str] = (),
    timeout: float = 300.0,
) -> BenchRunResult:
    """``bench run --plugin PLUGIN`` in a process of its own, one repetition per
    experiment, without the Spark warm-up and retries (a test wants the first fault),
    into ``results``; ``bootstrap_servers`` reuses a running broker instead of starting
    one; ``args`` are further ``bench run`` options (``--set``, ``--load-type``, ...).
    One load and one resource value (the defaults) make one experiment. The default
    60 s with a 20-s warm-up give a lag-trend verdict enough samples after the first
    micro-batches (early stopping ends a clear one sooner); a test of an SLO that
    decides on fewer samples passes shorter ones.
    """
    command = [sys.executable, "-m", "bench.cli.commands", "run", "--plugin", plugin,
               "--loads", ",".join(f"{v:g}" for v in loads), "--resources", ",".join(f"{v:g}" for v in resources),
               "--duration", f"{duration:g}", "--warmup", f"{warmup:g}", "--repetitions", "1", "--retries", "0",
               "--no-spark-warmup", "--results", str(results), *args]
    if bootstrap_servers:
        command += ["--bootstrap-servers", bootstrap_servers]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    out = BenchRunResult(done.returncode, done.stdout, done.stderr, Path(results))
    tables = sorted(Path(results).glob("exp*_demand.csv"))
    if tables:
        with open(tables[-1], newline="") as fh:
            for row in csv.DictReader(fh):
                value = row.get("resources") or ""
                out.table[float(row["load"])] = float(value) if value not in ("", "None", "null", "nan") else None
    return out
