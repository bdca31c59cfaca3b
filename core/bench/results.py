"""Result files, written as each experiment finishes.

Names and columns are the reference's (METHOD.md) so existing analysis notebooks work.
Every write goes to a temporary file in the same folder and is renamed into place, so
an interrupted run leaves only complete files; ``exp<id>-result.json`` holds every
finished experiment and is what ``--resume`` reads back.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.api import Series


def atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


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


class ResultStore:
    def __init__(self, directory: str | Path, exp_id: int) -> None:
        self.dir = Path(directory)
        self.id = exp_id
        self.experiments: list[ExperimentRecord] = []

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
        ids = cls.existing_ids(directory)
        return ids[-1] + 1 if ids else 0

    # ---------------------------------------------------------------- paths

    def path(self, name: str) -> Path:
        return self.dir / name

    def sli_path(self, load: float, resources: float, slo_name: str, repetition: int) -> Path:
        return self.path(
            f"exp{self.id}_{fmt_value(load)}_{fmt_value(resources)}_sli_{slo_name}_{repetition}.csv"
        )

    # ---------------------------------------------------------------- writers

    def write_configuration(self, execution: dict[str, Any], benchmark: dict[str, Any]) -> None:
        atomic_write(self.path(f"exp{self.id}-execution-configuration.json"), json.dumps(execution, indent=2))
        atomic_write(self.path(f"exp{self.id}-benchmark-configuration.json"), json.dumps(benchmark, indent=2))

    def write_series(self, load: float, resources: float, slo_name: str, repetition: int, series: Series) -> Path:
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["labels", "timestamp", "value"])
        for ts, value in zip(series.timestamps, series.values, strict=True):
            writer.writerow([series.labels, f"{ts:.3f}", repr(float(value))])
        path = self.sli_path(load, resources, slo_name, repetition)
        atomic_write(path, buf.getvalue())
        return path

    def add_experiment(self, record: ExperimentRecord) -> None:
        self._add_confidence(record)
        self.experiments = [
            e for e in self.experiments if (e.load, e.resources) != (record.load, record.resources)
        ]
        self.experiments.append(record)
        self._write_result_json(table=None, metric=None)

    def write_table(self, metric: str, table: dict[float, float | None], loads: Sequence[float]) -> None:
        """``exp<id>_demand.csv`` (load,resources) or ``exp<id>_capacity.csv`` (resource,loads).

        A key with no passing value keeps its row with an empty value (the JSON says
        None): the reference's notebooks read it as a missing value, and a reader sees
        that the load was tried, which a dropped row would hide.
        """
        header = ["load", "resources"] if metric == "demand" else ["resource", "loads"]
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(header)
        for key in sorted(table):
            value = table[key]
            writer.writerow([fmt_value(key), "" if value is None else fmt_value(value)])
        atomic_write(self.path(f"exp{self.id}_{metric}.csv"), buf.getvalue())
        self._write_result_json(table=table, metric=metric)

    def _add_confidence(self, record: ExperimentRecord) -> None:
        """The slope interval and margin of every lag-trend-like verdict, from its stored series.

        Read back from the SLI files that the engine writes before it records the
        experiment, so the numbers come from exactly the samples of the verdict; an SLO
        whose files or samples do not allow an error estimate gets none.
        """
        from bench import slo_math
        from bench.analysis.confidence import fit_repetition, judge

        for name, details in record.slos.items():
            slopes, threshold = details.get("slopes"), details.get("threshold")
            if not isinstance(slopes, list) or not isinstance(threshold, int | float) or "median" not in details:
                continue
            warmup = float(details.get("warmup") or 0.0)
            try:
                fits = []
                for rep in range(len(slopes)):
                    t, v = slo_math.usable(read_series(self.sli_path(record.load, record.resources, name, rep)),
                                           warmup, rep)
                    fits.append(fit_repetition(t, v))
                confidence = judge(fits, float(threshold))
            except (OSError, ValueError):
                continue
            details["confidence"] = confidence.as_dict()
            record.unstable = record.unstable or confidence.unstable

    def _write_result_json(self, table: dict[float, float | None] | None, metric: str | None) -> None:
        path = self.path(f"exp{self.id}-result.json")
        previous: dict[str, Any] = {}
        if path.exists():
            try:
                previous = json.loads(path.read_text())
            except (OSError, ValueError):
                previous = {}
        doc: dict[str, Any] = {
            "id": self.id,
            "experiments": [asdict(e) for e in self.experiments],
            "metric": metric or previous.get("metric"),
            "table": (
                [{"key": k, "value": v} for k, v in sorted(table.items())]
                if table is not None
                else previous.get("table")
            ),
        }
        atomic_write(path, json.dumps(doc, indent=2, default=_json_default))

    # ---------------------------------------------------------------- reading back

    def load_previous(self) -> list[ExperimentRecord]:
        """The experiments a previous (possibly interrupted) run of this id finished."""
        path = self.path(f"exp{self.id}-result.json")
        if not path.exists():
            return []
        doc = json.loads(path.read_text())
        self.experiments = [ExperimentRecord(**e) for e in doc.get("experiments", [])]
        return list(self.experiments)


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
