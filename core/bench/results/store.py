"""Result files, written as each repetition and experiment finishes.

Names and columns are those of the Theodolite method's result files, so existing
analysis notebooks work.
Every write goes to a temporary file in the same folder and is renamed into place, so
an interrupted run leaves only complete files. What ``--resume`` reads back:
``exp<id>-result.json`` holds every finished experiment; of an unfinished one, each
finished repetition left its SLI files and then ``exp<id>_<load>_<res>_generator_<rep>.json``
(its generator reports), written last so that its presence says the repetition is
complete. ``exp<id>-run.json`` reserves the id (created exclusively) and keeps what
the configuration files do not: the use case and the ``--set`` values.

The demand (capacity) table is ``exp<id>_demand.provisional.csv`` while the run goes
on, and ``exp<id>_demand.csv`` only once the search finished, so a reader can tell a
partial table from a final one (the result JSON says ``"complete"`` too);
:mod:`bench.results.tables` builds and writes it, at the paths this module names.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.api import Series
from bench.errors import UserError
from bench.results.result_file import ResultFile, atomic_output, entry_text

#: any file named ``exp<N>`` followed by a non-digit reserves the id N
_ANY_EXP_FILE = re.compile(r"^exp(\d+)(?!\d)")


def series_csv(series: Series, keep_gaps: bool = False) -> str:
    """A series as bench stores it (``labels,timestamp,value``), SLO and informational
    files alike. NaN is a sample with no value (no record's latency in that interval).
    An SLO file leaves it out: its readers refuse non-finite values, so bench analyze
    would read none of a latency file that held it (the SLO evaluator judges the same
    form: ``bench.slo.evaluator.as_stored``). An informational file keeps it (``keep_gaps``) as ``nan``, so a plot shows
    the gap; its readers skip such values (``bench.analysis.inputs.check_series``)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["labels", "timestamp", "value"])
    for ts, value in zip(series.timestamps, series.values, strict=True):
        if math.isfinite(float(value)) or (keep_gaps and math.isnan(float(value))):
            writer.writerow([series.labels, f"{ts:.3f}", repr(float(value))])
    return buf.getvalue()


def atomic_write(path: Path, text: str) -> None:
    with atomic_output(path) as out:
        out.write(text.encode("utf-8"))


def read_object(path: Path) -> dict[str, Any] | None:
    """A result file's JSON object, or None where it is missing, unreadable or not an object."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def fmt_value(value: float) -> str:
    """Loads and resources print as integers when they are integers (``exp1_2000_1_...``)."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


@dataclass
class ExperimentRecord:
    load: float
    resources: float
    passed: bool
    valid: bool = True
    slos: dict[str, dict[str, Any]] = field(default_factory=dict)
    generators: list[dict[str, Any]] = field(default_factory=list)
    started: float = 0.0
    finished: float = 0.0
    early_stopped: bool = False
    #: a trend verdict that the repetitions or the noise could flip (bench.analysis.confidence)
    unstable: bool = False
    #: ``passed``, ``failed`` (verdicts of the SLOs) or ``error`` (no verdict: see ``cause``)
    outcome: str = ""
    cause: str | None = None
    #: every failed attempt of a repetition: {"repetition", "attempt", "cause"}
    faults: list[dict[str, Any]] = field(default_factory=list)
    #: summary of the informational SLIs (bench.results.info.summarise): {sli: {mean, median, ...}}
    info: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: why the verdict may be the machine's rather than the SUT's: measured under CPU steal
    #: (bench.execution.disturbance); None: nothing known
    disturbed: str | None = None
    #: CPU one SUT instance really had, in cores (a CPU limit counts), for cost and efficiency;
    #: None when the deployment declares none
    cores_per_instance: float | None = None

    def __post_init__(self) -> None:
        if not self.outcome:  # records of runs from before outcomes existed
            self.outcome = "passed" if self.passed else "failed"


@dataclass
class Repetition:
    """One finished repetition: its SLI series (by SLI name) and generator reports."""

    series: dict[str, Series]
    generators: list[dict[str, Any]]
    early_stopped: bool = False
    #: why it ended early, or what was undecided when it ran its full duration
    early_decisions: list[str] = field(default_factory=list)
    #: SLO name -> [low, high]: the slope bounds of the early decision that ended it, the
    #: evidence its few recorded samples may not hold (``bench.analysis.confidence``)
    decided: dict[str, list[float]] = field(default_factory=dict)
    #: the SLOs its early end waited for, the others settled by the repetitions before
    #: it; None: every SLO
    waited_for: list[str] | None = None


def _entry(record: ExperimentRecord) -> str:
    return entry_text(asdict(record), _json_default)


class ResultStore:
    def __init__(self, directory: str | Path, exp_id: int) -> None:
        self.dir = Path(directory)
        self.id = exp_id
        self.experiments: list[ExperimentRecord] = []
        #: the result file's metric and table as last written (or read back by --resume):
        #: each write keeps them without reading the whole file again, whose parse grew
        #: with every experiment (a soak's RSS with it)
        self._metric: str | None = None
        self._table: list[dict[str, Any]] | None = None
        #: verdicts entered without an experiment (the sizing probe's): (load, resources) ->
        #: {"load", "resources", "passed", "why"}, the result file's ``"answered"``
        self.answered: dict[tuple[float, float], dict[str, Any]] = {}
        #: the result file, whose earlier entries each write copies rather than keeps
        self._file = ResultFile(self.path(f"exp{exp_id}-result.json"))

    # ---------------------------------------------------------------- ids

    @staticmethod
    def existing_ids(directory: str | Path) -> list[int]:
        pattern = re.compile(r"^exp(\d+)-execution-configuration\.json$")
        ids = []
        base = Path(directory)
        if base.is_dir():
            for entry in base.iterdir():
                match = pattern.match(entry.name)
                if match:
                    ids.append(int(match.group(1)))
        return sorted(ids)

    @classmethod
    def next_id(cls, directory: str | Path) -> int:
        ids = cls.reserved_ids(directory)
        return ids[-1] + 1 if ids else 0

    @staticmethod
    def reserved_ids(directory: str | Path) -> list[int]:
        """Every id that any ``exp<N>...`` file in the folder uses (a bare CSV counts too)."""
        base = Path(directory)
        if not base.is_dir():
            return []
        return sorted({int(m.group(1)) for e in base.iterdir() if (m := _ANY_EXP_FILE.match(e.name))})

    @classmethod
    def reserve_id(cls, directory: str | Path, meta: dict[str, Any]) -> int:
        """The next free id, claimed by creating ``exp<N>-run.json`` with O_EXCL.

        Two runs started in one folder at the same moment both see N free; only one of
        them can create the file, the other moves on to N + 1.
        """
        base = Path(directory)
        try:
            base.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"--results {base}: cannot create the folder ({exc.strerror})") from None
        exp_id = cls.next_id(base)
        while True:
            path = base / f"exp{exp_id}-run.json"
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                exp_id += 1
                continue
            except OSError as exc:
                raise UserError(f"--results {base}: cannot write there ({exc.strerror})") from None
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(json.dumps(meta, indent=2, sort_keys=True))
            return exp_id

    # ---------------------------------------------------------------- paths

    def path(self, name: str) -> Path:
        return self.dir / name

    def sli_path(self, load: float, resources: float, slo_name: str, repetition: int) -> Path:
        return self.path(
            f"exp{self.id}_{fmt_value(load)}_{fmt_value(resources)}_sli_{slo_name}_{repetition}.csv"
        )

    def repetition_path(self, load: float, resources: float, repetition: int) -> Path:
        """Generator reports of one repetition; no ``sli`` or SLO name in it, so analyses skip it."""
        return self.path(f"exp{self.id}_{fmt_value(load)}_{fmt_value(resources)}_generator_{repetition}.json")

    def table_path(self, metric: str, final: bool = True) -> Path:
        return self.path(f"exp{self.id}_{metric}.csv" if final else f"exp{self.id}_{metric}.provisional.csv")

    # ---------------------------------------------------------------- writers

    def write_configuration(self, execution: dict[str, Any], benchmark: dict[str, Any]) -> None:
        atomic_write(self.path(f"exp{self.id}-execution-configuration.json"), json.dumps(execution, indent=2))
        atomic_write(self.path(f"exp{self.id}-benchmark-configuration.json"), json.dumps(benchmark, indent=2))

    def check_configuration(self, execution: dict[str, Any], benchmark: dict[str, Any], meta: dict[str, Any]) -> None:
        """Refuse to resume a run under a configuration other than the one it was measured with.

        Results of different durations, loads or use cases mixed under one id would
        look like one consistent run; the message names the first differences.
        """
        stored = {
            "execution": self._read_json(f"exp{self.id}-execution-configuration.json"),
            "benchmark": self._read_json(f"exp{self.id}-benchmark-configuration.json"),
        }
        asked: dict[str, Any] = {"execution": execution, "benchmark": benchmark}
        if self.path(f"exp{self.id}-run.json").exists():
            run = self._read_json(f"exp{self.id}-run.json")
            stored["run"] = {k: run.get(k) for k in ("useCase", "params")}
            asked["run"] = {k: meta.get(k) for k in ("useCase", "params")}
        diffs = _differences(json.loads(json.dumps(stored, default=str)), json.loads(json.dumps(asked, default=str)))
        if diffs:
            shown = "; ".join(f"{path}: stored {old} vs asked {new}" for path, old, new in diffs[:3])
            more = f" (and {len(diffs) - 3} more)" if len(diffs) > 3 else ""
            raise UserError(
                f"--resume: exp{self.id} in {self.dir} was run with another configuration ({shown}{more}); "
                "give the same options, or run without --resume to start a new run"
            )

    def _read_json(self, name: str) -> dict[str, Any]:
        path = self.path(name)
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise UserError(f"--resume: {path} is missing; cannot check what the run was") from None
        except (OSError, ValueError) as exc:
            raise UserError(f"--resume: {path} is corrupt or partial ({_reason(exc)})") from None
        if not isinstance(doc, dict):
            raise UserError(f"--resume: {path} is corrupt (not a JSON object)")
        return doc

    def write_series(self, load: float, resources: float, slo_name: str, repetition: int, series: Series) -> Path:
        path = self.sli_path(load, resources, slo_name, repetition)
        atomic_write(path, series_csv(series))
        return path

    def write_repetition(
        self, load: float, resources: float, repetition: int, rep: Repetition, slis: dict[str, str]
    ) -> None:
        """Both files of a finished repetition: SLI series first, the generator report last.

        ``slis`` maps each SLO name to its SLI; the report file names the SLI files, so
        that resuming can tell a complete repetition from one that a kill cut short.
        """
        written = []
        for slo_name, sli in slis.items():
            series = rep.series.get(sli)
            if series is not None:
                self.write_series(load, resources, slo_name, repetition, series)
                written.append(slo_name)
        doc = {"repetition": repetition, "generators": rep.generators, "early_stopped": rep.early_stopped,
               "early_decisions": rep.early_decisions, "decided": rep.decided, "waited_for": rep.waited_for,
               "series": written}
        atomic_write(self.repetition_path(load, resources, repetition),
                     json.dumps(doc, indent=2, default=_json_default))

    def load_repetitions(self, load: float, resources: float, slis: dict[str, str]) -> list[Repetition]:
        """The repetitions 0, 1, ... of an unfinished experiment that a previous run completed."""
        found: list[Repetition] = []
        while (path := self.repetition_path(load, resources, len(found))).exists():
            try:
                doc = json.loads(path.read_text(encoding="utf-8"))
                names = list(doc["series"])
                generators = list(doc["generators"])
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise UserError(f"--resume: {path} is corrupt or partial ({_reason(exc)})") from None
            series: dict[str, Series] = {}
            for slo_name in names:
                sli_file = self.sli_path(load, resources, slo_name, len(found))
                try:
                    series[slis.get(slo_name, slo_name)] = read_series(sli_file)
                except FileNotFoundError:
                    raise UserError(f"--resume: {sli_file} is missing ({path.name} lists it)") from None
                except (OSError, ValueError, IndexError) as exc:
                    raise UserError(f"--resume: {sli_file} is corrupt or partial ({_reason(exc)})") from None
            found.append(Repetition(series, generators, bool(doc.get("early_stopped")),
                                    [str(x) for x in doc.get("early_decisions") or []],
                                    _decided(doc.get("decided")), _names(doc.get("waited_for"))))
        return found

    def add_experiment(self, record: ExperimentRecord) -> None:
        key = (record.load, record.resources)
        self.experiments = [e for e in self.experiments if (e.load, e.resources) != key]
        self.experiments.append(record)
        entry = _entry(record)
        # the informational summaries are in that entry, and nothing of the run reads
        # them again: the record kept for the table and the verdicts goes without them
        record.info = {}
        self._write_result_json(rows=None, metric=None, complete=False, fresh={key: entry})

    def add_answered(self, load: float, resources: float, passed: bool, why: str) -> None:
        """A verdict not measured, kept with the next write of the result file."""
        self.answered[(float(load), float(resources))] = {"load": load, "resources": resources, "passed": passed,
                                                          "why": why}

    def record_table(self, metric: str, rows: list[dict[str, Any]], complete: bool) -> None:
        """The table in the result JSON (rows as :func:`bench.results.tables.to_rows` gives them)."""
        self._write_result_json(rows=rows, metric=metric, complete=complete)

    def _write_result_json(self, rows: list[dict[str, Any]] | None, metric: str | None, complete: bool,
                           fresh: dict[Any, str] | None = None) -> None:
        self._metric = metric or self._metric
        if rows is not None:
            self._table = rows
        records: dict[Any, ExperimentRecord] = {(e.load, e.resources): e for e in self.experiments}
        doc = {"id": self.id, "experiments": None, "metric": self._metric, "table": self._table,
               "complete": complete}
        if self.answered:
            doc["answered"] = list(self.answered.values())
        # records read back by --resume are serialized at their first write
        self._file.write(list(records), dict(fresh or {}), lambda key: _entry(records[key]), doc, _json_default)

    # ---------------------------------------------------------------- reading back

    def load_previous(self) -> list[ExperimentRecord]:
        """The experiments a previous (possibly interrupted) run of this id finished."""
        path = self.path(f"exp{self.id}-result.json")
        if not path.exists():
            return []
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            self.experiments = [ExperimentRecord(**e) for e in doc.get("experiments", [])]
            self._metric, self._table = doc.get("metric"), doc.get("table")
            self.answered = {(float(a["load"]), float(a["resources"])): dict(a) for a in doc.get("answered") or []}
            self._file.forget()
        except (OSError, ValueError, TypeError, AttributeError) as exc:
            raise UserError(f"--resume: {path} is corrupt or partial ({_reason(exc)})") from None
        return list(self.experiments)


def bounds_pair(raw: Any) -> list[float] | None:
    """``[low, high]`` of an early decision as a result file stores it; None for any other form."""
    if isinstance(raw, list | tuple) and len(raw) == 2 and all(isinstance(b, int | float) for b in raw):
        return [float(raw[0]), float(raw[1])]
    return None


def _decided(raw: Any) -> dict[str, list[float]]:
    """A repetition file's early-decision bounds; files from before they were kept have none."""
    if not isinstance(raw, dict):
        return {}
    return {str(name): pair for name, bounds in raw.items() if (pair := bounds_pair(bounds)) is not None}


def _names(raw: Any) -> list[str] | None:
    return [str(x) for x in raw] if isinstance(raw, list) else None


def _reason(exc: BaseException) -> str:
    """The first line of an exception, short enough for a one-line message."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]


def _differences(old: Any, new: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """(dotted path, old, new) of every leaf where two JSON documents differ."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[tuple[str, Any, Any]] = []
        for key in list(old) + [k for k in new if k not in old]:
            out += _differences(old.get(key), new.get(key), f"{path}.{key}" if path else str(key))
        return out
    return [] if old == new else [(path, old, new)]


def _json_default(obj: Any) -> Any:
    try:
        import numpy as np

        if isinstance(obj, np.generic):
            return obj.item()
    except ImportError:  # pragma: no cover
        pass
    if isinstance(obj, float | int | str | bool) or obj is None:
        return obj
    return str(obj)


def read_series(path: str | Path) -> Series:
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    if not rows or rows[0] != ["labels", "timestamp", "value"]:
        raise ValueError(f"{path}: not an SLI file (header {rows[:1]})")
    labels = rows[1][0] if len(rows) > 1 else ""
    return Series([float(r[1]) for r in rows[1:]], [float(r[2]) for r in rows[1:]], labels)
