"""An Execution file names its benchmark, as the reference's do: `bench run --execution
e.yaml` runs it without --plugin, and a reference benchmark name that bench runs under
another name says which."""

from __future__ import annotations

from pathlib import Path

from bench.cli.commands import cli
from click.testing import CliRunner

EXECUTION = """apiVersion: theodolite.rocks/v1beta1
kind: execution
metadata: {{name: e}}
spec:
  benchmark: {benchmark}
  load: {{loadType: NumSensors, loadValues: [25000]}}
  resources: {{resourceType: Instances, resourceValues: [2]}}
  slos: []
  execution:
    strategy: {{name: RestrictionSearch, restrictions: [LowerBound], searchStrategy: LinearSearch}}
    duration: 300
    repetitions: 1
"""


def test_run_takes_the_use_case_from_the_execution_file(tmp_path: Path) -> None:
    path = tmp_path / "e.yaml"
    path.write_text(EXECUTION.format(benchmark="uc1"))
    result = CliRunner().invoke(cli, ["run", "--execution", str(path), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "# load=25000 resources=2" in result.output and "kind: BenchSut" in result.output


def test_a_reference_benchmark_name_points_to_the_bench_use_case(tmp_path: Path) -> None:
    path = tmp_path / "e.yaml"
    path.write_text(EXECUTION.format(benchmark="uc3-flink"))
    for args in (["validate", str(path)], ["run", "--execution", str(path), "--dry-run"]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
        assert "'uc3-flink' names another implementation of uc3" in result.output and "name uc3" in result.output


def test_without_plugin_or_files_the_message_says_what_is_needed() -> None:
    result = CliRunner().invoke(cli, ["run"])
    assert result.exit_code == 2 and "needs --plugin NAME" in result.output
