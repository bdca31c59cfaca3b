"""Generator throughput: one ``active-power`` generator process vs a raw aiokafka producer.

Same broker (the embedded default, its data on tmpfs unless ``--broker-on-disk``: see
``_common.place_broker_data``), a fresh topic per measurement, deleted after it
(noida-db keeps what it holds in memory, and a broker growing to many GB slowed later
runs), same producer settings (acks=1, linger 5 ms, 256 KiB batches), both as one
separate process each, interleaved:

1. max: the generator asked for far more than it can do (it reports the rate the
   broker acknowledged) vs a raw aiokafka batch-API producer sending pre-encoded
   records of the same size; ratio target >= 0.8;
2. accuracy: the generator at 90 / 50 / 25 % of its measured max, achieved / target
   (target: within 1 %), and its CPU per 1k records/s (CPU s per s / (rate / 1000)).
   By default each run's accuracy loads follow its own max measurement at once: this
   machine's capacity drifted by a third over minutes, so 90 % of a median taken
   minutes earlier was at times more than it could then do (``--max-from median``
   measures that way).

    .venv/bin/python benchmarks/generator.py [--quick] [--runs 5] [--seconds 10] [--broker-on-disk]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import add_broker_dir_option, banner, median, place_broker_data, proc_cpu_seconds, spread

PARTITIONS = 4
KEYS = 10_000
RECORD = b'{"identifier":"s_1234","timestamp":1764121234567,"valueInW":10.0}'


# ----------------------------------------------------------------- raw producer (child mode)


async def raw_producer(bootstrap: str, topic: str, seconds: float) -> dict[str, float]:
    """The ceiling: pre-encoded records, the batch API, as many in flight as aiokafka takes."""
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=5, max_batch_size=256 * 1024,
                                max_request_size=4 * 1024 * 1024)
    await producer.start()
    keys = [f"s_{i}".encode() for i in range(KEYS)]
    delivered = 0
    pending: set[asyncio.Future[Any]] = set()

    def done(fut: asyncio.Future[Any], n: int) -> None:
        nonlocal delivered
        pending.discard(fut)
        if not fut.cancelled() and fut.exception() is None:
            delivered += n

    try:
        partitions = sorted(await producer.partitions_for(topic))
        loop = asyncio.get_running_loop()
        start = loop.time()
        cpu0 = time.process_time()
        ts = int(time.time() * 1000)
        i = 0
        while loop.time() - start < seconds:
            for part in partitions:
                batch = producer.create_batch()
                while batch.append(key=keys[i % KEYS], value=RECORD, timestamp=ts) is not None:
                    i += 1
                n = batch.record_count()
                fut = await producer.send_batch(batch, topic, partition=part)
                pending.add(fut)
                fut.add_done_callback(lambda f, n=n: done(f, n))
        elapsed = loop.time() - start
        cpu = time.process_time() - cpu0
        if pending:
            await asyncio.wait(set(pending), timeout=10)
    finally:
        await producer.stop()
    return {"rate": delivered / elapsed, "cpu": cpu / elapsed}


# ----------------------------------------------------------------- drivers


def run_raw(bootstrap: str, topic: str, seconds: float) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--raw-child", bootstrap, topic, str(seconds)],
                         check=True, capture_output=True, text=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def run_generator(bootstrap: str, topic: str, rate: float, seconds: float, tmp: str,
                  params: dict[str, Any]) -> dict[str, float]:
    """One generator_main process for ``seconds`` at ``rate`` records/s over KEYS keys."""
    spec = {
        "generator": "active-power",
        "bootstrap_servers": bootstrap,
        "topic": topic,
        "keys": [f"s_{i}" for i in range(KEYS)],
        "period_ms": KEYS * 1000.0 / rate,
        "duration_s": None,
        "params": {"seed": 1, **params},
    }
    path = Path(tmp, "gen.json")
    path.write_text(json.dumps(spec))
    proc = subprocess.Popen([sys.executable, "-m", "bench.runtime.load.generator_main", str(path)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    events: dict[str, dict[str, Any]] = {}
    try:
        for line in proc.stdout:
            event = json.loads(line)
            events[event["event"]] = event
            if event["event"] in ("started", "error"):
                break
        if "started" not in events:
            raise RuntimeError(f"generator did not start: {events}")
        cpu0, t0 = proc_cpu_seconds(proc.pid), time.monotonic()
        time.sleep(seconds)
        cpu = (proc_cpu_seconds(proc.pid) - cpu0) / (time.monotonic() - t0)
        proc.send_signal(signal.SIGTERM)
        for line in proc.stdout:
            event = json.loads(line)
            events[event["event"]] = event
    finally:
        proc.wait(30)
    report = events.get("report")
    if report is None:
        raise RuntimeError(f"generator gave no report: {events.get('error')}")
    return {"rate": float(report["achieved_rate"]), "target": float(report["target_rate"]), "cpu": cpu}


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--raw-child":
        print(json.dumps(asyncio.run(raw_producer(sys.argv[2], sys.argv[3], float(sys.argv[4])))))
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="5 runs of 3 s")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=None, help="per measurement (default 10; quick 3)")
    parser.add_argument("--max-from", choices=("run", "median"), default="run",
                        help="accuracy loads as a share of: 'run' the maximum measured just before them "
                             "(default), 'median' the median of all maxima, measured first")
    parser.add_argument("--linger-ms", type=int, default=None,
                        help="the generator's lingerMs parameter (default: the generator's own)")
    add_broker_dir_option(parser)
    args = parser.parse_args()
    where = place_broker_data(args.broker_on_disk)
    seconds = args.seconds or (3.0 if args.quick else 10.0)
    params: dict[str, Any] = {} if args.linger_ms is None else {"lingerMs": args.linger_ms}

    from bench.runtime.kafka.broker import running_broker
    from bench.runtime.kafka.lag import create_topics, delete_topics

    banner(f"generator vs raw aiokafka producer, {PARTITIONS} partitions, {KEYS} keys, {seconds:g} s x {args.runs}"
           + (f", generator lingerMs {args.linger_ms}" if args.linger_ms is not None else "") + f", {where}")
    with running_broker() as broker, tempfile.TemporaryDirectory() as tmp:
        bootstrap = broker.bootstrap_servers
        n = 0
        used: list[str] = []

        def topic() -> str:
            """A fresh topic; the previous measurement's is deleted first."""
            nonlocal n
            n += 1
            if used:
                asyncio.run(delete_topics(bootstrap, used))
                used.clear()
            name = f"gen-bench-{os.getpid()}-{n}"
            asyncio.run(create_topics(bootstrap, [(name, PARTITIONS)]))
            used.append(name)
            return name

        raw: list[float] = []
        gen: list[float] = []
        paired: list[float] = []
        per_cpu: list[float] = []
        accuracy: dict[int, list[float]] = {}
        cpu_per_k: dict[int, list[float]] = {}
        targets: dict[int, list[float]] = {}

        def accuracy_run(pct: int, maximum: float) -> str:
            g = run_generator(bootstrap, topic(), maximum * pct / 100.0, seconds, tmp, params)
            accuracy.setdefault(pct, []).append(g["rate"] / g["target"])
            cpu_per_k.setdefault(pct, []).append(g["cpu"] / (g["rate"] / 1000.0))
            targets.setdefault(pct, []).append(g["target"])
            return f"{pct} %: {accuracy[pct][-1]:.4f}"

        for i in range(args.runs):
            # alternate who goes first: a neighbour's load burst should not always hit one side
            if i % 2 == 0:
                r = run_raw(bootstrap, topic(), seconds)
                g = run_generator(bootstrap, topic(), 5_000_000.0, seconds, tmp, params)
            else:
                g = run_generator(bootstrap, topic(), 5_000_000.0, seconds, tmp, params)
                r = run_raw(bootstrap, topic(), seconds)
            raw.append(r["rate"])
            gen.append(g["rate"])
            paired.append(g["rate"] / r["rate"])
            per_cpu.append((g["rate"] / g["cpu"]) / (r["rate"] / r["cpu"]))
            line = (f"run {i + 1}: raw {r['rate']:,.0f}/s (cpu {r['cpu']:.2f} core)  generator {g['rate']:,.0f}/s "
                    f"(cpu {g['cpu']:.2f} core)  ratio {paired[-1]:.3f}")
            if args.max_from == "run":  # the highest load first, nearest to its maximum
                line += "  achieved/target at " + ", ".join(accuracy_run(pct, g["rate"]) for pct in (90, 50, 25))
            print(line, flush=True)
        print(f"raw aiokafka batch producer: {spread(raw)} records/s")
        print(f"generator at full speed:     {spread(gen)} records/s")
        print(f"records per CPU-second, generator / raw (median): {median(per_cpu):.3f}")
        if args.max_from == "median":
            for pct in (25, 50, 90):
                for _ in range(args.runs):
                    accuracy_run(pct, median(gen))
        for pct in (25, 50, 90):
            print(f"at {pct:2d} % of max (median target {median(targets[pct]):,.0f}/s): achieved/target "
                  f"median {median(accuracy[pct]):.4f} (min {min(accuracy[pct]):.4f}, max {max(accuracy[pct]):.4f}); "
                  f"CPU per 1k records/s {median(cpu_per_k[pct]) * 100:.2f} % of a core", flush=True)
        worst = min(median(v) for v in accuracy.values())
        print(f"worst median achieved/target at 25/50/90 % (target >= 0.99): {worst:.4f}")
        print(f"ratio of medians generator / raw: {median(gen) / median(raw):.3f}")
        print(f"ratio generator / raw producer (median of paired runs, target >= 0.8): {median(paired):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
