"""Re-evaluate stored lag series with other SLO settings, without running anything.

The procedure is the reference's offline analysis (its ``demand`` notebook code), in
bench's own functions:

1. per lag file, keep the samples whose time since the file's first sample is at
   least ``warmup`` seconds, and fit an ordinary least-squares line of lag on time;
   its slope (records/s) is the repetition's trend;
2. per (load, resources), the median of the repetitions' slopes (the mean of the two
   middle ones for an even count);
3. the experiment passes iff that median < threshold (strict);
4. demand: per load, the least resources among the passing experiments. Capacity:
   per resource amount, the greatest passing load.

Differences, all deliberate: a load (or resource amount) with no passing experiment
stays in the table with no value, where the reference drops it; a repetition with
fewer than two samples after the warm-up fails its experiment (the reference's
regression raises on it); the threshold takes every form the trend SLOs take
(``thresholdRelToLoad`` x the load value and ``thresholdRelToResources``,
``thresholdFromExpression`` as the reference computes them, bench's
``thresholdRelToRate`` x the generators' target records/s). Only the lag trend is
re-evaluated, as in the reference; an experiment where another SLO failed in the run
fails here too and says which, since ``bench run``'s table also required those.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench import slo_math
from bench.analysis.confidence import (
    DEFAULT_CONFIDENCE,
    Confidence,
    RepetitionFit,
    fit_repetition,
    judge,
    with_evidence,
)
from bench.analysis.runs import Key, RunFiles
from bench.config.model import ConfigError
from bench.results import tables
from bench.results.store import atomic_write, fmt_value, read_series

DEFAULT_THRESHOLD = 2000.0
DEFAULT_WARMUP = 60.0


#: the threshold forms of a re-evaluation, in the order a trend SLO takes the first given
THRESHOLD_KEYS = (*slo_math.REFERENCE_THRESHOLDS, "thresholdRelToRate")


@dataclass(frozen=True)
class Settings:
    """SLO settings of a re-evaluation; exactly one threshold form is used: ``threshold_key``
    (one of :data:`THRESHOLD_KEYS`) with ``threshold_value``, meant as in the trend SLOs."""

    warmup: float
    threshold_key: str = "threshold"
    threshold_value: float | str = DEFAULT_THRESHOLD
    confidence: float = DEFAULT_CONFIDENCE

    @property
    def threshold(self) -> float | None:
        """The absolute threshold in records/s, if that is the form."""
        return float(self.threshold_value) if self.threshold_key == "threshold" else None

    def describe(self) -> str:
        value = self.threshold_value
        if self.threshold_key == "thresholdFromExpression":
            form = f"threshold {value} (L = load value, R = resources)"
        else:
            unit = {"threshold": "records/s", "thresholdRelToRate": "x load records/s",
                    "thresholdRelToLoad": "x load value", "thresholdRelToResources": "x resources"}
            form = f"threshold {float(value):g} {unit[self.threshold_key]}"
        return f"{form}, warm-up {self.warmup:g} s"

    def threshold_for(self, run: RunFiles, load: float, resources: float) -> float:
        if self.threshold_key == "thresholdRelToRate":
            rate = run.target_rate(load, resources)
            return float(self.threshold_value) * (rate if rate is not None else load)
        try:
            return slo_math.reference_threshold({self.threshold_key: self.threshold_value}, load, resources,
                                                (self.threshold_key,))
        except ValueError as exc:
            raise ConfigError(f"load {load:g}, resources {resources:g}: {exc}") from None


def run_settings(run: RunFiles, threshold: float | None = None, rel_to_load: float | None = None,
                 warmup: float | None = None, confidence: float = DEFAULT_CONFIDENCE,
                 rel_to_rate: float | None = None) -> Settings:
    """The given settings, completed from the run's own configuration, then the defaults."""
    given = [(k, v) for k, v in (("threshold", threshold), ("thresholdRelToLoad", rel_to_load),
                                 ("thresholdRelToRate", rel_to_rate)) if v is not None]
    if len(given) > 1:
        raise ConfigError("give only one of --threshold, --threshold-rel-to-load and --threshold-rel-to-rate")
    key: str
    value: float | str
    if given:
        key, value = given[0]
    else:
        try:
            key, value = run_threshold(run.trend_slo_properties())
        except ValueError as exc:
            raise ConfigError(f"{run.directory}: exp{run.exp_id}'s trend SLO: {exc}") from None
    if warmup is None:
        warmup = run.warmup()
    warmup = DEFAULT_WARMUP if warmup is None else warmup
    if warmup < 0:
        raise ConfigError(f"--warmup: {warmup:g} must be >= 0")
    if not 0.0 < confidence < 1.0:
        raise ConfigError(f"--confidence: {confidence:g} must lie between 0 and 1")
    return Settings(warmup, key, value, confidence)


def run_threshold(properties: dict[str, Any]) -> tuple[str, float | str]:
    """The threshold form a run's trend SLO was judged with (the first given, as the SLO
    types take it), else the published default in records/s."""
    key = slo_math.reference_threshold_key(properties, THRESHOLD_KEYS)
    if key is None:
        return "threshold", DEFAULT_THRESHOLD
    if key == "thresholdFromExpression":
        return key, str(properties[key])
    value = slo_math.number(properties, key)
    assert value is not None
    return key, value


@dataclass
class ExperimentResult:
    """One (load, resources) pair re-evaluated; ``error`` says why it failed without a slope."""

    load: float
    resources: float
    threshold: float
    fits: list[RepetitionFit | None] = field(default_factory=list)
    confidence: Confidence | None = None
    error: str | None = None
    other_slos_failed: list[str] = field(default_factory=list)
    valid: bool = True
    #: the cause when the run recorded this experiment as ``error``: no verdict, whatever its series say
    run_error: str | None = None

    @property
    def slopes(self) -> list[float | None]:
        return [f.slope if f is not None else None for f in self.fits]

    @property
    def passed(self) -> bool:
        """The trend re-evaluated passes and no other SLO failed in the run: the table
        counts every SLO, as ``bench run``'s does (a failed dropped-records SLO is no PASS)."""
        return (self.run_error is None and self.error is None and self.confidence is not None
                and self.confidence.median < self.threshold and not self.other_slos_failed)

    @property
    def verdict(self) -> bool | None:
        """The verdict the table counts: None for an experiment that ended in error in the run."""
        return None if self.run_error is not None else self.passed

    @property
    def unstable(self) -> bool:
        return self.confidence is not None and self.confidence.unstable

    def as_dict(self) -> dict[str, Any]:
        return {
            "load": self.load,
            "resources": self.resources,
            "passed": self.passed,
            "threshold": self.threshold,
            "slopes": self.slopes,
            "intercepts": [f.intercept if f is not None else None for f in self.fits],
            "confidence": self.confidence.as_dict() if self.confidence is not None else None,
            "unstable": self.unstable,
            "error": self.error,
            "other_slos_failed": self.other_slos_failed,
            "valid": self.valid,
            "outcome": "error" if self.run_error is not None else ("passed" if self.passed else "failed"),
            "run_error": self.run_error,
        }


@dataclass
class Analysis:
    run: RunFiles
    settings: Settings
    metric: str
    experiments: dict[Key, ExperimentResult]
    table: dict[float, float | None]
    #: key -> "inferred" / "undecided" (bench.results.tables)
    notes: dict[float, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.run.exp_id,
            "metric": self.metric,
            "settings": {
                "warmup": self.settings.warmup,
                self.settings.threshold_key: self.settings.threshold_value,
                "confidence": self.settings.confidence,
            },
            "table": tables.to_rows(self.table, self.notes),
            "experiments": [e.as_dict() for _, e in sorted(self.experiments.items())],
        }


def after_warmup(path: Path, warmup: float, repetition: int) -> tuple[np.ndarray, np.ndarray]:
    """Samples at least ``warmup`` s after the file's first row, compared as the reference does.

    The reference subtracts the first timestamp and compares the difference with the
    warm-up; :func:`bench.slo_math.after_warmup` adds the warm-up to the first timestamp
    instead. In exact arithmetic both are one rule, in floats they can disagree on a
    sample that lies exactly at the boundary (with a 5 s sample step and a 60 s warm-up
    one sample does), so this module follows the reference to the bit. NaN samples are
    dropped afterwards, as ``bench run`` drops them.
    """
    series = read_series(path)
    t = np.asarray(series.timestamps, dtype=float)
    v = np.asarray(series.values, dtype=float)
    if t.size:
        keep = (t - t[0] >= warmup) & np.isfinite(t) & ~np.isnan(v)
        t, v = t[keep], v[keep]
    if t.size < slo_math.MIN_SAMPLES:
        raise slo_math.InsufficientData(
            f"repetition {repetition}: {t.size} usable sample(s) after a {warmup:g} s warm-up "
            f"(of {len(series.values)}), need at least {slo_math.MIN_SAMPLES}"
        )
    return t, v


def stored_period(record: dict[str, Any]) -> float | None:
    """The output period the run judged its lag's error with (``bench.analysis.confidence``),
    as its record stores it with a trend verdict: re-evaluated the same way."""
    for details in (record.get("slos") or {}).values():
        period = details.get("period") if isinstance(details, dict) else None
        if isinstance(period, int | float) and period > 0:
            return float(period)
    return None


def stored_evidence(record: dict[str, Any], slo: str, repetition: int) -> Any:
    """What ended one repetition, as the run kept it with ``slo``'s verdict
    (``bench.analysis.confidence.evidence``): judged again the same way."""
    details = (record.get("slos") or {}).get(slo)
    found = details.get("repetition_evidence") if isinstance(details, dict) else None
    return found[repetition] if isinstance(found, list) and 0 <= repetition < len(found) else None


def evaluate_experiment(run: RunFiles, key: Key, settings: Settings) -> ExperimentResult:
    load, resources = key
    result = ExperimentResult(load, resources, settings.threshold_for(run, load, resources))
    record = run.records().get(key) or {}
    result.valid = bool(record.get("valid", True))
    if run.outcome(load, resources) == "error":
        result.run_error = str(record.get("cause") or "error")
    result.other_slos_failed = sorted(
        name for name, details in (record.get("slos") or {}).items()
        if name not in run.trend_slo_names() and isinstance(details, dict) and details.get("passed") is False
    )
    errors = []
    period = stored_period(record)
    for f in run.trend_files().get(key, []):
        try:
            t, v = after_warmup(f.path, settings.warmup, f.repetition)
            found = stored_evidence(record, f.name, f.repetition)
            result.fits.append(with_evidence(fit_repetition(t, v, period), found))
        except slo_math.InsufficientData as exc:
            result.fits.append(None)
            errors.append(str(exc))
    if errors:
        result.error = "; ".join(errors)
    fits = [f for f in result.fits if f is not None]
    if fits:
        result.confidence = judge(fits, result.threshold, settings.confidence)
    elif result.error is None:
        result.error = "no lag series"
    return result


def analyze(run: RunFiles, settings: Settings, metric: str | None = None) -> Analysis:
    """Every stored experiment re-evaluated, and the table under the run's own rules.

    An experiment the run recorded as ``error`` stays without a verdict (undecided), even
    where some of its repetitions left series; the table applies the run's load direction
    and lower-bound assumption (:mod:`bench.results.tables`), so it marks the same inferred and
    undecided entries as the run's own table.
    """
    errors = {key for key in run.records() if run.outcome(*key) == "error"}
    if not run.trend_files() and not errors:
        names = ", ".join(run.trend_slo_names()) or "none"
        raise ConfigError(f"{run.directory}: exp{run.exp_id} has no series of a trend SLO (its trend SLOs: "
                          f"{names}; files exp{run.exp_id}_<load>_<resources>_sli_<slo>_<rep>.csv)")
    keys = sorted(set(run.trend_files()) | errors)
    experiments = {key: evaluate_experiment(run, key, settings) for key in keys}
    built = run.table_from_verdicts([(load, res, e.verdict) for (load, res), e in experiments.items()], metric)
    return Analysis(run, settings, built.metric, experiments, built.table, built.notes)


def write(analysis: Analysis, output: Path | None = None) -> tuple[Path, Path]:
    """The table CSV and a JSON with every number behind it, next to the run by default.

    The default names (``exp<id>-analysis-demand.csv``, ``exp<id>-analysis.json``) never
    overwrite what the run wrote, and contain no ``_`` after the id, so the reference's
    notebooks, which split result names on ``_``, do not mistake them for run files.
    """
    base = analysis.run.directory / f"exp{analysis.run.exp_id}-analysis"
    csv_path = output if output is not None else Path(f"{base}-{analysis.metric}.csv")
    json_path = csv_path.with_suffix(".json") if output is not None else Path(f"{base}.json")
    tables.write_csv(csv_path, analysis.metric, analysis.table, analysis.notes)
    atomic_write(json_path, json.dumps(analysis.as_dict(), indent=2, allow_nan=False, default=_finite))
    return csv_path, json_path


def _finite(obj: Any) -> Any:
    return str(obj)


def _num(value: float | None, digits: int = 4) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    return f"{value:.{digits}g}"


def format_analysis(analysis: Analysis) -> str:
    """The table a user reads first, then every experiment with its margin and flag."""
    run, metric = analysis.run, analysis.metric
    lines = [f"{metric} (exp{run.exp_id} in {run.directory}, {analysis.settings.describe()}):"]
    lines += tables.format_table(metric, analysis.table, analysis.notes)
    lines += tables.length_note(run.duration(), analysis.settings.warmup)
    pct = f"{analysis.settings.confidence * 100:g}%"
    lines.append("")
    lines.append(f"  {'load':>10} {'resources':>9} {'median slope':>12} {pct + ' interval':>23} "
                 f"{'threshold':>10} {'margin':>10}  verdict")
    for (load, resources), e in sorted(analysis.experiments.items()):
        c = e.confidence
        interval = f"[{_num(c.low)}, {_num(c.high)}]" if c is not None and c.low is not None else "-"
        verdict = "ERROR" if e.run_error is not None else ("PASS" if e.passed else "FAIL")
        notes = []
        if e.run_error is not None:
            notes.append(f"error in the run, no verdict (undecided): {e.run_error}")
        if e.unstable and c is not None:
            notes.append("unstable: " + ", ".join(c.reasons))
        if e.error:
            notes.append(e.error)
        if e.other_slos_failed:
            notes.append(f"in the run also failed: {', '.join(e.other_slos_failed)}")
        if not e.valid:
            notes.append("invalid in the run: generator fell behind")
        lines.append(
            f"  {fmt_value(load):>10} {fmt_value(resources):>9} {_num(c.median if c else None):>12} "
            f"{interval:>23} {_num(e.threshold):>10} {_num(c.margin if c else None):>10}  {verdict}"
            + (f" ({'; '.join(notes)})" if notes else "")
        )
    return "\n".join(lines)
