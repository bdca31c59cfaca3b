"""Spark Kafka sources: UC1 rows/s on one core through Spark's own Kafka connector, through
bench's Python source, and through Spark's rate source.

One ``local[1]`` session (one task slot: one worker's worth of Spark), the UC1
topology (JSON parsing in the JVM, JSON documents, the default log sink) fed three
ways, in a rotating order within each round, from the default embedded broker
(Apache Kafka when installed):

* ``native``: Spark's ``kafka`` source (spark-sql-kafka-0-10) on a pre-filled
  4-partition topic, ``maxOffsetsPerTrigger`` rows per micro-batch, offsets committed
  by bench's listener, read as the SUT reads it (``build_context``);
* ``python``: bench's Python ``bench-kafka`` source on the same topic
  (``max_records_per_trigger``; only the ``value`` column, one Spark task per task slot);
* ``rate``: Spark's ``rate-micro-batch`` source, the same rows per batch, formatted
  as the same ActivePowerRecord JSON so that parsing and everything downstream is
  identical: the only difference is where the rows come from. Its partitions are
  Spark's default (one per task slot).

Both sources first run a few untimed batches (JIT warm-up of the shared code). Each
query runs as fast as it can (trigger interval 0); its first micro-batch is start-up
and not counted. Rows/s = rows / triggerExecution of each later batch; the
figures are medians over batches, the ratio is the median of the per-round ratios.

    .venv/bin/python benchmarks/spark_source.py [--quick] [--rounds 3] [--batches 8] [--rows 100000]
        [--sources native,python,rate]

The ratios printed last: native / rate and native / python. Neither is a goal: the
native connector is Spark's own code, and docs/performance.md ("Where the native
connector's time goes") says where its extra time per row goes.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import sys
import tempfile
import time
from typing import Any

from _common import add_broker_dir_option, banner, median, place_broker_data, spread

PARTITIONS = 4
WARMUP_BATCHES = 4
KEYS = 10_000
_names = itertools.count()


async def fill(bootstrap: str, topic: str, rows: int) -> None:
    """ActivePowerRecords as the generator writes them, as fast as the batch API goes."""
    from aiokafka import AIOKafkaProducer
    from bench.runtime.kafka.lag import create_topics

    await create_topics(bootstrap, [(topic, PARTITIONS)])
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5, max_batch_size=256 * 1024,
                                max_request_size=4 * 1024 * 1024)
    await producer.start()
    try:
        ts = int(time.time() * 1000)
        futures = []
        sent = 0
        while sent < rows:
            for part in range(PARTITIONS):
                batch = producer.create_batch()
                while sent < rows:
                    key = f"s_{sent % KEYS}"
                    value = b'{"identifier":"%s","timestamp":%d,"valueInW":10.0}' % (key.encode(), ts + sent)
                    if batch.append(key=key.encode(), value=value, timestamp=ts) is None:
                        break
                    sent += 1
                if batch.record_count():
                    futures.append(await producer.send_batch(batch, topic, partition=part))
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


def rate_context(spark: Any, rows: int, params: dict[str, Any]) -> Any:
    """A TopologyContext whose measurements come from the rate-micro-batch source."""
    from bench.api import TopologyContext
    from bench.runtime.spark.sut_query import parse_measurements
    from pyspark.sql import functions as F

    def raw(_: str) -> Any:
        # numPartitions left at Spark's default (the session's parallelism: 1 task on
        # local[1]), as the kafka side runs one task per task slot (``tasks``)
        rate = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", rows).load()
        return rate.select(
            F.format_string('{"identifier":"s_%d","timestamp":%d,"valueInW":10.0}',
                            F.col("value") % KEYS, F.unix_millis(F.col("timestamp"))).alias("value")
        )

    def measurements(logical: str) -> Any:
        return parse_measurements(raw(logical), f"bench_malformed_rate_{next(_names)}")

    return TopologyContext(spark=spark, params=params, topics={"input": "rate"}, instances=1,
                           read_topic=raw, read_measurements=measurements)


def run_query(spark: Any, source: str, bootstrap: str, topic: str, rows: int, batches: int,
              tmp: str) -> list[dict[str, Any]]:
    """Run UC1 until ``batches`` measured micro-batches (after the first) have finished."""
    from bench.runtime.spark.sut_query import build_context, start_query
    from bench_uc1 import topology

    n = next(_names)
    params = {"sink": "log", "path": os.path.join(tmp, f"uc1-{n}")}
    if source in ("native", "python"):
        ctx = build_context(spark, bootstrap, {"input": topic}, f"bench-src-{os.getpid()}-{n}", params, 1,
                            source, max_records_per_trigger=rows)
    else:
        ctx = rate_context(spark, rows, params)
    plan = topology(ctx)
    connector = "native" if source == "native" else "python"
    query = start_query(plan, ctx, bootstrap, os.path.join(tmp, f"ck-{n}"), 0.0, connector, name=f"bench_{source}_{n}")
    seen: dict[int, dict[str, Any]] = {}
    deadline = time.monotonic() + 600
    try:
        while time.monotonic() < deadline:
            for p in query.recentProgress:
                event = json.loads(p.json)
                if int(event.get("numInputRows") or 0) > 0:
                    seen[int(event["batchId"])] = event
            if len(seen) >= batches + 1:
                break
            if query.exception() is not None:
                raise RuntimeError(f"{source} query failed: {query.exception()}")
            time.sleep(0.5)
    finally:
        query.stop()
    events = [seen[k] for k in sorted(seen)]
    return events[1 : batches + 1]


def run_with_retries(spark: Any, source: str, bootstrap: str, topic: str, rows: int, batches: int,
                     tmp: str) -> list[dict[str, Any]]:
    """On an overloaded machine Spark's Python workers sometimes miss their connect-back
    timeout while a query starts; that says nothing about the source, so retry."""
    for attempt in range(3):
        try:
            return run_query(spark, source, bootstrap, topic, rows, batches, tmp)
        except RuntimeError as exc:
            if "failed to connect back" not in str(exc) or attempt == 2:
                raise
            print(f"{source}: Python worker failed to connect back (machine overloaded); retrying", flush=True)
    raise AssertionError("unreachable")


def rows_per_s(events: list[dict[str, Any]]) -> list[float]:
    return [e["numInputRows"] / (e["durationMs"]["triggerExecution"] / 1000.0) for e in events]


def describe(events: list[dict[str, Any]]) -> str:
    """Median ms of each part of a micro-batch (where the time goes)."""
    keys = sorted({k for e in events for k in e["durationMs"]})
    parts = {k: median([float(e["durationMs"].get(k, 0)) for e in events]) for k in keys}
    return ", ".join(f"{k} {v:,.0f}" for k, v in sorted(parts.items(), key=lambda kv: -kv[1]))


def percentiles(values: list[float]) -> str:
    import numpy as np

    p = np.percentile(values, [10, 50, 90])
    return f"p10 {p[0]:,.0f}  p50 {p[1]:,.0f}  p90 {p[2]:,.0f}  max {max(values):,.0f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="1 round of 5 batches of 50k rows")
    parser.add_argument("--rounds", type=int, default=None, help="default 3 (quick 1)")
    parser.add_argument("--batches", type=int, default=None, help="measured micro-batches per query (default 8)")
    parser.add_argument("--rows", type=int, default=None, help="rows per micro-batch (default 100000)")
    parser.add_argument("--sources", default="native,python,rate",
                        help="arms to run, in this order in round 1 (default native,python,rate)")
    add_broker_dir_option(parser)
    args = parser.parse_args()
    sources = tuple(x.strip() for x in args.sources.split(",") if x.strip())
    where = place_broker_data(args.broker_on_disk)
    rounds = args.rounds or (1 if args.quick else 3)
    batches = max(5, args.batches or (5 if args.quick else 8))
    rows = args.rows or (50_000 if args.quick else 100_000)

    from bench.runtime.kafka.broker import running_broker
    from bench.runtime.spark.session import build_session, stop_session

    with running_broker() as broker, tempfile.TemporaryDirectory() as tmp:
        banner(f"UC1 on local[1]: {' vs '.join(sources)} sources, {rows:,} rows/batch, {batches} batches x "
               f"{rounds} round(s), broker {broker.kind}, {where}")
        bootstrap = broker.bootstrap_servers
        topic = f"spark-src-{os.getpid()}"
        t0 = time.monotonic()
        total = rows * (max(batches, WARMUP_BATCHES) + 2)  # every query reads from the start
        asyncio.run(fill(bootstrap, topic, total))
        print(f"topic filled with {total:,} records in {time.monotonic() - t0:.1f} s", flush=True)
        t0 = time.monotonic()
        spark = build_session("local[1]", "bench-spark-source", 1)
        print(f"Spark session in {time.monotonic() - t0:.1f} s", flush=True)
        results: dict[str, list[dict[str, Any]]] = {s: [] for s in sources}
        ratios: dict[str, list[float]] = {}
        try:
            # The JVM compiles the shared code paths (JSON parsing, Arrow, the sink) while
            # the first query runs: whichever source went first was measured cold (its
            # first 3-4 batches 2-4x slower). Both run untimed first, as the SUT driver
            # warms its topology up before it reports "started".
            for source in sources:
                run_with_retries(spark, source, bootstrap, topic, rows, WARMUP_BATCHES, tmp)
            print(f"warm-up: {WARMUP_BATCHES} batches of each source, not counted", flush=True)
            for rnd in range(rounds):
                got: dict[str, list[dict[str, Any]]] = {}
                order = sources[rnd % len(sources):] + sources[: rnd % len(sources)]
                for source in order:
                    got[source] = run_with_retries(spark, source, bootstrap, topic, rows, batches, tmp)
                    results[source] += got[source]
                    speeds = rows_per_s(got[source])
                    print(f"round {rnd + 1} {source:6}: median {median(speeds):,.0f} rows/s over {len(speeds)} "
                          f"batches", flush=True)
                for a, b in (("native", "rate"), ("native", "python"), ("python", "rate")):
                    if a in got and b in got:
                        ratios.setdefault(f"{a} / {b}", []).append(
                            median(rows_per_s(got[a])) / median(rows_per_s(got[b])))
        finally:
            stop_session(spark)
        for source in sources:
            events = results[source]
            print(f"{source:6} rows/s per batch: {spread(rows_per_s(events))}")
            print(f"{source:6} batch duration: "
                  f"{percentiles([float(e['durationMs']['triggerExecution']) for e in events])}")
            print(f"{source:6} where a batch's time goes (median ms): {describe(events)}")
        for name, values in ratios.items():
            print(f"ratio {name} rows/s per round: {', '.join(f'{r:.3f}' for r in values)}")
        for name, values in ratios.items():
            print(f"ratio {name} rows/s (median of rounds): {median(values):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
