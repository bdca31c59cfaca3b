"""Every derived figure comes from measured experiments only, over result folders the real
engine writes with inferred, undecided and failed entries.

Why: the report computed cost and scaling efficiency of an inferred entry from its load
value as if it were records/s (UC4: 62,500 core-s per million, efficiency 256) and drew
the linear-scaling line through it; ``bench run --expect`` read a bare CSV as an
increasing load type, so a capacity regression on MessagePeriod printed "improved".
Checked on each example: the run's table CSV, ``bench analyze`` (its table, CSV and
JSON), the scaling rows, the report, ``--expect`` (both load directions) and
``bench compare``.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from bench.analysis.analyze import analyze, run_settings, write
from bench.analysis.compare import EXIT_REGRESSION, TableFile, compare_tables, expect, read_table
from bench.analysis.report import build_report
from bench.analysis.runs import open_run
from bench.analysis.scaling import scaling_rows
from bench.results import tables
from hypothesis import HealthCheck, given, settings

from tests.unit import verdict_runs
from tests.unit.test_tables_agree import examples


def _regressed_expectation(metric: str, table: dict[float, float | None], notes: dict[float, str],
                           values: list[float], decreasing: bool) -> tuple[float, float] | None:
    """A measured key and an expected value better than the run's there (so the run regressed)."""
    for key, value in sorted(table.items()):
        if value is None or notes.get(key):
            continue
        if metric == "demand":
            better = [r for r in values if r < value]
        else:  # a heavier load passed before
            better = [v for v in values if tables.heavier(v, value, decreasing)]
        if better:
            return key, better[0]
    return None


def _measured_only(run: Any, metric: str, table: dict[float, float | None], notes: dict[float, str]) -> None:
    """Each entry without a note is backed by a measured experiment that passed (demand:
    at (load, resources); capacity: at (capacity, resources)); every other value is noted."""
    records = run.records()
    for key, value in table.items():
        if value is None or notes.get(key):
            continue
        pair = (key, value) if metric == "demand" else (value, key)
        assert pair in records and records[pair]["outcome"] == "passed", (key, value, notes)


def _check(folder: Path, ex: dict[str, Any]) -> None:
    cfg = verdict_runs.config(folder, ex["metric"], ex["load_type"], ex["loads"], ex["resources"],
                              strategy=ex["strategy"], lower_bound=ex["lower_bound"],
                              repetitions=ex["repetitions"])
    outcome, _ = asyncio.run(verdict_runs.run(cfg, ex["outcomes"]))
    run = open_run(folder)
    decreasing = ex["load_type"] == "MessagePeriod"
    built = tables.RunTable(outcome.metric, outcome.table, outcome.notes, decreasing)
    page = build_report([run])
    # the table CSV the run wrote: every entry it did not measure is marked in its note column
    metric, csv_table, csv_notes = tables.read_csv_noted(folder / f"exp{run.exp_id}_{outcome.metric}.csv")
    assert (metric, csv_table, csv_notes) == (outcome.metric, outcome.table, outcome.notes)
    _measured_only(run, outcome.metric, csv_table, csv_notes)
    # bench analyze: the same entries marked in its table, its CSV and its JSON, and a verdict
    # only for an experiment that has one in the run (an error stays undecided)
    analysis = analyze(run, run_settings(run))
    assert (analysis.table, analysis.notes) == (outcome.table, outcome.notes)
    _measured_only(run, analysis.metric, analysis.table, analysis.notes)
    csv_path, json_path = write(analysis, folder / "analysis.csv")
    assert tables.read_csv_noted(csv_path) == (analysis.metric, analysis.table, analysis.notes)
    stored = json.loads(json_path.read_text())
    assert tables.from_rows_noted(stored["table"]) == (analysis.table, analysis.notes)
    assert set(analysis.experiments) <= set(run.records())
    for key, e in analysis.experiments.items():
        assert (e.verdict is None) == (run.records()[key]["outcome"] == "error"), key
    if outcome.metric == "demand":
        rows = scaling_rows(run, built)
        computed = [r for r in rows if not r.missing]
        for row in rows:
            measured = not built.note(row.load) and (row.load, row.resources) in run.records()
            assert bool(row.missing) != measured, row
            if row.missing:
                assert row.rate is None and row.efficiency is None and row.core_seconds_per_million is None
                assert f"not computed: {row.missing}" in page
            else:
                assert row.rate == run.target_rate(row.load, row.resources)
        if computed:
            assert computed[0].efficiency == 1.0
    # --expect with a bare CSV (no run beside it: the direction comes from the run)
    bare = TableFile(outcome.metric, dict(outcome.table), dict(outcome.notes), False, direction_known=False)
    code, text = expect(bare, outcome.metric, outcome.table, "old.csv", outcome.notes, decreasing)
    assert code == 0 and "improved" not in text and "REGRESSION" not in text
    values = ex["resources"] if outcome.metric == "demand" else ex["loads"]
    better = _regressed_expectation(outcome.metric, outcome.table, outcome.notes, values, decreasing)
    if better is not None:
        key, value = better
        old = TableFile(outcome.metric, {**outcome.table, key: value}, dict(outcome.notes), False,
                        direction_known=False)
        code, text = expect(old, outcome.metric, outcome.table, "old.csv", outcome.notes, decreasing)
        assert code == EXIT_REGRESSION and "REGRESSION" in text and "improved" not in text, text
        # and the folder's own table compares the same way
        mine = read_table(folder)
        assert compare_tables(TableFile(outcome.metric, old.table, old.notes, decreasing), mine).regressed
    # nothing inferred or undecided is ever judged a regression or an improvement
    for key, note in outcome.notes.items():
        other = TableFile(outcome.metric, {**outcome.table, key: None}, {}, decreasing)
        for d in compare_tables(other, read_table(folder)).differences:
            if d.key == key:
                assert d.unmeasured and not d.regressed, (note, d)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(examples())
def test_figures_come_from_measured_experiments_only(ex: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        _check(Path(tmp), ex)
