"""Each use case's default execution, as ``bench run --plugin NAME`` builds it, is a short
job that shows scaling (issue 27).

The execution is the one :func:`bench.cli.launch.prepare_run` makes from the plugin name
alone: ``LAPTOP_EXECUTION`` under the benchmark's ``defaultExecution``, read from the
registry, so these tests follow whatever the defaults are. They check that

* it is valid: ``prepare_run`` with only ``--plugin NAME`` succeeds;
* it has at least two loads and two resource values (a table that can show scaling);
* its worst case fits 8 minutes (the experiments counted by :func:`worst_case_experiments`,
  the seconds by :func:`per_experiment_s`);
* for ``calibrated``, whose per-instance capacity is a parameter, its loads straddle
  that capacity exactly: the lowest load needs the lowest resource value, the highest
  needs more, and the highest resource value is enough for it;
* for the Spark use cases, one instance has a CPU limit (``cpuPerInstance``): without
  it one instance uses every core and no load needs a second one on one machine.

Whether one instance of a Spark use case falls behind at its highest default load
depends on the machine (on a fast 2-core machine none did): the full
default runs recorded in docs/measurements-log.md say it per machine, and
tests/e2e/test_default_executions.py checks on the real parts that the CPU limit holds
the SUT there.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

import pytest
from bench.api import SearchProblem
from bench.cli.launch import PreparedRun, prepare_run
from bench.config.base import Execution
from bench.execution.deployment import build_objects, merged_params
from bench.execution.experiments import _OVERHEAD_S
from bench.patchers.apply import find_kind, load_rate

USE_CASES = ("calibrated", "uc1", "uc2", "uc3", "uc4")
SPARK_USE_CASES = ("uc1", "uc2", "uc3", "uc4")
#: the default job of every use case, worst case included
BUDGET_S = 8 * 60


def default_run(registry: Any, name: str) -> PreparedRun:
    """What ``bench run --plugin NAME`` prepares, with nothing else given (the caller
    chooses the working directory, where the default results folder is checked)."""
    return prepare_run(registry, {"plugin": name})


def records_per_second(registry: Any, prepared: PreparedRun, load: float) -> float:
    """The records/s a load value asks of the generators, as the engine computes it
    (``ExperimentRunner.rate_of``: the deployment at the smallest resource value)."""
    ex = prepared.execution
    objects = build_objects(registry, prepared.benchmark, ex, prepared.params, load, ex.resources.resourceValues[0])
    return load_rate(objects, load)


def load_rates(registry: Any, prepared: PreparedRun) -> list[float]:
    """records/s of each default load value, in the execution's order."""
    return [records_per_second(registry, prepared, load) for load in prepared.execution.load.loadValues]


def worst_case_experiments(registry: Any, ex: Execution) -> int:
    """The most SLO experiments the default search can run (each of ``repetitions``).

    Counted by running the configured strategy itself over every monotone demand table
    whose lightest load passes on the fewest resources, as every use case's defaults are
    chosen ("the lowest load within what one instance sustains"; for calibrated its loads
    straddle the capacity, checked below). Linear search with the lower bound then runs
    at most ``resources + loads - 1`` experiments; bracket (the default) as many for two
    loads: the heaviest load walks all resource values, the lightest passes on the first.
    A table whose lightest load needs more runs more under bracket (it walks the
    lightest load up again): such defaults would show no scaling and are not these.
    """
    loads, resources = list(ex.load.loadValues), list(ex.resources.resourceValues)
    name, lower_bound = ex.execution.strategy.resolved()
    strategy = registry.search_strategies[name]
    worst = 0
    # demand index per load, nondecreasing, len(resources) meaning "passes nowhere"
    for frontier in itertools.combinations_with_replacement(range(len(resources) + 1), len(loads) - 1):
        demand = dict(zip(loads, (0, *frontier), strict=True))
        ran: set[tuple[float, float]] = set()

        async def run(load: float, res: float, demand: dict[float, int] = demand,
                      ran: set[tuple[float, float]] = ran) -> bool:
            ran.add((load, res))
            return resources.index(res) >= demand[load]

        problem = SearchProblem(loads, resources, run, metric="demand", lower_bound=lower_bound)
        asyncio.run(strategy.search(problem))
        worst = max(worst, len(ran))
    return worst


def per_experiment_s(ex: Execution) -> float:
    """Seconds of one experiment besides its duration, per repetition: the configured
    delays plus what the engine's own time estimate adds for deployment and teardown
    (``_OVERHEAD_S`` in bench.execution.experiments, used for the ETA it prints)."""
    e = ex.execution
    return float(e.loadGenerationDelay + e.afterTeardownDelay + _OVERHEAD_S)


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The default results folder (``results/``) is checked in the working directory."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("name", USE_CASES)
def test_the_default_execution_is_valid_and_shows_scaling(registry: Any, in_tmp: Path, name: str) -> None:
    prepared = default_run(registry, name)
    ex = prepared.execution
    assert len(ex.load.loadValues) >= 2, f"{name}: default loads {ex.load.loadValues}: a table needs two or more"
    assert len(ex.resources.resourceValues) >= 2, (
        f"{name}: default resources {ex.resources.resourceValues}: scaling needs two or more")
    rates = load_rates(registry, prepared)
    assert all(r > 0 for r in rates), f"{name}: loads {ex.load.loadValues} ask for {rates} records/s"


@pytest.mark.parametrize("name", USE_CASES)
def test_the_default_job_fits_eight_minutes_in_the_worst_case(registry: Any, in_tmp: Path, name: str) -> None:
    ex = default_run(registry, name).execution
    e = ex.execution
    experiments = worst_case_experiments(registry, ex) * e.repetitions
    others = per_experiment_s(ex)
    # experiments x (duration + others) <= BUDGET_S
    longest = BUDGET_S / experiments - others
    total = experiments * (e.duration + others)
    name_, lower_bound = e.strategy.resolved()
    search = name_ + (" LowerBound" if lower_bound else "")
    assert e.duration <= longest, (
        f"{name}: duration {e.duration:g} s is too long for the default job to fit {BUDGET_S / 60:g} min: "
        f"{experiments} experiment run(s) at most ({len(ex.load.loadValues)} loads, "
        f"{len(ex.resources.resourceValues)} resource values, {e.repetitions} repetition(s), {search} search) "
        f"x ({e.duration:g} s + {others:g} s of delays and deployment) = {total:.0f} s; at most {longest:.0f} s "
        "per repetition fits")


def test_calibrated_loads_straddle_its_capacity(registry: Any, in_tmp: Path) -> None:
    prepared = default_run(registry, "calibrated")
    ex = prepared.execution
    res = sorted(ex.resources.resourceValues)
    objects = build_objects(registry, prepared.benchmark, ex, prepared.params, ex.load.loadValues[0], res[0])
    params = merged_params(prepared.use_case, prepared.benchmark, ex, objects, prepared.params)
    # "share": a group of N instances processes exactly N x capacity (bench.builtin.calibrated)
    assert params.get("capacityMode", "share") == "share", params
    capacity = float(params["capacity"])
    rates = load_rates(registry, prepared)
    lowest, highest = min(rates), max(rates)
    facts = (f"calibrated: capacity {capacity:g} records/s per instance, loads {ex.load.loadValues} = {rates} "
             f"records/s, resources {ex.resources.resourceValues}")
    assert lowest <= capacity * res[0], f"{facts}: the lowest load needs more than the lowest resource value"
    assert highest > capacity * res[0], f"{facts}: the highest load needs no more than the lowest resource value"
    assert highest <= capacity * res[-1], f"{facts}: the highest load passes at no resource value"


@pytest.mark.parametrize("name", SPARK_USE_CASES)
def test_one_spark_instance_has_a_cpu_limit(registry: Any, in_tmp: Path, name: str) -> None:
    prepared = default_run(registry, name)
    ex = prepared.execution
    objects = build_objects(registry, prepared.benchmark, ex, prepared.params, ex.load.loadValues[0],
                            ex.resources.resourceValues[0])
    sut = find_kind(objects, "BenchSut")
    assert sut is not None, f"{name}: the default benchmark has no BenchSut"
    cpu = float((sut.get("spec") or {}).get("cpuPerInstance") or 0)
    assert cpu > 0, (f"{name}: cpuPerInstance {cpu:g}: without a CPU limit one instance uses every core of the "
                     "machine, and no load needs a second instance")


def test_uc4_load_is_a_nesting_level(registry: Any, in_tmp: Path) -> None:
    """UC4's records/s are children^levels x 1000 / periodMs, as its own patchers set them."""
    prepared = default_run(registry, "uc4")
    ex = prepared.execution
    assert ex.load.loadType == "NumNestedGroups", ex.load.loadType
    gen = find_kind(prepared.benchmark.loadGenerator.resources, "BenchGenerator")
    assert gen is not None
    spec = gen["spec"]
    children, period = int(spec["params"]["childrenPerGroup"]), float(spec["periodMs"])
    for load in ex.load.loadValues:
        expected = children ** int(load) * 1000.0 / period
        assert records_per_second(registry, prepared, load) == pytest.approx(expected), load


@pytest.mark.parametrize("name", USE_CASES)
def test_the_fuzzed_bad_durations_stay_invalid_for_the_defaults(registry: Any, in_tmp: Path, name: str) -> None:
    """tests/unit/test_fuzz_cli.py draws "bad" durations below 19 s; a default that makes
    a shorter one valid must change that bound too, not fail the fuzz test at random."""
    ex = default_run(registry, name).execution.execution
    shortest = ex.warmup + 2 * ex.sampleInterval
    assert shortest >= 19, f"{name}: a {shortest:g}-s duration is valid; lower the fuzz test's bound"
