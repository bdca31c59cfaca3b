"""A secured cluster: Apache Kafka with SASL/SCRAM on loopback, and every bench client.

The broker accepts only authenticated clients (SCRAM-SHA-256 on its client listener).
With the settings given once (``--kafka-config`` / the environment they travel in),
the admin client, the generator, the lag sampler, the Python source's reader, the
offset committer and Spark's own connector all work; without them the broker refuses.
And the password shows up in no log line, result file or metric of a whole run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from bench.api import GeneratorSpec
from bench.runtime.host.jars import kafka_jars
from bench.runtime.kafka.admin import create_topics
from bench.runtime.kafka.apache_kafka import KafkaCluster, start_sync
from bench.runtime.kafka.lag import LagSampler
from bench.runtime.kafka.security import ENV, KafkaSecurity

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(kafka_jars() is None, reason="Apache Kafka not installed (scripts/install fetches it)"),
]

USER, PASSWORD = "bench-user", "s3cret-Pa55-word"


@pytest.fixture(scope="module")
def secured() -> Iterator[KafkaCluster]:
    cluster = start_sync(1, scram=(USER, PASSWORD))
    try:
        yield cluster
    finally:
        cluster.stop_sync()


@pytest.fixture
def credentials(secured: KafkaCluster, monkeypatch: pytest.MonkeyPatch) -> KafkaSecurity:
    monkeypatch.setenv(ENV, json.dumps(dict(secured.security.settings)))
    return secured.security


def test_without_credentials_the_broker_refuses(secured: KafkaCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    monkeypatch.delenv(ENV, raising=False)
    admin = AdminClient({"bootstrap.servers": secured.bootstrap_servers, "log_level": 0})
    with pytest.raises(KafkaException):
        admin.list_topics(timeout=5)
    wrong = {**secured.security.confluent(), "sasl.password": "wrong"}
    admin = AdminClient({"bootstrap.servers": secured.bootstrap_servers, "log_level": 0, **wrong})
    with pytest.raises(KafkaException):
        admin.list_topics(timeout=5)


async def test_admin_generator_and_lag_sampler_authenticate(secured: KafkaCluster, credentials: KafkaSecurity) -> None:
    from bench.runtime.load.generator import run_active_power

    topic = f"sec-{uuid.uuid4().hex[:8]}"
    await create_topics(secured.bootstrap_servers, [(topic, 2)])
    spec = GeneratorSpec(bootstrap_servers=secured.bootstrap_servers, topic=topic,
                         keys=[f"s_{i}" for i in range(50)], period_ms=100.0, duration_s=2.0, params={"seed": 1})
    report = await run_active_power(spec)
    assert report.records > 0
    async with LagSampler(secured.bootstrap_servers, f"sec-group-{topic}", [topic]) as sampler:
        assert await sampler.sample() == report.records  # nothing committed: everything is lag


def test_spark_connector_python_reader_and_committer_authenticate(
    secured: KafkaCluster, credentials: KafkaSecurity, spark: object
) -> None:
    from bench.runtime.kafka.source import KafkaRange, read_range
    from bench.testing import run_topology
    from bench_uc1 import UC1

    records = [(f"s_{i}", json.dumps({"identifier": f"s_{i}", "timestamp": 1000 * i, "valueInW": 1.0}), 1000 * i)
               for i in range(200)]
    result = run_topology(UC1, {"input": records}, bootstrap_servers=secured.bootstrap_servers, spark=spark,
                          params={"sink": "log", "path": str(Path("/tmp") / f"sec-{uuid.uuid4().hex[:6]}")},
                          connector="native")
    assert result.input_rows == 200
    assert result.committed["input"] == result.end_offsets["input"]  # the listener's committer got in
    # the Python source's worker-side reader, in this process
    rows = 0
    try:
        for partition, end in result.end_offsets["input"].items():
            rng = KafkaRange(secured.bootstrap_servers, result.topics["input"], partition, 0, end)
            rows += sum(b.num_rows for b in read_range(rng))
    finally:
        # the shared session's committer and this process's readers keep clients open: close
        # them before the secured broker stops, or librdkafka logs its reconnects all session
        from bench.runtime.kafka.source import close_readers
        from bench.runtime.spark.session import progress_listener

        close_readers()
        progress_listener(spark).committer.close()  # type: ignore[arg-type]
    assert rows == 200


def test_a_whole_run_keeps_the_password_out_of_every_output(secured: KafkaCluster, tmp_path: Path) -> None:
    props = tmp_path / "client.properties"
    props.write_text("".join(f"{k}={v}\n" for k, v in secured.security.settings.items()))
    results = tmp_path / "results"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.cli.commands", "run", "--plugin", "calibrated", "--platform", "external",
         "--bootstrap-servers", secured.bootstrap_servers, "--kafka-config-file", str(props),
         "--loads", "200", "--resources", "1", "--duration", "20", "--warmup", "5", "--sample-interval", "1",
         "--results", str(results), "-v"],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "demand" in proc.stdout
    outputs = [proc.stdout, proc.stderr, *(f.read_text(errors="replace") for f in results.iterdir() if f.is_file()
                                           and f.suffix in (".json", ".csv"))]
    assert all(PASSWORD not in text for text in outputs)
    environment = json.loads(next(results.glob("exp*-environment.json")).read_text())
    assert environment["kafkaClientSecurity"]["sasl.password"] == "***"
    assert environment["kafkaClientSecurity"]["security.protocol"] == "SASL_PLAINTEXT"
