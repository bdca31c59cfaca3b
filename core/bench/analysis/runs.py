"""One run's files in a results folder, found by the names of the Theodolite method's result files.

The reference's notebooks find lag series by a substring of the SLO's name and split
names on ``_``; this module parses the same names with one exact pattern, so that
``exp1`` never picks up ``exp10``'s files (the reference's ``startswith("exp1")``
would) and a stray file cannot shift a column. Which SLOs' series the offline
analysis re-evaluates, their registered types say (:func:`bench.api.trend_slos`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bench.analysis.reference_names import reference_files
from bench.api import SloType, trend_slos
from bench.config.base import ConfigError
from bench.results import tables
from bench.slo_math import override_properties

#: ``exp<id>_<load>_<resources>_sli_<sli-name>_<repetition>.csv``
if TYPE_CHECKING:
    from bench.plugins import Registry

SLI_FILE = re.compile(r"^exp(\d+)_([^_]+)_([^_]+)_sli_([^_]+)_(\d+)\.csv$")
#: ``exp<id>_<load>_<resources>_info_<sli-name>_<repetition>.csv`` (informational SLIs, bench.results.info)
INFO_FILE = re.compile(r"^exp(\d+)_([^_]+)_([^_]+)_info_([^_]+)_(\d+)\.csv$")

Key = tuple[float, float]


@dataclass(frozen=True)
class SliFile:
    """One repetition's series of one SLI for one (load, resources) pair."""

    load: float
    resources: float
    name: str
    repetition: int
    path: Path


@dataclass
class RunFiles:
    """Everything one experiment id left in a folder; JSON documents are None when absent."""

    directory: Path
    exp_id: int
    sli: list[SliFile] = field(default_factory=list)
    #: the informational SLIs' series (sampled, judged by no SLO)
    info: list[SliFile] = field(default_factory=list)
    result: dict[str, Any] | None = None
    execution: dict[str, Any] | None = None
    benchmark: dict[str, Any] | None = None
    environment: dict[str, Any] | None = None

    @property
    def label(self) -> str:
        return f"{self.directory.name or self.directory}/exp{self.exp_id}"

    def slos(self) -> list[dict[str, Any]]:
        """The run's SLOs with the execution's overrides applied; a run without its
        benchmark file has the default SLO (what a use case's default Benchmark holds)."""
        from bench.api import default_slo

        found = (self.benchmark or {}).get("slos")
        slos = [dict(s) for s in found if isinstance(s, dict)] if isinstance(found, list) else [default_slo()]
        entries = [o for o in (self.execution or {}).get("slos") or [] if isinstance(o, dict)]
        names = {s.get("name") for s in slos}
        # an execution SLO with a type, or named as no benchmark SLO is, is one of its own
        # (bench.config.model.effective_slos): judged beside the benchmark's, in place of one of its name
        own = {str(o.get("name") or o.get("sloType")): {
            "name": str(o.get("name") or o.get("sloType")), "sloType": str(o.get("sloType") or o.get("name")),
            "properties": dict(o.get("properties") or {})}
            for o in entries if o.get("sloType") is not None or o.get("name") not in names}
        overrides = {o.get("name"): o for o in entries if o.get("sloType") is None and o.get("name") in names}
        for slo in slos:
            override = overrides.get(slo.get("name"))
            if override is not None:
                # as the run judged it: an override's threshold replaces the benchmark's of any form
                slo["properties"] = override_properties(slo.get("properties") or {}, override.get("properties") or {})
        slos = [own.pop(str(s.get("name"))) if s.get("name") in own else s for s in slos]
        return [*slos, *own.values()]

    def trend_slo_names(self) -> list[str]:
        """The SLOs the offline analysis re-evaluates, as their registered types say."""
        return trend_slos(self.slos(), slo_types())

    def trend_files(self) -> dict[Key, list[SliFile]]:
        """The first trend SLO's series per (load, resources), repetitions in order."""
        names = self.trend_slo_names()[:1]
        grouped: dict[Key, list[SliFile]] = {}
        for f in self.sli:
            if f.name in names:
                grouped.setdefault((f.load, f.resources), []).append(f)
        for files in grouped.values():
            files.sort(key=lambda f: (f.repetition, f.name))
        return dict(sorted(grouped.items()))

    def other_sli_names(self) -> list[str]:
        """SLO series other than the trend SLOs' (dropped records, ...), if any were stored."""
        trend = set(self.trend_slo_names())
        return sorted({f.name for f in self.sli if f.name not in trend})

    def metric(self) -> str:
        """demand or capacity, as the run was configured (demand when nothing says)."""
        ex = (self.execution or {}).get("execution") or {}
        metric = ex.get("metric") or (self.result or {}).get("metric") or "demand"
        return "capacity" if metric == "capacity" else "demand"

    def records(self) -> dict[Key, dict[str, Any]]:
        """The run's own experiment records (result JSON) per (load, resources)."""
        out: dict[Key, dict[str, Any]] = {}
        for e in (self.result or {}).get("experiments") or []:
            try:
                out[(float(e["load"]), float(e["resources"]))] = e
            except (KeyError, TypeError, ValueError):
                continue
        return out

    def recorded_table(self) -> dict[float, float | None] | None:
        """The demand/capacity table the run itself wrote into its result JSON."""
        return tables.from_rows((self.result or {}).get("table"))

    def recorded_run_table(self) -> tables.RunTable | None:
        """The run's own table with its notes (inferred, undecided), None before it wrote one.

        Built again from the run's stored verdicts (every SLO counted) by the rules of
        :mod:`bench.results.tables`, which for a run of this version is the table it wrote; a run
        stored by an earlier version gets its load direction, errors and lower-bound
        entries read as they are meant instead of as its file says.
        """
        found = tables.from_rows_noted((self.result or {}).get("table"))
        if found is None:
            return None
        verdicts = [(load, res, None if self.outcome(load, res) == "error" else bool(record.get("passed")))
                    for (load, res), record in self.records().items()]
        if not verdicts:
            return tables.RunTable(self.metric(), found[0], found[1], self.decreasing())
        return self.table_from_verdicts(verdicts)

    def decreasing(self) -> bool:
        """Whether the run's load type has its heaviest load at the smallest value."""
        name = ((self.execution or {}).get("load") or {}).get("loadType")
        for load_type in (self.benchmark or {}).get("loadTypes") or []:
            if isinstance(load_type, dict) and load_type.get("typeName") == name:
                return load_type.get("direction") == "decreasing"
        return False

    def lower_bound(self) -> bool:
        """Whether the run's search assumed the lower bound (the default restriction)."""
        strategy = ((self.execution or {}).get("execution") or {}).get("strategy")
        if not isinstance(strategy, dict):
            return True
        return "LowerBound" in (strategy.get("restrictions") or [])

    def configured(self, what: str) -> list[float] | None:
        """The configured ``load`` or ``resources`` values, None when the configuration is absent."""
        section = (self.execution or {}).get(what) or {}
        values = section.get("loadValues" if what == "load" else "resourceValues")
        try:
            return [float(v) for v in values] if isinstance(values, list) else None
        except (TypeError, ValueError):
            return None

    def complete(self) -> bool:
        """Whether the run finished its search (its table is final)."""
        doc = self.result or {}
        if "complete" in doc:
            return bool(doc["complete"])
        return doc.get("table") is not None  # written once, at the end, before provisional tables existed

    def outcome(self, load: float, resources: float) -> str | None:
        """``passed``, ``failed`` or ``error`` as the run recorded it, None when unrecorded."""
        record = self.records().get((load, resources))
        if record is None:
            return None
        outcome = record.get("outcome")
        return str(outcome) if outcome else ("passed" if record.get("passed") else "failed")

    def table_from_verdicts(self, verdicts: list[tables.Verdict], metric: str | None = None) -> tables.RunTable:
        """The table of ``verdicts`` under this run's configuration (loads, direction, lower bound)."""
        return tables.build_run_table(
            metric or self.metric(), verdicts, loads=self.configured("load"), resources=self.configured("resources"),
            lower_bound=self.lower_bound(), decreasing=self.decreasing(), complete=self.complete(),
            answered=self.answered(),
        )

    def answered(self) -> dict[Key, bool]:
        """Verdicts the run entered without an experiment (the sizing probe's), per (load, resources)."""
        out: dict[Key, bool] = {}
        for a in (self.result or {}).get("answered") or []:
            try:
                out[(float(a["load"]), float(a["resources"]))] = bool(a["passed"])
            except (KeyError, TypeError, ValueError):
                continue
        return out

    def trend_axis_label(self) -> str:
        """How the first trend SLO's type titles its series (``SloType.axis_label``)."""
        names = self.trend_slo_names()
        for slo in self.slos():
            if names and slo.get("name") == names[0]:
                return slo_types()[str(slo.get("sloType"))].axis_label(slo.get("properties") or {})
        return "value"

    def trend_slo_properties(self) -> dict[str, Any]:
        """The first trend SLO's properties (benchmark, then execution overrides)."""
        names = self.trend_slo_names()
        for slo in self.slos():
            if names and slo.get("name") == names[0]:
                return dict(slo.get("properties") or {})
        return {}

    def warmup(self) -> float | None:
        props = self.trend_slo_properties()
        if props.get("warmup") is not None:
            return float(props["warmup"])
        ex = self._params()
        return float(ex["warmup"]) if ex.get("warmup") is not None else None

    def _params(self) -> dict[str, Any]:
        """The stored execution's ``execution`` block; {} where a file written by hand or
        by another tool has none that is a mapping."""
        params = self.execution.get("execution") if isinstance(self.execution, dict) else None
        return params if isinstance(params, dict) else {}

    def sample_interval(self) -> float | None:
        ex = self._params()
        return float(ex["sampleInterval"]) if ex.get("sampleInterval") is not None else None

    def duration(self) -> float:
        """Each experiment's length from the stored execution; 0 where a file written by
        hand or by another tool has none that is a number (its table then gets no note
        on short experiments, rather than a failed command)."""
        value = self._params().get("duration")
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0

    def load_type(self) -> str:
        load = (self.execution or {}).get("load") or {}
        return str(load.get("loadType") or "load")

    def resource_type(self) -> str:
        res = (self.execution or {}).get("resources") or {}
        return str(res.get("resourceType") or "resources")

    def target_rate(self, load: float, resources: float) -> float | None:
        """Records/s the generators were asked for (median over repetitions), if recorded.

        ``thresholdRelToRate`` is relative to this rate, as in ``bench run``; it equals
        the load value when each key sends one record per second.
        """
        record = self.records().get((load, resources))
        if record is None:
            return None
        per_rep: dict[int, float] = {}
        for g in record.get("generators") or []:
            rep = int(g.get("repetition", 0))
            per_rep[rep] = per_rep.get(rep, 0.0) + float(g.get("target_rate") or 0.0)
        rates = sorted(r for r in per_rep.values() if r > 0)
        if not rates:
            return None
        mid = len(rates) // 2
        return rates[mid] if len(rates) % 2 else (rates[mid - 1] + rates[mid]) / 2.0


def slo_types() -> Mapping[str, SloType]:
    """The registered SLO types (the plugins are loaded once per process)."""
    return registry().slos


def registry() -> Registry:
    """The installed plugins, loaded once per process: the SLO types ``bench analyze``
    judges with are the ones ``bench run`` judged with."""
    global _REGISTRY
    if _REGISTRY is None:
        from bench.plugins import load_plugins

        _REGISTRY = load_plugins()
    return _REGISTRY


_REGISTRY: Registry | None = None


class _Stored(BaseModel):
    """The fields of a stored result the analysis reads, typed strictly: ``"passed":
    "false"`` is text, not a verdict (a lax parse would read it as a pass). Other fields
    (of another version or tool) are kept and not read."""

    model_config = ConfigDict(extra="allow", strict=True, allow_inf_nan=False)


class _Generator(_Stored):
    repetition: int = 0
    target_rate: float | None = None
    achieved_rate: float | None = None


class _Experiment(_Stored):
    load: float
    resources: float
    passed: bool
    outcome: Literal["passed", "failed", "error", ""] = ""
    valid: bool = True
    generators: list[_Generator] = Field(default_factory=list)
    slos: dict[str, dict[str, Any]] = Field(default_factory=dict)
    info: dict[str, dict[str, Any]] = Field(default_factory=dict)
    faults: list[dict[str, Any]] = Field(default_factory=list)
    early_stopped: bool = False
    unstable: bool = False
    cause: str | None = None
    cores_per_instance: float | None = None


class _Row(_Stored):
    key: float
    value: float | None
    inferred: bool = False
    undecided: bool = False


class _Result(_Stored):
    experiments: list[_Experiment] = Field(default_factory=list)
    metric: Literal["demand", "capacity"] | None = None
    table: list[_Row] | None = None
    complete: bool = False


def check_result(path: Path, doc: dict[str, Any]) -> None:
    """A result JSON (``exp<id>-result.json``) through the schema above: a hand-edited,
    truncated or foreign one is one line naming the file and the field."""
    try:
        _Result.model_validate(doc)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        got = err.get("input")
        shown = f" (got {got!r:.40})" if not isinstance(got, dict | list) else ""
        raise ConfigError(f"{path}: {where}: {err['msg'].lower()}{shown}; was it edited by hand, or written by "
                          "another tool?") from None


def _json(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not readable JSON ({exc})") from None
    return doc if isinstance(doc, dict) else None


def experiment_ids(directory: Path) -> list[int]:
    """Ids with any result file: a folder of bare CSVs (copied from a notebook) counts."""
    ids: set[int] = set()
    pattern = re.compile(r"^exp(\d+)[_-]")
    for entry in directory.iterdir():
        match = pattern.match(entry.name)
        if match:
            ids.add(int(match.group(1)))
    return sorted(ids)


def open_run(path: str | Path, exp_id: int | None = None) -> RunFiles:
    """The run ``exp_id`` (default: the newest) in folder ``path``.

    ``path`` may also be ``FOLDER:ID`` so that one command line can name two runs of
    one folder (``bench report results:0 results:1``).
    """
    raw = str(path)
    folder = Path(raw)
    if not folder.is_dir() and ":" in raw:
        head, _, tail = raw.rpartition(":")
        if tail.isdigit() and Path(head).is_dir():
            folder, exp_id = Path(head), int(tail) if exp_id is None else exp_id
    if not folder.is_dir():
        raise ConfigError(f"{raw}: not a results folder")
    ids = experiment_ids(folder)
    if not ids:
        raise ConfigError(f"{folder}: no result files (exp<id>_...) in this folder")
    if exp_id is None:
        exp_id = ids[-1]
    elif exp_id not in ids:
        raise ConfigError(f"{folder}: no files of exp{exp_id} (found {', '.join(f'exp{i}' for i in ids)})")
    run = RunFiles(folder, exp_id)
    for entry in sorted(folder.iterdir()):
        match = SLI_FILE.match(entry.name) or INFO_FILE.match(entry.name)
        if not match or int(match.group(1)) != exp_id:
            continue
        try:
            load, resources = float(match.group(2)), float(match.group(3))
        except ValueError:
            continue
        found = SliFile(load, resources, match.group(4), int(match.group(5)), entry)
        (run.sli if match.re is SLI_FILE else run.info).append(found)
    run.result = _json(folder / f"exp{exp_id}-result.json")
    if run.result is not None:
        check_result(folder / f"exp{exp_id}-result.json", run.result)
    run.execution = _json(folder / f"exp{exp_id}-execution-configuration.json")
    run.benchmark = _json(folder / f"exp{exp_id}-benchmark-configuration.json")
    run.environment = _json(folder / f"exp{exp_id}-environment.json")
    # files named as the reference names them (a Theodolite results folder)
    taken = [f.path for f in run.sli + run.info]
    run.sli += [SliFile(*f) for f in reference_files(folder, exp_id, run.benchmark, taken)]
    return run
