"""Settings that were accepted and ignored are now honoured or refused in one line:
``cpuPerInstance`` on Kubernetes (rendered as the CPU of each executor or worker),
``guessStrategy``/``searchStrategy`` (only beside the strategy that reads them), and
``--set OBJECT.FIELD`` that a load or resource patcher overwrites."""

from __future__ import annotations

from typing import Any

import pytest
from bench.cli.commands import cli
from bench.config.base import ConfigError
from bench.config.model import parse_benchmark, parse_execution, validate_execution
from bench.platforms.kubernetes.manifests import render_manifests
from click.testing import CliRunner

from tests.unit.test_k8s_scale_out import experiment
from tests.unit.verdict_runs import registry


def _sut_cpu(mode: str, sut: dict[str, Any]) -> list[dict[str, Any]]:
    spec = experiment()
    spec.objects[0]["spec"].update(sut)
    objs = render_manifests(spec, {"sut_mode": mode})
    if mode == "standalone":
        worker = next(o for o in objs if o["metadata"]["name"].endswith("-worker"))
        return [c.get("resources") or {} for c in worker["spec"]["template"]["spec"]["containers"]]
    app = next(o for o in objs if o["kind"] == "SparkApplication")
    return [app["spec"]["executor"]]


@pytest.mark.parametrize(("sut", "cpu"), [
    ({"cpuPerInstance": 0.25}, "250m"),
    ({"cpuPerInstance": 0.5, "coresPerInstance": 2}, "1000m"),  # per task slot, as cost counts it
])
def test_kubernetes_renders_the_cpu_limit_per_instance(sut: dict[str, Any], cpu: str) -> None:
    (executor,) = _sut_cpu("spark-operator", sut)
    assert executor["coreLimit"] == executor["coreRequest"] == cpu
    (worker,) = _sut_cpu("standalone", sut)
    assert worker["limits"]["cpu"] == worker["requests"]["cpu"] == cpu


def test_without_cpu_per_instance_no_limit_is_rendered() -> None:
    (executor,) = _sut_cpu("spark-operator", {})
    assert "coreLimit" not in executor
    (worker,) = _sut_cpu("standalone", {})
    assert "cpu" not in (worker.get("limits") or {})


def _execution(strategy: dict[str, Any]) -> Any:
    return parse_execution({
        "benchmark": "fake", "load": {"loadType": "NumSensors", "loadValues": [10]},
        "resources": {"resourceType": "Instances", "resourceValues": [1]},
        "execution": {"duration": 60, "warmup": 10, "repetitions": 1, "strategy": strategy},
    })


def _validate(strategy: dict[str, Any]) -> None:
    from tests.unit.fakes import fake_benchmark

    validate_execution(_execution(strategy), parse_benchmark(fake_benchmark()), registry())


def test_guess_strategy_is_honoured_as_the_references_only_guess() -> None:
    _validate({"name": "InitialGuessSearch", "guessStrategy": "PrevResourceMinGuess"})


@pytest.mark.parametrize(("strategy", "words"), [
    ({"name": "InitialGuessSearch", "guessStrategy": "RandomGuess"}, "'RandomGuess' is not one of"),
    ({"name": "LinearSearch", "guessStrategy": "PrevResourceMinGuess"}, "only InitialGuessSearch"),
    ({"name": "BinarySearch", "searchStrategy": "LinearSearch"}, "only RestrictionSearch"),
])
def test_strategy_keys_no_strategy_reads_are_refused(strategy: dict[str, Any], words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        _validate(strategy)


@pytest.mark.parametrize("setting", ["generator.replicas=3", "sut.replicas=2"])
def test_a_set_a_patcher_overwrites_is_refused(setting: str) -> None:
    out = CliRunner().invoke(cli, ["run", "--plugin", "uc1", "--set", setting, "--dry-run"])
    assert out.exit_code == 2, out.output
    assert f"--set {setting}" in out.output and "patcher sets" in out.output
    assert "Traceback" not in out.output


def test_the_generators_instances_follow_max_per_instance() -> None:
    out = CliRunner().invoke(cli, ["run", "--plugin", "uc1", "--loads", "1000", "--set",
                                   "generator.maxPerInstance=500", "--dry-run"])
    assert out.exit_code == 0, out.output
    assert "replicas: 2" in out.output


@pytest.mark.parametrize("where", [["--spark-mode", "standalone"],
                                   ["--platform", "external", "--bootstrap-servers", "k:9092",
                                    "--spark-master", "spark://m:7077"]])
def test_a_cpu_limit_bench_cannot_apply_is_refused(where: list[str]) -> None:
    out = CliRunner().invoke(cli, ["run", "--plugin", "uc1", "--set", "sut.cpuPerInstance=0.25", *where, "--dry-run"])
    assert out.exit_code == 2, out.output
    assert out.output.startswith("bench: error: cpuPerInstance 0.25: --spark-") and "Traceback" not in out.output


def test_local_spark_takes_the_cpu_limit() -> None:
    out = CliRunner().invoke(cli, ["run", "--plugin", "uc1", "--set", "sut.cpuPerInstance=0.25", "--dry-run"])
    assert out.exit_code == 0, out.output


@pytest.mark.parametrize(("plugin", "url", "code"),
                         [("uc2", None, 2), ("uc2", "http://prom:9090", 0), ("uc1", None, 0)])
def test_kubernetes_slos_on_prometheus_slis_need_its_url(monkeypatch: pytest.MonkeyPatch, plugin: str,
                                                         url: str | None, code: int) -> None:
    monkeypatch.delenv("BENCH_K8S_PROMETHEUS_URL", raising=False)
    if url:
        monkeypatch.setenv("BENCH_K8S_PROMETHEUS_URL", url)
    out = CliRunner().invoke(cli, ["run", "--plugin", plugin, "--platform", "kubernetes", "--bootstrap-servers",
                                   "kafka:9092", "--dry-run"])
    assert out.exit_code == code, out.output
    if code:
        assert "SLO dropped-records (dropped-records) needs Prometheus" in out.output
