"""bench's testing kit: run a use case's topology, a generator, a one-experiment
``bench run``; the helpers a plugin's tests need, with their signatures.

Use-case tests import :func:`run_topology`::

    from bench.testing import run_topology

    result = run_topology(
        use_case,                               # bench.api.UseCase with a topology
        {"input": [("s_1", '{"identifier": "s_1", "timestamp": 0, "valueInW": 5.0}', 0)]},
        bootstrap_servers=kafka_bootstrap,       # fixture of bench.pytest_plugin (the kit)
        spark=spark,                             # fixture of bench.pytest_plugin (shared)
        params={"window_ms": 60000},
    )
    result            # list of {"key", "value", "topic", "partition", "offset", "timestamp"}
    result.dropped    # rows dropped by watermark (sum of numRowsDroppedByWatermark)
    result.malformed  # malformed input records counted by read_measurements

``inputs`` is either one mapping ``{logical_topic: [(key, value, timestamp_ms), ...]}``
or a list of such mappings (*steps*). Each step is produced, then processed until the
query is idle (``processAllAvailable`` plus ``idle_seconds`` without a new micro-batch,
so watermark-only batches run too) before the next step is produced: that is how a test
advances the watermark and then sends late records, or changes UC4's registry between
measurements. A value of ``None`` produces a tombstone.

Topics get fresh real names (``<logical>-<uuid>``) for every call: every logical topic
of the use case's default benchmark (``kafkaConfig.topics``), plus those in ``inputs``
and ``collect``. ``result.topics`` maps them. The output rows are the records of the
``collect`` logical topics (default ``("output",)``) in (topic, partition, offset)
order, read after the query stopped. ``result.committed`` holds the SUT group's
committed offsets of the input topics, ``result.progress`` the per-batch progress
events (the driver's JSON lines). Nothing here asserts timing.

The rest of the kit a plugin's tests use, all importable from here:

- :func:`run_generator` runs a generator for a few seconds against a broker and checks
  its contract (progress at least every second, a report soon after the stop signal).
- :func:`bench_run` runs ``bench run`` of a use case in a process of its own, one
  experiment by default, and returns the demand table.
- ``parse_benchmark(doc: dict) -> Benchmark`` checks a Benchmark document's shape
  (``ConfigError`` with one line naming the field); ``validate_benchmark(bench:
  Benchmark, registry: Registry) -> None`` checks it against the installed plugins
  (patcher and SLO types, SLO properties, bounds).
- ``load_plugins(extra=(), entry_points_=None) -> Registry``: the registry of installed
  plugins (``extra``: plugin modules or objects added last, for a plugin not installed);
  ``Registry`` has a dict per kind (``use_cases``, ``generators``, ``slos``,
  ``patchers``, ``search_strategies``, ``platforms``) from name to the registered object,
  and ``plugins`` (``PluginInfo``: ``name``, ``error`` when broken, ``provides``).
- ``apply_all(registry: Registry, objects: list[Manifest], patchers: Iterable[tuple[str,
  str, dict, Any]]) -> list[Manifest]`` applies (patcher type, resource, properties,
  value) in order to copies of the objects, as a run does for a load or resource value.

The pytest plugin :mod:`bench.pytest_plugin` (installed with bench, active in every
pytest run) binds these to its fixtures ``kafka_bootstrap``, ``spark``,
``bench_registry``, ``topology_runner``, ``generator_runner`` and ``bench_runner``.
"""

from __future__ import annotations

import asyncio
import csv
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.api import (
    GENERATOR_SILENCE_S,
    GeneratorControl,
    GeneratorReport,
    GeneratorSpec,
    GeneratorType,
    UseCase,
    sensor_keys,
    set_generator_control,
)
from bench.config.model import Benchmark as Benchmark
from bench.config.model import parse_benchmark as parse_benchmark
from bench.config.model import validate_benchmark as validate_benchmark
from bench.patchers.apply import apply_all as apply_all
from bench.plugins import Registry as Registry
from bench.plugins import load_plugins as load_plugins
from bench.runtime.kafka.security import current as kafka_security
from bench.runtime.spark.sut_query import ProgressTotals, build_context, start_query

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

Record = tuple[str | None, str | None, int]
Inputs = Mapping[str, Sequence[Record]]


class TopologyResult(list[dict[str, Any]]):
    """The output records (a list of dicts) plus counters of the run."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        super().__init__(rows)
        self.dropped = 0
        self.malformed = 0
        self.input_rows = 0
        self.progress: list[dict[str, Any]] = []
        self.topics: dict[str, str] = {}
        self.committed: dict[str, dict[int, int]] = {}
        self.end_offsets: dict[str, dict[int, int]] = {}


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


def _benchmark_topics(use_case: UseCase) -> dict[str, int]:
    try:
        bench = use_case.default_benchmark()
        return {
            str(t["name"]): int(t.get("numPartitions", 1))
            for t in bench.get("kafkaConfig", {}).get("topics", [])
        }
    except Exception:  # noqa: BLE001 - a test harness must still run a use case with a bad default
        return {}


def _wait_idle(query: Any, totals: ProgressTotals, idle_seconds: float, limit_s: float) -> None:
    """processAllAvailable, then wait until no new batch ran for ``idle_seconds``."""
    query.processAllAvailable()
    deadline = time.monotonic() + limit_s
    seen = totals.batches
    quiet_since = time.monotonic()
    while time.monotonic() - quiet_since < idle_seconds:
        if query.exception() is not None:
            raise RuntimeError(f"query failed: {query.exception()}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"query never became idle within {limit_s} s")
        time.sleep(0.1)
        if totals.batches != seen:
            seen = totals.batches
            quiet_since = time.monotonic()
    # The listener bus hands progress over after the query has moved on, and the
    # listener commits offsets before it calls back: on a busy machine that can lag the
    # query by more than idle_seconds, and the totals (input rows, committed offsets)
    # would miss the last batches. A run of the suite in two processes (2026-11-29)
    # once counted 0 input rows that way. So the totals must also have seen the
    # query's own last batch.
    last = query.lastProgress
    want = -1 if last is None else int(last.batchId)
    while (totals.events[-1]["batchId"] if totals.events else -1) < want:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the progress of batch {want} never reached the listener within {limit_s} s")
        time.sleep(0.1)


def run_topology(
    use_case: UseCase,
    inputs: Inputs | Sequence[Inputs],
    *,
    bootstrap_servers: str,
    spark: SparkSession | None = None,
    params: Mapping[str, Any] | None = None,
    collect: Sequence[str] = ("output",),
    partitions: int | None = None,
    instances: int = 1,
    group_id: str | None = None,
    trigger_seconds: float = 0.2,
    idle_seconds: float = 1.5,
    max_records_per_trigger: int | None = None,
    step_limit_s: float = 120.0,
    connector: str | None = None,
) -> TopologyResult:
    """Run ``use_case``'s topology over ``inputs`` (one mapping or a list of steps).

    ``partitions`` overrides every topic's partition count (default: the benchmark's
    ``kafkaConfig``, else 1). ``params`` are merged over ``use_case.default_params``.
    ``spark`` defaults to a new local[1] session (pass the shared fixture in tests).
    ``connector``: ``native`` (Spark's own, the default when installed) or ``python``.
    See the module docstring for what the result holds.
    """
    from bench.runtime.host.jars import default_connector
    from bench.runtime.spark.session import build_session, progress_listener

    connector = connector or default_connector()
    if use_case.topology is None:
        raise ValueError(f"use case {use_case.name!r} has no Spark topology")
    steps: list[Inputs] = [inputs] if isinstance(inputs, Mapping) else list(inputs)
    suffix = uuid.uuid4().hex[:8]
    sizes = _benchmark_topics(use_case)
    for logical in [*(k for s in steps for k in s), *collect]:
        sizes.setdefault(logical, 1)
    if partitions is not None:
        sizes = {k: partitions for k in sizes}
    topics = {logical: f"{logical}-{suffix}" for logical in sizes}
    create_topics(bootstrap_servers, {topics[k]: n for k, n in sizes.items()})
    spark = spark or build_session("local[1]", "bench-test", instances)
    group = group_id or f"bench-test-{suffix}"
    merged = {**dict(use_case.default_params), **dict(params or {})}
    ctx = build_context(spark, bootstrap_servers, topics, group, merged, instances, connector, max_records_per_trigger)
    plan = use_case.topology(ctx)
    totals = ProgressTotals()
    listener = progress_listener(spark)
    with tempfile.TemporaryDirectory(prefix="bench-ckpt-") as ckpt:
        query = start_query(plan, ctx, bootstrap_servers, ckpt, trigger_seconds, connector, f"test_{suffix}")
        listener.watch(str(query.id), totals.add)
        try:
            for step in steps:
                for logical, records in step.items():
                    produce(bootstrap_servers, topics[logical], records)
                _wait_idle(query, totals, idle_seconds, step_limit_s)
        finally:
            query.stop()
            listener.unwatch(str(query.id))
    rows: list[dict[str, Any]] = []
    for logical in collect:
        rows.extend(dict(r, topic=logical) for r in read_all(bootstrap_servers, topics[logical]))
    result = TopologyResult(rows)
    result.dropped = totals.dropped_by_watermark
    result.malformed = totals.malformed
    result.input_rows = totals.input_rows
    result.progress = totals.events
    result.topics = topics
    inputs_used = {k for s in steps for k in s}
    for logical in inputs_used:
        result.committed[logical] = committed_offsets(bootstrap_servers, group, topics[logical])
        result.end_offsets[logical] = end_offsets(bootstrap_servers, topics[logical])
    return result


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
