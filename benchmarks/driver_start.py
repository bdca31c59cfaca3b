"""Spark driver start-up with and without the class archive ``scripts/install`` records.

Each round starts two fresh driver processes, one with the archive and one without
(``BENCH_NO_CLASS_ARCHIVE``), in an order that alternates between rounds, and times in
each what every repetition of an experiment pays before its SUT runs: building the
SparkSession (JVM start, Spark's classes, the Kafka connector's JARs) and its first
job (a JSON parse and aggregation, code generation included).

    .venv/bin/python benchmarks/driver_start.py [--quick] [--rounds 5]

``--quick``: two rounds (about a minute).

Printed last: the median seconds of each, and with / without (lower is better).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from _common import banner, median, spread

CHILD = """
import json, time
t0 = time.monotonic()
from bench.runtime.spark.session import build_session
spark = build_session("local[1]", "bench-driver-start", 1)
t1 = time.monotonic()
from pyspark.sql import functions as F
rows = spark.range(1000).select(F.to_json(F.struct((F.col("id") % 7).alias("k"), F.col("id").alias("v"))).alias("j"))
rows.select(F.from_json("j", "k INT, v LONG").alias("r")).groupBy("r.k").count().collect()
t2 = time.monotonic()
spark.stop()
print(json.dumps({"session": t1 - t0, "first_job": t2 - t1}))
"""


def one(archive: bool) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k != "BENCH_NO_CLASS_ARCHIVE"}
    if not archive:
        env["BENCH_NO_CLASS_ARCHIVE"] = "1"
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=600,
                          check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="two rounds")
    args = parser.parse_args()
    if args.quick:
        args.rounds = 2
    from bench.runtime.spark.class_archive import archive_path

    if not archive_path().is_file():
        print(f"no class archive at {archive_path()}: run scripts/install (or "
              "python -m bench.runtime.spark.archive_recording) first", file=sys.stderr)
        return 2
    banner(f"driver start-up, {args.rounds} rounds, archive {archive_path().name}")
    runs: dict[bool, list[dict[str, float]]] = {True: [], False: []}
    for r in range(args.rounds):
        for archive in ((True, False) if r % 2 == 0 else (False, True)):
            got = one(archive)
            runs[archive].append(got)
            print(f"round {r + 1} {'with' if archive else 'without'}: session {got['session']:.1f} s, "
                  f"first job {got['first_job']:.1f} s", flush=True)
    for part in ("session", "first_job"):
        for archive in (True, False):
            print(f"{part:10} {'with' if archive else 'without':8} {spread([x[part] for x in runs[archive]])}")
    total = {a: median([x["session"] + x["first_job"] for x in runs[a]]) for a in runs}
    print(f"session + first job: with {total[True]:.1f} s, without {total[False]:.1f} s, "
          f"with / without {total[True] / total[False]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
