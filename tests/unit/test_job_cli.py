"""``bench run --job``, ``--record-template`` and ``--conf`` up to the prepared run
(nothing started): the use case chosen, the parameters they become, the one-line errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bench.cli.commands import cli
from bench.cli.launch import resolve_run
from bench.config.base import ConfigError
from bench.plugins import load_plugins
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "own_job.py"


def _resolve(**opts: Any) -> Any:
    return resolve_run(load_plugins(), {"loads": "1000", "resources": "1", **opts})


def test_job_runs_the_job_use_case_with_the_script_and_template(tmp_path: Path) -> None:
    template = tmp_path / "t.json"
    template.write_text('{"device": "{key}", "ts": {timestamp}, "watts": 3.5}')
    prepared = _resolve(job=str(EXAMPLE), record_template=str(template))
    assert prepared.use_case.name == "job"
    assert prepared.params["job"] == str(EXAMPLE)
    assert prepared.params["recordTemplate"] == '{"device": "{key}", "ts": {timestamp}, "watts": 3.5}'
    assert [t.name for t in prepared.benchmark.kafkaConfig.topics] == ["input", "output"]
    assert [s.name for s in prepared.benchmark.slos] == ["lag-trend"]


@pytest.mark.parametrize(
    ("opts", "message"),
    [
        ({"job": str(EXAMPLE), "plugin": "uc1"}, "--job and --plugin exclude each other"),
        ({}, r"bench run needs --plugin NAME .* or --job PATH\.py"),
        ({"plugin": "uc1", "record_template": "t.json"}, "--record-template needs --job"),
        ({"job": "nope.py"}, "--job nope.py: no such file"),
        ({"plugin": "uc1", "spark_conf": ["spark.x=1"], "platform_name": "kubernetes", "spark_master": "spark://h:1"},
         "--spark-master: the kubernetes platform"),
    ],
)
def test_job_options_refused_in_one_line(opts: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        _resolve(**opts)
    assert "\n" not in str(info.value)


def test_conf_reaches_the_platform_options_as_strings() -> None:
    prepared = _resolve(plugin="uc1", spark_conf=["spark.sql.shuffle.partitions=8", "spark.executor.memory = 2g"])
    assert prepared.platform_options["spark_conf"] == {"spark.sql.shuffle.partitions": "8",
                                                       "spark.executor.memory": "2g"}
    assert not _resolve(plugin="uc1").platform_options["spark_conf"]


@pytest.mark.parametrize(
    ("item", "message"),
    [("spark.x", "--conf 'spark.x': the embedded platform takes KEY=VALUE"), ("=1", "takes KEY=VALUE"),
     ("foo.bar=1", "start with 'spark.'")],
)
def test_bad_conf_is_refused(item: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _resolve(plugin="uc1", spark_conf=[item])


def test_cli_refuses_a_broken_script_before_anything_starts(tmp_path: Path) -> None:
    script = tmp_path / "broken.py"
    script.write_text("spark = (\n")
    result = CliRunner().invoke(cli, ["run", "--job", str(script), "--results", str(tmp_path / "r")])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "--job" in lines[0] and "broken.py: line 1" in lines[0], result.output


def test_docs_page_shows_the_example_script_as_it_is() -> None:
    page = (ROOT / "docs" / "own-job.md").read_text()
    assert "```python\n" + EXAMPLE.read_text() + "```" in page
    for name in ("BENCH_BOOTSTRAP_SERVERS", "BENCH_INPUT_TOPIC", "BENCH_OUTPUT_TOPIC", "startTimeoutS", "readTimeoutS"):
        assert name in page
