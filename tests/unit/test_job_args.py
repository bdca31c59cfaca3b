"""A job's own command line (``--job job.py -- --brokers {bootstrap} --in {input}``) and
the run's Kafka client security reaching a script's ``format("kafka")`` readers and writers."""

from __future__ import annotations

import json
import shlex
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from bench.builtin.job import check_job_args, job_params
from bench.cli.commands import cli
from bench.cli.launch import resolve_run
from bench.config.base import ConfigError
from bench.plugins import load_plugins
from bench.runtime.spark import user_job
from bench.runtime.spark.user_job import ScriptThread, inject_kafka_options, job_argv
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "own_job.py"
VALUES = {"bootstrap": "k1:9092,k2:9092", "input": "input-ab12", "output": "output-ab12",
          "checkpoint": "/tmp/ck dir", "group": "sut-ab12"}


def test_placeholders_are_filled_word_by_word() -> None:
    line = "--brokers {bootstrap} --in={input} --out {output} --ck '{checkpoint}' --group {group} --json '{{\"a\": 1}}'"
    assert job_argv(line, VALUES) == ["--brokers", "k1:9092,k2:9092", "--in=input-ab12", "--out", "output-ab12",
                                      "--ck", "/tmp/ck dir", "--group", "sut-ab12", "--json", '{"a": 1}']
    assert job_argv("", VALUES) == []


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("--in {topic}", r"unknown placeholder \{topic\} \(known: \{bootstrap\}, \{input\}"),
        ("--x {", "literal braces"),
        ("--x 'open", "cannot be split into words"),
    ],
)
def test_a_bad_command_line_is_refused(line: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_job_args(line)


def test_job_params_keep_the_arguments_as_one_shell_line() -> None:
    params = job_params(str(EXAMPLE), None, ["--brokers", "{bootstrap}", "--name", "two words"])
    assert shlex.split(params["jobArgs"]) == ["--brokers", "{bootstrap}", "--name", "two words"]
    assert job_argv(params["jobArgs"], VALUES) == ["--brokers", "k1:9092,k2:9092", "--name", "two words"]
    assert "jobArgs" not in job_params(str(EXAMPLE))


def test_arguments_after_the_double_dash_reach_the_run() -> None:
    registry = load_plugins()
    prepared = resolve_run(registry, {"loads": "1000", "resources": "1", "job": str(EXAMPLE),
                                      "job_args": ("--in", "{input}")})
    assert shlex.split(prepared.params["jobArgs"]) == ["--in", "{input}"]
    with pytest.raises(ConfigError, match=r"-- ARGS: .\{inpt\}.: unknown placeholder \{inpt\}"):
        resolve_run(registry, {"loads": "1000", "resources": "1", "job": str(EXAMPLE), "job_args": ("--in", "{inpt}")})
    with pytest.raises(ConfigError, match="arguments after -- are the command line of --job"):
        resolve_run(registry, {"loads": "1000", "resources": "1", "plugin": "uc1", "job_args": ("--x",)})


def test_the_command_line_takes_job_arguments_after_the_double_dash(tmp_path: Path) -> None:
    out = CliRunner().invoke(cli, ["run", "--job", str(EXAMPLE), "--loads", "1000", "--resources", "1",
                                   "--dry-run", "--", "--brokers", "{bootstrap}", "--in", "{input}"])
    assert out.exit_code == 0, out.output
    refused = CliRunner().invoke(cli, ["run", "--job", str(EXAMPLE), "--loads", "1000", "--resources", "1",
                                       "--dry-run", "--", "--in", "{nope}"])
    assert refused.exit_code == 2 and "unknown placeholder {nope}" in refused.output


def test_set_job_args_is_checked_like_the_option() -> None:
    with pytest.raises(ConfigError, match=r"jobArgs.*unknown placeholder \{x\}"):
        resolve_run(load_plugins(), {"loads": "1000", "resources": "1", "job": str(EXAMPLE),
                                     "sets": ["jobArgs=--in {x}"]})


def test_the_script_sees_its_own_argv(tmp_path: Path) -> None:
    script = tmp_path / "job.py"
    out = tmp_path / "argv.json"
    script.write_text(f"import json, sys\njson.dump(sys.argv, open({str(out)!r}, 'w'))\n")
    thread = ScriptThread(str(script), ["--in", "input-ab12"])
    saved = list(sys.argv)
    try:
        thread.start()
        thread.join(10)
    finally:
        sys.argv = saved
    assert thread.error is None
    assert json.loads(out.read_text()) == [str(script), "--in", "input-ab12"]


class _Builder:
    """Records options in call order, as Spark's readers and writers keep them (a later
    option of the same key replaces the earlier)."""

    def __init__(self) -> None:
        self.opts: dict[str, str] = {}

    def format(self, source: str) -> Any:
        self.opts["<format>"] = source
        return self

    def options(self, **opts: str) -> Any:
        self.opts.update(opts)
        return self

    def option(self, key: str, value: str) -> Any:
        self.opts[key] = value
        return self


@pytest.fixture
def readers(monkeypatch: pytest.MonkeyPatch) -> list[type]:
    from pyspark.sql.readwriter import DataFrameReader, DataFrameWriter
    from pyspark.sql.streaming.readwriter import DataStreamReader, DataStreamWriter

    classes: list[type] = [DataStreamReader, DataStreamWriter, DataFrameReader, DataFrameWriter]
    for cls in classes:
        monkeypatch.setattr(cls, "format", _Builder.format)
        monkeypatch.setattr(cls, "options", _Builder.options, raising=False)
        monkeypatch.setattr(cls, "option", _Builder.option, raising=False)
        monkeypatch.setattr(cls, "_bench_format", None, raising=False)
        monkeypatch.delattr(cls, "_bench_format")
    return classes


def test_kafka_security_reaches_every_kafka_reader_and_writer_and_the_script_wins(readers: list[type]) -> None:
    security = {"kafka.security.protocol": "SASL_SSL", "kafka.sasl.mechanism": "PLAIN"}
    inject_kafka_options(security)
    for cls in readers:
        builder: Any = _Builder()
        cls.format(builder, "kafka").option("kafka.sasl.mechanism", "SCRAM-SHA-512")
        assert builder.opts == {"<format>": "kafka", "kafka.security.protocol": "SASL_SSL",
                                "kafka.sasl.mechanism": "SCRAM-SHA-512"}, cls
        other: Any = _Builder()
        cls.format(other, "parquet")
        assert other.opts == {"<format>": "parquet"}
    inject_kafka_options({})  # a run without security leaves the readers as Spark has them
    again: Any = _Builder()
    readers[0].format(again, "kafka")
    assert again.opts == {"<format>": "kafka"}


def test_run_hands_security_and_arguments_to_the_script(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``run`` wires the pieces: the environment, the argv and the injected options."""
    from bench.runtime.kafka import security

    monkeypatch.setenv(security.ENV, json.dumps({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                                                 "sasl.username": "u", "sasl.password": "p"}))
    seen: dict[str, Any] = {}

    class Supervisor:
        def __init__(self, *args: Any) -> None:
            seen["argv"] = args[-1]

        def run(self) -> int:
            return 0

        def stop_queries(self) -> None:
            pass

    session = type("S", (), {})()
    monkeypatch.setattr("bench.runtime.spark.session.build_session", lambda *a: session)
    monkeypatch.setattr("bench.runtime.spark.session.stop_session", lambda s: None)
    monkeypatch.setattr("bench.runtime.spark.session.progress_listener",
                        lambda s: type("L", (), {"committer": type("C", (), {"watch": lambda *a: None})()})())
    monkeypatch.setattr(user_job, "JobSupervisor", Supervisor)
    monkeypatch.setattr(user_job, "_records_counter", lambda b, t: (lambda: 0, lambda: None))
    monkeypatch.setattr(user_job, "redirect_checkpoints", lambda root: None)
    monkeypatch.setattr(user_job, "inject_kafka_options", lambda opts: seen.setdefault("options", opts))
    monkeypatch.setattr(threading, "Event", threading.Event)
    for key in ("BENCH_KAFKA_OPTIONS", "BENCH_INPUT_TOPIC", "BENCH_BOOTSTRAP_SERVERS", "BENCH_OUTPUT_TOPIC",
                "BENCH_CHECKPOINT_DIR"):
        monkeypatch.delenv(key, raising=False)
    spec = {"params": {"job": str(EXAMPLE), "jobArgs": "--brokers {bootstrap} --in {input} --group {group}"},
            "bootstrap_servers": "b:1", "topics": {"input": "in-1", "output": "out-1"},
            "checkpoint_dir": str(tmp_path), "group_id": "sut-1"}
    import signal

    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        assert user_job.run(spec, lambda e: None) == 0
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    assert seen["argv"] == ["--brokers", "b:1", "--in", "in-1", "--group", "sut-1"]
    assert seen["options"]["kafka.security.protocol"] == "SASL_PLAINTEXT"
    assert "password=\"p\"" in seen["options"]["kafka.sasl.jaas.config"]
    import os

    assert json.loads(os.environ["BENCH_KAFKA_OPTIONS"]) == seen["options"]
