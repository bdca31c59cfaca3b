"""CoresPerInstance and MemoryPerInstance on a real standalone cluster from the pyspark wheel.

One worker with two cores and 512 MiB, and an application built with the shape's Spark
settings (what the embedded platform hands the driver): the master must report the
worker's size and the application must get one executor with both cores and that heap.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest
from bench.runtime.host import procs
from bench.runtime.spark.cluster import InstanceShape, SparkCluster

pytestmark = pytest.mark.e2e

APP = """
import json, sys
from pyspark.sql import SparkSession
master, conf = sys.argv[1], json.loads(sys.argv[2])
builder = SparkSession.builder.master(master).appName("shape").config("spark.ui.enabled", "false")
for key, value in conf.items():
    builder = builder.config(key, value)
spark = builder.getOrCreate()
sc = spark.sparkContext
total = sc.parallelize(range(1000), 4).map(lambda x: x * 2).sum()
print(json.dumps({"parallelism": sc.defaultParallelism, "memory": sc.getConf().get("spark.executor.memory"),
                  "sum": total}))
spark.stop()
"""


async def test_workers_and_executor_follow_the_instance_shape() -> None:
    shape = InstanceShape.of({"coresPerInstance": 2, "memoryPerInstanceMb": 512}, 1)
    with procs.tempdir_in(procs.owned_tempdir()):
        cluster = SparkCluster(shape.instances, shape.worker_memory, shape.cores)
    await cluster.start()
    try:
        state = await asyncio.to_thread(cluster._state)
        workers = [w for w in state["workers"] if w.get("state") == "ALIVE"]  # type: ignore[union-attr]
        assert [(w["cores"], w["memory"]) for w in workers] == [(2, 512)]
        result = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-c", APP, cluster.master_url, json.dumps(shape.conf(cluster.master_url))],
            capture_output=True,
            text=True,
            timeout=150,
            env=procs.child_env(),
        )
        assert result.returncode == 0, result.stderr[-3000:]
        report = json.loads(result.stdout.strip().splitlines()[-1])
        assert report == {"parallelism": 2, "memory": "512m", "sum": 999000}
    finally:
        await cluster.stop()
