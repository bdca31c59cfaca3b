"""The demand and capacity tables: built from experiment verdicts, written and read back.

One module for the table in every form, so that ``bench run`` (its final and its
provisional table), ``bench analyze``, ``bench compare``, the report and the plots
cannot drift apart:

* demand: per load, the least resources among the passing experiments;
* capacity: per resource amount, the heaviest passing load. Heaviest follows the load
  type's ``direction``: for a decreasing one (MessagePeriod, a window advance) the
  heaviest load is the smallest value.

A key with no passing experiment keeps its row with no value: ``null`` in the CSV's
second column, as the reference writes it for such a key (its table writer prints the
missing optimum as ``null``), and None in JSON. A reader sees that the load was tried,
which a dropped row would hide; an empty cell, as other tools write, reads as the same.

Each entry is measured unless noted (:data:`INFERRED`, :data:`UNDECIDED`):

* inferred: the lower-bound assumption gave it, no experiment measured that pair (a
  capacity carried over from the previous resource amount; a demand of "none" for a
  load after one that no resource amount passed; a heavier load's demand for a lighter
  one, as the bracket search concludes). With ``lower_bound`` the table applies the same
  assumption as the search, so a stored run gives the same table again;
* undecided: an experiment that could have changed the entry ended in ``error`` (no
  verdict): the demand may be smaller (the capacity greater) than shown.

The CSV has the reference's two columns (``load,resources`` or ``resource,loads``) and,
only when some entry has a note, a third column ``note``; the result JSON holds the same
table as ``[{"key", "value", "inferred", "undecided"}]``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.config.base import ConfigError, ExecutionParams
from bench.results.store import ResultStore, atomic_write, fmt_value

Table = dict[float, float | None]
#: key -> its note ("inferred", "undecided" or both, space-separated); measured keys are absent
Notes = dict[float, str]
#: a verdict: ``(load, resources, passed)``; ``passed`` None: the experiment ended in error
Verdict = tuple[float, float, "bool | None"]

INFERRED = "inferred"
UNDECIDED = "undecided"

#: CSV header per metric, as the reference's notebooks expect it
HEADERS = {"demand": ["load", "resources"], "capacity": ["resource", "loads"]}
NOTE_COLUMN = "note"
#: the second-column cell of a key with no passing value, as the reference writes it
NO_VALUE = "null"
#: cells that mean "no passing value" in tables written by hand or by other tools
_EMPTY = ("", "None", NO_VALUE, "nan", "NaN")


@dataclass
class RunTable:
    """A table with its notes, and how its loads are ordered."""

    metric: str
    table: Table = field(default_factory=dict)
    notes: Notes = field(default_factory=dict)
    #: the load type's direction: True when a smaller value is more load
    decreasing: bool = False

    def note(self, key: float) -> str:
        return self.notes.get(key, "")

    def inferred(self, key: float) -> bool:
        return INFERRED in self.note(key).split()

    def undecided(self, key: float) -> bool:
        return UNDECIDED in self.note(key).split()


def heavier(a: float, b: float, decreasing: bool) -> bool:
    """Whether load ``a`` is more load than ``b``."""
    return a < b if decreasing else a > b


def _note(*words: str) -> str:
    return " ".join(w for w in (INFERRED, UNDECIDED) if w in words)


def build_run_table(
    metric: str,
    verdicts: Iterable[Verdict],
    *,
    loads: Sequence[float] | None = None,
    resources: Sequence[float] | None = None,
    lower_bound: bool = False,
    decreasing: bool = False,
    complete: bool = True,
    answered: Mapping[tuple[float, float], bool] | None = None,
) -> RunTable:
    """The table of the verdicts, with each entry's note.

    ``answered``: verdicts entered without an experiment (the sizing probe's,
    ``bench.execution.probe_verdict``) for pairs not measured; an entry resting on one is
    noted inferred.

    ``loads`` and ``resources`` are the configured values: the lower-bound assumption may
    carry a capacity over to loads never measured at a resource amount, and with
    ``complete`` every configured key is a row (the final table). Not complete (the
    provisional table of a run going on) or not given: the keys are the measured ones.
    """
    measured: dict[tuple[float, float], bool | None] = {}
    for load, res, passed in verdicts:
        measured[(float(load), float(res))] = None if passed is None else bool(passed)
    entered = {(float(x), float(r)): bool(v) for (x, r), v in (answered or {}).items()}
    entered = {key: v for key, v in entered.items() if key not in measured}
    measured.update(entered)
    all_loads = sorted({*(loads or ()), *(k[0] for k in measured)}, key=lambda x: x if not decreasing else -x)
    if metric == "demand":
        keys = list(loads) if loads is not None and complete else sorted({k[0] for k in measured})
        return RunTable(metric, *_demand(keys, measured, lower_bound, decreasing, entered), decreasing=decreasing)
    keys = list(resources) if resources is not None and complete else sorted({k[1] for k in measured})
    return RunTable(metric, *_capacity(sorted(keys), all_loads, measured, lower_bound, decreasing, entered),
                    decreasing=decreasing)


def _demand(keys: Iterable[float], measured: dict[tuple[float, float], bool | None],
            lower_bound: bool = False, decreasing: bool = False,
            entered: Collection[tuple[float, float]] = ()) -> tuple[Table, Notes]:
    """Per load the least passing resources; with ``lower_bound`` (demand never falls as the
    load rises) a load with failures only, each below a heavier load's demand, or none at
    all, takes the least of those demands: the bracket search's upper bound. Under the
    other strategies such a load never has a heavier one that passed (a load no resource
    amount passed ends their search), so the rule changes none of their tables."""
    table: Table = {}
    notes: Notes = {}
    for load in sorted(keys):
        here = {r: v for (x, r), v in measured.items() if x == load}
        passing = [r for r, v in here.items() if v is True]
        value = min(passing) if passing else None
        words = []
        if value is None and lower_bound and all(v is False for v in here.values()):
            above = [r for (x, r), v in measured.items() if v is True and heavier(x, load, decreasing)]
            if above and all(r < min(above) for r in here):
                value = min(above)
                words.append(INFERRED)  # a heavier load passed there; nothing here passed below it
        if (not here and not words) or (load, value) in entered:
            words.append(INFERRED)  # a load the lower bound skipped, or a pass the probe answered
        if any(v is None and (value is None or r < value) for r, v in here.items()):
            words.append(UNDECIDED)
        table[load] = value
        if words:
            notes[load] = _note(*words)
    return table, notes


def _capacity(
    keys: list[float], all_loads: list[float], measured: dict[tuple[float, float], bool | None],
    lower_bound: bool, decreasing: bool, entered: Collection[tuple[float, float]] = (),
) -> tuple[Table, Notes]:
    """Per resource amount ascending; ``all_loads`` lightest first."""
    table: Table = {}
    notes: Notes = {}
    previous: float | None = None
    for res in keys:
        here = {x: v for (x, r), v in measured.items() if r == res}
        candidates = [x for x, v in here.items() if v is True]
        if lower_bound and previous is not None:
            # capacity never falls as resources grow: loads up to the previous capacity
            # that were not measured here are assumed to pass
            candidates += [x for x in all_loads if x not in here and not heavier(x, previous, decreasing)]
        value = None
        for x in candidates:
            if value is None or heavier(x, value, decreasing):
                value = x
        words = []
        if value is not None and (value not in here or (value, res) in entered):
            words.append(INFERRED)
        if value is None and not here:
            words.append(INFERRED)
        if any(v is None and (value is None or heavier(x, value, decreasing)) for x, v in here.items()):
            words.append(UNDECIDED)
        table[res] = value
        if words:
            notes[res] = _note(*words)
        previous = value
    return table, notes


def build(
    metric: str, verdicts: Iterable[Verdict], *, decreasing: bool = False,
) -> Table:
    """The table of ``(load, resources, passed)`` verdicts (keys: the measured ones, ascending)."""
    return build_run_table(metric, verdicts, decreasing=decreasing).table


def csv_text(metric: str, table: Table, notes: Notes | None = None) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    noted = bool(notes) and any(notes.get(k) for k in table)  # type: ignore[union-attr]
    header = HEADERS["demand" if metric == "demand" else "capacity"]
    writer.writerow([*header, NOTE_COLUMN] if noted else header)
    for key in sorted(table):
        value = table[key]
        row = [fmt_value(key), NO_VALUE if value is None else fmt_value(value)]
        writer.writerow([*row, (notes or {}).get(key, "")] if noted else row)
    return buf.getvalue()


def write_csv(path: Path, metric: str, table: Table, notes: Notes | None = None) -> None:
    atomic_write(path, csv_text(metric, table, notes))


def read_csv(path: Path) -> tuple[str, Table]:
    """``(metric, table)`` of a table CSV; the header tells the metric."""
    metric, table, _ = read_csv_noted(path)
    return metric, table


def read_csv_noted(path: Path) -> tuple[str, Table, Notes]:
    """``(metric, table, notes)`` of a table CSV, with or without the ``note`` column."""
    with open(path, encoding="utf-8", newline="") as fh:
        rows = [r for r in csv.reader(fh) if r]
    header = [c.strip() for c in rows[0]] if rows else []
    noted = len(header) == 3 and header[2] == NOTE_COLUMN
    if noted:
        header = header[:2]
    if header not in HEADERS.values():
        raise ConfigError(f"{path}: not a demand (load,resources) or capacity (resource,loads) CSV")
    metric = "demand" if header == HEADERS["demand"] else "capacity"
    table: Table = {}
    notes: Notes = {}
    for row in rows[1:]:
        try:
            key = float(row[0])
            raw = row[1].strip() if len(row) > 1 else ""
            value = None if raw in _EMPTY else float(raw)
        except ValueError:
            raise ConfigError(f"{path}: row {row!r} is not two numbers") from None
        table[key] = value
        note = _note(*row[2].split()) if noted and len(row) > 2 else ""
        if note:
            notes[key] = note
    return metric, table, notes


def to_rows(table: Table, notes: Notes | None = None) -> list[dict[str, Any]]:
    """The table as the result and analysis JSON files hold it."""
    words = notes or {}
    return [{"key": k, "value": v, "inferred": INFERRED in words.get(k, "").split(),
             "undecided": UNDECIDED in words.get(k, "").split()} for k, v in sorted(table.items())]


def from_rows(rows: Any) -> Table | None:
    """The table of a result JSON's ``table`` entry; None when the run wrote none yet."""
    found = from_rows_noted(rows)
    return None if found is None else found[0]


def from_rows_noted(rows: Any) -> tuple[Table, Notes] | None:
    if not isinstance(rows, list):
        return None
    table: Table = {}
    notes: Notes = {}
    for row in rows:
        value = row.get("value")
        key = float(row["key"])
        table[key] = None if value is None else float(value)
        note = _note(*(w for w in (INFERRED, UNDECIDED) if row.get(w)))
        if note:
            notes[key] = note
    return table, notes


def shown(value: float | None, note: str = "", fmt: Callable[[float], str] = fmt_value) -> str:
    """One cell of a printed table: the value, "none passed" or "undecided", and its note."""
    if value is None:
        text = "undecided" if UNDECIDED in note.split() else "none passed"
        return text + (" (inferred)" if INFERRED in note.split() else "")
    return fmt(value) + (f" ({note})" if note else "")


def format_table(metric: str, table: Table, notes: Notes | None = None, indent: str = "  ") -> list[str]:
    """The table as ``bench run`` and ``bench analyze`` print it, notes beside the values."""
    head = ("load", "resources") if metric == "demand" else ("resources", "max load")
    lines = [f"{indent}{head[0]:>12}  {head[1]:>12}"]
    for key in sorted(table):
        lines.append(f"{indent}{fmt_value(key):>12}  {shown(table[key], (notes or {}).get(key, '')):>12}")
    return lines + legend(notes, indent)


def legend(notes: Notes | None, indent: str = "  ") -> list[str]:
    """What the notes of a table mean, one line each, only for the notes it has."""
    words = {w for note in (notes or {}).values() for w in note.split()}
    lines = []
    if INFERRED in words:
        lines.append(f"{indent}inferred: given by the monotone assumption (the lower bound, a heavier load's "
                     "demand, or the sizing probe's verdict); no experiment measured it")
    if UNDECIDED in words:
        lines.append(f"{indent}undecided: an experiment that could change it ended in error (no verdict)")
    return lines


#: the method's experiment length and warm-up: the defaults of an Execution
METHOD_DURATION = float(ExecutionParams.model_fields["duration"].default)
METHOD_WARMUP = float(ExecutionParams.model_fields["warmup"].default)


def length_note(duration: float, warmup: float, indent: str = "  ") -> list[str]:
    """A line under the table when its experiments were shorter than the method's.

    A short experiment judges the first minutes of a SUT, and those can differ from its
    long run: one quarter-core UC1 instance failed 5,000 records/s in 90-s experiments
    (30-s warm-up) three times and passed it in 300-s ones (60-s warm-up), on 2-core
    machines of the same kind (docs/measurements-log.md); its
    micro-batches grow for minutes until their fixed cost is shared by enough records.
    The table is then right for the experiments that were run, and a reader must be
    told which those were. The bar is the method's default for every use case:
    a UC4 run of 300 s gets no note, although the method's studies ran UC4 for 600 s."""
    if not 0 < duration < METHOD_DURATION:
        return []
    return [f"{indent}note: {duration:g}-s experiments ({warmup:g}-s warm-up), shorter than the method's "
            f"default of {METHOD_DURATION:g} s: a verdict near an instance's capacity can differ in the long run "
            f"(--duration {METHOD_DURATION:g} --warmup {METHOD_WARMUP:g} measures it)"]


def slo_override_notes(own: Iterable[Any], judged: Iterable[Any], indent: str = "  ") -> list[str]:
    """A line under the table for every SLO judged with other properties than its
    benchmark states (``own`` and ``judged``: objects with ``name`` and ``properties``).

    The execution decides, not the benchmark: a use case's default execution can
    loosen a threshold its short experiments cannot resolve (UC4 judges its 120-s
    experiments at 5 % of the load, where the benchmark says 1 %), and so can
    ``--threshold``. The verdicts are then right for that threshold, and a reader
    comparing the table with another tool's must see which one it was."""
    stated = {slo.name: slo.properties for slo in own}
    lines = []
    for slo in judged:
        base = stated.get(slo.name)
        if base is None or base == slo.properties:
            continue
        changed = sorted(k for k in {*base, *slo.properties} if base.get(k) != slo.properties.get(k))
        now = ", ".join(f"{k}={slo.properties[k]!r}" for k in changed if k in slo.properties)
        was = ", ".join(f"{k}={base[k]!r}" for k in changed if k in base)
        lines.append(f"{indent}note: SLO {slo.name} judged with {now or 'none of its properties'}; "
                     f"the benchmark states {was or 'none'}")
    return lines


def write_run_table(store: ResultStore, metric: str, table: Table, final: bool = True,
                    notes: Notes | None = None) -> None:
    """``exp<id>_demand.csv`` or ``exp<id>_capacity.csv``, and the table in the result JSON.

    ``final=False`` writes the provisional table (``exp<id>_demand.provisional.csv``)
    that a run keeps up to date while it goes on; the final one replaces it.
    """
    write_csv(store.table_path(metric, final), metric, table, notes)
    if final:
        store.table_path(metric, final=False).unlink(missing_ok=True)
    store.record_table(metric, to_rows(table, notes), complete=final)
