"""Bad input, third round (issue 69): the kinds of input a new user gives that the
second round did not name. Every case ends in a non-zero exit and one line naming the
value and where it came from, with no traceback, and nothing is started or reserved
(every platform factory raises; the results folder is not even created)."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from bench.cli.commands import cli
from bench.plugins import Registry, load_plugins
from click.testing import CliRunner

from .fakes import nothing_starts


@pytest.fixture(scope="module")
def registry() -> Iterator[Registry]:
    with pytest.MonkeyPatch.context() as mp, nothing_starts(mp) as loaded:
        yield loaded


def refused(tmp_path: Path, *args: str, command: str = "run", env: dict[str, str] | None = None) -> str:
    results = tmp_path / "results"
    argv = [command, "--results", str(results), *args] if command == "run" else [command, *args]
    result = CliRunner().invoke(cli, argv, env=env)
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bench: error: "), result.output
    assert not results.exists(), "the results folder was made for an invalid run"
    return lines[0]


def write(tmp_path: Path, name: str, doc: Any) -> str:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc, sort_keys=False))
    return str(path)


def calibrated(registry: Registry, **changes: Any) -> dict[str, Any]:
    doc = registry.use_cases["calibrated"].default_benchmark()
    doc = json.loads(json.dumps(doc))
    doc.update(changes)
    return doc


def with_slo(registry: Registry, **properties: Any) -> dict[str, Any]:
    doc = calibrated(registry)
    props = {k: v for k, v in doc["slos"][0]["properties"].items() if not k.startswith("threshold")}
    doc["slos"][0]["properties"] = {**props, **properties}
    return doc


# ------------------------------------------------------------------ threshold expressions

@pytest.mark.parametrize(("expression", "message"), [
    ("10^400", "too large"),
    ("(0-1)^0.5", "not a real number"),
    ("0^-1", "divides by zero"),
    ("(" * 400 + "1" + ")" * 400, "too long"),
    ("(" * 200 + "1" + ")" * 200, "nested more than"),
    ("-" * 200 + "1", "nested more than"),
    ("2^2^2^2^2^2", "too large"),
    ("L" * 5000, "long"),
    ("1/(L-500)", "divides by zero at L=500"),
    ("L-5000", "is -4500 at L=500"),
    ("R-3", "R=1"),
    ("L/0", "divides by zero"),
    ("9" * 400, "too large"),
    ("L L", "unexpected 'L'"),
    ("2*(L", "ends too early"),
    ("L\n+1;", "unexpected ';'"),
])
def test_threshold_expressions(registry: Registry, tmp_path: Path, expression: str, message: str) -> None:
    bench = write(tmp_path, "b.yaml", with_slo(registry, thresholdFromExpression=expression))
    line = refused(tmp_path, "--plugin", "calibrated", "--benchmark", bench, "--loads", "500,1000,2000",
                   "--resources", "1,2")
    assert "thresholdFromExpression" in line and message in line, line


# ------------------------------------------------------------------ files: names, types, places

def _benchmark_cases(registry: Registry) -> list[tuple[dict[str, Any], str]]:
    base = calibrated(registry)
    twice = calibrated(registry)
    twice["loadTypes"] = twice["loadTypes"] * 2
    misnamed = calibrated(registry)
    misnamed["loadTyps"] = misnamed.pop("loadTypes")
    patcher = calibrated(registry)
    patcher["resourceTypes"][0]["patchers"][0]["properties"] = {"factr": 4}
    slash = calibrated(registry)
    slash["slos"][0]["name"] = "lag/trend"
    dots = calibrated(registry)
    dots["slos"][0]["name"] = ".."
    dropped = calibrated(registry)
    dropped["slos"].append({"name": "dropped", "sloType": "dropped records", "properties": {"threshold": -1}})
    warm = calibrated(registry)
    warm["slos"][0]["properties"]["warmup"] = 600
    typed = calibrated(registry)
    typed["loadTypes"][0]["patchers"] = "GeneratorLoadPatcher"
    del base
    return [
        (twice, "'NumSensors' is given twice"),
        (misnamed, "did you mean 'loadTypes'"),
        (patcher, "factr"),
        (slash, "'lag/trend'"),
        (dots, "'..'"),
        (dropped, "threshold"),
        (warm, "warmup"),
        (typed, "patchers"),
    ]


@pytest.mark.parametrize("case", range(8))
def test_benchmark_files(registry: Registry, tmp_path: Path, case: int) -> None:
    doc, message = _benchmark_cases(registry)[case]
    path = write(tmp_path, "b.yaml", doc)
    line = refused(tmp_path, "--plugin", "calibrated", "--benchmark", path, "--duration", "60")
    assert message in line, line


@pytest.mark.parametrize(("doc", "message"), [
    ({"execution": {"strategy": 5}}, "strategy"),
    ({"execution": {"duraton": 60}}, "did you mean 'duration'"),
    ({"executon": {"duration": 60}}, "did you mean 'execution'"),
    ({"load": {"loadValue": [100]}}, "did you mean 'loadValues'"),
    ({"execution": {"duration": 60, "warmup": 20},
      "slos": [{"name": "lag-trend", "properties": {"warmup": 90}}]}, "warmup"),
    ({"execution": {"repetitions": "three"}}, "repetitions"),
    ({"execution": {"duration": True}}, "duration"),
    ({"load": {"loadValues": "100,200"}}, "loadValues"),
    ({"slos": [{"name": "lag-trend", "properties": {"threshold": "-1"}}]}, "threshold"),
])
def test_execution_files(registry: Registry, tmp_path: Path, doc: dict[str, Any], message: str) -> None:
    path = write(tmp_path, "e.yaml", {"benchmark": "calibrated", **doc})
    line = refused(tmp_path, "--plugin", "calibrated", "--execution", path)
    assert message in line, line


# ------------------------------------------------------------------ outputs and stored runs

def _stored_run(directory: Path, load_type: str = "NumSensors", use_case: str = "fake") -> Path:
    """A complete run as the engine writes it, on the fake platform in simulated time."""
    from bench.config.model import parse_benchmark, parse_execution
    from bench.execution.config import RunConfig
    from bench.execution.run import Engine

    from .fakes import FAKE_USE_CASE, FakePlatform, fake_benchmark
    from .test_engine import SimClock

    registry = load_plugins()
    registry.use_cases["fake"] = FAKE_USE_CASE
    doc = fake_benchmark()
    doc["useCase"] = use_case
    doc["loadTypes"][0]["typeName"] = load_type
    execution = parse_execution({
        "benchmark": "fake", "load": {"loadType": load_type, "loadValues": [1500, 2500]},
        "resources": {"resourceType": "Instances", "resourceValues": [1, 2, 3]},
        "execution": {"duration": 60, "warmup": 10, "repetitions": 1, "afterTeardownDelay": 0, "sampleInterval": 5,
                      "strategy": {"name": "linear"}}})
    config = RunConfig(use_case=FAKE_USE_CASE, benchmark=parse_benchmark(doc), execution=execution,
                       results_dir=directory)
    clock = SimClock()
    platform = FakePlatform()
    platform.now = clock
    asyncio.run(Engine(registry, config, platform, clock=clock, sleep=clock.sleep).run())
    return directory


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _stored_run(tmp_path_factory.mktemp("stored") / "run")


@pytest.fixture
def run_dir(stored: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(stored, tmp_path / "run"))


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


@pytest.mark.parametrize(("command", "output", "message"), [
    ("analyze", "RUN/exp0-result.json", "is a file of the run"),
    ("analyze", "RUN/exp0-result.csv", "would replace a file of the run"),
    ("analyze", "t.json", "give "),
    ("analyze", "RUN", "is a directory"),
    ("report", "RUN", "is a directory"),
    ("report", "RUN/exp0-result.json", "would replace a file of the run"),
    ("report", "RUN/exp0_demand.csv", "would replace a file of the run"),
    ("report", "NOFILE/x/r.html", "cannot write there"),
    ("report", "RUN/exp0-result.json/r.html", "cannot write there"),
    ("report", "new\nline/x/r.html", "\\n"),
])
def test_outputs_never_destroy_a_run(run_dir: Path, tmp_path: Path, command: str, output: str,
                                     message: str) -> None:
    (tmp_path / "NOFILE").write_text("a file where a folder would be")
    (tmp_path / "new\nline").write_text("a file")
    before = snapshot(run_dir)
    target = output.replace("RUN", str(run_dir))
    target = target if target.startswith("/") else str(tmp_path / target)
    line = refused(tmp_path, str(run_dir), "-o", target, command=command)
    assert message.replace("is a file of the run", "would replace a file of the run") in line, line
    assert snapshot(run_dir) == before


def test_analyze_to_a_new_file_keeps_the_run(run_dir: Path, tmp_path: Path) -> None:
    before = snapshot(run_dir)
    result = CliRunner().invoke(cli, ["analyze", str(run_dir), "-o", str(tmp_path / "t.csv")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "t.csv").read_text().startswith("load,") and json.loads((tmp_path / "t.json").read_text())
    assert snapshot(run_dir) == before


def _edit_result(run_dir: Path, edit: Any) -> None:
    path = run_dir / "exp0-result.json"
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))


def _rename_key(doc: dict[str, Any]) -> None:
    doc["table"] = [{("load" if k == "key" else k): v for k, v in row.items()} for row in doc["table"]]


@pytest.mark.parametrize(("edit", "field"), [
    (lambda d: d["experiments"][0].update(passed="false"), "experiments.0.passed"),
    (_rename_key, "table.0.key"),
    (lambda d: d["experiments"][0]["generators"][0].update(target_rate="fast"), "target_rate"),
    (lambda d: d["experiments"][0]["generators"][0].update(achieved_rate="1.5k"), "achieved_rate"),
    (lambda d: d.update(complete="yes"), "complete"),
    (lambda d: d.update(experiments={"a": 1}), "experiments"),
    (lambda d: d["experiments"][0].update(load="1500"), "experiments.0.load"),
])
@pytest.mark.parametrize("command", ["analyze", "report", "compare", "expect"])
def test_hand_edited_results(run_dir: Path, stored: Path, tmp_path: Path, edit: Any, field: str,
                             command: str, registry: Registry) -> None:
    _edit_result(run_dir, edit)
    args = {"analyze": ["analyze", str(run_dir), "-o", str(tmp_path / "a.csv")],
            "report": ["report", str(run_dir), "-o", str(tmp_path / "r.html")],
            "compare": ["compare", str(stored), str(run_dir)],
            "expect": ["run", "--plugin", "calibrated", "--expect", str(run_dir), "--dry-run"]}[command]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and str(run_dir / "exp0-result.json") in lines[0] and field in lines[0], result.output


def test_compare_and_report_of_other_axes(stored: Path, tmp_path: Path) -> None:
    other = _stored_run(tmp_path / "other", load_type="MessagePeriod")
    line = refused(tmp_path, str(stored), str(other), command="compare")
    assert "different load or resource types" in line and "MessagePeriod" in line
    line = refused(tmp_path, str(stored), str(other), "-o", str(tmp_path / "r.html"), command="report")
    assert "on one axis" in line
    case = _stored_run(tmp_path / "case", use_case="uc9")
    assert "different use cases" in refused(tmp_path, str(stored), str(case), command="compare")


def test_expect_of_the_other_metric_is_found_before_the_run(registry: Registry, stored: Path,
                                                            tmp_path: Path) -> None:
    line = refused(tmp_path, "--plugin", "calibrated", "--metric", "capacity", "--expect", str(stored))
    assert "holds a demand table" in line


# ------------------------------------------------------------------ options that exclude each other

@pytest.mark.parametrize(("args", "message"), [
    (["--plugin", "calibrated", "--brokers", "3", "--bootstrap-servers", "localhost:9092"], "--brokers"),
    (["--plugin", "calibrated", "--broker", "tansu", "--bootstrap-servers", "localhost:9092"], "--broker"),
    (["--plugin", "calibrated", "--set", "sut.replicas=2", "--resources", "1,2"], "sut.replicas"),
    (["--plugin", "calibrated", "--conf", "spark.sql.shuffle.partitions=4"], "--conf"),
    (["--plugin", "uc1", "--spark-master", "spark://h:7077", "--spark-mode", "standalone"], "--spark-mode"),
])
def test_contradictory_options(registry: Registry, tmp_path: Path, args: list[str], message: str) -> None:
    assert message in refused(tmp_path, *args)


# ------------------------------------------------------------------ environment variables

@pytest.mark.parametrize(("env", "args", "message"), [
    ({"BENCH_K8S_NAMESPACE": "Bad_NS"}, ["--platform", "kubernetes", "--dry-run"], "BENCH_K8S_NAMESPACE"),
    ({"BENCH_K8S_SUT_METRICS_PORT": "http"}, ["--platform", "kubernetes", "--dry-run"], "BENCH_K8S_SUT_METRICS_PORT"),
    ({"BENCH_K8S_SUT_MODE": "standalon"}, ["--platform", "kubernetes", "--dry-run"], "did you mean 'standalone'"),
    ({"BENCH_K8S_CONNECTOR": "nativ"}, ["--platform", "kubernetes", "--dry-run"], "BENCH_K8S_CONNECTOR"),
    ({"BENCH_K8S_EXECUTOR_CORES": "-2"}, ["--platform", "kubernetes", "--dry-run"], "BENCH_K8S_EXECUTOR_CORES"),
    ({"BENCH_KAFKA_HEAP": "lots"}, [], "BENCH_KAFKA_HEAP"),
])
def test_environment_variables(registry: Registry, tmp_path: Path, env: dict[str, str], args: list[str],
                               message: str) -> None:
    assert message in refused(tmp_path, "--plugin", "calibrated", *args, env=env)


# ------------------------------------------------------------------ work refused before it starts; messages

@pytest.mark.parametrize(("script", "message"), [
    ("", "is empty"),
    ("   \n# nothing\n", "is empty"),
    ("print('hello')\n", "never reads Kafka"),
    ("import no_such_module_anywhere\nimport os\nos.environ['BENCH_INPUT_TOPIC']\n", "no_such_module_anywhere"),
])
def test_job_scripts(registry: Registry, tmp_path: Path, script: str, message: str) -> None:
    path = write(tmp_path, "job.py", script)
    assert message in refused(tmp_path, "--job", path, "--dry-run")


def test_symbolic_links(registry: Registry, tmp_path: Path) -> None:
    loop = tmp_path / "loop.yaml"
    loop.symlink_to(loop)
    assert "a loop of symbolic links" in refused(tmp_path, "--plugin", "calibrated", "--execution", str(loop))
    dangling = tmp_path / "dangling.yaml"
    dangling.symlink_to(tmp_path / "gone.yaml")
    assert "which does not exist" in refused(tmp_path, "--plugin", "calibrated", "--execution", str(dangling))


def test_a_newline_in_a_path_keeps_the_error_on_one_line(registry: Registry, tmp_path: Path) -> None:
    assert "\\n" in refused(tmp_path, "--plugin", "calibrated", "--execution", str(tmp_path / "a\nb.yaml"))


# ------------------------------------------ expressions parsed by the type, evaluated on the grid

def test_an_expression_undefined_only_outside_the_grid_is_accepted(registry: Registry, tmp_path: Path) -> None:
    """Each SLO type only parses ``thresholdFromExpression``; the grid-wide check before the
    run evaluates it. ``1/(L-1)`` divides by zero at L=1 only, which these loads never try."""
    for slo in ("dropped-records", "dropped records", "lag-trend", "lag trend"):
        registry.slos[slo].validate({"thresholdFromExpression": "1/(L-1)"})
    registry.slos["generic"].validate({"sli": "lag", "thresholdFromExpression": "1/(L-1)"})
    bench = write(tmp_path, "b.yaml", with_slo(registry, thresholdFromExpression="1/(L-1)"))
    result = CliRunner().invoke(cli, ["run", "--results", str(tmp_path / "r"), "--plugin", "calibrated",
                                      "--benchmark", bench, "--loads", "500,1000", "--resources", "1,2",
                                      "--dry-run"])
    assert result.exit_code == 0, result.output
    line = refused(tmp_path, "--plugin", "calibrated", "--benchmark", bench, "--loads", "1,500", "--resources", "1")
    assert "divides by zero at L=1" in line, line


# ------------------------------------------------------------------ what the platform cannot serve

@pytest.mark.parametrize("protocol", ["SASL_PLAINTEXT", "SASL_SSL", "SSL"])
def test_secured_clients_for_the_embedded_broker(registry: Registry, tmp_path: Path, protocol: str) -> None:
    """The broker bench starts listens in PLAINTEXT only: SASL or TLS settings are refused
    before it starts, not found by every client failing to connect."""
    ca = tmp_path / "ca.pem"
    ca.write_text("x")
    line = refused(tmp_path, "--plugin", "calibrated", "--kafka-config", f"security.protocol={protocol}",
                   "--kafka-config", "sasl.username=u", "--kafka-config", "sasl.password=p",
                   "--kafka-config", f"ssl.ca.location={ca}")
    assert f"--kafka-config security.protocol={protocol}: the broker the embedded platform starts" in line, line
    given = CliRunner().invoke(cli, ["run", "--results", str(tmp_path / "r"), "--plugin", "calibrated",
                                     "--bootstrap-servers", "h:9092", "--kafka-config", f"security.protocol={protocol}",
                                     "--kafka-config", "sasl.username=u", "--kafka-config", "sasl.password=p",
                                     "--kafka-config", f"ssl.ca.location={ca}", "--dry-run"])
    assert given.exit_code == 0, given.output  # a Kafka of the user's own may be secured


def test_native_connector_without_its_jars(registry: Registry, tmp_path: Path) -> None:
    line = refused(tmp_path, "--plugin", "uc1", "--connector", "native",
                   env={"BENCH_JARS_DIR": str(tmp_path / "no-jars")})
    assert line.startswith("bench: error: --connector native: Spark's Kafka connector is not installed in "
                           + str(tmp_path / "no-jars")), line


@pytest.mark.parametrize(("text", "line_no", "message"), [
    ("# client\nsecurity.protocol=SASL_PLAINTEXT\nsasl.username=u\nsasl.password=p\n", 2, "has no SASL"),
    ("security.protocol=PLAINTEXT\n\nsasl.usernme=u\n", 3, "did you mean 'sasl.username'"),
    ("security.protocol=SASL_PLAINTXT\n", 1, "must be one of"),
    ("ssl.ca.location=/no/such/ca.pem\n", 1, "no such file"),
])
def test_kafka_config_file_keys_named_with_file_and_line(registry: Registry, tmp_path: Path, text: str,
                                                         line_no: int, message: str) -> None:
    path = write(tmp_path, "client.properties", text)
    line = refused(tmp_path, "--plugin", "calibrated", "--kafka-config-file", path)
    assert f"--kafka-config-file {path}:{line_no}: " in line and message in line, line
