"""`bench compare OLD NEW`: exit code 3 exactly when the demand rose for some load."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from bench.analysis.commands import EXIT_REGRESSION, bench_add_commands
from bench.analysis.compare import compare_tables, read_table
from bench.cli.commands import cli as bench_cli
from click.testing import CliRunner


def cli_group() -> click.Group:
    """The real ``bench`` group (its error handling included) with these commands on it."""
    bench_add_commands(bench_cli)
    return bench_cli


def demand_csv(path: Path, rows: dict[int, int | None]) -> Path:
    lines = ["load,resources"] + [f"{k},{'' if v is None else v}" for k, v in rows.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_rising_demand_exits_3_and_prints_the_difference(tmp_path: Path) -> None:
    old = demand_csv(tmp_path / "old.csv", {1000: 1, 2000: 2, 3000: 3})
    new = demand_csv(tmp_path / "new.csv", {1000: 1, 2000: 3, 3000: 2})
    out = CliRunner().invoke(cli_group(), ["compare", str(old), str(new)])
    assert out.exit_code == EXIT_REGRESSION == 3
    assert "load 2000: resources 2 -> 3  REGRESSION" in out.output
    assert "load 3000: resources 3 -> 2  improved" in out.output


def test_same_or_better_demand_exits_0(tmp_path: Path) -> None:
    old = demand_csv(tmp_path / "old.csv", {1000: 2, 2000: None})
    new = demand_csv(tmp_path / "new.csv", {1000: 1, 2000: 4, 4000: 9})
    out = CliRunner().invoke(cli_group(), ["compare", str(old), str(new)])
    assert out.exit_code == 0, out.output
    assert "only in new: load 4000" in out.output
    assert "result: no regression" in out.output


def test_no_passing_resource_any_more_is_a_regression(tmp_path: Path) -> None:
    old = demand_csv(tmp_path / "old.csv", {1000: 4})
    new = demand_csv(tmp_path / "new.csv", {1000: None})
    out = CliRunner().invoke(cli_group(), ["compare", str(old), str(new)])
    assert out.exit_code == 3
    assert "4 -> none passed" in out.output


def test_results_folders_and_capacity(tmp_path: Path) -> None:
    for name, table in (("a", [[1, 2000], [2, 4000]]), ("b", [[1, 2000], [2, 3000]])):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "exp0-result.json").write_text(json.dumps(
            {"id": 0, "metric": "capacity", "experiments": [],
             "table": [{"key": k, "value": v} for k, v in table]}))
    assert compare_tables(read_table(tmp_path / "a"), read_table(tmp_path / "b")).regressed
    assert not compare_tables(read_table(tmp_path / "b"), read_table(tmp_path / "a")).regressed


def test_bad_input_is_a_user_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("x,y\n1,2\n")
    out = CliRunner().invoke(cli_group(), ["compare", str(bad), str(bad)])
    assert out.exit_code == 2
    with pytest.raises(ValueError, match="demand table with a capacity"):
        cap = tmp_path / "cap.csv"
        cap.write_text("resource,loads\n1,1000\n")
        compare_tables(read_table(demand_csv(tmp_path / "d.csv", {1: 1})), read_table(cap))


def test_expect_after_a_run(tmp_path: Path) -> None:
    from bench.analysis.compare import expect

    old = read_table(demand_csv(tmp_path / "old.csv", {1000: 1, 2000: 2}))
    code, text = expect(old, "demand", {1000.0: 1.0, 2000.0: 3.0}, "old.csv")
    assert code == 3 and "load 2000: resources 2 -> 3  REGRESSION" in text
    code, text = expect(old, "demand", {1000.0: 1.0, 2000.0: 2.0}, "old.csv")
    assert code == 0 and "no regression" in text
