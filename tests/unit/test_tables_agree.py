"""Every form of a run's table agrees (issue 22, item 4), over stored result folders that
the real engine writes: increasing and decreasing load types, demand and capacity, every
built-in strategy with and without the lower bound (bracket only with it), 1-3 repetitions, some errors (also
after a stored repetition) and the inferred entries the lower bound gives.

Compared on every example: the engine's table and notes, the search strategy's own
answer, the provisional table, the CSV read back, ``bench analyze``, ``bench compare`` of
the folder against itself, and the report's summary table.
"""

from __future__ import annotations

import asyncio
import tempfile
from html import escape
from pathlib import Path
from typing import Any

from bench.analysis.analyze import analyze, run_settings
from bench.analysis.compare import compare_tables, read_table
from bench.analysis.report import build_report
from bench.analysis.report_slis import human as _human
from bench.analysis.runs import open_run
from bench.api import SearchProblem
from bench.config.model import load_intensity_order
from bench.results import tables
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.unit import verdict_runs

OUTCOMES = st.sampled_from(["passed"] * 4 + ["failed"] * 4 + ["error", "late-error"])


@st.composite
def examples(draw: Any, strategies: tuple[str, ...] = ("linear", "binary", "full", "initial-guess", "bracket"),
             ) -> dict[str, Any]:
    load_type = draw(st.sampled_from(["NumSensors", "MessagePeriod"]))
    loads = sorted(draw(st.lists(st.sampled_from([10.0, 20.0, 50.0, 100.0]), min_size=1, max_size=3, unique=True)))
    resources = sorted(draw(st.lists(st.sampled_from([1.0, 2.0, 3.0]), min_size=1, max_size=3, unique=True)))
    outcomes = {(load, res): draw(OUTCOMES) for load in loads for res in resources}
    return {
        "metric": draw(st.sampled_from(["demand", "capacity"])),
        "load_type": load_type, "loads": loads, "resources": resources, "outcomes": outcomes,
        "strategy": (strategy := draw(st.sampled_from(strategies))),
        # bracket rests on the lower bound (refused without it)
        "lower_bound": True if strategy == "bracket" else draw(st.sampled_from([True, True, False])),
        "repetitions": draw(st.integers(min_value=1, max_value=3)),
    }


async def _searched(cfg: Any, outcome: Any, strategy: str, lower_bound: bool) -> dict[float, float | None]:
    """The strategy's answer over the recorded verdicts (it asks for the same pairs again)."""
    recorded = {(r.load, r.resources): (None if r.outcome == "error" else r.passed) for r in outcome.records}

    async def run(load: float, resources: float) -> bool | None:
        return recorded[(load, resources)]

    problem = SearchProblem(load_intensity_order(cfg.benchmark, cfg.execution), cfg.execution.resources.resourceValues,
                            run, metric=cfg.execution.execution.metric, lower_bound=lower_bound)
    return await verdict_runs.registry().search_strategies[strategy].search(problem)


def _check(folder: Path, ex: dict[str, Any]) -> None:
    cfg = verdict_runs.config(folder, ex["metric"], ex["load_type"], ex["loads"], ex["resources"],
                              strategy=ex["strategy"], lower_bound=ex["lower_bound"],
                              repetitions=ex["repetitions"])
    outcome, engine = asyncio.run(verdict_runs.run(cfg, ex["outcomes"]))
    table, notes = outcome.table, outcome.notes
    for word in sorted({w for n in notes.values() for w in n.split()}):
        event(f"{word} entry")  # --hypothesis-show-statistics shows how often each kind came up
    # the search strategy concluded what the stored verdicts say
    assert asyncio.run(_searched(cfg, outcome, ex["strategy"], ex["lower_bound"])) == table
    # the provisional table: the same entries, for the keys it has
    provisional = engine.experiments.table(final=False)
    assert {k: (v, provisional.note(k)) for k, v in provisional.table.items()} == {
        k: (table[k], notes.get(k, "")) for k in provisional.table}
    # the table file read back
    csv_path = folder / f"exp{outcome.exp_id}_{ex['metric']}.csv"
    assert tables.read_csv_noted(csv_path) == (ex["metric"], table, notes)
    # bench analyze: the stored series re-evaluated under the run's own rules
    run = open_run(folder)
    if run.trend_files() or outcome.errors:
        result = analyze(run, run_settings(run))
        assert (result.table, result.notes) == (table, notes)
    # bench compare of the folder against itself, and of its CSV
    same = read_table(folder)
    assert (same.table, same.notes, same.decreasing) == (table, notes, ex["load_type"] == "MessagePeriod")
    comparison = compare_tables(same, read_table(csv_path))
    assert not comparison.differences and not comparison.regressed
    # the report's summary table
    cell = ", ".join(f"{_human(k)}: {tables.shown(v, notes.get(k, ''), _human)}" for k, v in sorted(table.items()))
    assert escape(cell) in build_report([run])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(examples())
def test_every_form_of_the_table_agrees(ex: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        _check(Path(tmp), ex)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(examples(strategies=("bracket",)))
def test_every_form_of_the_bracket_table_agrees(ex: dict[str, Any]) -> None:
    """bracket infers entries from heavier loads' demands: the table rules must find them
    again in the stored verdicts, errors and non-monotone verdicts included."""
    with tempfile.TemporaryDirectory() as tmp:
        _check(Path(tmp), ex)
