"""A run over two load dimensions on a simulated platform: the calibrated use case's
capacity model over keys and message period, exact at every grid point, in fewer
experiments than grid size x resources; the grid's files; the cost function."""

from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path

import pytest
from bench.analysis.grid_report import collapse, compare_grids, cost_of, format_grid, report_section
from bench.api import ExperimentSpec, Sample
from bench.builtin.calibrated import CALIBRATED, default_benchmark, model_demand
from bench.config.base import ConfigError
from bench.config.model import parse_benchmark, parse_execution, validate_execution
from bench.errors import UserError
from bench.execution.config import RunConfig
from bench.execution.grid_run import GridEngine, check_grid_options
from bench.plugins import load_plugins
from bench.results.grid import GridTable, grid_file, read_grid
from bench.runtime.calibrated_sut import instance_capacity

from .fakes import FakePlatform

KEYS = [250, 500, 1000, 2000]
PERIODS = [500, 1000]
RESOURCES = [1, 2, 3, 4, 5, 6, 7, 8]
CAPACITY, KEY_COST = 1000.0, 0.0005


class KeyCostPlatform(FakePlatform):
    """The fake's lag model with the calibrated SUT's own capacity rule (cost per key)."""

    async def sample(self, spec: ExperimentSpec) -> Sample:
        sut = next(o for o in spec.objects if o["kind"] == "BenchSut")
        per_instance = instance_capacity({"params": sut["spec"]["params"] | spec.params})
        self.calls.append(f"cap={per_instance}")
        return await self._sample_at(spec, per_instance)

    async def _sample_at(self, spec: ExperimentSpec, per_instance: float) -> Sample:
        saved = dict(spec.params)
        spec.params["capacity"] = per_instance  # the fake reads the group's capacity from here
        try:
            return await super().sample(spec)
        finally:
            spec.params.clear()
            spec.params.update(saved)


class SimClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += max(0.0, seconds)


@pytest.fixture(scope="module")
def registry():  # type: ignore[no-untyped-def]
    return load_plugins()


def _execution(**extra):  # type: ignore[no-untyped-def]
    return parse_execution({
        "benchmark": "calibrated",
        "load": {"loadType": "NumSensors", "loadValues": KEYS},
        "loads2": {"loadType": "MessagePeriod", "loadValues": PERIODS},
        "resources": {"resourceType": "Instances", "resourceValues": RESOURCES},
        "execution": {"duration": 60, "warmup": 10, "repetitions": 1, "afterTeardownDelay": 0, "sampleInterval": 5},
        **extra,
    })


async def _grid_run(registry, tmp_path: Path):  # type: ignore[no-untyped-def]
    bench = parse_benchmark(default_benchmark())
    execution = _execution()
    validate_execution(execution, bench, registry)
    cfg = RunConfig(use_case=CALIBRATED, benchmark=bench, execution=execution, results_dir=tmp_path,
                    params={"capacity": CAPACITY, "keyCost": KEY_COST})
    clock = SimClock()
    platform = KeyCostPlatform()
    platform.now = clock
    outcome = await GridEngine(registry, cfg, platform, clock=clock, sleep=clock.sleep).run()
    return outcome, platform


async def test_the_grid_equals_the_capacity_model_at_every_point(registry, tmp_path: Path) -> None:
    outcome, platform = await _grid_run(registry, tmp_path)
    grid = outcome.grid
    for keys, period in itertools.product(KEYS, PERIODS):
        expected = model_demand(keys, period, CAPACITY, KEY_COST)
        assert grid.demand[(keys, period)] == (expected if expected <= RESOURCES[-1] else None), (keys, period)
    # the model is not a function of records/s alone: 1,000 keys every 500 ms and 2,000 every 1,000 ms are the
    # same records/s, with different demands
    assert (grid.demand[(1000, 500)], grid.demand[(2000, 1000)]) == (3, 4)
    assert len(platform.experiments) == grid.experiments < len(KEYS) * len(PERIODS) * len(RESOURCES)
    assert grid.experiments < len(KEYS) * len(PERIODS) * len(RESOURCES) / 2


async def test_the_grid_files_and_each_slice_in_the_reference_format(registry, tmp_path: Path) -> None:
    outcome, _ = await _grid_run(registry, tmp_path)
    gid = outcome.exp_id
    stored = read_grid(tmp_path / f"exp{gid}_grid.json")
    assert stored.demand == outcome.grid.demand and stored.experiments == outcome.grid.experiments
    assert grid_file(tmp_path) == tmp_path / f"exp{gid}_grid.json"
    rows = list(csv.reader(open(tmp_path / f"exp{gid}_grid.csv")))
    assert rows[0] == ["load", "load2", "resources", "note"] and len(rows) == 1 + len(KEYS) * len(PERIODS)
    for period, slice_id in outcome.grid.slices.items():
        named = list(csv.reader(open(tmp_path / f"exp{gid}_demand_MessagePeriod-{period:g}.csv")))
        own = list(csv.reader(open(tmp_path / f"exp{slice_id}_demand.csv")))
        assert named == own and named[0][:2] == ["load", "resources"]
        config = json.loads((tmp_path / f"exp{slice_id}-execution-configuration.json").read_text())
        assert "load2" not in config and config["configOverrides"][-1]["value"] == period
    assert "load2" in json.loads((tmp_path / f"exp{gid}-execution-configuration.json").read_text())
    text = format_grid(outcome.grid, gid)
    assert "NumSensors \\ MessagePeriod" in text and f"{outcome.grid.experiments} experiment(s)" in text
    html = report_section(outcome.grid, gid)
    assert html.count("<rect") >= len(KEYS) * len(PERIODS) and "<polyline" in html


def _grid(demand: dict[tuple[float, float], float | None]) -> GridTable:
    loads = sorted({a for a, _ in demand})
    loads2 = sorted({b for _, b in demand})
    return GridTable("A", "B", loads, loads2, [1.0, 2.0, 3.0, 4.0], dict(demand))


def test_a_grid_that_depends_on_the_product_collapses_onto_the_cost() -> None:
    grid = _grid({(a, b): float(min(4, a * b)) for a, b in itertools.product([1, 2], [1, 2])})
    result = collapse(grid, "L1*L2")
    assert result.share == 1.0 and result.spearman == pytest.approx(1.0)
    assert result.curve == {1.0: 1.0, 2.0: 2.0, 4.0: 4.0}
    wrong = collapse(grid, "L1/L2")
    assert wrong.share < 1.0 and wrong.off


def test_the_cost_expression_is_checked() -> None:
    assert cost_of("L1*1000/L2", 500, 250) == 2000
    for bad in ("L3*2", "import os", "L1*", "x"):
        with pytest.raises(UserError, match="--cost"):
            cost_of(bad, 1, 1)


def test_comparing_grids_point_by_point() -> None:
    old = _grid({(1, 1): 1.0, (2, 1): 2.0, (1, 2): 2.0, (2, 2): 3.0})
    new = _grid({(1, 1): 1.0, (2, 1): 2.0, (1, 2): 2.0, (2, 2): 4.0})
    code, text = compare_grids(old, new, "old", "new")
    assert code == 3 and "B=2" in text and "REGRESSION" in text
    assert compare_grids(new, old, "new", "old")[0] == 0


def test_what_a_grid_cannot_do_is_refused(registry) -> None:  # type: ignore[no-untyped-def]
    bench = parse_benchmark(default_benchmark())
    with pytest.raises(ConfigError, match="load2.loadType"):
        validate_execution(_execution(loads2={"loadType": "NumSensors", "loadValues": [1]}), bench, registry)
    with pytest.raises(ConfigError, match="metric"):
        validate_execution(_execution(execution={"metric": "capacity"}), bench, registry)
    with pytest.raises(ConfigError, match="--predict"):
        check_grid_options(_execution(), predict=True, resume=False, strategy="bracket")
    with pytest.raises(ConfigError, match="strategy"):
        check_grid_options(_execution(), predict=False, resume=False, strategy="linear")


async def test_analyze_compare_and_report_read_grids(registry, tmp_path: Path) -> None:
    from bench.cli.commands import cli
    from click.testing import CliRunner

    await _grid_run(registry, tmp_path / "a")
    await _grid_run(registry, tmp_path / "b")
    runner = CliRunner()
    same = runner.invoke(cli, ["compare", str(tmp_path / "a"), str(tmp_path / "b")])
    assert same.exit_code == 0 and "MessagePeriod=500" in same.output and "no regression" in same.output, same.output
    # a grid whose heaviest point needs more: a regression at that point
    worse = tmp_path / "b" / "exp0_grid.json"
    doc = json.loads(worse.read_text())
    for point in doc["points"]:
        if (point["load"], point["load2"]) == (1000, 500):
            point["resources"], point["note"] = 4, ""
    worse.write_text(json.dumps(doc))
    regressed = runner.invoke(cli, ["compare", str(tmp_path / "a"), str(worse)])
    assert regressed.exit_code == 3 and "REGRESSION" in regressed.output, regressed.output
    one_dim = runner.invoke(cli, ["compare", str(tmp_path / "a"), str(tmp_path / "a" / "exp1_demand.csv")])
    assert one_dim.exit_code == 2 and "not a grid" in one_dim.output, one_dim.output
    analysed = runner.invoke(cli, ["analyze", str(tmp_path / "a")])
    assert analysed.exit_code == 0, analysed.output
    assert "NumSensors \\ MessagePeriod" in analysed.output and analysed.output.count("written:") == 2
    out = tmp_path / "report.html"
    reported = runner.invoke(cli, ["report", str(tmp_path / "a"), "-o", str(out)])
    assert reported.exit_code == 0, reported.output
    html = out.read_text()
    assert "grid exp0: NumSensors x MessagePeriod" in html and html.count("<rect") > 8


def test_run_expect_compares_a_grid_run_with_a_grid(registry, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    import bench.cli.grid
    import bench.cli.launch
    from bench.cli.commands import cli
    from bench.execution.grid_run import GridOutcome
    from click.testing import CliRunner

    first, _ = asyncio.run(_grid_run(registry, tmp_path / "old"))
    better = GridTable(**{**first.grid.__dict__, "demand": dict(first.grid.demand)})
    worse = GridTable(**{**first.grid.__dict__, "demand": {k: (v or 0) + 1 for k, v in first.grid.demand.items()},
                         "notes": {}})

    class Prepared:
        execution = _execution()
        benchmark = parse_benchmark(default_benchmark())

    monkeypatch.setattr(bench.cli.launch, "prepare_run", lambda registry, opts: Prepared())
    for grid, code in ((better, 0), (worse, 3)):
        async def run_grid(registry: object, prepared: object, opts: object, progress: object,
                           grid: GridTable = grid) -> GridOutcome:
            return GridOutcome(9, grid, [], tmp_path, [tmp_path / "exp9_grid.json"])

        monkeypatch.setattr(bench.cli.grid, "run_grid_benchmark", run_grid)
        result = CliRunner().invoke(cli, ["run", "--plugin", "calibrated", "--expect", str(tmp_path / "old"),
                                          "--cost", "L1*1000/L2"])
        assert result.exit_code == code, result.output
        assert "demand (exp9, grid)" in result.output and "Spearman" in result.output
    table = CliRunner().invoke(cli, ["run", "--plugin", "calibrated", "--expect",
                                     str(tmp_path / "old" / "exp1_demand.csv")])
    assert table.exit_code == 2 and "a grid run is compared with a grid" in table.output, table.output
