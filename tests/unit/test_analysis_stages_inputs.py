"""``bench stages``, ``analyze``, ``report`` and ``compare`` validate like ``bench run``
(issue 23, item 5): bad options, NaN and infinite values, a warm-up beyond the duration,
truncated or non-numeric rows, a table without rows, a use case without a topology and
an unreachable Kafka are one line and exit code 2, before anything starts."""

from __future__ import annotations

import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bench.cli.commands import cli
from click.testing import CliRunner

from .test_fuzz_inputs import make_run


def refused(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bench: error: "), result.output
    return lines[0]


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    make_run(tmp_path / "run", 0)
    return tmp_path / "run"


@pytest.mark.parametrize(("args", "message"), [
    (["--threshold", "nan"], "--threshold nan: must be a finite number"),
    (["--threshold", "-5"], "--threshold -5: must be more than 0"),
    (["--threshold-rel-to-rate", "3"], "--threshold-rel-to-rate 3: must be at most 1"),
    (["--threshold-rel-to-load", "-3"], "--threshold-rel-to-load -3: must be more than 0"),
    (["--threshold", "5", "--threshold-rel-to-load", "0.1"], "exclude each other"),
    (["--threshold-rel-to-rate", "0.1", "--threshold-rel-to-load", "0.1"], "exclude each other"),
    (["--warmup", "nan"], "--warmup nan: must be a finite number"),
    (["--warmup", "1e9"], "--warmup 1e+09: must be at most 86400 s"),
    (["--confidence", "nan"], "--confidence nan: must lie between 0 and 1"),
])
def test_analyze_options(run_dir: Path, args: list[str], message: str) -> None:
    assert message in refused("analyze", str(run_dir), "-o", str(run_dir / "out.csv"), *args)


def test_analyze_warmup_beyond_the_runs_duration(run_dir: Path) -> None:
    (run_dir / "exp0-execution-configuration.json").write_text('{"execution": {"duration": 120}}')
    assert "must be shorter than the run's duration (120 s)" in refused(
        "analyze", str(run_dir), "-o", str(run_dir / "out.csv"), "--warmup", "300")


@pytest.mark.parametrize(("content", "message"), [
    (b"labels,timestamp,value\nx,1\n", "line 2 has 2 field(s) where the header has 3"),
    (b"labels,timestamp,value\nx,abc,1\n", "line 2: timestamp 'abc' is not a number"),
    (b"labels,timestamp,value\nx,1,nan\n", "line 2: value nan is not a finite number"),
    ("labels,timestamp,value\nx,1,2\n".encode("utf-16"), "is UTF-16"),
    (b"time,lag\n1,2\n", "not an SLI file"),
])
@pytest.mark.parametrize("command", ["analyze", "report"])
def test_bad_stored_series(run_dir: Path, tmp_path: Path, content: bytes, message: str, command: str) -> None:
    victim = run_dir / "exp0_100_1_sli_lag-trend_0.csv"
    victim.write_bytes(content)
    line = refused(command, str(run_dir), "-o", str(tmp_path / ("out.csv" if command == "analyze" else "r.html")))
    assert str(victim) in line and message in line


@pytest.mark.parametrize("command", ["analyze", "report"])
def test_an_informational_file_with_samples_without_a_value_is_read(run_dir: Path, tmp_path: Path,
                                                                     command: str) -> None:
    """bench wrote ``nan`` for a latency interval without output into its informational
    files in earlier versions; those runs stay readable. Infinity there is still refused."""
    info = run_dir / "exp0_100_1_info_latency-max_0.csv"
    info.write_text("labels,timestamp,value\nx,1,nan\nx,2,8937.0\n")
    out = tmp_path / ("out.csv" if command == "analyze" else "r.html")
    result = CliRunner().invoke(cli, [command, str(run_dir), "-o", str(out)])
    assert result.exit_code == 0, result.output
    info.write_text("labels,timestamp,value\nx,1,inf\n")
    assert "value inf is not a finite number" in refused(command, str(run_dir), "-o", str(out))


def test_a_configuration_value_that_is_text(run_dir: Path, tmp_path: Path) -> None:
    (run_dir / "exp0-execution-configuration.json").write_text('{"execution": {"warmup": "abc"}}')
    assert "cannot be read" in refused("report", str(run_dir), "-o", str(tmp_path / "r.html"))


@pytest.mark.parametrize(("content", "message"), [
    ("load,resources\n", "holds no rows"),
    ("load,resources\nnan,1\n", "not finite"),
    ("load,resources\n100,1\n200\n", "200"),
])
def test_compare_tables(tmp_path: Path, content: str, message: str) -> None:
    table = tmp_path / "exp0_demand.csv"
    table.write_text(content)
    good = tmp_path / "good" / "exp1_demand.csv"
    good.parent.mkdir()
    good.write_text("load,resources\n100,1\n")
    assert message in refused("compare", str(good), str(table))


# --------------------------------------------------------------------------- stages


@pytest.fixture
def no_start(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("bench stages started for an invalid input")

    monkeypatch.setattr("bench.stages.pipeline.run_stages", forbidden)
    monkeypatch.setattr("bench.runtime.kafka.broker.running_broker", forbidden)
    yield


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(("args", "message"), [
    (["--duration", "nan"], "--duration nan: must be a finite number"),
    (["--duration", "inf"], "--duration inf: must be a finite number"),
    (["--warmup", "500", "--duration", "100"], "--warmup 500: must be shorter than --duration"),
    (["--set", "nosuch=1"], "--set nosuch=1: unknown parameter 'nosuch'"),
    (["--sensors", "100000000000"], "--sensors 100000000000: must be at most 1e+09"),
    (["--bootstrap-servers", "http://k:9092"], "has a URL scheme"),
])
def test_stages_options(no_start: None, tmp_path: Path, args: list[str], message: str) -> None:
    assert message in refused("stages", "--plugin", "uc1", "--results", str(tmp_path / "s"), *args)
    assert not (tmp_path / "s").exists()


def test_stages_of_a_use_case_without_a_topology(no_start: None, tmp_path: Path) -> None:
    assert "--plugin job: bench stages cannot split it" in refused(
        "stages", "--plugin", "job", "--results", str(tmp_path / "s"))


def test_stages_with_an_unreachable_kafka(no_start: None, tmp_path: Path) -> None:
    port = _closed_port()
    assert f"127.0.0.1:{port}: no server can be reached" in refused(
        "stages", "--plugin", "uc1", "--bootstrap-servers", f"127.0.0.1:{port}", "--results", str(tmp_path / "s"))


def test_a_kafka_error_while_stages_run_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from aiokafka.errors import KafkaConnectionError

    def unreachable(*args: Any, **kwargs: Any) -> Any:
        raise KafkaConnectionError("Unable to bootstrap from [('k', 1)]")

    monkeypatch.setattr("bench.stages.pipeline.run_stages", unreachable)
    monkeypatch.setattr("bench.stages.commands.check_inputs", lambda *a: (None, {}))
    line = refused("stages", "--plugin", "uc1", "--bootstrap-servers", "k:1", "--results", str(tmp_path / "s"))
    assert "Kafka: KafkaConnectionError: Unable to bootstrap" in line
    shutil.rmtree(tmp_path, ignore_errors=True)


@pytest.mark.parametrize(("content", "message"), [
    (b"load,resources\n", "holds no rows"),
    ("load,resources\n100,1\n".encode("utf-16"), "is UTF-16"),
])
def test_run_expect_checks_its_table_before_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     content: bytes, message: str) -> None:
    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the run was prepared although --expect is unusable")

    monkeypatch.setattr("bench.cli.launch.prepare_run", forbidden)
    table = tmp_path / "exp0_demand.csv"
    table.write_bytes(content)
    assert message in refused("run", "--plugin", "uc1", "--expect", str(table))


def test_stages_parameter_beyond_any_run(no_start: None, tmp_path: Path) -> None:
    assert "--set windowSizeMs=1e30: must be at most 1e+12" in refused(
        "stages", "--plugin", "uc3", "--set", "windowSizeMs=1e30", "--results", str(tmp_path / "s"))
