"""Running a use case's pipeline split into stages, each writing to its own topic.

The split is generic, so that every use case with a Spark topology that writes to
Kafka can be measured without knowing its code:

``baseline``          input -> topic, records copied unchanged: what a job that does
                      nothing costs (Kafka read, micro-batch, Kafka write);
``ingest+parse``      input -> topic, JSON parsed and written as ActivePowerRecords;
``window aggregation`` the use case's own topology, reading the parsed topic (its
                      windows, joins and serialisation: UC4's join is inside it);
``output``            the aggregation's topic copied to the final output topic: the
                      hop by which results leave the job.

Every stage is its own streaming query in one Spark session (``local[N]``), so the
stages run concurrently as a pipeline would; every topic has LogAppendTime, so
every latency is taken on the broker's clock (:mod:`bench.stages.measure`). The end
to end latency is the final output's append time minus the input append time of the
record that completed the result: per record, the stage latencies add up to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bench.api import GeneratorSpec, UseCase, sensor_keys
from bench.errors import UserError
from bench.runtime.host import procs
from bench.runtime.kafka.admin import OUTPUT_TOPIC_CONFIG, create_topics, delete_topics
from bench.runtime.kafka.latency import stop_consumer
from bench.stages.measure import Index, Record, StageStats, stage_latencies, stats

#: the stages in pipeline order (topic logical names below)
STAGES = ("ingest+parse", "window aggregation", "output")
BASELINE = "baseline"
END_TO_END = "end-to-end"
PARTITIONS = 4


@dataclass
class StageRun:
    """What one ``bench stages`` run measured."""

    use_case: str
    params: dict[str, Any]
    sensors: int
    duration: float
    warmup: float
    rows: list[StageStats] = field(default_factory=list)

    def row(self, name: str) -> StageStats:
        return next(r for r in self.rows if r.name == name)

    def as_dict(self) -> dict[str, Any]:
        stage_medians = sum(self.row(s).median for s in STAGES)
        return {"useCase": self.use_case, "params": self.params, "sensors": self.sensors,
                "duration": self.duration, "warmup": self.warmup, "unit": "ms",
                "stages": [r.as_dict() for r in self.rows], "sumOfStageMedians": stage_medians}


async def read_records(bootstrap: str, topic: str, timeout: float = 60.0) -> list[Record]:
    """Every record of a topic from the beginning to its end offsets: (value, append time ms)."""
    from aiokafka import AIOKafkaConsumer, TopicPartition

    from bench.runtime.kafka.security import current as kafka_security

    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                                auto_offset_reset="earliest", **kafka_security().aiokafka())
    await consumer.start()
    try:
        parts = consumer.partitions_for_topic(topic)
        if not parts:  # a fresh client knows no topic yet: ask for metadata
            await consumer._client.force_metadata_update()  # noqa: SLF001
            parts = consumer.partitions_for_topic(topic) or set()
        tps = [TopicPartition(topic, p) for p in sorted(parts)]
        if not tps:
            return []
        consumer.assign(tps)
        ends = {tp: int(e) for tp, e in (await consumer.end_offsets(tps)).items()}
        await consumer.seek_to_beginning(*tps)
        out: list[Record] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            positions = [await consumer.position(tp) for tp in tps]
            if all(pos >= ends[tp] for pos, tp in zip(positions, tps, strict=True)):
                break
            for records in (await consumer.getmany(timeout_ms=500, max_records=20_000)).values():
                out.extend((r.value or b"", float(r.timestamp)) for r in records)
        return out
    finally:
        await stop_consumer(consumer)


def _generator(registry: Any, use_case: UseCase, bootstrap: str, topics: Mapping[str, str], sensors: int,
               params: Mapping[str, Any], duration: float, folder: str) -> Any:
    gtype = registry.generators[use_case.generator]
    keys = (gtype.keys or sensor_keys)(sensors, params)
    if gtype.prepare is not None:  # UC4's registry
        asyncio.run(gtype.prepare(GeneratorSpec(bootstrap, topics["input"], keys, 1000.0, None, params, topics)))
    payload = {"generator": use_case.generator, "bootstrap_servers": bootstrap, "topic": topics["input"],
               "keys": keys, "period_ms": 1000.0, "duration_s": duration, "params": {**params, "keyOffset": 0},
               "topics": dict(topics)}
    path = os.path.join(folder, "generator.json")
    with open(path, "w") as fh:
        json.dump(payload, fh)
    return procs.popen([sys.executable, "-m", "bench.runtime.load.generator_main", path], what="generator",
                       stdout=open(os.devnull, "wb"), stderr=open(os.path.join(folder, "generator.stderr"), "wb"),
                       env=procs.child_env())


def _topics(use_case: UseCase, suffix: str) -> tuple[dict[str, str], dict[str, int]]:
    """Real names of the use case's own topics plus the stage topics, and their partitions."""
    try:
        declared = {t["name"]: int(t.get("numPartitions", PARTITIONS))
                    for t in use_case.default_benchmark().get("kafkaConfig", {}).get("topics", [])}
    except Exception:  # noqa: BLE001 - a benchmark without topics: the defaults below
        declared = {}
    declared.setdefault("input", PARTITIONS)
    declared.setdefault("output", PARTITIONS)
    for extra in ("baseline", "parsed", "aggregated"):
        declared[extra] = declared["input"]
    return {name: f"stage-{name}-{suffix}" for name in declared}, declared


def run_stages(registry: Any, use_case: UseCase, *, bootstrap: str, sensors: int, duration: float, warmup: float,
               params: Mapping[str, Any], instances: int = 2, drain: float = 10.0,
               progress: Any = print) -> StageRun:
    """Run the four queries and the generator, then read every topic and compute the latencies."""
    if use_case.topology is None:
        raise UserError(f"use case {use_case.name!r} has no Spark topology; bench stages splits Spark pipelines")
    from pyspark.sql import functions as F

    from bench.runtime.host.jars import default_connector
    from bench.runtime.kafka.sink import write_stream
    from bench.runtime.spark.session import build_session, stop_session
    from bench.runtime.spark.sut_query import build_context, start_query, wait_ready

    merged = {**use_case.default_params, **params}
    suffix = uuid.uuid4().hex[:8]
    topics, partitions = _topics(use_case, suffix)
    asyncio.run(create_topics(bootstrap, [(topics[n], p) for n, p in partitions.items()], config=OUTPUT_TOPIC_CONFIG))
    folder = tempfile.mkdtemp(prefix="bench-stages-", dir=procs.owned_tempdir())
    connector = default_connector()
    spark = build_session(f"local[{instances}]", "bench-stages", shuffle_partitions=instances)
    queries: list[Any] = []
    generator = None
    try:
        def ctx_for(inputs: str, output: str) -> Any:
            real = {**topics, "input": topics[inputs], "output": topics[output]}
            return build_context(spark, bootstrap, real, f"bench-stages-{suffix}-{output}", merged, instances,
                                 connector)

        def start(name: str, df: Any, ctx: Any, trigger: float | None = None, mode: str = "append") -> None:
            writer = write_stream(df, bootstrap, ctx.topics, connector)
            ckpt = os.path.join(folder, name.replace(" ", "-").replace("+", "-"))
            query = (writer.outputMode(mode).option("checkpointLocation", ckpt)
                     .trigger(processingTime=f"{trigger or 0} seconds").start())
            queries.append(query)

        ctx = ctx_for("input", "baseline")
        start(BASELINE, ctx.read_topic("input").select("key", "value"), ctx)
        ctx = ctx_for("input", "parsed")
        parsed = ctx.read_measurements("input").select(
            F.col("identifier").alias("key"),
            F.to_json(F.struct("identifier", F.unix_millis("timestamp").alias("timestamp"), "valueInW")).alias("value"))
        start("ingest+parse", parsed, ctx)
        ctx = ctx_for("parsed", "aggregated")
        plan = use_case.topology(ctx)
        if plan.sink != "kafka":
            raise UserError(f"use case {use_case.name!r} does not write its results to Kafka; no stage to measure")
        queries.append(start_query(plan, ctx, bootstrap, os.path.join(folder, "aggregation"),
                                   plan.trigger_seconds or 0.0, connector))
        ctx = ctx_for("aggregated", "output")
        start("output", ctx.read_topic("aggregated").select("key", "value"), ctx)
        stop = threading.Event()
        for query in queries:
            wait_ready(query, stop)
        progress(f"4 queries ready; generating {sensors} records/s for {duration:g} s")
        began_ms = time.time() * 1000.0
        generator = _generator(registry, use_case, bootstrap, topics, sensors, merged, duration, folder)
        deadline = time.monotonic() + duration + drain
        while time.monotonic() < deadline:
            for query in queries:
                if query.exception() is not None:
                    raise UserError(f"a stage query failed: {str(query.exception()).splitlines()[0]}")
            time.sleep(1.0)
    finally:
        for query in queries:
            with contextlib.suppress(Exception):
                query.stop()
        if generator is not None:
            procs.terminate_group_sync(generator.pid, grace=3.0)
        stop_session(spark)
        shutil.rmtree(folder, ignore_errors=True)
    try:
        read = {name: asyncio.run(read_records(bootstrap, topics[name]))
                for name in ("input", "baseline", "parsed", "aggregated", "output")}
    finally:
        with contextlib.suppress(Exception):
            asyncio.run(delete_topics(bootstrap, list(topics.values())))
    since = began_ms + warmup * 1000.0
    inputs, parsed_ix, aggregated_ix = Index.of(read["input"]), Index.of(read["parsed"]), Index.of(read["aggregated"])
    result = StageRun(use_case.name, dict(params), sensors, duration, warmup)
    result.rows = [
        stats(BASELINE, stage_latencies(inputs, read["baseline"], since)),
        stats("ingest+parse", stage_latencies(inputs, read["parsed"], since)),
        stats("window aggregation", stage_latencies(parsed_ix, read["aggregated"], since)),
        stats("output", stage_latencies(aggregated_ix, read["output"], since)),
        stats(END_TO_END, stage_latencies(inputs, read["output"], since)),
    ]
    return result
