"""Re-evaluate a run's stored SLI series with other SLO settings, without running anything.

Every SLO of the run is judged again by its registered type (``bench.api.SloType``)
through the run's own evaluator (:class:`bench.slo.evaluator.SloEvaluator`), over the
series its files hold: the same warm-up cut, the same threshold forms, the same
verdict as ``bench run``. The settings given replace the run's: ``--warmup`` every
SLO's warm-up, a threshold option the threshold of every SLO whose type takes it (as
``bench run``'s options do; refused where none does). An experiment passes when every
SLO passes; the table is built by the run's own rules (:mod:`bench.results.tables`):
demand per load the least resources passing, capacity per resource amount the
greatest load passing, a key with no passing experiment kept with no value.

For the first trend SLO (``SloType.is_trend``) each experiment also shows the
repetitions' slopes with a confidence interval and the margin to the threshold
(:mod:`bench.analysis.confidence`): figures to read the verdict by, never the verdict.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import slo_math
from bench.analysis.confidence import (
    DEFAULT_CONFIDENCE,
    Confidence,
    RepetitionFit,
    fit_repetition,
    judge,
    with_evidence,
)
from bench.analysis.runs import Key, RunFiles, registry
from bench.api import Series, SloVerdict
from bench.config.base import ConfigError, ExecutionParams, SloDef
from bench.config.slo_properties import COMMON_PROPERTIES, warmup_of
from bench.results import tables
from bench.results.store import atomic_write, fmt_value, read_series
from bench.slo.evaluator import SloEvaluator

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
    #: whether the user gave the warm-up (it then replaces every SLO's) and the threshold
    #: (it then replaces that of every SLO whose type takes a threshold option)
    warmup_given: bool = False
    threshold_given: bool = False

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
    warmup_given = warmup is not None
    if warmup is None:
        warmup = run.warmup()
    warmup = DEFAULT_WARMUP if warmup is None else warmup
    if warmup < 0:
        raise ConfigError(f"--warmup: {warmup:g} must be >= 0")
    if not 0.0 < confidence < 1.0:
        raise ConfigError(f"--confidence: {confidence:g} must lie between 0 and 1")
    return Settings(warmup, key, value, confidence, warmup_given, bool(given))


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
    #: the first trend SLO's threshold in its verdict (records/s); NaN without a trend SLO
    threshold: float
    fits: list[RepetitionFit | None] = field(default_factory=list)
    confidence: Confidence | None = None
    error: str | None = None
    #: every SLO's verdict, re-evaluated by its type
    slos: dict[str, SloVerdict] = field(default_factory=dict)
    #: the SLOs other than the first trend SLO that failed
    other_slos_failed: list[str] = field(default_factory=list)
    valid: bool = True
    #: the cause when the run recorded this experiment as ``error``: no verdict, whatever its series say
    run_error: str | None = None

    @property
    def slopes(self) -> list[float | None]:
        return [f.slope if f is not None else None for f in self.fits]

    @property
    def passed(self) -> bool:
        """Every SLO's type passes it: the table counts every SLO, as ``bench run``'s
        does (a failed dropped-records SLO is no PASS)."""
        return self.run_error is None and bool(self.slos) and all(v.passed for v in self.slos.values())

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
            "slos": {name: {"passed": v.passed, **v.details} for name, v in self.slos.items()},
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


def judged_slos(run: RunFiles, settings: Settings) -> list[SloDef]:
    """The run's SLOs (benchmark, then the execution's overrides and own SLOs) with the
    given settings applied as ``bench run``'s options apply them; refused (one line) for
    an SLO type no installed plugin registers, and for a threshold option no SLO takes."""
    types = registry().slos
    judged, takers = [], []
    for slo in run.slos():
        name, type_name = str(slo.get("name")), str(slo.get("sloType"))
        slo_type = types.get(type_name)
        if slo_type is None:
            raise ConfigError(f"{run.directory}: exp{run.exp_id}'s SLO {name!r} has type {type_name!r}, which no "
                              f"installed plugin registers (known: {', '.join(sorted(types))}); install its plugin")
        props = dict(slo.get("properties") or {})
        if settings.threshold_given and slo_type.takes_cli_threshold(props):
            if slo_type.properties is not None and settings.threshold_key not in slo_type.properties:
                raise ConfigError(f"SLO {name!r} of type {type_name!r} has no {settings.threshold_key}; "
                                  "give another threshold option")
            props = slo_math.override_properties(props, {settings.threshold_key: settings.threshold_value})
            takers.append(name)
        if settings.warmup_given:
            props = {k: v for k, v in props.items() if k not in COMMON_PROPERTIES} | {"warmup": settings.warmup}
        judged.append(SloDef(name=name, sloType=type_name, properties=props))
    if settings.threshold_given and not takers:
        kinds = ", ".join(f"{s.name} ({s.sloType})" for s in judged) or "none"
        raise ConfigError(f"no SLO of exp{run.exp_id} takes a threshold option (its SLOs: {kinds}); "
                          "nothing would change")
    return judged


def _series(run: RunFiles, key: Key, evaluator: SloEvaluator) -> dict[str, list[Series]]:
    """The stored series per SLI name, repetitions in order: the collection the run's
    evaluator judged (files are named by SLO; SLOs on one SLI hold the same series)."""
    collected: dict[str, list[Series]] = {}
    for slo in evaluator.slos:
        sli = evaluator.sli(slo)
        if sli in collected:
            continue
        files = sorted((f for f in run.sli if (f.load, f.resources) == key and f.name in (slo.name, sli)),
                       key=lambda f: (f.repetition, f.name != slo.name))
        reps: dict[int, Series] = {}
        for f in files:
            reps.setdefault(f.repetition, read_series(f.path))
        if reps:
            collected[sli] = [reps[r] for r in sorted(reps)]
    return collected


def evaluate_experiment(run: RunFiles, key: Key, settings: Settings,
                        evaluator: SloEvaluator | None = None) -> ExperimentResult:
    """One (load, resources) pair: every SLO re-evaluated by its type, as the run did."""
    load, resources = key
    evaluator = evaluator or _evaluator(run, settings)
    record = run.records().get(key) or {}
    rate = run.target_rate(load, resources)
    collected = _series(run, key, evaluator)
    verdicts = evaluator.verdicts(collected, load, resources, load if rate is None else rate)
    trend = next(iter(evaluator.trend_slos()), None)
    found = verdicts[trend].details.get("threshold") if trend is not None else None
    threshold = float(found) if isinstance(found, int | float) else math.nan
    result = ExperimentResult(load, resources, threshold, slos=verdicts)
    result.valid = bool(record.get("valid", True))
    if run.outcome(load, resources) == "error":
        result.run_error = str(record.get("cause") or "error")
    result.other_slos_failed = sorted(name for name, v in verdicts.items() if name != trend and not v.passed)
    errors = [f"{name}: {v.details['error']}" if name != trend else str(v.details["error"])
              for name, v in verdicts.items() if "error" in v.details]
    result.error = "; ".join(errors) or None
    if trend is not None and math.isfinite(threshold):
        _trend_figures(result, evaluator, trend, collected, record, settings)
    return result


def _trend_figures(result: ExperimentResult, evaluator: SloEvaluator, trend: str,
                   collected: dict[str, list[Series]], record: dict[str, Any], settings: Settings) -> None:
    """The trend SLO's slopes with their confidence, over the samples its verdict kept."""
    slo = next(s for s in evaluator.slos if s.name == trend)
    warmup = warmup_of(slo.properties, float(evaluator.settings.warmup))
    period = stored_period(record)
    for n, series in enumerate(collected.get(evaluator.sli(slo), [])):
        t, v = slo_math.after_warmup(series, warmup)
        if t.size < slo_math.MIN_SAMPLES:
            result.fits.append(None)
            continue
        result.fits.append(with_evidence(fit_repetition(t, v, period), stored_evidence(record, trend, n)))
    fits = [f for f in result.fits if f is not None]
    if fits:
        result.confidence = judge(fits, result.threshold, settings.confidence)


def _evaluator(run: RunFiles, settings: Settings) -> SloEvaluator:
    """The run's evaluator, with its execution's warm-up (each SLO's own wins, as in the run)."""
    params = ExecutionParams.model_construct(warmup=settings.warmup)
    return SloEvaluator(registry(), judged_slos(run, settings), params)


def analyze(run: RunFiles, settings: Settings, metric: str | None = None) -> Analysis:
    """Every stored experiment re-evaluated, and the table under the run's own rules.

    An experiment the run recorded as ``error`` stays without a verdict (undecided), even
    where some of its repetitions left series; the table applies the run's load direction
    and lower-bound assumption (:mod:`bench.results.tables`), so it marks the same inferred and
    undecided entries as the run's own table.
    """
    errors = {key for key in run.records() if run.outcome(*key) == "error"}
    evaluator = _evaluator(run, settings)
    names = {s.name for s in evaluator.slos} | set(evaluator.slis().values())
    stored = {(f.load, f.resources) for f in run.sli if f.name in names}
    if not stored and not errors:
        listed = ", ".join(s.name for s in evaluator.slos) or "none"
        raise ConfigError(f"{run.directory}: exp{run.exp_id} has no series of its SLOs ({listed}; files "
                          f"exp{run.exp_id}_<load>_<resources>_sli_<slo>_<rep>.csv)")
    keys = sorted(stored | errors)
    experiments = {key: evaluate_experiment(run, key, settings, evaluator) for key in keys}
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
    atomic_write(json_path, json.dumps(_no_nan(analysis.as_dict()), indent=2, allow_nan=False, default=_finite))
    return csv_path, json_path


def _finite(obj: Any) -> Any:
    return str(obj)


def _no_nan(obj: Any) -> Any:
    """JSON has no NaN or infinity: a figure that could not be computed (a slope of too
    few samples in a truncated series) is stored as null, as the table shows it as '-'."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _no_nan(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_no_nan(v) for v in obj]
    return obj


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
            notes.append(f"also failed: {', '.join(e.other_slos_failed)}")
        if not e.valid:
            notes.append("invalid in the run: generator fell behind")
        lines.append(
            f"  {fmt_value(load):>10} {fmt_value(resources):>9} {_num(c.median if c else None):>12} "
            f"{interval:>23} {_num(e.threshold):>10} {_num(c.margin if c else None):>10}  {verdict}"
            + (f" ({'; '.join(notes)})" if notes else "")
        )
    return "\n".join(lines)
