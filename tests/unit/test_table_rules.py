"""The table's rules in every form: load direction, inferred and undecided entries (issue 22).

Capacity is the heaviest passing load, which for a decreasing load type (MessagePeriod)
is the smallest value; an entry the lower bound gave without measuring it is marked
inferred in the CSV, the result JSON, the printed table and the report; ``bench
compare`` never counts an unmeasured entry as a regression.
"""

from __future__ import annotations

import dataclasses
import html
import json
from pathlib import Path
from typing import Any

from bench.analysis.analyze import analyze, format_analysis, run_settings
from bench.analysis.compare import TableFile, compare_tables, read_table
from bench.analysis.report import build_report
from bench.analysis.runs import open_run
from bench.api import message_period_load_type
from bench.config.model import parse_benchmark, parse_execution
from bench.execution.config import RunConfig
from bench.execution.run import Engine
from bench.plugins import load_plugins
from bench.results import tables

from tests.unit import verdict_runs
from tests.unit.fakes import FAKE_USE_CASE, FakePlatform, fake_benchmark
from tests.unit.test_engine import SimClock

#: MessagePeriod values: 100 ms is the lightest load, 10 ms the heaviest
PERIODS = [10.0, 50.0, 100.0]


def test_capacity_of_a_decreasing_load_type_is_its_smallest_passing_value() -> None:
    verdicts = [(100.0, 1.0, True), (50.0, 1.0, True), (10.0, 1.0, False)]
    assert tables.build("capacity", verdicts, decreasing=True) == {1.0: 50.0}
    assert tables.build("capacity", verdicts) == {1.0: 100.0}  # increasing: the greatest value


def test_compare_reads_a_lighter_capacity_as_a_regression_in_the_load_direction() -> None:
    old = TableFile("capacity", {1.0: 50.0}, decreasing=True)
    assert compare_tables(old, TableFile("capacity", {1.0: 100.0}, decreasing=True)).regressed
    assert not compare_tables(old, TableFile("capacity", {1.0: 10.0}, decreasing=True)).regressed


def test_lower_bound_capacity_carried_over_is_inferred() -> None:
    verdicts = [(1000.0, 1.0, True), (2000.0, 1.0, True), (3000.0, 1.0, False), (2000.0, 2.0, False)]
    built = tables.build_run_table("capacity", verdicts, loads=[1000, 2000, 3000], resources=[1, 2],
                                   lower_bound=True)
    assert built.table == {1.0: 2000.0, 2.0: 1000.0}
    assert built.notes == {2.0: tables.INFERRED}


def test_demand_skipped_by_the_lower_bound_is_inferred() -> None:
    verdicts = [(1000.0, 1.0, False), (1000.0, 2.0, False)]
    built = tables.build_run_table("demand", verdicts, loads=[1000, 2000], resources=[1, 2], lower_bound=True)
    assert built.table == {1000.0: None, 2000.0: None}
    assert built.notes == {2000.0: tables.INFERRED}


def test_the_note_column_is_added_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    tables.write_csv(path, "capacity", {1.0: 2000.0, 2.0: 1000.0}, {2.0: tables.INFERRED})
    assert path.read_text() == "resource,loads,note\n1,2000,\n2,1000,inferred\n"
    assert tables.read_csv_noted(path) == ("capacity", {1.0: 2000.0, 2.0: 1000.0}, {2.0: tables.INFERRED})
    tables.write_csv(path, "capacity", {1.0: 2000.0})
    assert path.read_text() == "resource,loads\n1,2000\n"  # no note: the reference's two columns only


def test_a_key_with_no_passing_value_is_written_as_the_reference_writes_it(tmp_path: Path) -> None:
    """The reference prints the missing optimum as ``null``; bench's note column stays third."""
    path = tmp_path / "t.csv"
    tables.write_csv(path, "demand", {1000.0: 2.0, 2000.0: None, 3000.0: None}, {3000.0: tables.INFERRED})
    assert path.read_text() == "load,resources,note\n1000,2,\n2000,null,\n3000,null,inferred\n"
    assert tables.read_csv_noted(path) == ("demand", {1000.0: 2.0, 2000.0: None, 3000.0: None},
                                           {3000.0: tables.INFERRED})
    tables.write_csv(path, "capacity", {1.0: None, 2.0: 1000.0})
    assert path.read_text() == "resource,loads\n1,null\n2,1000\n"
    path.write_text("load,resources\n1000,\n")  # an empty cell, as other tools write it
    assert tables.read_csv(path) == ("demand", {1000.0: None})


async def _capacity_run(tmp_path: Path, load_type: str, loads: list[float], capacity: float) -> Any:
    registry = load_plugins()
    registry.use_cases["fake"] = FAKE_USE_CASE
    doc = fake_benchmark()
    doc["loadTypes"].append(message_period_load_type())
    execution = parse_execution({
        "benchmark": "fake", "load": {"loadType": load_type, "loadValues": loads},
        "resources": {"resourceType": "Instances", "resourceValues": [1, 2]},
        "execution": {"metric": "capacity", "duration": 60, "warmup": 10, "repetitions": 1,
                      "afterTeardownDelay": 0, "sampleInterval": 5},
    })
    cfg = RunConfig(use_case=FAKE_USE_CASE, benchmark=parse_benchmark(doc), execution=execution,
                    results_dir=tmp_path, params={"capacity": capacity})
    clock = SimClock()
    return await Engine(registry, cfg, FakePlatform(), clock=clock, sleep=clock.sleep).run()


async def test_a_decreasing_capacity_run_agrees_everywhere(tmp_path: Path) -> None:
    """10 sensors at p ms send 10000 / p records/s; one instance takes 150 records/s:
    100 ms (100/s) and 50 ms (200/s: two instances) pass, 10 ms (1000/s) never."""
    outcome = await _capacity_run(tmp_path, "MessagePeriod", PERIODS, capacity=150)
    assert outcome.table == {1.0: 100.0, 2.0: 50.0}
    run = open_run(tmp_path)
    assert analyze(run, run_settings(run)).table == outcome.table
    assert read_table(tmp_path).table == outcome.table
    assert not compare_tables(read_table(tmp_path), read_table(tmp_path)).differences


async def test_an_inferred_capacity_is_marked_in_every_form(tmp_path: Path) -> None:
    """At 1 instance 1000 and 2000 pass, 4000 fails; at 2 instances the lower bound starts
    at 2000, which fails: 1000 is carried over, never measured at 2 instances."""
    outcomes = {(1000.0, 1.0): "passed", (2000.0, 1.0): "passed", (1000.0, 2.0): "passed"}
    outcome, _ = await verdict_runs.run(
        verdict_runs.config(tmp_path, "capacity", "NumSensors", [1000, 2000, 4000], [1, 2]), outcomes)
    assert outcome.table == {1.0: 2000.0, 2.0: 1000.0}
    assert outcome.notes == {2.0: tables.INFERRED}
    assert (1000.0, 2.0) not in {(r.load, r.resources) for r in outcome.records}
    csv_text = (tmp_path / f"exp{outcome.exp_id}_capacity.csv").read_text()
    assert csv_text == "resource,loads,note\n1,2000,\n2,1000,inferred\n"
    doc = json.loads((tmp_path / f"exp{outcome.exp_id}-result.json").read_text())
    assert [r["inferred"] for r in doc["table"]] == [False, True]
    run = open_run(tmp_path)
    result = analyze(run, run_settings(run))
    assert (result.table, result.notes) == (outcome.table, outcome.notes)
    assert "1000 (inferred)" in format_analysis(result)
    # bench analyze, like bench run, says the table is the verdict of 60-s experiments
    note = "  note: 60-s experiments (10-s warm-up), shorter than the method's default of 300 s"
    assert any(line.startswith(note) for line in format_analysis(result).splitlines())
    full_length = dataclasses.replace(run, execution={"execution": {"duration": 300, "warmup": 60}})
    assert "note:" not in format_analysis(dataclasses.replace(result, run=full_length))
    assert html.escape(note.strip()) in build_report([run]) and "note: 60-s" not in build_report([full_length])
    for hand_written in ({"execution": {"duration": "60"}}, {"execution": [60]}, [], None, {"execution": {}}):
        assert dataclasses.replace(run, execution=hand_written).duration() == 0.0  # no note, and no crash
    assert "2: 1,000 (inferred)" in build_report([run])
    assert any("1000 (inferred)" in line for line in tables.format_table("capacity", outcome.table, outcome.notes))


def test_compare_does_not_count_an_inferred_entry_as_measured() -> None:
    old = TableFile("capacity", {1.0: 2000.0, 2.0: 4000.0})
    new = TableFile("capacity", {1.0: 2000.0, 2.0: 1000.0}, {2.0: tables.INFERRED})
    comparison = compare_tables(old, new)
    assert not comparison.regressed
    assert [d.unmeasured for d in comparison.differences] == ["new inferred"]


def test_bench_run_prints_the_notes(tmp_path: Path, capsys: Any) -> None:
    from bench.cli.output import print_table
    from bench.results.outcome import RunOutcome

    print_table(RunOutcome(1, "capacity", {1.0: 2000.0, 2.0: 1000.0}, [], tmp_path, notes={2.0: tables.INFERRED}))
    out = capsys.readouterr().out
    assert "1000 (inferred)" in out and "inferred: given by the monotone assumption" in out


def test_run_expect_does_not_count_an_inferred_entry_as_a_regression() -> None:
    from bench.analysis.compare import expect

    code, text = expect(TableFile("capacity", {2.0: 4000.0}), "capacity", {2.0: 1000.0}, "old.csv",
                        notes={2.0: tables.INFERRED})
    assert code == 0 and "not comparable" in text


def test_the_main_jobs_quarter_core_instances_are_counted_as_such() -> None:
    """UC1's default SUT is limited to a quarter core per instance (README)."""
    from bench.execution.deployment import instance_cores

    registry = load_plugins()
    if "uc1" not in registry.use_cases:
        return
    sut = registry.use_cases["uc1"].default_benchmark()["sut"]["resources"]
    assert instance_cores(sut) == 0.25


async def test_compare_reads_the_direction_of_a_run_csv(tmp_path: Path) -> None:
    outcome = await _capacity_run(tmp_path, "MessagePeriod", PERIODS, capacity=150)
    run = open_run(tmp_path)
    from bench.analysis.analyze import write

    csv_path, _ = write(analyze(run, run_settings(run)))
    for path in (tmp_path / f"exp{outcome.exp_id}_capacity.csv", csv_path):
        assert read_table(path).decreasing, path


async def test_a_run_stored_with_the_old_capacity_rule_is_read_in_its_direction(tmp_path: Path) -> None:
    """A result JSON whose table took the greatest value of a decreasing load type (as
    bench wrote it before) is read from its verdicts: the heaviest passing load."""
    outcome = await _capacity_run(tmp_path, "MessagePeriod", PERIODS, capacity=150)
    path = tmp_path / f"exp{outcome.exp_id}-result.json"
    doc = json.loads(path.read_text())
    doc["table"] = [{"key": 1.0, "value": 100.0}, {"key": 2.0, "value": 100.0}]  # the greatest value
    del doc["complete"]
    path.write_text(json.dumps(doc))
    assert read_table(tmp_path).table == outcome.table == {1.0: 100.0, 2.0: 50.0}
    assert "2: 50" in build_report([open_run(tmp_path)])
