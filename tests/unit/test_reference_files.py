"""Benchmark and Execution files in the reference's schemas (both generations), unchanged.

The fixtures under tests/fixtures/theodolite are hand-written in the reference's
formats: executions for bench's use cases validate and mean what the reference means
(strategy and restrictions as written, SLOs of the reference's types); benchmarks
whose SUT bench cannot run are refused in one line naming the part and why, never
with "unknown field" and never with a traceback.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from bench.cli.launch import resolve_run, validate_file
from bench.config.base import ConfigError
from bench.config.model import effective_slos, parse_benchmark, parse_execution
from bench.config.reference import is_reference
from bench.plugins import load_plugins

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "theodolite"
REGISTRY = load_plugins()


@pytest.mark.parametrize(
    ("name", "use_case", "strategy"),
    [
        ("execution-current.yaml", "uc1", ("binary", True)),
        ("execution-string-strategy.yaml", "uc1", ("linear", True)),
        ("execution-oldest.yaml", "uc3", ("full", False)),
        ("execution-standalone.yaml", "uc3", ("binary", False)),  # no restrictions written: none
    ],
)
def test_reference_executions_validate_unchanged(name: str, use_case: str, strategy: tuple[str, bool]) -> None:
    path = FIXTURES / name
    assert "valid execution" in validate_file(REGISTRY, path, None)
    prepared = resolve_run(REGISTRY, {"plugin": use_case, "execution_file": path})
    assert prepared.execution.execution.strategy.resolved() == strategy


def test_execution_slos_mean_the_reference_types() -> None:
    oldest = resolve_run(REGISTRY, {"plugin": "uc3", "execution_file": FIXTURES / "execution-oldest.yaml"})
    # the benchmark's own SLOs are all kept (the reference's SloFactory), the execution's are judged beside them
    *kept, lag = effective_slos(oldest.benchmark, oldest.execution)
    assert [s.name for s in kept] == [s.name for s in oldest.benchmark.slos] == ["lag-trend", "dropped-records"]
    assert lag.sloType == "lag trend" and lag.properties["threshold"] == 1000 and lag.properties["warmup"] == 30
    standalone = resolve_run(REGISTRY, {"plugin": "uc3", "execution_file": FIXTURES / "execution-standalone.yaml"})
    _, _, dropped, generic = effective_slos(standalone.benchmark, standalone.execution)
    assert dropped.sloType == "dropped records" and dropped.properties["threshold"] == 100
    assert generic.sloType == "generic" and generic.properties["sli"] == "lag"  # its PromQL query is the lag
    current = resolve_run(REGISTRY, {"plugin": "uc1", "execution_file": FIXTURES / "execution-current.yaml"})
    own, named = effective_slos(current.benchmark, current.execution)
    assert own.name == "lag-trend"
    assert named.name == named.sloType == "lag trend" and named.properties == {"threshold": 500}


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("benchmark-current-configmap.yaml", "ConfigMap 'wordcount-kstreams-resources'"),
        ("benchmark-older-filesystem.yaml",
         "Deployment/clicks-taskmanager (image example.org/clicks-flink:1.0): an Apache Flink application"),
        ("benchmark-oldest-standalone.yaml", ": an Apache Beam on Samza application"),
    ],
)
def test_reference_benchmarks_of_other_frameworks_are_refused_in_one_line(name: str, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        validate_file(REGISTRY, FIXTURES / name, None)
    message = str(caught.value)
    assert says in message and "\n" not in message and "unknown field" not in message
    assert "bench runs only Spark Structured Streaming use cases" in message and "useCase" in message


def test_the_current_schema_is_read_field_by_field() -> None:
    from bench.config.files import load_yaml

    bench = parse_benchmark(load_yaml(FIXTURES / "benchmark-current-configmap.yaml"))
    assert bench.name == "wordcount-kstreams" and bench.waitForResourcesEnabled
    (slo,) = bench.slos
    assert slo.sloType == "generic"
    assert slo.properties == {"sli": "lag", "warmupSeconds": 30, "warmup": 30, "thresholdRelToLoad": 0.02,
                              "externalSloChecker": "http://localhost:80/evaluate-slope",
                              "queryAggregation": "trend", "repetitionAggregation": "median", "operator": "lt"}
    assert [t.name for t in bench.kafkaConfig.topics] == ["words"]
    assert bench.kafkaConfig.removeOnly == ["wordcount-.*"]
    assert bench.sut.configMaps[0]["name"] == "wordcount-kstreams-resources"


def test_file_system_resource_sets_are_read_from_disk_and_selectable_by_file_name() -> None:
    from bench.config.files import load_yaml
    from bench.patchers.apply import select_indices

    bench = parse_benchmark(load_yaml(FIXTURES / "benchmark-older-filesystem.yaml"))
    (deployment,) = bench.sut.resources
    assert deployment["metadata"]["name"] == "clicks-taskmanager"
    assert select_indices(bench.sut.resources, "clicks-taskmanager.yaml") == [0]
    assert bench.slos[0].prometheusUrl == "http://prometheus:9090" and bench.slos[0].offset == 0


def test_a_missing_file_system_file_is_one_line() -> None:
    doc = {"apiVersion": "theodolite.com/v1", "kind": "benchmark", "metadata": {"name": "x"},
           "spec": {"sut": {"resources": [{"fileSystem": {"path": "/nonexistent", "files": ["a.yaml"]}}]},
                    "loadTypes": [{"typeName": "L", "patchers": []}],
                    "resourceTypes": [{"typeName": "R", "patchers": []}]}}
    with pytest.raises(ConfigError, match=r"benchmark.sut.resources\[0\].fileSystem: cannot read /nonexistent/a"):
        parse_benchmark(doc)


def test_string_strategy_without_restrictions_gets_none() -> None:
    doc = {"benchmark": "uc1", "load": {"loadType": "NumSensors", "loadValues": [1]},
           "resources": {"resourceType": "Instances", "resourceValues": [1]},
           "execution": {"strategy": "FullSearch", "duration": 120}}
    assert is_reference(doc)
    assert parse_execution(doc).execution.strategy.resolved() == ("full", False)
    for name in ("FullSearch", "BinarySearch"):
        written = {**doc, "execution": {"strategy": {"name": name}, "duration": 120}}
        assert parse_execution(written).execution.strategy.resolved()[1] is False
    # bench's own default (no strategy written) keeps its lower bound
    bench_doc = {**doc, "execution": {"duration": 120}}
    assert not is_reference(bench_doc)
    assert parse_execution(bench_doc).execution.strategy.resolved() == ("bracket", True)


@pytest.mark.parametrize(
    ("group", "part", "says"),
    [
        ("sut", {"resources": [], "beforeActions": [{"exec": {"command": ["true"]}}]}, "sut.beforeActions"),
        ("loadGenerator", {"resources": [{"configMap": {"name": "cm"}}]}, "loadGenerator.resources[0].configMap 'cm'"),
    ],
)
def test_what_bench_cannot_do_for_a_use_case_is_refused_by_name(group: str, part: dict, says: str) -> None:
    from bench.config.model import validate_benchmark

    doc = {**REGISTRY.use_cases["uc1"].default_benchmark(), group: part, "apiVersion": "theodolite.rocks/v1beta1"}
    doc = {"apiVersion": "theodolite.rocks/v1beta1", "kind": "benchmark", "metadata": {"name": "uc1"},
           "spec": {k: v for k, v in doc.items() if k != "apiVersion"}}
    with pytest.raises(ConfigError, match=says.replace("[", r"\[").replace("]", r"\]")):
        validate_benchmark(parse_benchmark(doc), REGISTRY)


def test_current_schema_execution_overrides_write_fields_beside_the_name() -> None:
    doc = {"apiVersion": "theodolite.rocks/v1beta2", "kind": "execution", "metadata": {"name": "e"},
           "spec": {"benchmark": "uc1", "load": {"loadType": "NumSensors", "loadValues": [1000]},
                    "resources": {"resourceType": "Instances", "resourceValues": [1]},
                    "slos": [{"name": "lag-trend", "warmupSeconds": 45, "threshold": 300}],
                    "execution": {"metric": "capacity", "strategy": {"name": "FullSearch"}, "duration": 120}}}
    execution = parse_execution(doc)
    assert execution.slos[0].properties == {"warmupSeconds": 45, "warmup": 45, "threshold": 300}
    assert execution.execution.metric == "capacity"
    assert execution.execution.strategy.resolved() == ("full", False)


def test_the_oldest_file_lists_name_the_framework_when_the_files_are_elsewhere() -> None:
    doc = {"apiVersion": "theodolite.com/v1", "kind": "benchmark", "metadata": {"name": "uc2-kstreams"},
           "spec": {"appResource": ["uc2-kstreams-deployment.yaml"], "loadGenResource": ["gen.yaml"],
                    "loadTypes": [{"typeName": "NumSensors", "patchers": [
                        {"type": "EnvVarPatcher", "resource": "gen.yaml", "container": "g",
                         "variableName": "NUM_SENSORS"}]}],
                    "resourceTypes": [{"typeName": "Instances", "patchers": []}]}}
    bench = parse_benchmark(doc)
    assert bench.loadTypes[0].patchers[0].properties == {"container": "g", "variableName": "NUM_SENSORS"}
    with pytest.raises(ConfigError, match="files uc2-kstreams-deployment.yaml: a Kafka Streams application.*uc2"):
        validate_file_doc(bench)


def validate_file_doc(bench: object) -> None:
    from bench.config.model import validate_benchmark

    validate_benchmark(bench, REGISTRY)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("spec", "says"),
    [({"slos": [None]}, r"execution.slos\[0\]: None is not an SLO"),
     ({"configOverrides": [{"patcher": None, "value": 1}]}, r"execution.configOverrides\[0\]: .* is not a config")],
)
def test_malformed_reference_entries_are_one_line(tmp_path: Path, spec: dict, says: str) -> None:
    import yaml

    doc = {"apiVersion": "theodolite.rocks/v1beta1", "kind": "execution", "metadata": {"name": "e"},
           "spec": {"benchmark": "uc1", "load": {"loadType": "NumSensors", "loadValues": [1000]},
                    "resources": {"resourceType": "Instances", "resourceValues": [1]},
                    "execution": {"strategy": "LinearSearch", "duration": 120}, **spec}}
    path = tmp_path / "e.yaml"
    path.write_text(yaml.safe_dump(doc))
    from bench.errors import UserError

    with pytest.raises(UserError, match=says):  # one line, exit 2
        validate_file(REGISTRY, path, None)


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.yaml") if p.name.startswith(("benchmark",
                                                                                                      "execution"))))
def test_bench_validate_answers_every_fixture_in_one_line(name: str) -> None:
    from bench.cli.commands import cli
    from click.testing import CliRunner

    result = CliRunner().invoke(cli, ["validate", str(FIXTURES / name)])
    assert result.exit_code in (0, 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert "unknown field" not in result.output and "Traceback" not in result.output
    assert (result.exit_code == 0) is name.startswith("execution")


def test_an_sli_bench_does_not_sample_is_refused_by_name() -> None:
    from bench.config.model import validate_benchmark

    spec = REGISTRY.use_cases["uc1"].default_benchmark()
    spec["slis"] = [{"name": "errorRate", "provider": "prometheus", "query": "sum(rate(http_errors[1m]))"}]
    spec["slos"] = [{"name": "errors", "sli": "errorRate", "warmupSeconds": 30, "queryAggregation": "max",
                     "repetitionAggregation": "median", "operator": "lte", "threshold": 0.01}]
    doc = {"apiVersion": "theodolite.rocks/v1beta2", "kind": "benchmark", "metadata": {"name": "uc1"}, "spec": spec}
    with pytest.raises(ConfigError, match=r"benchmark.slis\[0\] 'errorRate': bench samples its SLIs itself"):
        validate_benchmark(parse_benchmark(doc), REGISTRY)
    spec["slis"][0]["query"] = "sum by(group)(kafka_consumergroup_group_lag >= 0)"
    bench = parse_benchmark(doc)
    validate_benchmark(bench, REGISTRY)
    assert bench.slos[0].properties["sli"] == "lag"
