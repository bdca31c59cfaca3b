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

import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from bench.api import UseCase
from bench.config.model import Benchmark as Benchmark
from bench.config.model import parse_benchmark as parse_benchmark
from bench.config.model import validate_benchmark as validate_benchmark
from bench.patchers.apply import apply_all as apply_all
from bench.plugins import Registry as Registry
from bench.plugins import load_plugins as load_plugins
from bench.runtime.spark.sut_query import ProgressTotals, build_context, start_query
from bench.testing.runs import TEST_TOPIC_CONFIG as TEST_TOPIC_CONFIG
from bench.testing.runs import BenchRunResult as BenchRunResult
from bench.testing.runs import GeneratorContractError as GeneratorContractError
from bench.testing.runs import GeneratorRun as GeneratorRun
from bench.testing.runs import Record as Record
from bench.testing.runs import bench_run as bench_run
from bench.testing.runs import committed_offsets as committed_offsets
from bench.testing.runs import create_topics as create_topics
from bench.testing.runs import end_offsets as end_offsets
from bench.testing.runs import produce as produce
from bench.testing.runs import read_all as read_all
from bench.testing.runs import run_generator as run_generator

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

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
    # would miss the last batches. A run of the suite in two processes once counted 0
    # input rows that way. So the totals must also have seen the
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
