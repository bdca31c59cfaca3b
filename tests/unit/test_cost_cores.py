"""Cost and scaling efficiency count the cores an instance really had (issue 22, item 1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bench.analysis.report import build_report
from bench.analysis.runs import open_run
from bench.analysis.scaling import scaling_rows
from bench.config.model import parse_benchmark, parse_execution
from bench.execution.config import RunConfig
from bench.execution.deployment import instance_cores
from bench.execution.run import Engine
from bench.plugins import load_plugins

from tests.unit.fakes import FAKE_USE_CASE, FakePlatform, fake_benchmark
from tests.unit.test_engine import SimClock
from tests.unit.test_report import make_report_run


@pytest.mark.parametrize(("objects", "cores"), [
    ([{"kind": "BenchSut", "spec": {"cpuPerInstance": 0.25}}], 0.25),
    ([{"kind": "BenchSut", "spec": {"cpuPerInstance": 0.5, "coresPerInstance": 2}}], 1.0),
    ([{"kind": "BenchSut", "spec": {"coresPerInstance": 3}}], 3.0),
    ([{"kind": "SparkApplication", "spec": {"executor": {"cores": 2}}}], 2.0),
    ([{"kind": "SparkApplication", "spec": {"executor": {"cores": 2, "coreLimit": "500m"}}}], 0.5),
    ([{"kind": "Deployment", "spec": {"template": {"spec": {"containers": [
        {"name": "w", "resources": {"limits": {"cpu": "1500m"}}}]}}}}], 1.5),
    ([{"kind": "BenchGenerator", "spec": {"cpuPerInstance": 4}}], None),
])
def test_instance_cores_reads_the_deployment(objects: list[dict[str, Any]], cores: float | None) -> None:
    assert instance_cores(objects) == cores


def test_a_limit_the_platform_could_not_apply_does_not_count() -> None:
    assert instance_cores([{"kind": "BenchSut", "spec": {"cpuPerInstance": 0.25}}], limit_applied=False) == 1.0


async def test_the_engine_records_a_quarter_core_instance(tmp_path: Path) -> None:
    registry = load_plugins()
    registry.use_cases["fake"] = FAKE_USE_CASE
    execution = parse_execution({
        "benchmark": "fake",
        "load": {"loadType": "NumSensors", "loadValues": [1000]},
        "resources": {"resourceType": "Instances", "resourceValues": [2]},
        "execution": {"duration": 30, "warmup": 5, "repetitions": 1, "afterTeardownDelay": 0, "sampleInterval": 5},
    })
    cfg = RunConfig(use_case=FAKE_USE_CASE, benchmark=parse_benchmark(fake_benchmark()), execution=execution,
                    results_dir=tmp_path, params={"capacity": 5000, "sut.cpuPerInstance": 0.25})
    clock = SimClock()
    outcome = await Engine(registry, cfg, FakePlatform(), clock=clock, sleep=clock.sleep).run()
    assert outcome.records[0].cores_per_instance == 0.25
    doc = json.loads((tmp_path / f"exp{outcome.exp_id}-result.json").read_text())
    assert doc["experiments"][0]["cores_per_instance"] == 0.25
    rows = scaling_rows(open_run(tmp_path), outcome.table)
    # 2 instances x 0.25 cores for 1000 records/s: 500 core-seconds per million records
    assert rows[0].core_seconds_per_million == pytest.approx(500.0)


def _set_cores(folder: Path, exp_id: int, cores: dict[tuple[float, float], float]) -> None:
    path = folder / f"exp{exp_id}-result.json"
    doc = json.loads(path.read_text())
    for e in doc["experiments"]:
        e["cores_per_instance"] = cores.get((e["load"], e["resources"]))
    path.write_text(json.dumps(doc))


def test_cost_and_efficiency_use_the_recorded_cores(tmp_path: Path) -> None:
    make_report_run(tmp_path, 0, capacity=1000, seed=1)
    _set_cores(tmp_path, 0, {(1000, 1): 0.25, (2000, 2): 0.25, (3000, 3): 0.5})
    rows = scaling_rows(open_run(tmp_path), {1000.0: 1.0, 2000.0: 2.0, 3000.0: 3.0})
    assert [r.core_seconds_per_million for r in rows] == pytest.approx([250.0, 250.0, 500.0])
    # 3 x throughput for 6 x the cores (3 instances of half a core against 1 of a quarter)
    assert rows[2].efficiency == pytest.approx(0.5)
    html = build_report([open_run(tmp_path)])
    assert ">0.25</td>" in html and ">250</td>" in html


def test_a_run_without_recorded_cores_says_one_core_is_assumed(tmp_path: Path) -> None:
    make_report_run(tmp_path, 0, capacity=1000, seed=1)
    rows = scaling_rows(open_run(tmp_path), {1000.0: 1.0})
    assert (rows[0].cores_per_instance, rows[0].cores_source) == (1.0, "assumed")
    assert "one core is assumed" in build_report([open_run(tmp_path)])


def _old_run(folder: Path, cpu_limit: dict[str, Any] | None) -> None:
    """A run stored before experiments recorded their cores: the benchmark's BenchSut and
    the environment's CPU limit record say what an instance had."""
    make_report_run(folder, 0, capacity=1000, seed=1)
    path = folder / "exp0-benchmark-configuration.json"
    doc = json.loads(path.read_text())
    doc["sut"] = {"resources": [{"kind": "BenchSut", "metadata": {"name": "sut"}, "spec": {"cpuPerInstance": 0.25}}]}
    path.write_text(json.dumps(doc))
    env = folder / "exp0-environment.json"
    env.write_text(json.dumps({**json.loads(env.read_text()), "cpuLimit": cpu_limit}))


def test_a_run_without_recorded_cores_takes_them_from_its_configuration(tmp_path: Path) -> None:
    _old_run(tmp_path / "a", {"applied": True, "cpuPerInstance": 0.25, "cgroupVersion": 2})
    rows = scaling_rows(open_run(tmp_path / "a"), {1000.0: 1.0})
    assert (rows[0].cores_per_instance, rows[0].cores_source) == (0.25, "configuration")
    assert rows[0].core_seconds_per_million == pytest.approx(250.0)
    _old_run(tmp_path / "b", {"applied": False, "cpuPerInstance": 0.25, "reason": "no cgroup"})
    rows = scaling_rows(open_run(tmp_path / "b"), {1000.0: 1.0})
    assert rows[0].cores_per_instance == 1.0  # the limit did not apply: the instance had its core
