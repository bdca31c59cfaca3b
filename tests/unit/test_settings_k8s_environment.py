"""Each ``BENCH_K8S_*`` variable that shapes the Kubernetes deployment changes what
``bench run --platform kubernetes --dry-run`` renders.

Why: the platform reads its options from the environment (so the CLI needs no flag per
option); a variable read by no manifest would be accepted and silently ignored.
"""

from __future__ import annotations

import pytest
from bench.cli.commands import cli
from click.testing import CliRunner


def _rendered(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> str:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    out = CliRunner().invoke(cli, ["run", "--plugin", "uc1", "--platform", "kubernetes", "--loads", "100",
                                   "--resources", "1", "--dry-run"])
    assert out.exit_code == 0, out.output
    return out.output


@pytest.mark.parametrize(("name", "value", "shown"), [
    ("BENCH_K8S_IMAGE", "registry.example/bench:test-9", "registry.example/bench:test-9"),
    ("BENCH_K8S_IMAGE_PULL_POLICY", "Never", "imagePullPolicy: Never"),
    ("BENCH_K8S_NAMESPACE", "ns-from-env", "namespace: ns-from-env"),
    ("BENCH_K8S_SPARK_SERVICE_ACCOUNT", "sa-from-env", "sa-from-env"),
    ("BENCH_K8S_SPARK_VERSION", "9.9.9", "9.9.9"),
    ("BENCH_K8S_EXECUTOR_MEMORY", "777m", "777m"),
    ("BENCH_K8S_DRIVER_MEMORY", "555m", "555m"),
    ("BENCH_K8S_RUN_AS_USER", "4242", "4242"),
    ("BENCH_K8S_KAFKA_BOOTSTRAP", "kafka-from-env:9092", "kafka-from-env:9092"),
    ("BENCH_K8S_SUT_METRICS_PORT", "19404", "19404"),
    ("BENCH_K8S_GENERATOR_METRICS_PORT", "19405", "19405"),
    ("BENCH_K8S_SUT_MODE", "standalone", "org.apache.spark.deploy.worker.Worker"),
])
def test_a_kubernetes_variable_changes_the_rendered_deployment(monkeypatch: pytest.MonkeyPatch, name: str,
                                                               value: str, shown: str) -> None:
    assert shown not in _rendered(monkeypatch, {})
    assert shown in _rendered(monkeypatch, {name: value})


@pytest.mark.parametrize(("name", "value", "shown"), [
    ("BENCH_K8S_CONNECTOR", "native", '"connector": "native"'),
    ("BENCH_K8S_EXECUTOR_CORES", "3", '"cores_per_instance": 3'),
    ("BENCH_K8S_TRIGGER_SECONDS", "7", '"trigger_seconds": 7.0'),  # a number, as the driver's trigger takes it
])
def test_a_kubernetes_variable_changes_the_drivers_spec(monkeypatch: pytest.MonkeyPatch, name: str, value: str,
                                                        shown: str) -> None:
    def flat(text: str) -> str:  # the spec is JSON folded over several YAML lines
        return " ".join(text.split())

    assert shown not in flat(_rendered(monkeypatch, {}))
    assert shown in flat(_rendered(monkeypatch, {name: value}))
