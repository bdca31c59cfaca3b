"""``bench run --job`` end to end on real Kafka and Spark: the example script of
docs/own-job.md to a demand table, and scripts that cannot be benchmarked to one line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from e2e_procs import bench_run, demand_rows

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "own_job.py"


def test_example_job_gets_a_demand_table(kafka_bootstrap: str, tmp_path: Path) -> None:
    """A user's script gets no warm-up batch before the generators start, so its first
    micro-batches build their backlog inside the warm-up: 10 s of it left a rising lag
    on a loaded CI machine once, 20 s cover it. Without a CPU limit: at the default
    quarter core the JVM's start and those first batches took longer than the warm-up on
    a slow CI machine (1,000 records/s, none passed); the limit's own test is
    tests/e2e/test_default_executions.py."""
    out = bench_run("--job", str(EXAMPLE), "--loads", "1000", "--resources", "1", "--duration", "50", "--warmup",
                    "20", "--results", str(tmp_path), "--conf", "spark.sql.shuffle.partitions=2",
                    "--set", "sut.cpuPerInstance=0", "--bootstrap-servers", kafka_bootstrap, timeout=200)
    assert out.returncode == 0, out.stderr[-3000:]
    rows = demand_rows(tmp_path)
    assert rows == [{"load": "1000", "resources": "1"}], out.stdout  # 1,000 records/s are light work for a whole core
    lag = (tmp_path / "exp0_1000_1_sli_lag-trend_0.csv").read_text().splitlines()
    assert len(lag) >= 8  # the listener committed the script's offsets: lag was measured throughout
    env = json.loads((tmp_path / "exp0-environment.json").read_text())
    assert env["spark"]["conf"] == {"spark.sql.shuffle.partitions": "2"}
    run = json.loads((tmp_path / "exp0-run.json").read_text())
    assert run["useCase"] == "job" and run["params"]["job"] == str(EXAMPLE)


BROKEN = {
    "raises": ("import os\nfrom pyspark.sql import SparkSession\nspark = SparkSession.builder.getOrCreate()\n"
               "topic = os.environ['BENCH_INPUT_TOPIC']\nraise ValueError(f'cannot handle {topic}')\n",
               r"--job: the script failed: ValueError: cannot handle input-\S+ \(job\.py, line 5\)"),
    # names its input topic (so the check before the run lets it pass) but reads a rate source
    "never reads": ("import os\nfrom pyspark.sql import SparkSession\nspark = SparkSession.builder.getOrCreate()\n"
                    "unused = os.environ['BENCH_INPUT_TOPIC']\n"
                    "spark.readStream.format('rate').load().writeStream.format('noop').start().awaitTermination()\n",
                    r"--job: the job read nothing from BENCH_INPUT_TOPIC \(input-\S+\) in 5 s"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_script_that_cannot_be_benchmarked_ends_the_run_in_one_line(tmp_path: Path, case: str) -> None:
    """A script that never reads is refused after ``readTimeoutS`` with its input topic
    holding records: 5 s show the same one line as 15 did, 10 s sooner (the check counts
    from the generator's first records, so Spark's start is not part of it)."""
    source, message = BROKEN[case]
    script = tmp_path / "job.py"
    script.write_text(source)
    out = bench_run("--job", str(script), "--loads", "100", "--resources", "1,2", "--duration", "60", "--warmup",
                    "10", "--results", str(tmp_path / "results"), "--set", "readTimeoutS=5", timeout=170)
    assert out.returncode == 2, out.stderr[-3000:]
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("bench: error: ") and "Traceback" not in out.stderr, out.stderr[-3000:]
    assert re.search(message, last), last
    assert "running it again" not in out.stderr  # the same in every experiment: not retried


def test_generator_writes_the_records_of_a_template(kafka_bootstrap: str) -> None:
    import asyncio
    import uuid

    from bench.api import GeneratorSpec
    from bench.runtime.load.generator import run_active_power
    from bench.testing import create_topics, read_all

    topic = f"input-{uuid.uuid4().hex[:8]}"
    create_topics(kafka_bootstrap, {topic: 2})
    template = '{"deviceId": "{key}", "eventTime": {timestamp}, "again": {timestamp}, "reading": {"unit": "W"}}'
    keys = [f"s_{i}" for i in range(20)]
    report = asyncio.run(run_active_power(GeneratorSpec(kafka_bootstrap, topic, keys, 500.0, 2.0,
                                                        {"recordTemplate": template})))
    records = read_all(kafka_bootstrap, topic)
    assert len(records) == report.records >= 60
    for record in records:
        doc = json.loads(record["value"])
        assert doc == {"deviceId": record["key"], "eventTime": record["timestamp"], "again": record["timestamp"],
                       "reading": {"unit": "W"}}
