"""Each ``bench run`` option, given on the command line, changes the run bench resolves
(the execution, the use case, the platform's options, the Kafka clients' security) or
the driver's spec and the Kubernetes manifests built from them.

Why: an option that parses and validates can still be dropped on the way to the
platform (``cpuPerInstance`` was, on a cluster). Each case below parses the real command
line, resolves it as ``bench run`` does (nothing starts) and fails if the option's value
does not arrive where it acts; tests/unit/test_no_inert_setting.py points here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from bench.api import ExperimentSpec, TopicSpec
from bench.cli.commands import cli
from bench.cli.launch import PreparedRun, resolve_run
from bench.platforms.local import spark_payload
from bench.plugins import load_plugins
from bench.runtime.spark.cluster import InstanceShape
from click.testing import CliRunner

REGISTRY = load_plugins()
BASE = ["--plugin", "uc1", "--loads", "100", "--resources", "1"]


def resolved(args: list[str]) -> PreparedRun:
    """``bench run ARGS`` parsed by click and resolved, nothing started."""
    ctx = cli.commands["run"].make_context("run", [*BASE, *args])
    return resolve_run(REGISTRY, dict(ctx.params))


def _ex(p: PreparedRun) -> Any:
    return p.execution.execution




def _id(value: Any) -> str | None:
    return " ".join(value) if isinstance(value, list) and all(isinstance(v, str) for v in value) else None


@pytest.mark.parametrize(("args", "where", "expected"), [
    (["--duration", "123"], lambda p: _ex(p).duration, 123),
    (["--warmup", "17"], lambda p: _ex(p).warmup, 17),
    (["--repetitions", "4"], lambda p: _ex(p).repetitions, 4),
    (["--metric", "capacity"], lambda p: _ex(p).metric, "capacity"),
    (["--no-early-stop"], lambda p: _ex(p).earlyStop, False),
    (["--early-stop"], lambda p: _ex(p).earlyStop, True),
    (["--sample-interval", "3"], lambda p: (_ex(p).sampleInterval, p.platform_options["sample_interval"]), (3, 3)),
    (["--early-sample-interval", "0"], lambda p: _ex(p).earlySampleInterval, 0),
    (["--loads", "300,400"], lambda p: p.execution.load.loadValues, [300, 400]),
    (["--resources", "2,3"], lambda p: p.execution.resources.resourceValues, [2, 3]),
    (["--load-type", "MessagePeriod", "--loads", "500"], lambda p: p.execution.load.loadType, "MessagePeriod"),
    (["--resource-type", "CoresPerInstance"], lambda p: p.execution.resources.resourceType, "CoresPerInstance"),
    (["--search", "linear"], lambda p: _ex(p).strategy.name, "linear"),
    (["--search", "linear", "--no-lower-bound"], lambda p: _ex(p).strategy.restrictions, []),
    (["--search", "linear", "--lower-bound"], lambda p: _ex(p).strategy.restrictions, ["LowerBound"]),
    (["--plugin", "uc2"], lambda p: p.use_case.name, "uc2"),
    (["--platform", "external", "--bootstrap-servers", "127.0.0.1:19092"],
     lambda p: (p.platform_options["platform"], p.platform_options["bootstrap_servers"]),
     ("external", "127.0.0.1:19092")),
    (["--broker", "tansu"], lambda p: p.platform_options["broker"], "tansu"),
    (["--brokers", "3"], lambda p: p.platform_options["brokers"], 3),
    (["--connector", "python"], lambda p: p.platform_options["connector"], "python"),
    (["--metrics-port", "19999"], lambda p: p.platform_options["metrics_port"], 19999),
    # (a secured client needs a Kafka that is secured: bench's own broker is PLAINTEXT only)
    (["--bootstrap-servers", "localhost:9093", "--kafka-config", "security.protocol=SSL"],
     lambda p: p.kafka_security.redacted().get("security.protocol"), "SSL"),
], ids=_id)
def test_a_run_option_reaches_the_run(args: list[str], where: Callable[[PreparedRun], Any], expected: Any) -> None:
    assert where(resolved(args)) == expected
    if "--plugin" not in args and "--early-stop" not in args and "--lower-bound" not in args:
        assert where(resolved([])) != expected, "the case must differ from the default to show the option's effect"


def test_benchmark_and_execution_files_are_what_runs(tmp_path: Path) -> None:
    bench_doc = REGISTRY.use_cases["uc1"].default_benchmark()
    bench_doc["name"] = "my-uc1"
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(bench_doc))
    (tmp_path / "e.yaml").write_text(yaml.safe_dump({"execution": {"duration": 77, "repetitions": 2}}))
    p = resolved(["--benchmark", str(tmp_path / "b.yaml"), "--execution", str(tmp_path / "e.yaml")])
    assert p.benchmark.name == "my-uc1" and p.execution.benchmark == "my-uc1"
    assert (_ex(p).duration, _ex(p).repetitions) == (77, 2)
    p = resolved(["--execution", str(tmp_path / "e.yaml"), "--duration", "66"])
    assert _ex(p).duration == 66, "an option overrides its Execution file's field"


def test_kafka_config_file_reaches_every_client_and_the_option_wins(tmp_path: Path) -> None:
    props = tmp_path / "client.properties"
    props.write_text("security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.username=u\nsasl.password=p\n")
    kafka = ["--bootstrap-servers", "localhost:9093"]  # a secured Kafka: bench's own broker is PLAINTEXT only
    p = resolved([*kafka, "--kafka-config-file", str(props)])
    assert p.kafka_security.redacted()["sasl.mechanism"] == "PLAIN"
    p = resolved([*kafka, "--kafka-config-file", str(props), "--kafka-config", "sasl.mechanism=SCRAM-SHA-256"])
    assert p.kafka_security.redacted()["sasl.mechanism"] == "SCRAM-SHA-256"


def test_job_and_record_template_make_the_job_use_case(tmp_path: Path) -> None:
    script = tmp_path / "job.py"
    script.write_text("import os\nprint(os.environ['BENCH_INPUT_TOPIC'])\n")
    template = tmp_path / "t.json"
    template.write_text('{"id": "{key}", "ts": {timestamp}}')
    ctx = cli.commands["run"].make_context("run", ["--job", str(script), "--record-template", str(template),
                                                   "--loads", "100", "--resources", "1"])
    p = resolve_run(REGISTRY, dict(ctx.params))
    assert p.use_case.name == "job"
    assert p.params["job"] == str(script)
    assert p.params["recordTemplate"] == template.read_text(), "the generator writes the template's records"


def _payload(args: list[str]) -> dict[str, Any]:
    """The Spark driver's spec the local platforms build from the resolved options."""
    p = resolved(args)
    spec = ExperimentSpec(experiment_id="exp1-l100-r1", use_case=p.use_case, objects=[],
                          topics=[TopicSpec("input", "input-exp1", 1)], params={}, load=100, resources=1)
    return spark_payload(p.platform_options, spec, InstanceShape.of({}, 1), None)


def test_trigger_conf_and_spark_warmup_reach_the_driver() -> None:
    default = _payload([])
    given = _payload(["--trigger", "2.5", "--conf", "spark.sql.shuffle.partitions=7", "--no-spark-warmup"])
    assert (default["trigger_seconds"], given["trigger_seconds"]) == (None, 2.5)
    key = "spark.sql.shuffle.partitions"
    assert given["conf"][key] == "7" and key not in default["conf"]
    assert (default["warmup"], given["warmup"]) == (True, False)


def test_namespace_reaches_the_kubernetes_manifests() -> None:
    out = CliRunner().invoke(cli, ["run", *BASE, "--platform", "kubernetes", "--namespace", "perf-x", "--dry-run"])
    assert out.exit_code == 0, out.output
    docs = [d for d in yaml.safe_load_all(out.output) if d]
    assert docs and all(d["metadata"].get("namespace") == "perf-x" for d in docs if "namespace" in d["metadata"])
    assert sum("namespace" in d["metadata"] for d in docs) >= 2


@pytest.mark.parametrize(("execution", "where", "expected"), [
    ({"duration": 111}, lambda p: _ex(p).duration, 111),
    ({"warmup": 13}, lambda p: _ex(p).warmup, 13),
    ({"repetitions": 3}, lambda p: _ex(p).repetitions, 3),
    ({"metric": "capacity"}, lambda p: _ex(p).metric, "capacity"),
    ({"earlyStop": False}, lambda p: _ex(p).earlyStop, False),
    ({"sampleInterval": 2}, lambda p: p.platform_options["sample_interval"], 2),
    ({"earlySampleInterval": 0.5}, lambda p: _ex(p).earlySampleInterval, 0.5),
    ({"afterTeardownDelay": 7}, lambda p: _ex(p).afterTeardownDelay, 7),
    ({"loadGenerationDelay": 4}, lambda p: _ex(p).loadGenerationDelay, 4),
    ({"strategy": {"name": "LinearSearch", "restrictions": []}}, lambda p: (_ex(p).strategy.name,
                                                                          _ex(p).strategy.restrictions),
     ("LinearSearch", [])),
], ids=lambda v: ",".join(v) if isinstance(v, dict) else None)
def test_an_execution_file_key_reaches_the_run(tmp_path: Path, execution: dict[str, Any],
                                               where: Callable[[PreparedRun], Any], expected: Any) -> None:
    path = tmp_path / "execution.yaml"
    path.write_text(yaml.safe_dump({"execution": execution}))
    assert where(resolved(["--execution", str(path)])) == expected
    assert where(resolved([])) != expected, "the case must differ from the default to show the key's effect"
