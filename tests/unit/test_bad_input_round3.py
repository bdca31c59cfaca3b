"""Bad input, third round (issue 69): the kinds of input a new user gives that the
second round did not name. Every case ends in a non-zero exit and one line naming the
value and where it came from, with no traceback, and nothing is started or reserved
(every platform factory raises; the results folder is not even created)."""

from __future__ import annotations

import json
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
