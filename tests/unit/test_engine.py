"""The engine end to end on a fake platform: search, SLOs, result files, resume."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bench.config.base import ConfigError, StrategyDef
from bench.config.model import parse_benchmark, parse_execution
from bench.errors import UserError
from bench.execution.config import RunConfig
from bench.execution.run import Engine
from bench.plugins import load_plugins
from bench.results.store import read_series

from .fakes import FAKE_USE_CASE, FakePlatform, fake_benchmark


@pytest.fixture(scope="module")
def registry():  # type: ignore[no-untyped-def]
    reg = load_plugins()
    reg.use_cases["fake"] = FAKE_USE_CASE
    return reg


class SimClock:
    """Simulated time: sleeping advances the clock instantly."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += max(0.0, seconds)


def engine(registry, cfg: RunConfig, platform: FakePlatform) -> Engine:  # type: ignore[no-untyped-def]
    clock = SimClock()
    platform.now = clock
    return Engine(registry, cfg, platform, clock=clock, sleep=clock.sleep)


def _config(tmp_path: Path, loads: list[float], resources: list[float], **ex: Any) -> RunConfig:
    bench = parse_benchmark(fake_benchmark())
    execution = parse_execution(
        {
            "benchmark": "fake",
            "load": {"loadType": "NumSensors", "loadValues": loads},
            "resources": {"resourceType": "Instances", "resourceValues": resources},
            # the experiment orders these tests expect are the reference's linear walk; the
            # default (bracket) has its own tests below, with no strategy written
            "execution": {"duration": 60, "warmup": 10, "repetitions": 2, "afterTeardownDelay": 0, "sampleInterval": 5,
                          "strategy": {"name": "linear"}, **ex},
        }
    )
    return RunConfig(use_case=FAKE_USE_CASE, benchmark=bench, execution=execution, results_dir=tmp_path)


@pytest.mark.parametrize("capacity", [1000, 700])
async def test_demand_is_ceil_load_over_capacity(registry, tmp_path: Path, capacity: int) -> None:
    cfg = _config(tmp_path, [1500, 2500, 3500], [1, 2, 3, 4, 5, 6])
    cfg.params = {"capacity": capacity}
    platform = FakePlatform()
    outcome = await engine(registry, cfg, platform).run()
    expected = {load: math.ceil(load / capacity) for load in (1500, 2500, 3500)}
    assert outcome.table == {k: float(v) for k, v in expected.items()}
    # linear search with lower bound never goes below the previous demand
    loads_run = [e for e in platform.experiments]
    assert all(r >= expected[1500] for load, r in loads_run if load > 1500)
    assert platform.closed


async def test_result_files_have_reference_names_and_columns(registry, tmp_path: Path) -> None:
    cfg = _config(tmp_path, [1500], [1, 2])
    outcome = await engine(registry, cfg, FakePlatform()).run()
    exp = outcome.exp_id
    names = {p.name for p in tmp_path.iterdir()}
    for rep in (0, 1):
        assert f"exp{exp}_1500_1_sli_lag-trend_{rep}.csv" in names
        assert f"exp{exp}_1500_2_sli_lag-trend_{rep}.csv" in names
    assert {f"exp{exp}_demand.csv", f"exp{exp}-execution-configuration.json",
            f"exp{exp}-benchmark-configuration.json", f"exp{exp}-result.json"} <= names
    rows = list(csv.reader(open(tmp_path / f"exp{exp}_demand.csv")))
    assert rows == [["load", "resources"], ["1500", "2"]]
    assert (outcome.duration, outcome.warmup) == (60.0, 10.0)  # what the note on short experiments needs
    series = read_series(tmp_path / f"exp{exp}_1500_1_sli_lag-trend_0.csv")
    assert len(series.values) >= 4 and set(np.diff(series.timestamps)) == {5.0}  # the sampleInterval grid
    assert series.values[-1] > series.values[0]  # 1 instance falls behind 1500/s
    result = json.loads((tmp_path / f"exp{exp}-result.json").read_text())
    slopes = result["experiments"][0]["slos"]["lag-trend"]["slopes"]
    assert slopes[0] == pytest.approx(500.0, rel=1e-6)
    assert not any(p.name.endswith(".tmp") for p in tmp_path.iterdir())


async def test_capacity_metric(registry, tmp_path: Path) -> None:
    cfg = _config(tmp_path, [500, 1000, 1500, 2000, 2500], [1, 2], metric="capacity")
    outcome = await engine(registry, cfg, FakePlatform()).run()
    assert outcome.table == {1.0: 1000.0, 2.0: 2000.0}
    rows = list(csv.reader(open(tmp_path / f"exp{outcome.exp_id}_capacity.csv")))
    assert rows[0] == ["resource", "loads"]


class Killed(BaseException):
    """Stands for a kill -9 or Ctrl-C: not an Exception, so no retry catches it."""


async def test_crash_keeps_results_and_resume_continues_at_the_first_unfinished_repetition(
    registry, tmp_path: Path
) -> None:
    cfg = _config(tmp_path, [1500, 2500], [1, 2, 3])
    # SUT starts: (1500,1) x2, (1500,2) x2, (2500,2) rep 0 = 5th, rep 1 = 6th: killed mid-way
    crashing = FakePlatform(faults={6: Killed()})
    with pytest.raises(Killed):
        await engine(registry, cfg, crashing).run()
    assert crashing.closed
    assert list(dict.fromkeys(crashing.experiments)) == [(1500, 1), (1500, 2), (2500, 2)]
    finished = {p.name: p.read_bytes() for p in tmp_path.glob("exp0_*_*_*_*.*")}
    assert "exp0_2500_2_sli_lag-trend_0.csv" in finished and "exp0_2500_2_generator_0.json" in finished
    assert "exp0_2500_2_sli_lag-trend_1.csv" not in finished
    assert len([n for n in finished if "_sli_" in n]) == 5  # 2 + 2 finished experiments' + 1 repetition
    rows = list(csv.reader(open(tmp_path / "exp0_demand.provisional.csv")))
    assert ["1500", "2"] in rows
    assert not (tmp_path / "exp0_demand.csv").exists()  # no final table from an unfinished run

    cfg.resume = True
    again = FakePlatform()
    outcome = await engine(registry, cfg, again).run()
    assert outcome.exp_id == 0
    assert again.experiments == [(2500, 2), (2500, 3), (2500, 3)]  # rep 1 of (2500,2) only, then on
    assert outcome.table == {1500.0: 2.0, 2500.0: 3.0}
    assert {name: (tmp_path / name).read_bytes() for name in finished} == finished
    verdicts = {(r.load, r.resources): r.slos["lag-trend"]["slopes"] for r in outcome.records}
    assert len(verdicts[(2500.0, 2.0)]) == 2  # the verdict uses the repetition read back, too
    assert (tmp_path / "exp0_demand.csv").exists() and not (tmp_path / "exp0_demand.provisional.csv").exists()
    assert json.loads((tmp_path / "exp0-result.json").read_text())["complete"] is True


async def test_a_fault_is_retried_and_the_experiment_gets_its_verdict(registry, tmp_path: Path) -> None:
    cfg = _config(tmp_path, [1500], [2])
    platform = FakePlatform(faults={1: RuntimeError("SUT spark-driver exited during the experiment (-9)")})
    outcome = await engine(registry, cfg, platform).run()
    (record,) = outcome.records
    assert (record.outcome, record.passed, record.cause) == ("passed", True, None)
    assert record.faults == [{"repetition": 0, "attempt": 1,
                              "cause": "RuntimeError: SUT spark-driver exited during the experiment (-9)"}]
    assert platform.experiments == [(1500, 2)] * 3  # one attempt more than the two repetitions
    assert "stop_sut" in platform.calls[:6] and "delete" in platform.calls[:6]  # the failed attempt was torn down
    assert outcome.errors == []


@pytest.mark.parametrize("retries", [0, 2])
async def test_a_persistent_fault_makes_the_experiment_an_error_and_the_run_goes_on(
    registry, tmp_path: Path, retries: int
) -> None:
    cfg = _config(tmp_path, [1500, 2500], [1, 2, 3])
    cfg.retries = retries
    broken = {3 + i: RuntimeError("broker died") for i in range(retries + 1)}  # (1500,2) rep 0, every attempt
    platform = FakePlatform(faults=broken)
    outcome = await engine(registry, cfg, platform).run()
    by_key = {(r.load, r.resources): r for r in outcome.records}
    error = by_key[(1500.0, 2.0)]
    assert (error.outcome, error.passed) == ("error", False)
    assert error.cause == f"repetition 1: RuntimeError: broker died ({retries + 1} attempt{'s' if retries else ''})"
    assert len(error.faults) == retries + 1
    assert by_key[(1500.0, 3.0)].outcome == "passed"  # the search treated the error as not passed
    assert outcome.table[1500.0] == 3.0
    assert [r.outcome for r in outcome.errors] == ["error"]
    stored = json.loads((tmp_path / f"exp{outcome.exp_id}-result.json").read_text())
    assert {(e["load"], e["resources"]): (e["outcome"], e["cause"]) for e in stored["experiments"]}[
        (1500.0, 2.0)] == ("error", error.cause)
    assert {e["outcome"] for e in stored["experiments"]} <= {"passed", "failed", "error"}


async def test_generator_shortfall_is_retried_and_never_passes(registry, tmp_path: Path) -> None:
    cfg = _config(tmp_path, [1500], [2])
    outcome = await engine(registry, cfg, FakePlatform(behind=0.05)).run()
    (record,) = outcome.records
    assert (record.outcome, record.passed) == ("error", False)
    assert "generator achieved 1425 of 1500 records/s" in str(record.cause)
    assert outcome.table == {1500.0: None}
    assert not list(tmp_path.glob("exp0_1500_2_sli_*"))  # a short load's series are not a measurement


async def test_one_short_repetition_is_run_again(registry, tmp_path: Path) -> None:
    cfg = _config(tmp_path, [1500], [2])
    outcome = await engine(registry, cfg, FakePlatform(behind=0.05, behind_at={2})).run()
    (record,) = outcome.records
    assert record.outcome == "passed"
    assert [f["repetition"] for f in record.faults] == [1]
    assert [g["repetition"] for g in record.generators] == [0, 1]


@pytest.mark.parametrize("error", [TypeError("bug"), ConfigError("windowSizeMs: not a number")])
async def test_a_bug_or_a_configuration_error_is_not_retried(registry, tmp_path: Path, error: Exception) -> None:
    cfg = _config(tmp_path, [1500], [2])
    platform = FakePlatform(faults={1: error})
    with pytest.raises(type(error)):
        await engine(registry, cfg, platform).run()
    assert platform.experiments == [(1500, 2)]


async def test_a_platform_error_meant_for_the_user_is_still_a_fault(registry, tmp_path: Path) -> None:
    """The CLI shows platform errors as one line (UserError), yet a died SUT is a fault to retry."""
    cfg = _config(tmp_path, [1500], [2])
    outcome = await engine(registry, cfg, FakePlatform(faults={1: UserError("SUT sut-0 exited")})).run()
    assert outcome.records[0].outcome == "passed"
    assert outcome.records[0].faults[0]["cause"] == "UserError: SUT sut-0 exited"


async def test_resume_retries_an_experiment_that_ended_in_error(registry, tmp_path: Path) -> None:
    cfg = _config(tmp_path, [1500], [2])
    first = await engine(registry, cfg, FakePlatform(faults={2: RuntimeError("x"), 3: RuntimeError("x")})).run()
    assert first.records[0].outcome == "error"
    rep0 = (tmp_path / "exp0_1500_2_sli_lag-trend_0.csv").read_bytes()
    cfg.resume = True
    again = FakePlatform()
    outcome = await engine(registry, cfg, again).run()
    assert again.experiments == [(1500, 2)]  # only the repetition that never succeeded
    assert outcome.records[0].outcome == "passed"
    assert (tmp_path / "exp0_1500_2_sli_lag-trend_0.csv").read_bytes() == rep0


async def test_next_run_gets_next_id(registry, tmp_path: Path) -> None:
    first = await engine(registry, _config(tmp_path, [1500], [2]), FakePlatform()).run()
    second = await engine(registry, _config(tmp_path, [1500], [2]), FakePlatform()).run()
    assert (first.exp_id, second.exp_id) == (0, 1)


async def test_plots_are_written(registry, tmp_path: Path) -> None:
    from bench.results.plots import make_plots

    cfg = _config(tmp_path, [1500], [1, 2])
    outcome = await engine(registry, cfg, FakePlatform()).run()
    paths = make_plots(outcome, cfg.benchmark)
    names = {p.name for p in paths}
    assert f"exp{outcome.exp_id}_demand.png" in names
    assert f"exp{outcome.exp_id}_1500_1_lag-trend.png" in names
    assert all(p.stat().st_size > 1000 for p in paths)


async def _with_and_without_early_stop(registry, tmp_path: Path, **ex: Any):  # type: ignore[no-untyped-def]
    """(reference outcome, its platform, early-stopping outcome, its platform): loads 1500
    on 1 and 2 instances, which fail and pass; both must give the same verdicts."""
    full, early = FakePlatform(), FakePlatform()
    ref = await engine(registry, _config(tmp_path / "ref", [1500], [1, 2], earlyStop=False, **ex), full).run()
    fast = await engine(registry, _config(tmp_path / "early", [1500], [1, 2], earlyStop=True, **ex), early).run()
    assert fast.table == ref.table == {1500.0: 2.0}
    assert [r.passed for r in fast.records] == [r.passed for r in ref.records] == [False, True]
    assert not any(r.early_stopped for r in ref.records)
    return ref, full, fast, early


async def test_early_stop_ends_decided_repetitions_with_the_same_verdicts(registry, tmp_path: Path) -> None:
    _, full, fast, early = await _with_and_without_early_stop(registry, tmp_path, duration=300)
    assert all(r.early_stopped for r in fast.records)

    def samples(platform: FakePlatform) -> int:
        return round((platform.clock - 1_700_000_000.0) / platform.interval)

    assert samples(full) == 2 * 2 * 61  # 2 experiments x 2 repetitions x (0, 5, ..., 300 s)
    assert samples(early) < samples(full) / 2
    stored = json.loads((tmp_path / "early" / f"exp{fast.exp_id}-result.json").read_text())
    assert [e["early_stopped"] for e in stored["experiments"]] == [True, True]  # users see it too


async def test_an_experiment_that_goes_on_says_which_slo_keeps_it_open(registry, tmp_path: Path) -> None:
    """After one passing repetition of three the median is still open, and the progress
    line names the SLO that keeps it open, instead of leaving a user to wonder why the
    next repetition runs; after two it is settled."""
    lines: list[str] = []
    cfg = _config(tmp_path, [500], [1], earlyStop=True, repetitions=3)
    platform, clock = FakePlatform(), SimClock()
    platform.now = clock
    outcome = await Engine(registry, cfg, platform, progress=lambda msg, *_: lines.append(msg), clock=clock,
                           sleep=clock.sleep).run()
    assert platform.experiments == [(500, 1)] * 2
    assert outcome.table == {500.0: 1.0}
    assert [x for x in lines if "settled" in x] == [
        "load=500 resources=1: not settled after 1 of 3 repetitions: the rest could still change lag-trend",
        "load=500 resources=1: pass settled after 2 of 3 repetitions; skipping the rest",
    ]


async def test_early_stop_skips_repetitions_that_cannot_change_the_verdict(registry, tmp_path: Path) -> None:
    """Three repetitions: once two agree, the median is settled whatever the third shows."""
    _, full, fast, early = await _with_and_without_early_stop(registry, tmp_path, repetitions=3)
    assert full.experiments == [(1500, 1)] * 3 + [(1500, 2)] * 3
    assert early.experiments == [(1500, 1)] * 2 + [(1500, 2)] * 2
    assert [len(r.slos["lag-trend"]["slopes"]) for r in fast.records] == [2, 2]


async def test_an_slo_judged_with_another_threshold_than_its_benchmarks_is_named(registry, tmp_path: Path) -> None:
    """The outcome carries the line ``bench run`` prints under the table (UC4's default
    execution judges at 5 % of the rate); the same run without the override has none."""
    cfg = _config(tmp_path, [1500], [2])
    cfg.params = {"capacity": 1000}
    assert (await engine(registry, cfg, FakePlatform()).run()).slo_notes == []
    name = cfg.benchmark.slos[0].name
    cfg.execution = parse_execution({**cfg.execution.model_dump(), "slos": [
        {"name": name, "properties": {"thresholdRelToRate": 0.05}}]})
    outcome = await engine(registry, cfg, FakePlatform()).run()
    (note,) = outcome.slo_notes
    assert f"SLO {name} judged with thresholdRelToRate=0.05" in note, note
    assert cfg.benchmark.slos[0].properties.get("thresholdRelToRate") != 0.05  # the benchmark as written


async def test_after_teardown_delay_falls_between_attempts_not_after_the_last(registry, tmp_path: Path) -> None:
    """The delay lets one experiment's resources settle before the next starts; after
    the run's last attempt nothing starts, and a run waited for nothing."""
    cfg = _config(tmp_path, [1500, 2500], [1, 2, 3], afterTeardownDelay=7, repetitions=1)
    cfg.params = {"capacity": 1000}
    clock, platform = SimClock(), FakePlatform()
    platform.now = clock
    delays: list[float] = []

    async def sleep(seconds: float) -> None:
        if seconds == 7:
            delays.append(seconds)
        await clock.sleep(seconds)

    outcome = await Engine(registry, cfg, platform, clock=clock, sleep=sleep).run()
    assert outcome.table == {1500.0: 2.0, 2500.0: 3.0}
    assert len(platform.experiments) >= 3 and len(delays) == len(platform.experiments) - 1


class DroppingPlatform(FakePlatform):
    """A SUT that keeps up with a noisy lag (its trend takes long to decide) and drops no
    records (decided as soon as the counting rule has its samples)."""

    def __init__(self) -> None:
        super().__init__()
        self.rng = np.random.default_rng(5)
        self.samples_per_rep: list[int] = []

    async def start_sut(self, spec: Any) -> None:
        await super().start_sut(spec)
        self.samples_per_rep.append(0)

    async def sample(self, spec: Any) -> Any:
        sample = await super().sample(spec)
        self.samples_per_rep[-1] += 1
        sample.values["lag"] = 5_000.0 + float(self.rng.normal(0.0, 3_000.0))
        sample.values["dropped-records"] = 0.0
        return sample


async def test_a_repetition_waits_only_for_the_slos_the_earlier_ones_left_open(registry, tmp_path: Path) -> None:
    """Two passing lag trends of three fix the median: the third repetition is run for
    the SLO judged by its worst repetition (dropped records) and ends once that is
    decided, instead of waiting for a lag trend that can no longer change anything."""
    bench = fake_benchmark()
    bench["slos"] = [*bench["slos"], {"name": "dropped-records", "sloType": "dropped-records", "properties": {}}]
    outcomes, platforms, lines = [], [], []
    for early in (False, True):
        cfg = _config(tmp_path / str(early), [500], [1], earlyStop=early, repetitions=3, duration=300,
                      earlySampleInterval=0)
        cfg.benchmark = parse_benchmark(bench)
        platform, clock = DroppingPlatform(), SimClock()
        platform.now = clock
        outcomes.append(await Engine(registry, cfg, platform, progress=lambda msg, *_: lines.append(msg),
                                     clock=clock, sleep=clock.sleep).run())
        platforms.append(platform)
    full, fast = outcomes
    assert fast.table == full.table == {500.0: 1.0}
    assert [r.passed for r in fast.records] == [r.passed for r in full.records] == [True]
    first, second, third = platforms[1].samples_per_rep
    assert third < min(first, second) < platforms[0].samples_per_rep[0]
    assert "load=500 resources=1 rep 3/3: dropped-records decided early" in " ".join(lines)
    assert "rep 1/3: lag-trend, dropped-records decided early" in " ".join(lines)


def _default_search(cfg: RunConfig) -> RunConfig:
    """``cfg`` with no strategy written: bench's default, bracket."""
    cfg.execution.execution.strategy = StrategyDef()
    return cfg


async def test_the_default_search_measures_the_heaviest_load_first_and_infers_the_rest(
    registry, tmp_path: Path
) -> None:
    """bracket on the real engine: the same table as linear, the heaviest load walked first,
    and every entry no experiment measured marked inferred in the CSV and the result JSON
    (1,500 lies between 1,100 and 1,900, which both need 2)."""
    loads = [1100, 1500, 1900, 2500, 3500]
    capacity = 1000
    cfg = _default_search(_config(tmp_path, loads, [1, 2, 3, 4, 5, 6]))
    cfg.params = {"capacity": capacity}
    platform = FakePlatform()
    outcome = await engine(registry, cfg, platform).run()
    expected = {float(load): float(math.ceil(load / capacity)) for load in loads}
    assert outcome.table == expected
    assert platform.experiments[0] == (3500, 1)
    measured = {load for load, _ in platform.experiments}
    inferred = {k for k, note in outcome.notes.items() if "inferred" in note}
    assert inferred and inferred == set(expected) - {float(x) for x in measured}
    rows = list(csv.reader(open(tmp_path / f"exp{outcome.exp_id}_demand.csv")))
    assert rows[0] == ["load", "resources", "note"]
    stored = json.loads((tmp_path / f"exp{outcome.exp_id}-result.json").read_text())["table"]
    assert {r["key"] for r in stored if r["inferred"]} == inferred


async def test_a_flat_table_takes_one_experiment_under_the_default_search(registry, tmp_path: Path) -> None:
    cfg = _default_search(_config(tmp_path, [500, 800], [1, 2, 3]))
    cfg.params = {"capacity": 1000}
    platform = FakePlatform()
    outcome = await engine(registry, cfg, platform).run()
    assert outcome.table == {500.0: 1.0, 800.0: 1.0}
    assert sorted(set(platform.experiments)) == [(800, 1)]
    assert outcome.notes == {500.0: "inferred"}
