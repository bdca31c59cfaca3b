"""Errors are not failures (issue 22, item 3): an experiment that ended in ``error`` has no
verdict; the search draws no conclusion from it and the table, bench analyze and the
report show the entries it could change as undecided."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench.analysis.analyze import analyze, format_analysis, run_settings
from bench.analysis.report import build_report
from bench.analysis.runs import open_run
from bench.api import SearchProblem
from bench.results import tables
from bench.search.strategies import STRATEGIES

from tests.unit import verdict_runs

BY_NAME = {s.name: s for s in STRATEGIES}
RESOURCES = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]


@pytest.mark.parametrize("name", ["linear", "binary", "initial-guess", "full"])
async def test_an_error_below_the_demand_never_raises_it(name: str) -> None:
    """Demand 2 at both loads; resource 5 errors at the first load. Binary search would
    test 5 first and, reading the error as a failure, conclude the demand is above 5."""
    errors = {(1000.0, 5.0)}

    async def run(load: float, resources: float) -> bool | None:
        return None if (load, resources) in errors else resources >= 2

    problem = SearchProblem([1000.0, 2000.0], RESOURCES, run, metric="demand", lower_bound=True)
    assert await BY_NAME[name].search(problem) == {1000.0: 2.0, 2000.0: 2.0}


@pytest.mark.parametrize("name", ["linear", "binary", "initial-guess", "full"])
async def test_an_error_does_not_cap_the_capacity(name: str) -> None:
    """Capacity 4000 at each resource amount; load 2000 errors at 1 instance."""
    loads = [1000.0, 2000.0, 3000.0, 4000.0, 5000.0]

    async def run(load: float, resources: float) -> bool | None:
        return None if (load, resources) == (2000.0, 1.0) else load <= 4000

    problem = SearchProblem(loads, [1.0, 2.0], run, metric="capacity", lower_bound=True)
    assert await BY_NAME[name].search(problem) == {1.0: 4000.0, 2.0: 4000.0}


async def test_the_lower_bound_after_an_undecided_demand_starts_at_the_error() -> None:
    """Load 1000: 1 errors, 2 passes (demand 2, undecided: it may be 1). Load 2000 needs 1
    only; a lower bound at 2 would never try it."""
    async def run(load: float, resources: float) -> bool | None:
        if (load, resources) == (1000.0, 1.0):
            return None
        return resources >= (2 if load == 1000 else 1)

    problem = SearchProblem([1000.0, 2000.0], RESOURCES, run, metric="demand", lower_bound=True)
    assert await BY_NAME["linear"].search(problem) == {1000.0: 2.0, 2000.0: 1.0}


async def test_an_error_is_undecided_in_the_table_analysis_and_report(tmp_path: Path) -> None:
    outcomes = {(1000.0, 1.0): "error", (1000.0, 2.0): "passed", (2000.0, 1.0): "late-error",
                (2000.0, 2.0): "late-error", (2000.0, 3.0): "failed"}
    cfg = verdict_runs.config(tmp_path, "demand", "NumSensors", [1000, 2000], [1, 2, 3], repetitions=2)
    outcome, _ = await verdict_runs.run(cfg, outcomes)
    assert outcome.table == {1000.0: 2.0, 2000.0: None}
    assert outcome.notes == {1000.0: tables.UNDECIDED, 2000.0: tables.UNDECIDED}
    text = (tmp_path / f"exp{outcome.exp_id}_demand.csv").read_text()
    assert text == "load,resources,note\n1000,2,undecided\n2000,null,undecided\n"
    run = open_run(tmp_path)
    result = analyze(run, run_settings(run))
    # the first repetitions of the late errors left flat (passing) lag series: still no verdict
    assert (result.table, result.notes) == (outcome.table, outcome.notes)
    shown = format_analysis(result)
    assert "undecided" in shown and "ERROR" in shown and "none passed" not in shown
    html = build_report([run])
    assert "2,000: undecided" in html and "an experiment that could change it ended in error" in html
