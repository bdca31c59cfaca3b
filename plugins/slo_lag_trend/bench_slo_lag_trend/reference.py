"""The reference's lag-trend SLO types, under the reference's names and with its rule.

``lag trend``: per repetition, every lag sample (NaN read as 0, values and timestamps
truncated to whole records and seconds, as the reference's checker reads them) at least
``warmup`` s after the repetition's first sample, fitted by OLS over time; the median
of the repetitions' slopes must be strictly below the threshold. A repetition whose
slope cannot be fitted counts as an infinite slope, as in the reference. The threshold
is any of the reference's forms, the first given in its order: ``threshold``,
``thresholdRelToLoad`` (x the load *value*), ``thresholdRelToResources``,
``thresholdFromExpression`` (over L and R). ``lag trend ratio``: threshold = ``ratio``
x the load value.

bench's own ``lag-trend`` type takes the same threshold keys with the same meanings,
plus ``thresholdRelToRate`` (x the generated records/s); it refuses two forms at once,
drops samples without data (NaN) where the reference reads them as 0, and decides
early. An SLO naming an external checker gets that checker's verdict.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from bench import slo_math
from bench.api import Series, SloContext, SloType, SloVerdict
from bench.services import external_slo_verdict

#: the properties naming an external checker, which :func:`_verdict` posts to
EXTERNAL_KEYS = ("externalSloChecker", "externalSloUrl")


def _always(properties: Mapping[str, Any]) -> bool:
    """``bench run --threshold`` and ``bench analyze`` treat it as the lag trend it is."""
    return True


def validate_lag_trend(properties: Mapping[str, Any]) -> None:
    key = slo_math.reference_threshold_key(properties)
    if key is None:
        raise ValueError(f"threshold: required, give one of {', '.join(slo_math.REFERENCE_THRESHOLDS)}")
    if key == "thresholdFromExpression":
        slo_math.parse_expression(str(properties[key]))  # evaluated over the grid: cli.consistency
    else:
        slo_math.number(properties, key)


def validate_lag_trend_ratio(properties: Mapping[str, Any]) -> None:
    if properties.get("ratio") is None:
        raise ValueError("ratio: required, the lag growth allowed per unit of load (e.g. 0.01)")
    slo_math.number(properties, "ratio", minimum=0.0)


def repetition_slope(series: Series, warmup: float) -> tuple[float, float]:
    """(slope, intercept) of one repetition as the reference computes it; (inf, nan)
    when no slope can be fitted (fewer than two samples after the warm-up)."""
    # whole seconds and whole records, as the reference's checker reads Prometheus' answer
    t = np.trunc(np.asarray(series.timestamps, dtype=float))
    v = np.trunc(np.nan_to_num(np.asarray(series.values, dtype=float), nan=0.0))
    if t.size == 0:
        return math.inf, math.nan
    keep = (t - t[0]) >= warmup
    try:
        return slo_math.slope(t[keep], v[keep])
    except ValueError:
        return math.inf, math.nan


def _verdict(series: list[Series], ctx: SloContext, threshold: float) -> SloVerdict:
    external = external_slo_verdict(ctx.properties, series, threshold, ctx.warmup)
    if external is not None:
        return external
    if not series:
        return SloVerdict(False, {"error": "no series (no repetition produced the lag)", "threshold": threshold})
    fits = [repetition_slope(s, ctx.warmup) for s in series]
    slopes = [s for s, _ in fits]
    median = float(np.median(slopes))
    return SloVerdict(median < threshold, {"slopes": slopes, "intercepts": [i for _, i in fits],
                                           "median": median, "threshold": threshold})


def check_lag_trend(series: list[Series], ctx: SloContext) -> SloVerdict:
    try:
        validate_lag_trend(ctx.properties)
        threshold = slo_math.reference_threshold(ctx.properties, ctx.load, ctx.resources)
    except ValueError as exc:
        return SloVerdict(False, {"error": str(exc)})
    return _verdict(series, ctx, threshold)


def check_lag_trend_ratio(series: list[Series], ctx: SloContext) -> SloVerdict:
    try:
        validate_lag_trend_ratio(ctx.properties)
        ratio = slo_math.number(ctx.properties, "ratio", minimum=0.0)
    except ValueError as exc:
        return SloVerdict(False, {"error": str(exc)})
    assert ratio is not None
    return _verdict(series, ctx, ratio * ctx.load)


REFERENCE_LAG_TRENDS = (
    SloType(
        "lag trend",
        "the reference's SLO: median over repetitions of the lag's OLS slope after the warm-up < threshold "
        "(or thresholdRelToLoad x load value, thresholdRelToResources, thresholdFromExpression over L and R)",
        check_lag_trend,
        sli="lag",
        validate=validate_lag_trend,
        properties=(*slo_math.REFERENCE_THRESHOLDS, *EXTERNAL_KEYS),
        cli_threshold=_always,
        analysed_as_trend=_always,
        series_label="lag (records)",
    ),
    SloType(
        "lag trend ratio",
        "the reference's SLO: median over repetitions of the lag's OLS slope after the warm-up < ratio x load value",
        check_lag_trend_ratio,
        sli="lag",
        validate=validate_lag_trend_ratio,
        properties=("ratio", *EXTERNAL_KEYS),
        series_label="lag (records)",
    ),
)
