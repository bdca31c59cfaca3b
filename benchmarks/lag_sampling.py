"""Lag sampling cost: CPU of one ``LagSampler`` at 1 s and 5 s intervals, 100 partitions.

One embedded broker; a 100-partition input topic that a generator process keeps
filling (``--rate`` records/s) and a consumer group with committed offsets on every
partition. The sampler runs alone in a child process (so only its own CPU is
counted) and samples every ``interval`` s for ``--seconds``; its CPU time over that
window, as a share of one core, is the figure (target < 1 %). Intervals alternate
within each run. Both ways of reading end offsets are measured: ``listoffsets`` (what
the sampler uses on Kafka and on the default embedded broker, noida-db) and ``fetch``
(what it must use on tansu); the target lines are for the default broker's method.

    .venv/bin/python benchmarks/lag_sampling.py [--quick] [--runs 5] [--seconds 30] [--methods listoffsets,fetch]
    .venv/bin/python benchmarks/lag_sampling.py --broker tansu --methods fetch --rate 0   # tansu, idle topic
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _common import add_broker_dir_option, banner, median, place_broker_data, spread

PARTITIONS = 100
GROUP = "lag-bench-group"


async def sampler_child(bootstrap: str, topic: str, interval: float, seconds: float,
                        method: str) -> dict[str, float]:
    from bench.runtime.kafka.lag import LagSampler

    async with LagSampler(bootstrap, GROUP, [topic], end_offsets=method) as sampler:
        await sampler.sample()  # connections, metadata: start-up, not steady-state cost
        cpu0, t0 = time.process_time(), time.monotonic()
        latencies: list[float] = []
        lags: list[float] = []
        next_tick = t0
        while time.monotonic() - t0 < seconds:
            started = time.monotonic()
            lags.append(await sampler.sample())
            latencies.append(time.monotonic() - started)
            next_tick += interval
            await asyncio.sleep(max(0.0, next_tick - time.monotonic()))
        elapsed = time.monotonic() - t0
        cpu = time.process_time() - cpu0
    return {
        "cpu": cpu / elapsed,
        "cpu_ms_per_sample": cpu / len(latencies) * 1000.0,
        "samples": len(latencies),
        "latency_ms": statistics.median(latencies) * 1000.0,
        "lag": lags[-1],
        "partitions": float(len(sampler.last_end)),
    }


async def setup(bootstrap: str, topic: str) -> None:
    """Topic, some records on every partition, and committed offsets on all of them."""
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
    from bench.runtime.kafka.lag import create_topics

    await create_topics(bootstrap, [(topic, PARTITIONS)])
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    await producer.start()
    try:
        futures = [await producer.send(topic, b"x" * 64, partition=p) for p in range(PARTITIONS) for _ in range(20)]
        await asyncio.gather(*futures)
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=GROUP, enable_auto_commit=False)
    await consumer.start()
    try:
        tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        consumer.assign(tps)
        await consumer.commit({tp: 10 for tp in tps})
    finally:
        await consumer.stop()


def start_generator(bootstrap: str, topic: str, rate: float, tmp: str) -> subprocess.Popen[str]:
    keys = [f"s_{i}" for i in range(max(PARTITIONS * 10, int(rate)))]
    spec = {"generator": "active-power", "bootstrap_servers": bootstrap, "topic": topic, "keys": keys,
            "period_ms": len(keys) * 1000.0 / rate, "duration_s": None, "params": {}}
    path = Path(tmp, "gen.json")
    path.write_text(json.dumps(spec))
    proc = subprocess.Popen([sys.executable, "-m", "bench.runtime.load.generator_main", str(path)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        if '"started"' in line or '"error"' in line:
            break
    # keep reading its progress lines: a full pipe blocked the generator after ~6 min
    threading.Thread(target=proc.stdout.read, daemon=True).start()
    return proc


def run_sampler(bootstrap: str, topic: str, interval: float, seconds: float, method: str) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--sampler-child", bootstrap, topic, str(interval), str(seconds),
                          method], check=True, capture_output=True, text=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--sampler-child":
        result = asyncio.run(sampler_child(sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]),
                                           sys.argv[6]))
        print(json.dumps(result))
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="5 runs of 10 s")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=None, help="per measurement (default 30; quick 10)")
    parser.add_argument("--rate", type=float, default=5000.0, help="records/s written meanwhile (0: an idle topic)")
    parser.add_argument("--broker", default=None, help="embedded broker kind (default: the embedded default)")
    parser.add_argument("--methods", default="listoffsets,fetch", help="end-offset methods to measure")
    add_broker_dir_option(parser)
    args = parser.parse_args()
    where = place_broker_data(args.broker_on_disk)
    seconds = args.seconds or (10.0 if args.quick else 30.0)

    from bench.runtime.kafka.broker import DEFAULT_KIND, END_OFFSETS_BY_KIND, running_broker

    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    kind = args.broker or DEFAULT_KIND
    default_method = END_OFFSETS_BY_KIND[kind]

    banner(f"lag sampler CPU, {kind}, {PARTITIONS} partitions, {args.rate:g} records/s written, "
           f"{seconds:g} s x {args.runs}, {where}")
    with running_broker(kind) as broker, tempfile.TemporaryDirectory() as tmp:
        bootstrap = broker.bootstrap_servers
        topic = f"lag-bench-{os.getpid()}"
        asyncio.run(setup(bootstrap, topic))
        gen = start_generator(bootstrap, topic, args.rate, tmp) if args.rate > 0 else None
        cpu: dict[tuple[str, float], list[float]] = {}
        latency: dict[tuple[str, float], list[float]] = {}
        per_sample: dict[str, list[float]] = {}
        try:
            for i in range(args.runs):
                combos = [(m, iv) for m in methods for iv in (1.0, 5.0)]
                for method, interval in (combos if i % 2 == 0 else combos[::-1]):
                    r = run_sampler(bootstrap, topic, interval, seconds, method)
                    cpu.setdefault((method, interval), []).append(r["cpu"] * 100.0)
                    latency.setdefault((method, interval), []).append(r["latency_ms"])
                    per_sample.setdefault(method, []).append(r["cpu_ms_per_sample"])
                    print(f"run {i + 1} {method} every {interval:g} s: {r['cpu'] * 100:.2f} % of a core, "
                          f"{r['samples']:.0f} samples, {r['cpu_ms_per_sample']:.1f} ms CPU and median "
                          f"{r['latency_ms']:.0f} ms wall per sample, "
                          f"{r['partitions']:.0f} partitions, lag {r['lag']:,.0f}", flush=True)
        finally:
            if gen is not None:
                gen.send_signal(signal.SIGTERM)
                gen.wait(30)
        for method in methods:
            for interval in (1.0, 5.0):
                print(f"{method} every {interval:g} s: CPU % of a core {spread(cpu[(method, interval)])}; "
                      f"ms per sample {spread(latency[(method, interval)])}")
            ms = median(per_sample[method])
            print(f"{method} CPU per sample: {spread(per_sample[method])} ms; hence at most {ms / 10:.2f} % of a "
                  f"core at 1 s and {ms / 50:.2f} % at 5 s if every sample ran on time")
        if default_method in methods:
            for interval in (5.0, 1.0):
                print(f"CPU share of one core, {default_method} (default on {kind}) every {interval:g} s "
                      f"(median, target < 1 %): {median(cpu[(default_method, interval)]):.2f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
