"""The soak script's pure parts (benchmarks/soak.py): the grid it asks for, where its faults
fall, how it reads set-up time, memory growth and what is left behind, and its goal line.
The soak itself runs in tests/e2e/test_soak.py (quick mode) and by hand (full mode)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest
from bench.config.model import parse_execution

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def soak() -> ModuleType:
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    return importlib.import_module("soak")


def test_the_grid_gives_at_least_the_experiments_asked(soak: ModuleType) -> None:
    for wanted in (1, 8, 199, 200, 201):
        loads = soak.grid(wanted)
        assert wanted <= len(loads) * 2 < wanted + 2
        assert len(set(loads)) == len(loads) and loads == sorted(loads)
    assert len(soak.grid(200)) * 2 == 200


def test_the_execution_measures_every_pair_once_without_delay(soak: ModuleType) -> None:
    doc = soak.execution_doc([100, 110], [1, 2], 4.0, 1.0, 0.5)
    execution = parse_execution(doc)  # a valid execution file, as bench reads it
    # every pair, also past a failure: no lower bound from a lighter load's demand
    assert execution.execution.strategy.resolved() == ("full", False)
    assert execution.execution.afterTeardownDelay == 0 and execution.execution.repetitions == 1
    assert execution.execution.earlyStop is False


def test_the_faults_fall_on_distinct_experiments_after_the_first_and_cover_every_kind(soak: ModuleType) -> None:
    plan = soak.fault_plan(200, 15, seed=3)
    at = [index for index, _ in plan]
    assert len(plan) == 15 and len(set(at)) == 15 and min(at) >= 1 and max(at) < 200 and at == sorted(at)
    assert {kind for _, kind in plan} == set(soak.FAULT_KINDS)
    assert plan == soak.fault_plan(200, 15, seed=3)  # a seed repeats the run's faults
    assert plan != soak.fault_plan(200, 15, seed=4)
    assert len(soak.fault_plan(8, 2, seed=69)) == 2
    assert len(soak.fault_plan(3, 10, seed=1)) == 2  # never more faults than experiments after the first


def test_set_up_time_is_wall_time_minus_duration_of_clean_experiments_in_order(soak: ModuleType) -> None:
    experiments = [
        {"started": 20.0, "finished": 26.5, "faults": []},
        {"started": 10.0, "finished": 15.0, "faults": []},
        {"started": 30.0, "finished": 45.0, "faults": [{"repetition": 0, "attempt": 1, "cause": "killed"}]},
        {"started": 50.0, "finished": 0.0},  # never finished: no figure
    ]
    assert soak.setup_times(experiments, duration=4.0) == [1.0, 2.5]


def test_first_and_last_medians(soak: ModuleType) -> None:
    values = [1.0] * 10 + [5.0] * 30 + [2.0] * 10
    assert soak.first_last_medians(values) == (1.0, 2.0)
    assert soak.first_last_medians([1.0, 3.0, 2.0, 4.0], k=10) == (2.0, 3.0)  # halves when short
    assert soak.first_last_medians([7.0]) == (7.0, 7.0)


def test_rss_at_takes_the_last_sample_before_the_moment(soak: ModuleType) -> None:
    """At an experiment's end: what the run holds, not what follows it (the final plots)."""
    samples = [(1.0, 100), (2.0, 110), (3.0, 120)]
    assert soak.rss_at(samples, 1.5) == 100 and soak.rss_at(samples, 2.0) == 110
    assert soak.rss_at(samples, 0.5) is None and soak.rss_at(samples, 9.0) == 120
    assert soak.tenths([float(i) for i in range(1, 21)]) == [float(i) for i in range(2, 21, 2)]
    assert soak.tenths([5.0]) == [5.0] * 10 and soak.tenths([]) == []
    assert soak.growth_pct(100, 104) == pytest.approx(4.0)


def test_internal_topics_are_not_left_behind(soak: ModuleType) -> None:
    assert soak.leftover_topics(["__consumer_offsets", "input-e0-ab-3", "_schemas"]) == ["input-e0-ab-3"]


def test_the_goal_line(soak: ModuleType) -> None:
    good = soak.Report(8, experiments_recorded=8, rss_first_kb=90_000, rss_warm_kb=100_000, rss_end_kb=104_000,
                       setup_start_s=1.0, setup_end_s=1.3, exit_code=0)
    assert all(good.goals().values()) and good.lost == 0
    assert "goal: memory growth < 5 % yes, nothing left behind yes, nothing lost yes, set-up time flat yes" \
        in good.lines()
    bad = soak.Report(8, experiments_recorded=7, rss_warm_kb=100_000, rss_end_kb=106_000, setup_start_s=1.0,
                      setup_end_s=2.0, exit_code=0, topics_left=["input-e0-x-1"])
    assert bad.lost == 1
    assert not any(bad.goals().values())
    assert "topics ['input-e0-x-1']" in "\n".join(bad.lines())
    assert not soak.Report(8, experiments_recorded=8, exit_code=1).goals()["nothing lost"]


def test_the_accounting_finds_what_is_left_and_lost(soak: ModuleType, tmp_path: Path) -> None:
    run = soak.Soak(8, 2, seed=1, duration=4.0, warmup=1.0, sample_interval=0.5, pause_s=1.0, cpu_per_instance=0.5)
    run.rss = [(10.0, 100_000), (20.0, 101_000), (30.0, 102_000), (99.0, 103_000)]
    (tmp_path / "bench-123-abc").mkdir()
    experiments = [{"load": 100 + 10 * i, "resources": 1, "started": 5.0 + 5 * i, "finished": 10.0 + 5 * i,
                    "faults": [], "outcome": "passed"} for i in range(6)]
    experiments.append({"load": 100, "resources": 1, "started": 50.0, "finished": 55.0, "faults": [],
                        "outcome": "error"})  # the same pair again: one experiment, not two
    report = soak.Report(run.planned)
    run._account(report, experiments, pid=2**22 + 1, tmp=tmp_path)
    assert report.experiments_recorded == 6 and report.lost == 2 and report.errors == 1
    assert report.temp_left == ["bench-123-abc"] and report.processes_left == [] and report.cgroups_left == []
    assert (report.rss_first_kb, report.rss_warm_kb, report.rss_end_kb) == (100_000, 100_000, 102_000)
    assert len(report.rss_trend_kb) == 10 and report.rss_trend_kb[-1] == 102_000
    assert report.setup_start_s == pytest.approx(1.0)


def test_experiments_run_are_read_from_the_progress_lines(soak: ModuleType) -> None:
    log = ("15:23:00 load=100 resources=1 rep 1/1: starting (topics, SUT)\n"
           "15:23:18 !! load=100 resources=2 rep 1/1: PlatformError: killed; running it again\n"
           "15:23:19 load=100 resources=2 rep 1/1: starting (topics, SUT)\n"
           "15:23:29 load=100 resources=2 rep 1/1: starting (topics, SUT)\n"
           "15:23:41 load=110 resources=1: FAIL [lag-trend: aggregate=9]\n"
           "15:23:47 load=110 resources=2: PASS [lag-trend: aggregate=1.099 threshold=1,000,000]\n")
    assert soak.experiments_started(log) == 4
    report = soak.Report(6, experiments_recorded=2, experiments_run=3, exit_code=0)
    assert report.lost == 1
