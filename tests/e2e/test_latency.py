"""The latency SLI on real parts: the calibrated SUT's known delay is measured, and a
latency-SLO demand search finds the known demand.

Tolerance: the measured median latency (p50 per interval, median over the intervals
after the warm-up) must be at least the configured delay (nothing can be earlier than
its delay: event time is the generator's, append time the broker's, one host clock)
and at most the delay plus :data:`TOLERANCE_MS` (transport: generator linger,
consumer fetch wait, producer linger, on a loaded 2-core machine). The difference
between a delayed and an undelayed SUT, run side by side, must be the delay within
:data:`DIFFERENCE_TOLERANCE_MS`, which cancels the transport that both share.
"""

from __future__ import annotations

import asyncio
import copy
import csv
import json
import math
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer
from bench.api import ExperimentSpec, TopicSpec
from bench.builtin.calibrated import CALIBRATED, default_benchmark
from bench.platforms.embedded import EmbeddedPlatform
from bench.results.store import read_series
from bench.runtime.kafka.admin import OUTPUT_TOPIC_CONFIG, create_topics, delete_topics
from bench.runtime.kafka.latency import LatencySampler

pytestmark = pytest.mark.e2e

DELAY_MS = 1000.0
TOLERANCE_MS = 600.0
DIFFERENCE_TOLERANCE_MS = 300.0
WARMUP = 8.0
DURATION = 22.0
INTERVAL = 2.0


def spec_for(exp: str, delay_ms: float, sensors: int = 400, instances: int = 1,
             capacity: float = 1000) -> ExperimentSpec:
    bench = default_benchmark()
    sut = copy.deepcopy(bench["sut"]["resources"][0])
    sut["spec"]["replicas"] = instances
    sut["spec"]["params"].update(capacity=capacity, delayMs=delay_ms)
    gen = copy.deepcopy(bench["loadGenerator"]["resources"][0])
    gen["spec"]["sensors"] = sensors
    topics = [TopicSpec(t["name"], f"{t['name']}-{exp}", int(t["numPartitions"]))
              for t in bench["kafkaConfig"]["topics"]]
    return ExperimentSpec(experiment_id=exp, use_case=CALIBRATED, objects=[sut, gen], topics=topics,
                          params={"capacity": capacity, "delayMs": delay_ms}, load=sensors, resources=instances,
                          group_id=f"sut-{exp}")


async def measured_p50(platform: EmbeddedPlatform, spec: ExperimentSpec) -> tuple[float, dict[str, float]]:
    """Median over the post-warm-up intervals of each interval's p50 latency, and the last sample."""
    p50: list[tuple[float, float]] = []
    last: dict[str, float] = {}
    await platform.reset_topics(spec)
    try:
        await platform.start_sut(spec)
        await platform.start_generators(spec)
        loop = asyncio.get_running_loop()
        start = loop.time()
        while loop.time() - start < DURATION:
            sample = await platform.sample(spec)
            last = sample.values
            p50.append((loop.time() - start, sample.values.get("latency-p50", math.nan)))
            await asyncio.sleep(INTERVAL)
        await platform.stop_generators(spec)
    finally:
        try:
            await platform.stop_sut(spec)
        finally:
            await platform.delete_topics(spec)
    kept = [v for t, v in p50 if t >= WARMUP and not math.isnan(v)]
    assert kept, p50
    return statistics.median(kept), last


async def test_the_measured_latency_shows_the_configured_delay(kafka_bootstrap: str) -> None:
    # the session's broker: the platform's own start (6 s) is not what this measures
    platform = EmbeddedPlatform({"sample_interval": INTERVAL, "bootstrap_servers": kafka_bootstrap})
    await platform.open()
    try:
        (delayed, values), (undelayed, _) = await asyncio.gather(
            measured_p50(platform, spec_for("lat-delay", DELAY_MS)), measured_p50(platform, spec_for("lat-none", 0.0))
        )
    finally:
        await platform.close()
    print(f"configured {DELAY_MS:.0f} ms: measured p50 {delayed:.0f} ms; without delay {undelayed:.0f} ms")
    assert DELAY_MS <= delayed <= DELAY_MS + TOLERANCE_MS
    assert abs((delayed - undelayed) - DELAY_MS) <= DIFFERENCE_TOLERANCE_MS
    # the informational SLIs come with every sample
    for sli in ("latency-p95", "latency-p99", "latency-max", "output-rate", "processed-rate", "sut-cpu",
                "sut-rss", "host-load1", "host-cpu", "host-steal"):
        assert sli in values, sorted(values)
    assert values["sut-rss"] > 10  # MiB of a Python process with aiokafka


def test_a_latency_slo_demand_search_finds_the_known_demand(tmp_path: Path) -> None:
    """Load 1500/s, capacity 1000/s per instance: 1 instance falls behind and its latency
    grows without bound, 2 keep up with the 300 ms delay well below the 1500 ms bound.

    Both are plain 8 s into an experiment, so 20-s experiments decide them: one instance's
    p99 passed 1500 ms 4 s in and grew to 18 s, two instances' settled at 330-380 ms from
    the second interval on (40-s experiments with a 20-s warm-up)."""
    bench = default_benchmark()
    bench["slos"] = [{"name": "latency", "sloType": "latency", "properties": {"percentile": 99, "threshold": 1500}}]
    bench_file = tmp_path / "benchmark.yaml"
    bench_file.write_text(json.dumps(bench))  # JSON is YAML
    results = tmp_path / "results"
    cmd = [str(Path(sys.executable).parent / "bench"), "run", "--plugin", "calibrated", "--benchmark", str(bench_file),
           "--loads", "1500", "--resources", "1,2", "--duration", "20", "--warmup", "8", "--repetitions", "1",
           "--sample-interval", "2", "--no-early-stop", "--set", "capacity=1000", "--set", "delayMs=300",
           "--results", str(results)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = list(csv.reader((results / "exp0_demand.csv").open()))
    assert rows == [["load", "resources"], ["1500", "2"]], done.stdout
    # a table of 20-s experiments says what it is the verdict of
    note = "note: 20-s experiments (8-s warm-up), shorter than the method's default of 300 s"
    assert note in done.stdout, done.stdout
    result = json.loads((results / "exp0-result.json").read_text())
    by_res = {e["resources"]: e for e in result["experiments"]}
    assert not by_res[1]["slos"]["latency"]["passed"]
    assert by_res[2]["slos"]["latency"]["passed"]
    assert 300 <= by_res[2]["info"]["latency-p50"]["median"] <= 300 + TOLERANCE_MS
    assert (results / "exp0_1500_2_sli_latency_0.csv").exists()
    info = read_series(results / "exp0_1500_2_info_host-steal_0.csv")
    assert all(0.0 <= v <= 1.0 for v in info.values)


async def test_a_busy_interval_is_sampled_evenly_and_its_output_rate_stays_exact(kafka_bootstrap: str) -> None:
    """5,000 records in one interval, a sampler allowed 100: it decodes at most 100 of
    them, from each tenth of the interval (the records' event times say which part they
    came from), counts all 5,000 in ``output-rate`` and goes on after them: the next
    interval's 30 records are read whole, none of the skipped ones again."""
    topic = f"latency-sampled-{int(time.time() * 1000)}"
    await create_topics(kafka_bootstrap, [(topic, 1)], config=OUTPUT_TOPIC_CONFIG)
    producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap, linger_ms=5)
    await producer.start()
    sampler = LatencySampler(kafka_bootstrap, [topic], max_records=100, segments=10)
    try:
        await sampler.start()
        base = time.time() * 1000 - 7_200_000  # two hours old, record i a second younger than record i-1
        for i in range(5_000):
            await producer.send(topic, json.dumps({"identifier": "s", "latestEventTime": base + i * 1000}).encode())
        await producer.flush()
        appended = time.time() * 1000  # each record's append time is at most this
        start = time.time()
        latencies, records = await sampler.read()
        assert records == 5_000
        assert sampler.sampled == 1
        assert 90 <= len(latencies) <= 100 == sampler.records
        # latency = append - event, so each latency says which record it was, within the
        # second or so the 5,000 took to be appended, and so which tenth of the interval
        indices = [(appended - base - lat) / 1000 for lat in latencies]
        assert {int(i / 500) for i in indices} == set(range(10)), sorted(indices)
        assert all(lat > 2_000_000 for lat in latencies)

        for _ in range(30):
            await producer.send(topic, json.dumps({"identifier": "s", "timestamp": time.time() * 1000}).encode())
        await producer.flush()
        stats = await sampler.sample()
        assert sampler.sampled == 1 and sampler.records == 130  # read whole, nothing read twice
        assert stats["latency-share"] == 1.0
        assert stats["latency-max"] < 60_000
        assert stats["output-rate"] > 0
        assert time.time() - start < 30
    finally:
        await sampler.close()
        await producer.stop()
        await delete_topics(kafka_bootstrap, [topic])
