"""Bad input, second round (issue 23, items 1-4 and 6), as a user gives it on the command
line: every case ends in exit code 2 and one line naming the value and where it came
from, and nothing is started or reserved (every platform factory raises, and the
results folder is not even created)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from bench.cli.commands import cli
from bench.plugins import Registry
from click.testing import CliRunner

from .fakes import nothing_starts


@pytest.fixture(scope="module")
def registry() -> Iterator[Registry]:
    with pytest.MonkeyPatch.context() as mp, nothing_starts(mp) as loaded:
        yield loaded


def refused(tmp_path: Path, *args: str, command: str = "run") -> str:
    results = tmp_path / "results"
    argv = [command, "--results", str(results), *args] if command == "run" else [command, *args]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bench: error: "), result.output
    assert not results.exists(), "the results folder was made for an invalid run"
    return lines[0]


def write(tmp_path: Path, name: str, doc: Any) -> str:
    path = tmp_path / name
    if isinstance(doc, bytes):
        path.write_bytes(doc)
    else:
        path.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc))
    return str(path)


# ------------------------------------------------------------------ files (item 1)

@pytest.mark.parametrize(("data", "message"), [
    ("load:\n  loadValues: [1000]\n".encode("utf-16"), "is UTF-16"),
    (b"\xef\xbb\xbfload:\n  loadValues: [1000]\n", "byte-order mark"),
    (b"load:\n  loadValues: [1000]\n  loadValues: [2000]\n", "'loadValues' is given twice"),
    (("a: " + "[" * 3000 + "]" * 3000).encode(), "nested more than 64 levels"),
])
def test_bad_execution_files(registry: Registry, tmp_path: Path, data: bytes, message: str) -> None:
    path = write(tmp_path, "exec.yaml", data)
    line = refused(tmp_path, "--plugin", "uc1", "--execution", path)
    assert f"--execution {path}: " in line and message in line


def test_bench_validate_names_the_file_once(registry: Registry, tmp_path: Path) -> None:
    path = write(tmp_path, "deep.yaml", "a: " + "[" * 3000 + "]" * 3000)
    line = refused(tmp_path, path, command="validate")
    assert line.count(path) == 1 and "nested more than" in line


# ------------------------------------------------------------------ bounds (item 2)

@pytest.mark.parametrize(("args", "message"), [
    (["--loads", "1e15"], "--loads 1e+15: must be at most 1e+09"),
    (["--resources", "100000"], "--resources (Instances) 100000: must be at most 1000"),
    (["--duration", "1e9"], "--duration 1e+09: must be at most 86400 s"),
    (["--repetitions", "100000"], "--repetitions 100000: must be at most 100"),
    (["--sample-interval", "0.001"], "--sample-interval 0.001: must be at least 0.1 s"),
    (["--early-sample-interval", "0.001"], "--early-sample-interval 0.001: must be at least 0.1 s"),
    (["--early-sample-interval", "nan"], "--early-sample-interval nan: must be a finite number"),
    (["--trigger", "1e9"], "--trigger 1e+09: must be at most 3600 s"),
    (["--set", "sut.cpuPerInstance=-1"], "--set sut.cpuPerInstance=-1: must be at least 0 cores"),
    (["--set", "sut.cpuPerInstance=.nan"], "--set sut.cpuPerInstance=nan: must be a finite number"),
    (["--set", "sut.cpuPerInstance=1e9"], "--set sut.cpuPerInstance=1e9: must be at most 1024 cores"),
    (["--set", "sut.cpuPerInstance=0.0001"], "must be 0 (no limit) or at least 0.01 cores"),
    (["--set", "generator.sensors=1e12"], "--set generator.sensors=1e12: must be at most 1e+09"),
])
def test_absurd_option_values(registry: Registry, tmp_path: Path, args: list[str], message: str) -> None:
    assert message in refused(tmp_path, "--plugin", "uc1", *args)


@pytest.mark.parametrize(("section", "values", "message"), [
    ("execution", {"duration": 1e9, "warmup": 30}, "execution.execution.duration 1e+09: must be at most 86400"),
    ("execution", {"repetitions": 5000}, "execution.execution.repetitions 5000: must be at most 100"),
    ("execution", {"afterTeardownDelay": 1e7}, "afterTeardownDelay 1e+07: must be at most 3600"),
    ("load", {"loadValues": [1e13]}, "execution.load.loadValues 1e+13: must be at most 1e+09"),
    ("slos", [{"name": "lag-trend", "properties": {"thresholdRelToRate": 5}}],
     "thresholdRelToRate 5: must be at most 1"),
])
def test_absurd_values_in_an_execution_file(registry: Registry, tmp_path: Path, section: str, values: Any,
                                            message: str) -> None:
    doc: dict[str, Any] = {"load": {"loadValues": [1000]}, "resources": {"resourceValues": [1]}}
    doc[section] = {**doc.get(section, {}), **values} if isinstance(values, dict) else values
    path = write(tmp_path, "exec.yaml", doc)
    line = refused(tmp_path, "--plugin", "uc1", "--execution", path)
    assert line.startswith(f"bench: error: --execution {path}: ") and message in line


def _benchmark(registry: Registry, **changes: Any) -> dict[str, Any]:
    doc = registry.use_cases["uc1"].default_benchmark()
    for key, value in changes.items():
        doc[key] = value
    return doc


@pytest.mark.parametrize(("change", "message"), [
    ({"kafkaConfig": {"topics": [{"name": "input", "numPartitions": 1000000}]}},
     "topics[0].numPartitions 1000000: must be at most 10000"),
    ({"slos": [{"name": "lag-trend", "sloType": "lag-trend", "properties": {"threshold": -5}}]},
     "threshold -5: must be more than 0 records/s (as --threshold would refuse)"),
    ({"kafkaConfig": {"bootstrapServer": "kafka://broker:9092"}}, "has a URL scheme"),
])
def test_bad_values_in_a_benchmark_file(registry: Registry, tmp_path: Path, change: dict[str, Any],
                                        message: str) -> None:
    path = write(tmp_path, "bench.yaml", _benchmark(registry, **change))
    line = refused(tmp_path, "--plugin", "uc1", "--benchmark", path)
    assert line.startswith(f"bench: error: --benchmark {path}: ") and message in line


def test_cpu_limit_in_a_benchmark_file(registry: Registry, tmp_path: Path) -> None:
    doc = _benchmark(registry)
    doc["sut"]["resources"][0]["spec"]["cpuPerInstance"] = -0.5
    path = write(tmp_path, "bench.yaml", doc)
    assert "sut.resources[0].spec.cpuPerInstance -0.5: must be at least 0" in refused(
        tmp_path, "--plugin", "uc1", "--benchmark", path)


# ------------------------------------------------------------------ addresses and names (item 3)

@pytest.mark.parametrize(("args", "message"), [
    (["--bootstrap-servers", "http://kafka:9092"], "has a URL scheme; Kafka takes HOST:PORT (e.g. kafka:9092)"),
    (["--bootstrap-servers", "my host:9092"], "'my host' is not a host name"),
    (["--bootstrap-servers", "kafka_1:9092"], "'kafka_1' is not a host name"),
    (["--bootstrap-servers", "a:1,,b:2"], "'' is not HOST:PORT"),
    (["--platform", "external", "--bootstrap-servers", "k:1", "--spark-master", "spark:/x"],
     "--spark-master spark:/x: not a Spark master URL"),
    (["--platform", "kubernetes", "--bootstrap-servers", "k:1", "--namespace", "My_NS"],
     "--namespace 'My_NS': not a Kubernetes namespace"),
])
def test_addresses_and_names(registry: Registry, tmp_path: Path, args: list[str], message: str) -> None:
    assert message in refused(tmp_path, "--plugin", "uc1", *args)


# ------------------------------------------------------------------ nothing starts (item 4)

def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_unreachable_kafka_is_found_before_an_id_is_reserved(registry: Registry, tmp_path: Path) -> None:
    port = _closed_port()
    line = refused(tmp_path, "--plugin", "uc1", "--bootstrap-servers", f"127.0.0.1:{port}")
    assert f"--bootstrap-servers 127.0.0.1:{port}: no server can be reached" in line


def test_resume_without_a_run(registry: Registry, tmp_path: Path) -> None:
    assert "holds no run to resume" in refused(tmp_path, "--plugin", "uc1", "--resume")


def test_a_job_whose_imports_fail(registry: Registry, tmp_path: Path) -> None:
    script = write(tmp_path, "job.py", "import os\nimport no_such_module_for_bench\nos.environ['BENCH_INPUT_TOPIC']\n")
    line = refused(tmp_path, "--job", script)
    assert f"--job {script}: imports no_such_module_for_bench" in line


def test_optional_imports_are_not_required(tmp_path: Path) -> None:
    from bench.cli.checks import script_imports

    source = "import os\ntry:\n    import fast_json\nexcept ImportError:\n    fast_json = None\n"
    assert script_imports(source, "job.py") == ["os"]


@pytest.mark.parametrize(("template", "message"), [
    ('{"constant": 1}', "holds no placeholder"),
    ('{"id": "{sensor}", "ts": {timestamp}}', "unknown placeholder {sensor}"),
])
def test_record_templates(registry: Registry, tmp_path: Path, template: str, message: str) -> None:
    script = write(tmp_path, "job.py", "import os\n")
    path = write(tmp_path, "t.json", template)
    assert message in refused(tmp_path, "--job", script, "--record-template", path)


def test_too_many_experiments(registry: Registry, tmp_path: Path) -> None:
    loads = ",".join(str(n) for n in range(1, 3001))
    assert "6,000 experiments" in refused(tmp_path, "--plugin", "uc1", "--loads", loads, "--resources", "1,2")


@pytest.mark.parametrize("section", ["execution", "load", "resources"])
def test_an_empty_section_of_an_execution_file(registry: Registry, tmp_path: Path, section: str) -> None:
    path = write(tmp_path, "exec.yaml", f"{section}:\n")
    line = refused(tmp_path, "--plugin", "uc1", "--execution", path)
    assert f"--execution {path}: execution.{section}: expected a mapping" in line


@pytest.mark.parametrize("args", [["--set", "capacity=1e30"], ["--set", "capacity=-1e30"]])
def test_a_use_case_parameter_without_a_declared_maximum(registry: Registry, tmp_path: Path, args: list[str]) -> None:
    line = refused(tmp_path, "--plugin", "calibrated", *args)
    assert "--set capacity=" in line and ("must be at most 1e+12" in line or "must be at least" in line)


def test_a_trigger_that_leaves_no_micro_batch_to_measure(registry: Registry, tmp_path: Path) -> None:
    line = refused(tmp_path, "--plugin", "uc1", "--trigger", "100", "--duration", "120", "--warmup", "30")
    assert "--trigger 100: must leave two micro-batches" in line and "at most 45 s" in line


@pytest.mark.parametrize(("args", "message"), [
    (["--warmup", "100", "--duration", "90"], "--warmup/--duration: warmup (100 s) must be shorter"),
    (["--loads", "0.5"], "load 0.5 (NumSensors), resources 1 (Instances): the deployment cannot be patched"),
])
def test_messages_name_the_options(registry: Registry, tmp_path: Path, args: list[str], message: str) -> None:
    assert message in refused(tmp_path, "--plugin", "uc1", *args)


def test_resume_of_a_complete_run_says_there_is_nothing_to_resume(tmp_path: Path) -> None:
    results = tmp_path / "done"
    results.mkdir()
    (results / "exp4-execution-configuration.json").write_text("{}")
    (results / "exp4-result.json").write_text('{"complete": true, "experiments": []}')
    result = CliRunner().invoke(cli, ["run", "--plugin", "uc1", "--results", str(results), "--resume"])
    assert result.exit_code == 2 and "exp4" in result.output and "complete, nothing to resume" in result.output
    from bench.cli.checks import check_resume

    (results / "exp4-result.json").write_text('{"complete": false, "experiments": []}')
    check_resume(results)  # an interrupted run is what --resume is for


# ------------------------------------------------------------------ the default search needs the lower bound

def test_no_lower_bound_with_the_default_search_is_refused(registry: Registry, tmp_path: Path) -> None:
    line = refused(tmp_path, "--plugin", "uc1", "--no-lower-bound")
    assert "--no-lower-bound" in line and "'bracket'" in line and "--search" in line and "linear" in line


def test_an_execution_file_s_bracket_without_lower_bound_is_refused(registry: Registry, tmp_path: Path) -> None:
    path = write(tmp_path, "exec.yaml", {"execution": {"strategy": {"name": "bracket", "restrictions": []}}})
    line = refused(tmp_path, "--plugin", "uc1", "--execution", path)
    assert "execution.execution.strategy.restrictions" in line and "LowerBound" in line
