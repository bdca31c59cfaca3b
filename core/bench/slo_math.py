"""Numbers behind SLO verdicts, shared by the SLO types, the plots and early stopping.

Pure functions on plain sequences and numpy arrays only, so that every consumer gets
the same slope for the same samples (a plotted trend line that disagrees with the
verdict would be worse than none).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bench.api import Series
from bench.numbers import finite_float

#: A slope needs two points; fewer means the experiment produced no usable data.
MIN_SAMPLES = 2

AGGREGATIONS = ("mean", "median", "max", "min", "pNN", "trend")
OPERATORS = ("lt", "lte", "gt", "gte")
_PERCENTILE = re.compile(r"^p(\d+(?:\.\d+)?)$")


class InsufficientData(ValueError):
    """Raised when a series has too few usable samples for a verdict."""


def slope(timestamps: Sequence[float] | np.ndarray, values: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """Ordinary least squares of value on time: ``value ~ slope * t + intercept``.

    The intercept is at ``t = 0`` in the caller's time axis, so a plot can draw
    ``intercept + slope * t`` over the very timestamps it was given. Time is centred
    before fitting: epoch seconds squared would lose precision in float64.
    """
    t = np.asarray(timestamps, dtype=float)
    v = np.asarray(values, dtype=float)
    if t.shape != v.shape:
        raise ValueError(f"timestamps and values differ in length ({t.size} vs {v.size})")
    if t.size < MIN_SAMPLES:
        raise InsufficientData(f"{t.size} sample(s), need at least {MIN_SAMPLES} for a slope")
    t_mean = float(t.mean())
    v_mean = float(v.mean())
    dt = t - t_mean
    denominator = float(np.dot(dt, dt))
    if denominator == 0.0:
        raise InsufficientData("all samples share one timestamp; no slope")
    fitted = float(np.dot(dt, v - v_mean)) / denominator
    return fitted, v_mean - fitted * t_mean


def after_warmup(series: Series, warmup: float) -> tuple[np.ndarray, np.ndarray]:
    """Time-sorted samples at least ``warmup`` s after the series' first one, NaN removed.

    The cut is relative to the first sample (not to NaN-free ones) so that a missing
    early sample cannot shift the warm-up window into the measurement. It compares the
    time since the first sample with the warm-up, as the reference does: ``t >= t0 +
    warmup`` is the same rule in exact arithmetic but can disagree on a sample lying
    exactly at the cut in floats, and ``bench analyze``, the reference's analysis and
    ``bench run`` must keep the same samples.
    """
    t = np.asarray(series.timestamps, dtype=float)
    v = np.asarray(series.values, dtype=float)
    if t.shape != v.shape:
        raise ValueError(f"timestamps and values differ in length ({t.size} vs {v.size})")
    if t.size == 0:
        return t, v
    order = np.argsort(t, kind="stable")
    t, v = t[order], v[order]
    keep = (t - t[0] >= warmup) & np.isfinite(t) & ~np.isnan(v)
    return t[keep], v[keep]


def usable(series: Series, warmup: float, repetition: int) -> tuple[np.ndarray, np.ndarray]:
    """Like :func:`after_warmup` but refuses fewer than two samples, naming the repetition."""
    t, v = after_warmup(series, warmup)
    if t.size < MIN_SAMPLES:
        raise InsufficientData(
            f"repetition {repetition}: {t.size} usable sample(s) after a {warmup:g} s warm-up "
            f"(of {len(series.values)}), need at least {MIN_SAMPLES}"
        )
    return t, v


def prepare_all(series: Sequence[Series], warmup: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """Usable samples of every repetition; no repetitions at all is also insufficient."""
    if not series:
        raise InsufficientData("no series (no repetition produced this SLI)")
    return [usable(s, warmup, i) for i, s in enumerate(series)]


# ----------------------------------------------------------------- aggregation


def check_aggregation(name: str, value: Any, allow_trend: bool = True) -> str:
    """Validates an aggregation name; ``trend`` needs a time axis, so only per repetition."""
    allowed = AGGREGATIONS if allow_trend else tuple(a for a in AGGREGATIONS if a != "trend")
    return _aggregation_in(name, value, allowed, "p95")


def _aggregation_in(name: str, value: Any, allowed: Sequence[str], example: str) -> str:
    """``value`` if it is one of ``allowed`` or a percentile pNN (0 <= NN <= 100)."""
    if isinstance(value, str):
        if value in allowed and value != "pNN":
            return value
        match = _PERCENTILE.match(value)
        if match and 0.0 <= float(match.group(1)) <= 100.0:
            return value
    raise ValueError(f"{name}: {value!r} is not one of {', '.join(allowed)} (pNN: p0 ... p100, e.g. {example})")


def aggregate(values: np.ndarray, how: str, timestamps: np.ndarray | None = None) -> float:
    """One number from many; ``trend`` is the OLS slope and needs ``timestamps``."""
    if values.size == 0:
        raise InsufficientData("nothing to aggregate")
    if how == "mean":
        return float(np.mean(values))
    if how == "median":
        return float(np.median(values))
    if how == "max":
        return float(np.max(values))
    if how == "min":
        return float(np.min(values))
    if how == "trend":
        if timestamps is None:
            raise ValueError("trend needs timestamps")
        return slope(timestamps, values)[0]
    match = _PERCENTILE.match(how)
    if match is None:
        raise ValueError(f"unknown aggregation {how!r}")
    return float(np.percentile(values, float(match.group(1))))


def compare(value: float, operator: str, threshold: float) -> bool:
    if operator == "lt":
        return value < threshold
    if operator == "lte":
        return value <= threshold
    if operator == "gt":
        return value > threshold
    if operator == "gte":
        return value >= threshold
    raise ValueError(f"operator: {operator!r} is not one of {', '.join(OPERATORS)}")


# ----------------------------------------------------------------- property validation


def number(properties: Mapping[str, Any], key: str, minimum: float | None = None) -> float | None:
    """The property as a finite float (numeric strings accepted: CLI and YAML give those)."""
    if key not in properties or properties[key] is None:
        return None
    raw = properties[key]
    if isinstance(raw, bool):
        raise ValueError(f"{key}: {raw!r} is not a number")
    value = finite_float(raw, f"{key}: {raw!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{key}: {raw!r} must be >= {minimum:g}")
    return value


def exclusive(properties: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    """The one threshold form given; two at once would be ambiguous, so refuse."""
    given = [k for k in keys if properties.get(k) is not None]
    if len(given) > 1:
        raise ValueError(f"{given[0]}: give only one of {', '.join(keys)} (got {', '.join(given)})")
    return given[0] if given else None


def resolve_threshold(
    properties: Mapping[str, Any],
    keys: Sequence[str],
    load_rate: float | None,
    resources: float,
    default: float | None = None,
    rate_key: str = "thresholdRelToRate",
) -> float:
    """The absolute threshold from whichever form was given (one only).

    ``rate_key`` (bench's ``thresholdRelToRate``) scales with the generated records/s (a
    lag slope of 1 % of the input rate means the same at every load);
    ``thresholdRelToResources`` with the resource amount. A relative threshold without a
    known rate is an error, not a guess. The forms relative to the load value and the
    expression are the reference's: :func:`reference_threshold`.
    """
    key = exclusive(properties, keys)
    if key is None:
        if default is None:
            raise ValueError(f"threshold: required, give one of {', '.join(keys)}")
        return default
    factor = number(properties, key)
    assert factor is not None
    if key == rate_key:
        if load_rate is None:
            raise ValueError(f"{key}: the load rate (records/s) of this experiment is unknown")
        return factor * load_rate
    if key == "thresholdRelToResources":
        return factor * resources
    return factor


# ----------------------------------------------------------------- the reference's aggregations

#: aggregations of the reference's generic SLO (pandas' names), plus first, last and
#: trend within a repetition; pNN is any percentile such as p99 or p99.9
REFERENCE_AGGREGATIONS = ("mean", "median", "mode", "sum", "count", "max", "min", "std", "var", "skew", "kurt",
                          "first", "last", "trend", "pNN")
#: aggregations that need the order or the time axis of one series
_ORDERED = ("first", "last", "trend")


def check_reference_aggregation(name: str, value: Any, within: bool) -> str:
    """An aggregation name of the reference's generic SLO; ``first``, ``last`` and
    ``trend`` read a time axis, which only the samples of one repetition have."""
    allowed = REFERENCE_AGGREGATIONS if within else tuple(a for a in REFERENCE_AGGREGATIONS if a not in _ORDERED)
    return _aggregation_in(name, value, allowed, "p99.9")


def reference_aggregate(values: Sequence[float] | np.ndarray, how: str,
                        timestamps: Sequence[float] | np.ndarray | None = None) -> float:
    """One number from many, as pandas' ``Series.aggregate`` computes it in the
    reference's generic checker: ``std``/``var`` with one degree of freedom, ``skew`` and
    ``kurt`` bias-corrected (NaN when too few values), ``mode`` the smallest most frequent
    value, ``pNN`` a linearly interpolated quantile. ``trend`` is the OLS slope over
    ``timestamps`` (per second)."""
    import pandas as pd

    series = pd.Series(np.asarray(values, dtype=float))
    if series.size == 0:
        raise InsufficientData("nothing to aggregate")
    if how == "first":
        return float(series.iloc[0])
    if how == "last":
        return float(series.iloc[-1])
    if how == "trend":
        if timestamps is None:
            raise ValueError("trend needs timestamps")
        return slope(timestamps, series.to_numpy())[0]
    if how == "mode":
        return float(series.mode().iloc[0])
    match = _PERCENTILE.match(how)
    if match is not None:
        return float(series.quantile(float(match.group(1)) / 100.0))
    if how not in REFERENCE_AGGREGATIONS:
        raise ValueError(f"unknown aggregation {how!r}")
    return float(series.aggregate(how))


# ----------------------------------------------------------------- the reference's thresholds

#: the reference's threshold forms, in the order it takes the first one given
REFERENCE_THRESHOLDS = ("threshold", "thresholdRelToLoad", "thresholdRelToResources", "thresholdFromExpression")
#: every way an SLO can state its threshold: one replaces another (an Execution's override,
#: the command line), they are never combined
THRESHOLD_FORMS = (*REFERENCE_THRESHOLDS, "thresholdRelToRate")


def override_properties(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """An SLO's properties under an execution's override (``bench.config.model.effective_slos``,
    a stored run's re-evaluation, the bounds). A threshold the override states replaces
    the benchmark's of any form: a file saying ``thresholdRelToLoad`` over a default
    given as ``thresholdRelToRate`` means that threshold, not two at once."""
    if any(k in override for k in THRESHOLD_FORMS):
        base = {k: v for k, v in base.items() if k not in THRESHOLD_FORMS}
    return {**base, **override}


def _given(properties: Mapping[str, Any], key: str) -> bool:
    # The reference reads an empty string as "not given" (threshold: "" falls through).
    value = properties.get(key)
    return value is not None and not (isinstance(value, str) and not value.strip())


def reference_threshold_key(properties: Mapping[str, Any], keys: Sequence[str] = REFERENCE_THRESHOLDS) -> str | None:
    """The threshold form that counts: the first given, in the reference's order."""
    return next((k for k in keys if _given(properties, k)), None)


def reference_threshold(properties: Mapping[str, Any], load: float, resources: float,
                        keys: Sequence[str] = REFERENCE_THRESHOLDS) -> float:
    """The threshold as the reference computes it: ``threshold`` as given, else
    ``thresholdRelToLoad`` x the load *value* (sensors, window size, ...), else
    ``thresholdRelToResources`` x the resource value, else ``thresholdFromExpression``
    evaluated with L = load value and R = resource value."""
    key = reference_threshold_key(properties, keys)
    if key is None:
        raise ValueError(f"threshold: required, give one of {', '.join(keys)}")
    if key == "thresholdFromExpression":
        return evaluate_expression(str(properties[key]), load=load, resources=resources)
    factor = number(properties, key)
    assert factor is not None
    if key == "thresholdRelToLoad":
        return factor * load
    if key == "thresholdRelToResources":
        return factor * resources
    return factor


# the expression of thresholdFromExpression: its own module (bench.expressions)
from bench.expressions import (  # noqa: E402,F401  (re-exported: the SLO types import them from here)
    ExpressionError,
    check_expression,
    evaluate_expression,
    parse_expression,
)
