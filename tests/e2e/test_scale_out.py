"""The scale-out path for real: bench against a Spark standalone cluster and a Kafka
cluster that it did not start, as a user's clusters would be.

Started once for the module as external services: a Spark master with two workers
(separate JVMs from the pyspark wheel, one core and 1 GiB each) and a three-node
Apache Kafka (KRaft). Then ``bench run --platform external --spark-master spark://...
--bootstrap-servers ...`` for the calibrated use case (its demand is known: exactly
ceil(load / capacity)), UC1 and UC4, and an own ``--job`` script that takes its
servers and topics as arguments. Two instances are two executors of one core: with
one-core workers the master must place them on both workers, which the workers'
executor folders show. The three-node Kafka's own tests run on the same cluster,
first (every partition on all three nodes) and last (a killed node leaves a working
cluster: it kills node 3): a cluster of their own took another 25-30 s to start.

Sized for CI on two cores: one load, one or two resource values, 30-35 s experiments
(longer for UC4, whose query starts five Python sources and operators, for UC1, whose
first batch with data came late in CI, and for the job, whose warm-up must cover its
first micro-batch), a sample every 2 s. Each use case's
load type, repetitions and generator delay are given, so that its default execution
(tuned for a laptop) does not change what runs here.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from bench.runtime.host.jars import kafka_jars
from bench.runtime.kafka.admin import create_topics
from bench.runtime.kafka.apache_kafka import KafkaCluster, start_sync
from bench.runtime.spark.cluster import SparkCluster
from e2e_procs import bench_run, demand_rows

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(kafka_jars() is None, reason="Apache Kafka not installed (scripts/install fetches it)"),
]

ROOT = Path(__file__).resolve().parents[2]
WORKERS = 2
#: per experiment: a warm-up long enough for a standalone application's first batches, and
#: a sample every 2 s so that a lag trend over ~25 s rests on a dozen samples, not five
TIMING = ("--duration", "35", "--warmup", "12", "--sample-interval", "2")

#: a job written without bench: servers and topics come from its command line only
ARGS_JOB = '''
import argparse

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

parser = argparse.ArgumentParser()
parser.add_argument("--brokers", required=True)
parser.add_argument("--in", dest="source", required=True)
parser.add_argument("--out", dest="sink", required=True)
args = parser.parse_args()

spark = SparkSession.builder.appName("args-job").getOrCreate()
(spark.readStream.format("kafka").option("kafka.bootstrap.servers", args.brokers)
    .option("subscribe", args.source).load()
    .select(F.col("key"), F.upper(F.col("value").cast("string")).alias("value"))
    .writeStream.format("kafka").option("kafka.bootstrap.servers", args.brokers)
    .option("topic", args.sink).option("checkpointLocation", "/tmp/args-job/checkpoint")
    .start().awaitTermination())
'''


@pytest.fixture(scope="module")
def kafka() -> Iterator[KafkaCluster]:
    cluster = start_sync(3)
    try:
        yield cluster
    finally:
        # Killed, not stopped: its data is thrown away, and the two nodes the last test
        # leaves took 6 s to shut down in order (a clean stop is test_kafka_cluster.py's)
        for node in cluster.nodes:
            node.kill()
        cluster.stop_sync()


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkCluster]:
    cluster = SparkCluster(WORKERS, "1g", 1)
    cluster.start_sync()
    try:
        yield cluster
    finally:
        cluster.stop_sync()


async def _replicas(bootstrap: str, topic: str) -> dict[int, list[int]]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        (described,) = await admin.describe_topics([topic])
        return {p["partition"]: sorted(p["replicas"]) for p in described["partitions"]}
    finally:
        await admin.close()


async def _produce_and_read(bootstrap: str, topic: str, n: int) -> list[bytes]:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    try:
        for i in range(n):
            await producer.send(topic, f"r{i}".encode(), key=f"s_{i}".encode())
        await producer.flush()
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                                enable_auto_commit=False)
    await consumer.start()
    got: list[bytes] = []
    try:
        while len(got) < n:
            batches = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), 30)
            got += [m.value for msgs in batches.values() for m in msgs if m.value is not None]
    finally:
        await consumer.stop()
    return got


async def test_three_nodes_replicate_every_partition(kafka: KafkaCluster) -> None:
    """The cluster the runs below are given: every partition on all three nodes."""
    assert len(kafka.nodes) == 3 and kafka.alive()
    assert len(kafka.bootstrap_servers.split(",")) == 3
    topic = f"rf3-{uuid.uuid4().hex[:8]}"
    await create_topics(kafka.bootstrap_servers, [(topic, 4)])  # replication: min(3, brokers)
    replicas = await _replicas(kafka.bootstrap_servers, topic)
    assert sorted(replicas) == [0, 1, 2, 3]
    assert all(r == [1, 2, 3] for r in replicas.values()), replicas
    got = await _produce_and_read(kafka.bootstrap_servers, topic, 300)
    assert sorted(got) == sorted(f"r{i}".encode() for i in range(300))


def verdicts(results: Path) -> str:
    """What decided each experiment, one line each, for the message of a failed assertion.

    Why not the result file itself: cut to fit a message, it showed the first
    experiment only (a two-process suite run failed on the second)."""
    path = results / "exp0-result.json"
    if not path.exists():
        return "no result file"
    lines = []
    for exp in json.loads(path.read_text()).get("experiments", []):
        slos = {name: {k: slo.get(k) for k in ("slopes", "threshold", "samples", "warmup")}
                for name, slo in (exp.get("slos") or {}).items()}
        lines.append(f"load {exp.get('load')} on {exp.get('resources')}: {exp.get('outcome')}, "
                     f"unstable {exp.get('unstable')}, early {exp.get('early_stopped')}, cause {exp.get('cause')}, "
                     f"faults {exp.get('faults')}, SLOs {slos}")
    return "\n".join(lines) or "no experiments"


def external(kafka: KafkaCluster, results: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return bench_run("--platform", "external", "--bootstrap-servers", kafka.bootstrap_servers,
                     "--results", str(results), *TIMING, *args, timeout=300)


def spread(spark: SparkCluster, before: set[str]) -> dict[str, dict[int, list[str]]]:
    """The executors of the applications that ran since ``before``, by worker."""
    return {app: where for app, where in spark.executors().items() if app not in before}


def test_calibrated_demand_is_exact_on_a_kafka_cluster(kafka: KafkaCluster, tmp_path: Path) -> None:
    """2,500 records/s at 1,000 per instance: 2 instances fall behind, 3 keep up.

    A 6-s warm-up: the calibrated SUT needs no Spark, and three instances' lag had settled
    4 s after the generator's start; the slopes (+500 and about -20 records/s against a
    threshold of 25) are decided from the 20 s of samples that follow, as early stop ends
    each experiment then (49 and 41 s per experiment with a 12-s warm-up)."""
    out = external(kafka, tmp_path, "--plugin", "calibrated", "--set", "capacity=1000",
                   "--loads", "2500", "--resources", "2,3", "--duration", "30", "--warmup", "6")
    assert out.returncode == 0, out.stderr[-3000:]
    assert demand_rows(tmp_path) == [{"load": "2500", "resources": "3"}], verdicts(tmp_path)
    env = json.loads((tmp_path / "exp0-environment.json").read_text())
    assert env["platform"] == "external"
    assert env["broker"]["bootstrapServers"] == kafka.bootstrap_servers and not env["broker"]["embedded"]


@dataclass(frozen=True)
class UseCaseRun:
    """One use case's run on both clusters, at one load and two instances."""

    load_type: str
    #: light enough that two one-core executors clearly keep up
    load: str
    #: more options: a duration and warm-up replace TIMING's (the later option wins)
    options: tuple[str, ...] = ()
    #: seconds between the SUT's start and the generator's (the Execution's loadGenerationDelay)
    delay: float = 0


#: a windowed query's micro-batches took ~4 s each on the two one-core executors: its lag
#: saw-tooth gave the slope over ~23 s a standard error of 90-190 records/s at 1,500
#: records/s (at a load average of 1-13), far above the default
#: threshold (1 % of the rate); 20 % still fails a SUT that falls far behind or stops.
#: On a machine of the same kind with half the speed UC1's batches there took 9-10 s too
#: (slope 164 +- 305 records/s against a threshold of 20 at 2,000 records/s),
#: so every use case gets it: the test asks whether the path runs to a
#: table, not where one instance's capacity lies.
SHORT_RUN = ("--threshold-rel-to-rate", "0.2")

USE_CASES = {
    # UC4 alone: its query runs Python operators on the executors (as UC2's and UC3's
    # windowed aggregations do) with the same Kafka source, sink and executors as UC1's,
    # so its run takes the paths the use cases share on the clusters. The others' runs here
    # cost CI 112 s (UC1), 100 s (UC2) and 117 s (UC3); tests/e2e/test_stages.py runs UC2
    # end to end, tests/e2e/test_faults.py UC1, the plugins' own tests UC3's query.
    # Two nesting levels of four children: 16 sensors; its query is the slowest to start,
    # so a 25-s warm-up.
    "uc4": UseCaseRun("NumNestedGroups", "2", (*SHORT_RUN, "--duration", "50", "--warmup", "25"), delay=10),
}


def assert_kept_up_or_flagged(results: Path, load: str) -> None:
    """Two instances keep up with ``load``, or their failed verdict is one the verdict
    confidence marks unstable. On a loaded 2-core machine UC1's cluster batches took
    10-11 s; over a 35-s run its lag saw-tooth gave a slope of 490 +- 386 records/s against
    a threshold of 400, a fail inside the noise, flagged as such (in CI, at a load
    average of 9.5). A SUT that clearly falls behind or stops still fails here:
    its lag rises at the input rate, far outside that noise."""
    rows = demand_rows(results)
    assert [row["load"] for row in rows] == [load], rows
    if rows[0]["resources"] == "2":
        return
    experiments = json.loads((results / "exp0-result.json").read_text())["experiments"]
    assert experiments, verdicts(results)
    for experiment in experiments:
        assert experiment["valid"] and (experiment["passed"] or experiment["unstable"]), verdicts(results)


def run_on_both_clusters(kafka: KafkaCluster, spark: SparkCluster, folder: Path, plugin: str,
                         case: UseCaseRun) -> None:
    """``bench run --plugin PLUGIN`` on the Spark and Kafka clusters to a final table in
    which two instances keep up with the load (or are marked unstable), each application's
    two executors on different workers, and the environment file naming the clusters."""
    results = folder / "results"
    execution = folder / "execution.yaml"
    execution.write_text(f"execution:\n  loadGenerationDelay: {case.delay}\n")
    before = set(spark.executors())
    started = time.monotonic()
    out = external(kafka, results, "--plugin", plugin, "--spark-master", spark.master_url,
                   "--execution", str(execution), "--load-type", case.load_type, "--loads", case.load,
                   "--resources", "2", "--repetitions", "1", *case.options)
    assert out.returncode == 0, out.stderr[-3000:]
    assert_kept_up_or_flagged(results, case.load)
    # bench reads back what it wrote: a UC3 run's informational files held "nan" for
    # latency intervals without output, and bench analyze must not refuse the whole run
    # for them
    analyzed = subprocess.run([sys.executable, "-m", "bench.cli.commands", "analyze", str(results), "-o",
                               str(folder / "analysis.csv")], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert analyzed.returncode == 0, analyzed.stdout[-2000:] + analyzed.stderr[-2000:]
    assert (folder / "analysis.csv").read_text().splitlines()[1].split(",")[0] == case.load
    apps = spread(spark, before)
    assert apps, f"no application ran on {spark.master_url} in {time.monotonic() - started:.0f} s"
    for app, where in apps.items():
        # two one-core executors on two one-core workers: one on each
        assert sorted(where) == [0, 1] and all(len(ids) == 1 for ids in where.values()), (app, where)
    assert json.loads((results / "exp0-run.json").read_text())["useCase"] == plugin
    env = json.loads((results / "exp0-environment.json").read_text())
    assert env["platform"] == "external"
    assert env["spark"]["master"] == spark.master_url
    assert env["broker"]["bootstrapServers"] == kafka.bootstrap_servers and not env["broker"]["embedded"]
    assert env["cpuLimit"] is None or env["cpuLimit"]["applied"] is False  # executors are the cluster's


@pytest.mark.parametrize("plugin", list(USE_CASES))
def test_use_case_runs_on_the_spark_cluster_with_executors_on_both_workers(
    plugin: str, kafka: KafkaCluster, spark: SparkCluster, tmp_path: Path
) -> None:
    run_on_both_clusters(kafka, spark, tmp_path, plugin, USE_CASES[plugin])


def test_own_job_with_its_own_command_line_runs_on_both_clusters(
    kafka: KafkaCluster, spark: SparkCluster, tmp_path: Path
) -> None:
    script = tmp_path / "args_job.py"
    script.write_text(ARGS_JOB)
    before = set(spark.executors())
    # a script gets no warm-up run on throw-away topics (docs/own-job.md): its first
    # micro-batch with data (each executor creating its Kafka consumer and producer) falls
    # into the experiment; it took 10 s on a quiet machine and ~50 s at a load average of 14
    out = external(kafka, tmp_path / "results", "--job", str(script), "--spark-master", spark.master_url,
                   "--loads", "1000", "--resources", "2", "--duration", "60", "--warmup", "35",
                   "--", "--brokers", "{bootstrap}", "--in", "{input}", "--out", "{output}")
    assert out.returncode == 0, out.stderr[-3000:]
    results = tmp_path / "results"
    rows = demand_rows(results)
    assert [r["load"] for r in rows] == ["1000"], verdicts(results)
    if rows[0]["resources"] != "2":
        # The verdict is the machine's: in CI the first batch
        # with data took 42 s at a load average of 7 and the lag still rose after the
        # warm-up; alone, at a load average of 13.5 (cluster start included), 38-s batches.
        # The path must still have worked: a valid experiment in which the script read.
        (exp,) = json.loads((results / "exp0-result.json").read_text())["experiments"]
        assert exp["valid"] and exp["outcome"] == "failed", verdicts(results)
        assert exp["info"]["input-rate"]["max"] > 0, verdicts(results)
    lag = (results / "exp0_1000_2_sli_lag-trend_0.csv").read_text().splitlines()
    assert len(lag) >= 10  # the listener committed the script's offsets: lag was measured throughout
    run = json.loads((results / "exp0-run.json").read_text())
    assert run["params"]["jobArgs"] == "--brokers '{bootstrap}' --in '{input}' --out '{output}'"
    apps = spread(spark, before)
    assert len(apps) == 1 and sorted(next(iter(apps.values()))) == [0, 1], apps


async def test_a_killed_node_leaves_a_working_cluster(kafka: KafkaCluster) -> None:
    """Runs last in this module: it kills node 3 (the base of the broker-failure tests),
    after every run on the cluster."""
    topic = f"survive-{uuid.uuid4().hex[:8]}"
    await create_topics(kafka.bootstrap_servers, [(topic, 2)])
    kafka.nodes[2].kill()
    assert not kafka.nodes[2].alive() and not kafka.alive()
    # min.insync.replicas is 2: two nodes left still take acks=all writes
    got = await _produce_and_read(kafka.bootstrap_servers, topic, 100)
    assert len(got) == 100
