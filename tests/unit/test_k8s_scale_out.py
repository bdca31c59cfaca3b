"""Kubernetes at parity with the local platforms (issue 25): Kafka client security from a
Secret (never in clear in a manifest), ``--job`` as a ConfigMap, ``--conf`` in the SUT's
session, generator pods that serve their rates and come back as reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from bench.api import ExperimentSpec, TopicSpec, UseCase
from bench.cli.commands import cli
from bench.platforms.kubernetes.generator_entry import GENERATOR_METRICS, serve_progress
from bench.platforms.kubernetes.manifests import render_manifests
from bench.platforms.kubernetes.platform import KubernetesPlatform
from bench.platforms.kubernetes.secrets import KAFKA_CONFIG_KEY, kafka_secret
from bench.runtime.kafka import security
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "own_job.py"
PASSWORD = "s3cr3t-pa55"  # noqa: S105 - a test value that must never show
SASL = {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "bench",
        "sasl.password": PASSWORD}


def experiment(params: dict[str, Any] | None = None, group: str = "bench-sut-r1") -> ExperimentSpec:
    return ExperimentSpec(
        experiment_id="exp1",
        use_case=UseCase(name="uc1", description="test", default_benchmark=dict),
        objects=[
            {"kind": "BenchSut", "metadata": {"name": "sut"}, "spec": {"replicas": 2, "params": {}}},
            {"kind": "BenchGenerator", "metadata": {"name": "generator"},
             "spec": {"replicas": 2, "sensors": 100, "periodMs": 1000, "params": {}}},
        ],
        topics=[TopicSpec("input", "input-exp1", 4), TopicSpec("output", "output-exp1", 4)],
        params=dict(params or {}),
        load=100,
        resources=2,
        group_id=group,
    )


def containers(objs: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any], list[dict[str, Any]]]]:
    """(object/container, container, pod volumes) of every pod template, the
    SparkApplication's driver and executor included."""
    found = []
    for obj in objs:
        if obj["kind"] == "SparkApplication":
            for role in ("driver", "executor"):
                found.append((f"SparkApplication/{role}", obj["spec"][role], obj["spec"].get("volumes", [])))
        template = (obj.get("spec") or {}).get("template")
        if template:
            for c in template["spec"]["containers"]:
                found.append((f"{obj['kind']}/{c['name']}", c, template["spec"].get("volumes", [])))
    return found


@pytest.fixture
def secured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(security.ENV, json.dumps(SASL))


@pytest.mark.parametrize("mode", ["spark-operator", "standalone"])
def test_every_pod_reads_kafka_security_from_the_secret_and_no_manifest_holds_it(secured: None, mode: str) -> None:
    objs = render_manifests(experiment(), {"namespace": "ns", "sut_mode": mode})
    text = yaml.safe_dump_all(objs)
    assert PASSWORD not in text and "SCRAM" not in text and "bench-kafka-client" in text
    clients = [c for c in containers(objs) if not c[0].endswith("/master")]  # the master reads no Kafka
    assert len(clients) >= 3
    for where, container, volumes in clients:
        env = {e["name"]: e for e in container.get("env") or []}
        assert env["BENCH_KAFKA_CONFIG"]["valueFrom"] == {
            "secretKeyRef": {"name": "bench-kafka-client", "key": KAFKA_CONFIG_KEY}}, where
        assert "value" not in env["BENCH_KAFKA_CONFIG"]
        assert {"name": "kafka-client", "secret": {"secretName": "bench-kafka-client"}} in volumes, where
        assert any(m["name"] == "kafka-client" for m in container.get("volumeMounts") or []), where


def test_without_security_no_pod_references_a_secret() -> None:
    text = yaml.safe_dump_all(render_manifests(experiment(), {"namespace": "ns"}))
    assert "BENCH_KAFKA_CONFIG" not in text and "secretKeyRef" not in text
    assert kafka_secret({}, "ns") is None


def test_the_secret_holds_the_settings_and_the_tls_files_at_their_mounted_paths(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\nxyz\n")
    monkeypatch.setenv(security.ENV, json.dumps({**SASL, "ssl.ca.location": str(ca)}))
    secret = kafka_secret({"kafka_secret": "kc"}, "ns")
    assert secret is not None and secret["kind"] == "Secret" and secret["metadata"]["name"] == "kc"
    settings = json.loads(secret["stringData"][KAFKA_CONFIG_KEY])
    assert settings == {**SASL, "ssl.ca.location": "/etc/bench/kafka/ca.pem"}
    assert secret["stringData"]["ca.pem"] == ca.read_text()


def test_dry_run_with_kafka_config_shows_a_secret_reference_only() -> None:
    out = CliRunner().invoke(cli, ["run", "--plugin", "uc1", "--platform", "kubernetes", "--dry-run",
                                   "--bootstrap-servers", "kafka:9093", "--loads", "1000", "--resources", "1",
                                   "--kafka-config", "security.protocol=SASL_PLAINTEXT",
                                   "--kafka-config", "sasl.username=bench",
                                   "--kafka-config", f"sasl.password={PASSWORD}"])
    assert out.exit_code == 0, out.output
    assert "secretKeyRef" in out.output and "bench-kafka-client" in out.output
    assert PASSWORD not in out.output


def test_job_reaches_the_driver_as_a_config_map_and_conf_reaches_the_session() -> None:
    spec = experiment({"job": str(EXAMPLE), "jobArgs": "--in {input}"})
    objs = render_manifests(spec, {"namespace": "ns", "spark_conf": {"spark.sql.shuffle.partitions": "7"}})
    by_name = {(o["kind"], o["metadata"]["name"]): o for o in objs}
    job = by_name[("ConfigMap", "bench-uc1-sut-job")]
    assert job["data"] == {"own_job.py": EXAMPLE.read_text()}
    payload = json.loads(by_name[("ConfigMap", "bench-uc1-sut-spec")]["data"]["spec.json"])
    assert payload["params"]["job"] == "/etc/bench/job/own_job.py" and payload["params"]["jobArgs"] == "--in {input}"
    assert payload["conf"] == {"spark.sql.shuffle.partitions": "7"}
    app = by_name[("SparkApplication", "bench-uc1-sut")]
    assert app["spec"]["sparkConf"]["spark.sql.shuffle.partitions"] == "7"  # --conf over bench's default
    assert {"name": "job", "mountPath": "/etc/bench/job"} in app["spec"]["driver"]["volumeMounts"]
    assert {"name": "job", "configMap": {"name": "bench-uc1-sut-job"}} in app["spec"]["volumes"]
    standalone = render_manifests(spec, {"sut_mode": "standalone", "spark_conf": {"spark.executor.cores": "9"}})
    conf = json.loads(standalone[0]["data"]["spec.json"])["conf"]
    assert conf["spark.executor.cores"] == "1"  # the resource shape wins over --conf, as on one machine


def test_the_use_cases_own_spark_settings_reach_the_application_under_conf() -> None:
    import dataclasses

    spec = experiment()
    own = {"spark.executor.extraJavaOptions": "-XX:TieredStopAtLevel=1", "spark.x": "own"}
    spec = dataclasses.replace(spec, use_case=dataclasses.replace(spec.use_case, spark_conf=own))
    objs = render_manifests(spec, {"namespace": "ns", "spark_conf": {"spark.x": "given"}})
    app = next(o for o in objs if o["kind"] == "SparkApplication")
    assert app["spec"]["sparkConf"]["spark.executor.extraJavaOptions"] == "-XX:TieredStopAtLevel=1"
    assert app["spec"]["sparkConf"]["spark.x"] == "given"  # --conf over the use case's own
    payload = json.loads(next(o for o in objs if o["kind"] == "ConfigMap")["data"]["spec.json"])
    assert payload["conf"] == {"spark.executor.extraJavaOptions": "-XX:TieredStopAtLevel=1", "spark.x": "given"}


def test_job_conf_and_metrics_port_are_accepted_on_kubernetes() -> None:
    out = CliRunner().invoke(cli, ["run", "--job", str(EXAMPLE), "--platform", "kubernetes", "--dry-run",
                                   "--bootstrap-servers", "kafka:9092", "--loads", "1000", "--resources", "1",
                                   "--conf", "spark.sql.shuffle.partitions=3", "--metrics-port", "9109",
                                   "--", "--in", "{input}"])
    assert out.exit_code == 0, out.output
    assert "own_job.py: |" in out.output or "own_job.py:" in out.output
    assert "spark.sql.shuffle.partitions" in out.output


def test_generator_pods_serve_their_rates_for_prometheus() -> None:
    objs = render_manifests(experiment(), {"namespace": "ns"})
    sts = next(o for o in objs if o["kind"] == "StatefulSet")
    template = sts["spec"]["template"]
    assert template["metadata"]["labels"]["bench/metrics"] == "true"
    assert template["metadata"]["annotations"]["prometheus.io/port"] == "9405"
    container = template["spec"]["containers"][0]
    assert container["ports"] == [{"name": "metrics", "containerPort": 9405, "protocol": "TCP"}]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["BENCH_METRICS_PORT"] == "9405" and env["BENCH_GROUP"] == "bench-sut-r1"


def test_generator_entry_turns_progress_and_report_into_gauges() -> None:
    served: list[tuple[int, Any]] = []
    observe = serve_progress(9405, "g-1", 3, serve=lambda port, addr, registry: served.append((port, registry)))
    assert served and served[0][0] == 9405
    registry = served[0][1]

    def value(name: str) -> float | None:
        got: float | None = registry.get_sample_value(name, {"group": "g-1", "instance": "3"})
        return got

    observe("started", {"keys": 10})
    assert value("bench_generator_pod_records") is None
    observe("progress", {"records": 500, "seconds": 5.0, "rate": 100.0, "target": 100.0})
    assert value("bench_generator_pod_records") == 500.0 and value("bench_generator_pod_rate") == 100.0
    observe("report", {"records": 990, "seconds": 10.0, "achieved_rate": 99.0, "target_rate": 100.0})
    assert [value(n) for n in GENERATOR_METRICS] == [990.0, 10.0, 99.0, 100.0]


class FakePrometheus:
    def __init__(self, rows: dict[str, list[tuple[str, float, float]]]) -> None:
        self.rows = rows

    async def query(self, query: str, at: float | None = None) -> list[tuple[str, float, float]]:
        from bench.runtime.prometheus import EmptyResultError

        if query not in self.rows:
            raise EmptyResultError(query)
        return self.rows[query]


async def test_generator_reports_come_from_prometheus_so_the_shortfall_check_runs() -> None:
    platform = KubernetesPlatform({})
    platform._prometheus = FakePrometheus({
        'bench_generator_pod_records{group="g"}': [("{instance=0}", 0, 1000.0), ("{instance=1}", 0, 800.0)],
        'bench_generator_pod_seconds{group="g"}': [("{instance=0}", 0, 10.0), ("{instance=1}", 0, 10.0)],
        'bench_generator_pod_target_rate{group="g"}': [("{instance=0}", 0, 100.0), ("{instance=1}", 0, 100.0)],
    })
    reports = await platform.generator_reports(experiment(group="g"))
    assert [(r.records, r.achieved_rate, r.target_rate) for r in reports] == [(1000, 100.0, 100.0),
                                                                              (800, 80.0, 100.0)]
    assert reports[0].behind == 0.0 and reports[1].behind == pytest.approx(0.2)  # the engine's check fails it
    platform._prometheus = FakePrometheus({})
    assert await platform.generator_reports(experiment(group="g")) == []  # not scraped: no false report
