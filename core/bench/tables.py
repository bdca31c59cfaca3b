"""The demand and capacity tables: built from experiment verdicts, written and read back.

One module for the table in every form, so that ``bench run`` (its final and its
provisional table), ``bench analyze`` and ``bench compare`` cannot drift apart:

* demand: per load, the least resources among the passing experiments;
* capacity: per resource amount, the greatest passing load.

A key with no passing experiment keeps its row with no value (an empty CSV cell, None
in JSON): the reference's notebooks read it as a missing value, and a reader sees that
the load was tried, which a dropped row would hide. The CSV has the reference's two
columns (``load,resources`` or ``resource,loads``); the result JSON holds the same
table as ``[{"key": ..., "value": ...}]``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bench.model import ConfigError
from bench.results import ResultStore, atomic_write, fmt_value

Table = dict[float, float | None]

#: CSV header per metric, as the reference's notebooks expect it
HEADERS = {"demand": ["load", "resources"], "capacity": ["resource", "loads"]}
#: cells that mean "no passing value" in tables written by hand or by other tools
_EMPTY = ("", "None", "null", "nan", "NaN")


def build(metric: str, verdicts: Iterable[tuple[float, float, bool]]) -> Table:
    """The table of ``(load, resources, passed)`` verdicts, keys in ascending order."""
    table: Table = {}
    for load, resources, passed in sorted(verdicts):
        key, value = (load, resources) if metric == "demand" else (resources, load)
        table.setdefault(key, None)
        if passed:
            best = table[key]
            if best is None or (value < best if metric == "demand" else value > best):
                table[key] = value
    return table


def csv_text(metric: str, table: Table) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(HEADERS["demand" if metric == "demand" else "capacity"])
    for key in sorted(table):
        value = table[key]
        writer.writerow([fmt_value(key), "" if value is None else fmt_value(value)])
    return buf.getvalue()


def write_csv(path: Path, metric: str, table: Table) -> None:
    atomic_write(path, csv_text(metric, table))


def read_csv(path: Path) -> tuple[str, Table]:
    """``(metric, table)`` of a table CSV; the header tells the metric."""
    with open(path, encoding="utf-8", newline="") as fh:
        rows = [r for r in csv.reader(fh) if r]
    header = [c.strip() for c in rows[0]] if rows else []
    if header not in HEADERS.values():
        raise ConfigError(f"{path}: not a demand (load,resources) or capacity (resource,loads) CSV")
    metric = "demand" if header == HEADERS["demand"] else "capacity"
    table: Table = {}
    for row in rows[1:]:
        try:
            key = float(row[0])
            raw = row[1].strip() if len(row) > 1 else ""
            value = None if raw in _EMPTY else float(raw)
        except ValueError:
            raise ConfigError(f"{path}: row {row!r} is not two numbers") from None
        table[key] = value
    return metric, table


def to_rows(table: Table) -> list[dict[str, float | None]]:
    """The table as the result and analysis JSON files hold it."""
    return [{"key": k, "value": v} for k, v in sorted(table.items())]


def from_rows(rows: Any) -> Table | None:
    """The table of a result JSON's ``table`` entry; None when the run wrote none yet."""
    if not isinstance(rows, list):
        return None
    table: Table = {}
    for row in rows:
        value = row.get("value")
        table[float(row["key"])] = None if value is None else float(value)
    return table


def write_run_table(store: ResultStore, metric: str, table: Table, final: bool = True) -> None:
    """``exp<id>_demand.csv`` or ``exp<id>_capacity.csv``, and the table in the result JSON.

    ``final=False`` writes the provisional table (``exp<id>_demand.provisional.csv``)
    that a run keeps up to date while it goes on; the final one replaces it.
    """
    write_csv(store.table_path(metric, final), metric, table)
    if final:
        store.table_path(metric, final=False).unlink(missing_ok=True)
    store.record_table(metric, to_rows(table), complete=final)
