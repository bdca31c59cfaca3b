"""Prediction: a probe at saturation predicts the table, the search starts there (bench.search.prediction).

The fake platform's instances each process 1,000 records/s, so the probe must find
that rate and the prediction the exact demand; the verdict runs choose verdicts that
contradict the probe, so a wrong prediction must still give the measured table.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench.analysis.report import build_report
from bench.analysis.runs import open_run
from bench.api import Series
from bench.config.model import parse_benchmark, parse_execution
from bench.execution.config import RunConfig
from bench.execution.run import Engine
from bench.plugins import Registry
from bench.search import prediction

from tests.unit import verdict_runs
from tests.unit.fakes import FAKE_USE_CASE, FakePlatform, fake_benchmark
from tests.unit.test_engine import SimClock

LOADS = [4500.0, 6500.0]  # NumSensors x 1000 / periodMs(1000): records/s
RESOURCES = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]


def config(folder: Path, predict: bool, metric: str = "demand", loads: list[float] | None = None,
           resources: list[float] | None = None, strategy: str = "linear") -> RunConfig:
    execution = parse_execution({
        "benchmark": "fake", "load": {"loadType": "NumSensors", "loadValues": loads or LOADS},
        "resources": {"resourceType": "Instances", "resourceValues": resources or RESOURCES},
        "execution": {"metric": metric, "duration": 120, "warmup": 10, "repetitions": 1, "afterTeardownDelay": 0,
                      "sampleInterval": 5, "earlyStop": False,
                      "strategy": {"name": strategy, "restrictions": ["LowerBound"]}},
    })
    return RunConfig(use_case=FAKE_USE_CASE, benchmark=parse_benchmark(fake_benchmark()), execution=execution,
                     results_dir=folder, retries=0, predict=predict)


async def run(registry: Registry, cfg: RunConfig, platform: FakePlatform) -> tuple[object, FakePlatform]:
    clock = SimClock()
    outcome = await Engine(registry, cfg, platform, clock=clock, sleep=clock.sleep).run()
    return outcome, platform


@pytest.fixture(scope="module")
def registry() -> Registry:
    return verdict_runs.registry()


async def test_the_probe_predicts_the_demand_and_the_search_confirms_it_in_fewer_experiments(
        registry: Registry, tmp_path: Path) -> None:
    linear, linear_platform = await run(registry, config(tmp_path / "linear", False), FakePlatform())
    predicted, predicted_platform = await run(registry, config(tmp_path / "predicted", True), FakePlatform())
    assert linear.table == predicted.table == {4500.0: 5.0, 6500.0: 7.0}  # type: ignore[attr-defined]
    p = predicted.prediction  # type: ignore[attr-defined]
    assert p is not None and p.probe.saturated
    assert p.probe.per_instance_rate == pytest.approx(1000.0, rel=0.01)
    assert p.predicted == {4500.0: 5.0, 6500.0: 7.0} and all(p.hits.values())
    # the probe (heaviest load, fewest resources) plus the prediction and its lower neighbour per load
    assert predicted_platform.experiments == [(6500.0, 1.0), (4500.0, 5.0), (4500.0, 4.0), (6500.0, 7.0),
                                              (6500.0, 6.0)]
    assert len(linear_platform.experiments) == 8
    stored = json.loads((tmp_path / "predicted" / f"exp{predicted.exp_id}-prediction.json").read_text())  # type: ignore[attr-defined]
    assert stored["hitRate"] == 1.0
    assert [(e["key"], e["predicted"], e["measured"], e["hit"]) for e in stored["entries"]] == [
        (4500.0, 5.0, 5.0, True), (6500.0, 7.0, 7.0, True)]
    html = build_report([open_run(tmp_path / "predicted"), open_run(tmp_path / "linear")])
    assert '<th class="">predicted</th>' in html and "4,500: 5, 6,500: 7; right 2 of 2" in html


async def test_a_wrong_prediction_costs_experiments_not_a_wrong_table(registry: Registry, tmp_path: Path) -> None:
    """Verdicts that contradict the probe: the probe saturates hard (one instance processes
    1,500 of 6,500 records/s), so 4,500 is predicted on 3 and 6,500 beyond the resources;
    the walk down measures the truth."""
    outcomes = {(6500.0, 1.0): "failed", (4500.0, 2.0): "passed", (4500.0, 3.0): "passed",
                (6500.0, 3.0): "passed"}
    cfg = config(tmp_path, True, resources=[1.0, 2.0, 3.0])
    clock = SimClock()
    platform = verdict_runs.VerdictPlatform(outcomes, growth=5_000.0)
    outcome = await Engine(registry, cfg, platform, clock=clock, sleep=clock.sleep).run()
    assert outcome.table == {4500.0: 2.0, 6500.0: 3.0}
    assert outcome.prediction is not None
    assert outcome.prediction.predicted == {4500.0: 3.0, 6500.0: None}
    assert outcome.prediction.hits == {4500.0: False, 6500.0: False}
    assert "6,500: none (wrong); right 0 of 2" in build_report([open_run(tmp_path)])


async def test_capacity_is_predicted_per_resource_amount(registry: Registry, tmp_path: Path) -> None:
    cfg = config(tmp_path, True, metric="capacity", loads=[1000.0, 2000.0, 3000.0, 4000.0], resources=[1.0, 2.0, 3.0])
    outcome, _ = await run(registry, cfg, FakePlatform())
    assert outcome.table == {1.0: 1000.0, 2.0: 2000.0, 3.0: 3000.0}  # type: ignore[attr-defined]
    assert outcome.prediction.predicted == outcome.table  # type: ignore[attr-defined]


def test_demand_follows_records_per_second_not_load_values() -> None:
    """A decreasing load type (a message period): the rates, not the values, set the demand."""
    rates = {100.0: 10_000.0, 200.0: 5_000.0, 400.0: 2_500.0}
    assert prediction.predict_demand(rates, [1.0, 2.0, 4.0, 8.0, 16.0], 1000.0) == {100.0: 16.0, 200.0: 8.0,
                                                                                   400.0: 4.0}
    assert prediction.predict_demand(rates, [1.0, 2.0], 1000.0) == {100.0: None, 200.0: None, 400.0: None}
    assert prediction.guesses({100.0: 2.0, 200.0: None}, [1.0, 2.0, 4.0]) == {100.0: 1, 200.0: 2}


def test_an_unsaturated_probe_is_a_lower_bound() -> None:
    t = [float(i) for i in range(0, 61, 5)]
    flat = prediction.measure(Series(t, [100.0] * len(t)), 10.0, 1000.0, 1.0, 1000.0)
    assert not flat.saturated and flat.per_instance_rate == 1000.0
    growing = prediction.measure(Series(t, [500.0 * x for x in t]), 10.0, 1000.0, 2.0, 1000.0)
    assert growing.saturated and growing.per_instance_rate == pytest.approx(250.0)


async def test_the_printed_table_shows_the_prediction_and_the_cli_takes_the_flag(
        registry: Registry, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bench.cli.commands import cli
    from bench.cli.output import print_table
    from click.testing import CliRunner

    outcome, _ = await run(registry, config(tmp_path, True), FakePlatform())
    print_table(outcome)  # type: ignore[arg-type]
    out = capsys.readouterr().out
    assert "predicted (1,000 records/s per instance): 4500: 5, 6500: 7; right 2 of 2 (100%)" in out
    assert "--predict" in CliRunner().invoke(cli, ["run", "--help"]).output


def test_a_load_at_a_whole_number_of_instances_is_predicted_there() -> None:
    """The calibrated SUT's 1,000 records/s per instance measured as 997:
    2,000 records/s is two instances' worth, not three."""
    rates = {1000.0: 1000.0, 2000.0: 2000.0, 2100.0: 2100.0}
    assert prediction.predict_demand(rates, [1.0, 2.0, 3.0, 4.0], 997.0) == {1000.0: 1.0, 2000.0: 2.0, 2100.0: 3.0}
    assert prediction.predict_capacity(rates, [1.0, 2.0], 997.0) == {1.0: 1000.0, 2.0: 2000.0}


def test_fractional_resource_values_are_not_rounded_up_to_whole_instances() -> None:
    """Cores per instance: 1,000 records/s per core; 375 records/s needs 0.5, not 1."""
    assert prediction.predict_demand({1.0: 375.0, 2.0: 800.0}, [0.25, 0.5, 1.0, 2.0], 1000.0) == {1.0: 0.5,
                                                                                                  2.0: 1.0}


async def test_an_entry_the_lower_bound_skipped_is_not_counted_as_right(registry: Registry, tmp_path: Path) -> None:
    """No resource passes 4,500 records/s, so 6,500 is never measured: its predicted
    'none' was not checked and must not count as a hit."""
    outcomes = {(4500.0, 1.0): "failed", (4500.0, 2.0): "failed", (6500.0, 1.0): "failed"}
    cfg = config(tmp_path, True, resources=[1.0, 2.0])
    clock = SimClock()
    outcome = await Engine(registry, cfg, verdict_runs.VerdictPlatform(outcomes, growth=5_000.0), clock=clock,
                           sleep=clock.sleep).run()
    assert outcome.table == {4500.0: None, 6500.0: None}
    assert outcome.prediction is not None
    assert outcome.prediction.hits == {4500.0: True}
    assert "6500: none (not measured)" in prediction.describe(outcome.prediction)
    stored = json.loads((tmp_path / f"exp{outcome.exp_id}-prediction.json").read_text())
    assert [(e["key"], e["measured"], e["hit"]) for e in stored["entries"]] == [(4500.0, None, True),
                                                                               (6500.0, None, None)]
    assert "4,500: none, 6,500: none (not measured); right 1 of 1" in build_report([open_run(tmp_path)])


async def test_a_replaced_search_strategy_is_named_in_the_progress(registry: Registry, tmp_path: Path) -> None:
    """The configuration asks for linear; the prediction walks as initial-guess and says so."""
    lines: list[str] = []
    clock = SimClock()
    await Engine(registry, config(tmp_path, True), FakePlatform(), lambda m, _t=False: lines.append(m), clock=clock,
                 sleep=clock.sleep).run()
    assert any("walking as initial-guess (in place of linear" in line for line in lines)


def test_the_probe_counts_what_the_generators_wrote_not_what_the_load_asks() -> None:
    """The load asks for 4,000 records/s; the generators managed 3,000 and the lag grew by
    1,000/s: one instance processed 2,000, not the 3,000 the asked-for rate would say."""
    t = [float(i) for i in range(0, 61, 5)]
    lag = Series(t, [1000.0 * x for x in t])
    generated = Series(t, [3000.0 * x for x in t])
    probe = prediction.measure(lag, 10.0, 4000.0, 1.0, 4000.0, generated)
    assert probe.input_rate == pytest.approx(3000.0)
    assert probe.per_instance_rate == pytest.approx(2000.0)
    assert prediction.generator_behind(probe)
    line = prediction.describe(prediction.Prediction("demand", probe, {4000.0: 2.0}))
    assert "its generators wrote 3,000 of the load's 4,000 records/s" in line
    assert prediction.measure(lag, 10.0, 4000.0, 1.0, 4000.0).per_instance_rate == pytest.approx(3000.0)


async def test_resume_predicts_from_the_interrupted_runs_probe(registry: Registry, tmp_path: Path) -> None:
    """The probe is measured once: killed after it, the resumed run reads it back from
    exp<id>-prediction.json and runs only the experiments still missing."""
    from tests.unit.test_engine import Killed

    first = FakePlatform(faults={3: Killed()})  # the probe, 4,500 on 5, then killed at 4,500 on 4
    with pytest.raises(Killed):
        await run(registry, config(tmp_path, True), first)
    assert first.experiments[:2] == [(6500.0, 1.0), (4500.0, 5.0)]
    stored = json.loads((tmp_path / "exp0-prediction.json").read_text())
    assert stored["probe"]["per_instance_rate"] == pytest.approx(1000.0, rel=0.01) and stored["hitRate"] is None
    cfg = config(tmp_path, True)
    cfg.resume = True
    outcome, again = await run(registry, cfg, FakePlatform())
    assert again.experiments == [(4500.0, 4.0), (6500.0, 7.0), (6500.0, 6.0)]  # no second probe
    assert outcome.table == {4500.0: 5.0, 6500.0: 7.0}  # type: ignore[attr-defined]
    assert outcome.prediction.hits == {4500.0: True, 6500.0: True}  # type: ignore[attr-defined]


def test_a_broken_stored_probe_is_probed_again() -> None:
    assert prediction.stored_probe(None) is None
    assert prediction.stored_probe({"probe": {"load": 1.0}}) is None
    good = {"load": 1.0, "resources": 1.0, "load_rate": 10.0, "lag_slope": 5.0, "per_instance_rate": 5.0,
            "saturated": True, "seconds": 30.0}
    assert prediction.stored_probe({"probe": good}) is not None
    assert prediction.stored_probe({"probe": {**good, "per_instance_rate": "fast"}}) is None
    assert prediction.stored_probe({"probe": {**good, "saturated": "yes"}}) is None


async def test_a_resume_without_the_flag_still_fills_in_what_was_measured(registry: Registry,
                                                                          tmp_path: Path) -> None:
    from tests.unit.test_engine import Killed

    with pytest.raises(Killed):
        await run(registry, config(tmp_path, True), FakePlatform(faults={3: Killed()}))
    cfg = config(tmp_path, False)
    cfg.resume = True
    outcome, _ = await run(registry, cfg, FakePlatform())
    assert outcome.table == {4500.0: 5.0, 6500.0: 7.0}  # type: ignore[attr-defined]
    stored = json.loads((tmp_path / "exp0-prediction.json").read_text())
    assert [(e["key"], e["measured"], e["hit"]) for e in stored["entries"]] == [(4500.0, 5.0, True),
                                                                               (6500.0, 7.0, True)]


async def test_the_default_search_starts_each_walk_at_the_prediction(registry: Registry, tmp_path: Path) -> None:
    """bracket with --predict: its order (the heaviest load first) and bounds, each walk
    from the prediction; the same experiments as the predicted walk here, and the progress
    says which search ran."""
    lines: list[str] = []
    clock = SimClock()
    platform = FakePlatform()
    outcome = await Engine(registry, config(tmp_path, True, strategy="bracket"), platform,
                           lambda m, _t=False: lines.append(m), clock=clock, sleep=clock.sleep).run()
    assert outcome.table == {4500.0: 5.0, 6500.0: 7.0}
    assert platform.experiments == [(6500.0, 1.0), (6500.0, 7.0), (6500.0, 6.0), (4500.0, 5.0), (4500.0, 4.0)]
    assert any("search: bracket, each walk starting at the prediction" in line for line in lines)
    assert outcome.prediction is not None and outcome.prediction.hits == {4500.0: True, 6500.0: True}


async def test_with_the_prediction_a_flat_table_is_the_probe_and_one_experiment(
        registry: Registry, tmp_path: Path) -> None:
    """1,000 and 1,500 records/s within one instance of 2,000: the heaviest load is measured
    on 1, the lighter one inferred; its predicted entry is "not measured", neither right
    nor wrong."""
    cfg = config(tmp_path, True, loads=[1000.0, 1500.0], resources=[1.0, 2.0, 3.0], strategy="bracket")
    cfg.params = {"capacity": 2000}
    platform = FakePlatform()
    clock = SimClock()
    outcome = await Engine(registry, cfg, platform, clock=clock, sleep=clock.sleep).run()
    assert outcome.table == {1000.0: 1.0, 1500.0: 1.0}
    assert outcome.notes == {1000.0: "inferred"}
    assert platform.experiments == [(1500.0, 1.0), (1500.0, 1.0)]  # the probe, then the one experiment
    assert outcome.prediction is not None and outcome.prediction.hits == {1500.0: True}
