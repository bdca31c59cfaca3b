"""Regression check between two demand (or capacity) tables, for CI pipelines.

A regression is a load whose demand rose (more resources needed, or none passing any
more), or for capacity a resource amount whose greatest passing load fell. Keys
present in only one table are listed but are no regression: a run with other loads
is not worse for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from bench import tables
from bench.model import ConfigError
from bench.results import ResultStore, fmt_value
from bench.tables import Table

#: the exit code of ``bench compare`` and ``bench run --expect`` when the demand rose (documented in --help)
EXIT_REGRESSION = 3


@dataclass(frozen=True)
class TableFile:
    metric: str
    table: Table


@dataclass(frozen=True)
class Difference:
    key: float
    old: float | None
    new: float | None
    regressed: bool


@dataclass
class Comparison:
    metric: str
    differences: list[Difference] = field(default_factory=list)
    only_old: list[float] = field(default_factory=list)
    only_new: list[float] = field(default_factory=list)

    @property
    def regressed(self) -> bool:
        return any(d.regressed for d in self.differences)


def _parse_csv(path: Path) -> TableFile:
    metric, table = tables.read_csv(path)
    return TableFile(metric, table)


def read_table(source: str | Path) -> TableFile:
    """A table from a CSV file, or from a run's result JSON / CSV in a results folder."""
    path = Path(source)
    if path.is_file():
        return _parse_csv(path)
    from bench.analysis.runs import open_run

    run = open_run(source)
    metric = run.metric()
    recorded = run.recorded_table()
    if recorded is not None:
        return TableFile(metric, recorded)
    csv_path = ResultStore(run.directory, run.exp_id).table_path(metric)
    if csv_path.is_file():
        return _parse_csv(csv_path)
    raise ConfigError(f"{source}: exp{run.exp_id} has no {metric} table yet")


def _worse(metric: str, old: float | None, new: float | None) -> bool:
    if old is None:
        return False  # nothing passed before: nothing can get worse
    if new is None:
        return True
    return new > old if metric == "demand" else new < old


def compare_tables(old: TableFile, new: TableFile) -> Comparison:
    if old.metric != new.metric:
        raise ConfigError(f"cannot compare a {old.metric} table with a {new.metric} table")
    result = Comparison(old.metric)
    for key in sorted(set(old.table) | set(new.table)):
        if key not in new.table:
            result.only_old.append(key)
        elif key not in old.table:
            result.only_new.append(key)
        else:
            a, b = old.table[key], new.table[key]
            same = (a is None and b is None) or (a is not None and b is not None and math.isclose(a, b))
            if not same:
                result.differences.append(Difference(key, a, b, _worse(old.metric, a, b)))
    return result


def _show(value: float | None) -> str:
    return "none passed" if value is None else fmt_value(value)


def format_comparison(comparison: Comparison, old_name: str, new_name: str) -> str:
    key_name, value_name = ("load", "resources") if comparison.metric == "demand" else ("resources", "max load")
    lines = [f"{comparison.metric}: {old_name} -> {new_name}"]
    if not comparison.differences:
        lines.append("  no differences on common keys")
    for d in comparison.differences:
        verdict = "REGRESSION" if d.regressed else "improved"
        lines.append(f"  {key_name} {fmt_value(d.key)}: {value_name} {_show(d.old)} -> {_show(d.new)}  {verdict}")
    if comparison.only_old:
        lines.append(f"  only in old: {key_name} {', '.join(fmt_value(k) for k in comparison.only_old)}")
    if comparison.only_new:
        lines.append(f"  only in new: {key_name} {', '.join(fmt_value(k) for k in comparison.only_new)}")
    lines.append("result: REGRESSION" if comparison.regressed else "result: no regression")
    return "\n".join(lines)


def expect(expected: TableFile, metric: str, table: Table, name: str) -> tuple[int, str]:
    """``bench run --expect OLD``: the exit code and the text for a finished run's table.

    ``expected`` is read before the run starts (:func:`read_table`), so a mistyped
    path fails in seconds, not after hours of benchmarking.
    """

    comparison = compare_tables(expected, TableFile(metric, table))
    return (EXIT_REGRESSION if comparison.regressed else 0), format_comparison(comparison, name, "this run")
