"""Regression check between two demand (or capacity) tables, for CI pipelines.

A regression is a load whose demand rose (more resources needed, or none passing any
more), or for capacity a resource amount whose heaviest passing load got lighter (for
a decreasing load type such as MessagePeriod: a greater value). Keys present in only
one table are listed but are no regression: a run with other loads is not worse for it.

Only measured entries are compared: an entry inferred by the lower-bound assumption or
undecided because of an error (:mod:`bench.results.tables`) is listed as not comparable, never
as a regression or an improvement, since nothing measured it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from bench.config.base import ConfigError
from bench.results import tables
from bench.results.store import ResultStore, fmt_value
from bench.results.tables import Notes, Table

#: the exit code of ``bench compare`` and ``bench run --expect`` when the demand rose (documented in --help)
EXIT_REGRESSION = 3


@dataclass(frozen=True)
class TableFile:
    metric: str
    table: Table
    notes: Notes = field(default_factory=dict)
    #: the load type's direction (capacity: which of two loads is heavier)
    decreasing: bool = False
    #: whether ``decreasing`` was read from the run's files (a bare CSV does not tell)
    direction_known: bool = True


@dataclass(frozen=True)
class Difference:
    key: float
    old: float | None
    new: float | None
    regressed: bool
    #: why the two entries cannot be compared ("old inferred", "new undecided", ...), or ""
    unmeasured: str = ""


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
    metric, table, notes = tables.read_csv_noted(path)
    direction = _csv_direction(path)
    return TableFile(metric, table, notes, bool(direction), direction is not None)


def _csv_direction(path: Path) -> bool | None:
    """A run's table CSV (``exp<id>_capacity.csv``, ``exp<id>-analysis-capacity.csv``) takes
    the load direction from the run's configuration files beside it; any other CSV is increasing."""
    match = re.match(r"^exp(\d+)[_-]", path.name)
    if match is None:
        return None
    from bench.analysis.runs import open_run

    try:
        return open_run(path.parent, int(match.group(1))).decreasing()
    except ConfigError:
        return None


def read_table(source: str | Path) -> TableFile:
    """A table from a CSV file, or from a run's result JSON / CSV in a results folder."""
    path = Path(source)
    if path.is_file():
        return _parse_csv(path)
    from bench.analysis.runs import open_run

    run = open_run(source)
    metric = run.metric()
    recorded = run.recorded_run_table()
    if recorded is not None:
        return TableFile(metric, recorded.table, recorded.notes, recorded.decreasing)
    csv_path = ResultStore(run.directory, run.exp_id).table_path(metric)
    if csv_path.is_file():
        return _parse_csv(csv_path)
    raise ConfigError(f"{source}: exp{run.exp_id} has no {metric} table yet")


def _worse(metric: str, old: float | None, new: float | None, decreasing: bool = False) -> bool:
    if old is None:
        return False  # nothing passed before: nothing can get worse
    if new is None:
        return True
    return new > old if metric == "demand" else tables.heavier(old, new, decreasing)


def compare_tables(old: TableFile, new: TableFile) -> Comparison:
    if old.metric != new.metric:
        raise ConfigError(f"cannot compare a {old.metric} table with a {new.metric} table")
    if old.metric == "capacity" and old.decreasing != new.decreasing:
        raise ConfigError("cannot compare capacities of an increasing and a decreasing load type")
    result = Comparison(old.metric)
    for key in sorted(set(old.table) | set(new.table)):
        if key not in new.table:
            result.only_old.append(key)
        elif key not in old.table:
            result.only_new.append(key)
        else:
            a, b = old.table[key], new.table[key]
            notes = (old.notes.get(key, ""), new.notes.get(key, ""))
            same = (a is None and b is None) or (a is not None and b is not None and math.isclose(a, b))
            unmeasured = ", ".join(f"{side} {note}" for side, note in zip(("old", "new"), notes, strict=True)
                                   if note)
            if not same or notes[0] != notes[1]:
                regressed = not unmeasured and _worse(old.metric, a, b, old.decreasing)
                result.differences.append(Difference(key, a, b, regressed, unmeasured))
    return result


def _show(value: float | None) -> str:
    return "none passed" if value is None else fmt_value(value)


def format_comparison(comparison: Comparison, old_name: str, new_name: str) -> str:
    key_name, value_name = ("load", "resources") if comparison.metric == "demand" else ("resources", "max load")
    lines = [f"{comparison.metric}: {old_name} -> {new_name}"]
    if not comparison.differences:
        lines.append("  no differences on common keys")
    for d in comparison.differences:
        if d.unmeasured:
            verdict = f"not comparable ({d.unmeasured}: not measured)"
        else:
            verdict = "REGRESSION" if d.regressed else "improved"
        lines.append(f"  {key_name} {fmt_value(d.key)}: {value_name} {_show(d.old)} -> {_show(d.new)}  {verdict}")
    if comparison.only_old:
        lines.append(f"  only in old: {key_name} {', '.join(fmt_value(k) for k in comparison.only_old)}")
    if comparison.only_new:
        lines.append(f"  only in new: {key_name} {', '.join(fmt_value(k) for k in comparison.only_new)}")
    lines.append("result: REGRESSION" if comparison.regressed else "result: no regression")
    return "\n".join(lines)


def check_expectation(expected: TableFile, metric: str, decreasing: bool) -> None:
    """``bench run --expect OLD``, before the run: a table the run's could never be
    compared with (another metric; a capacity of the other load direction) is refused now."""
    if expected.metric != metric:
        raise ConfigError(f"--expect: a {expected.metric} table, but this run measures {metric}")
    if metric == "capacity" and expected.direction_known and expected.decreasing != decreasing:
        raise ConfigError("--expect: its capacities are of an increasing load type and this run's of a decreasing "
                          "one (or the other way round); they cannot be compared")


def expect(expected: TableFile, metric: str, table: Table, name: str, notes: Notes | None = None,
           decreasing: bool | None = None) -> tuple[int, str]:
    """``bench run --expect OLD``: the exit code and the text for a finished run's table.

    ``expected`` is read before the run starts (:func:`read_table`), so a mistyped
    path fails in seconds, not after hours of benchmarking. ``notes``: the run's
    (``RunOutcome.notes``); ``decreasing``: its load direction, which a bare CSV (no
    run beside it to tell) is read with, so that a smaller capacity on MessagePeriod
    (a longer period: less load) is a regression, not an improvement.
    """
    if decreasing is not None and not expected.direction_known:
        expected = TableFile(expected.metric, expected.table, expected.notes, decreasing)
    mine = TableFile(metric, table, dict(notes or {}), expected.decreasing if decreasing is None else decreasing)
    comparison = compare_tables(expected, mine)
    return (EXIT_REGRESSION if comparison.regressed else 0), format_comparison(comparison, name, "this run")
