"""Options of ``bench``'s other commands change what they print or write.

Why: an option that parses but changes nothing is a setting accepted and ignored
(tests/unit/test_no_inert_setting.py points here).
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from bench import __version__
from bench.cli.commands import cli
from bench.plugins import load_plugins
from click.testing import CliRunner

from tests.unit.test_analyze import cli_group, make_run


def test_version_prints_benchs_version() -> None:
    out = CliRunner().invoke(cli, ["--version"])
    assert out.exit_code == 0 and __version__ in out.output


def test_analyze_confidence_sets_the_width_of_the_slope_intervals(tmp_path: Path) -> None:
    make_run(tmp_path, 0, [2000], [1, 2], reps=3)
    widths = {}
    for confidence in ("0.5", "0.99"):
        out = CliRunner().invoke(cli_group(), ["analyze", str(tmp_path), "--warmup", "60", "--confidence", confidence,
                                               "--output", str(tmp_path / f"a{confidence}.csv")])
        assert out.exit_code == 0, out.output
        doc = json.loads((tmp_path / f"a{confidence}.json").read_text())
        assert doc["settings"]["confidence"] == float(confidence)
        intervals = [e["confidence"] for e in doc["experiments"] if e["confidence"]]
        widths[confidence] = [c["high"] - c["low"] for c in intervals]
    assert widths["0.5"] and all(a < b for a, b in zip(widths["0.5"], widths["0.99"], strict=True))


def test_report_output_and_confidence_shape_the_page(tmp_path: Path) -> None:
    make_run(tmp_path, 0, [2000], [1, 2], reps=3)
    for confidence in ("0.5", "0.99"):
        page = tmp_path / f"r{confidence}.html"
        out = CliRunner().invoke(cli_group(), ["report", str(tmp_path), "--output", str(page),
                                               "--confidence", confidence])
        assert out.exit_code == 0, out.output
        assert f"{float(confidence) * 100:g}%" in page.read_text()


def test_validate_benchmark_checks_the_execution_against_that_benchmark(tmp_path: Path) -> None:
    doc = load_plugins().use_cases["uc1"].default_benchmark()
    doc["name"] = "my-bench"
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(doc))
    (tmp_path / "e.yaml").write_text(yaml.safe_dump({"benchmark": "my-bench", "load": {"loadType": "NumSensors",
                                                     "loadValues": [100]}, "resources": {"resourceType": "Instances",
                                                     "resourceValues": [1]}, "execution": {"duration": 60}}))
    without = CliRunner().invoke(cli, ["validate", str(tmp_path / "e.yaml")])
    given = CliRunner().invoke(cli, ["validate", str(tmp_path / "e.yaml"), "--benchmark", str(tmp_path / "b.yaml")])
    assert given.exit_code == 0, given.output
    assert without.exit_code == 2 and "my-bench" in without.output
