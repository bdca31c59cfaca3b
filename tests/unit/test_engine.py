"""The engine end to end on a fake platform: search, SLOs, result files, resume."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import pytest
from bench.engine import Engine, RunConfig
from bench.model import parse_benchmark, parse_execution
from bench.plugins import load_plugins
from bench.results import read_series

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
    return Engine(registry, cfg, platform, clock=clock, sleep=clock.sleep)


def _config(tmp_path: Path, loads: list[float], resources: list[float], **ex: Any) -> RunConfig:
    bench = parse_benchmark(fake_benchmark())
    execution = parse_execution(
        {
            "benchmark": "fake",
            "load": {"loadType": "NumSensors", "loadValues": loads},
            "resources": {"resourceType": "Instances", "resourceValues": resources},
            "execution": {"duration": 60, "warmup": 10, "repetitions": 2, "afterTeardownDelay": 0, "sampleInterval": 5,
                          **ex},
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
    series = read_series(tmp_path / f"exp{exp}_1500_1_sli_lag-trend_0.csv")
    assert len(series.values) >= 12
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


async def test_crash_keeps_results_and_resume_skips_them(registry, tmp_path: Path) -> None:
    cfg = _config(tmp_path, [1500, 2500], [1, 2, 3])
    failing = FakePlatform(fail_at=5)  # 5th SUT start: 3rd experiment's first repetition
    with pytest.raises(RuntimeError):
        await engine(registry, cfg, failing).run()
    assert failing.closed
    assert list(dict.fromkeys(failing.experiments)) == [(1500, 1), (1500, 2), (2500, 2)]
    exp_files = sorted(p.name for p in tmp_path.glob("exp0_1500_*_sli_*.csv"))
    assert len(exp_files) == 4  # two experiments x two repetitions survived the crash
    rows = list(csv.reader(open(tmp_path / "exp0_demand.csv")))
    assert ["1500", "2"] in rows

    cfg.resume = True
    again = FakePlatform()
    outcome = await engine(registry, cfg, again).run()
    assert outcome.exp_id == 0
    assert (1500, 1) not in again.experiments and (1500, 2) not in again.experiments
    assert outcome.table == {1500.0: 2.0, 2500.0: 3.0}


async def test_generator_shortfall_marks_invalid_not_failed(registry, tmp_path: Path) -> None:
    cfg = _config(tmp_path, [1500], [2])
    outcome = await engine(registry, cfg, FakePlatform(behind=0.05)).run()
    (record,) = outcome.records
    assert record.passed is True
    assert record.valid is False


async def test_next_run_gets_next_id(registry, tmp_path: Path) -> None:
    first = await engine(registry, _config(tmp_path, [1500], [2]), FakePlatform()).run()
    second = await engine(registry, _config(tmp_path, [1500], [2]), FakePlatform()).run()
    assert (first.exp_id, second.exp_id) == (0, 1)


async def test_plots_are_written(registry, tmp_path: Path) -> None:
    from bench.plots import make_plots

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


async def test_early_stop_skips_repetitions_that_cannot_change_the_verdict(registry, tmp_path: Path) -> None:
    """Three repetitions: once two agree, the median is settled whatever the third shows."""
    _, full, fast, early = await _with_and_without_early_stop(registry, tmp_path, repetitions=3)
    assert full.experiments == [(1500, 1)] * 3 + [(1500, 2)] * 3
    assert early.experiments == [(1500, 1)] * 2 + [(1500, 2)] * 2
    assert [len(r.slos["lag-trend"]["slopes"]) for r in fast.records] == [2, 2]
