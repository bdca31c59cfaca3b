"""The lag-trend SLO: the scalability method's main SLO, as an ordinary plugin.

Lag growing over time means the SUT falls behind the input rate; a roughly flat lag
(saw-tooth included, for micro-batches) means it keeps up. Per repetition the OLS slope
of lag on time after the warm-up is one number in records/s; the median over
repetitions damps one noisy repetition; the threshold is strict (``<``) as published.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from bench import slo_math
from bench.api import (
    EarlyDecision,
    Registrar,
    Series,
    SloContext,
    SloType,
    SloVerdict,
    hookimpl,
)
from bench.services import trend_decision

from bench_slo_lag_trend.reference import REFERENCE_LAG_TRENDS

#: the threshold forms, one key one meaning across bench and the reference: ``threshold``
#: (records/s), ``thresholdRelToLoad`` x the load *value*, ``thresholdRelToResources`` x the
#: resource value, ``thresholdFromExpression`` over L and R (all as the reference computes
#: them), and bench's ``thresholdRelToRate`` x the generated records/s (a lag slope of 1 %
#: of the input rate means the same at every load, whatever the load type counts)
THRESHOLDS = (*slo_math.REFERENCE_THRESHOLDS, "thresholdRelToRate")
DEFAULT_THRESHOLD = 2000.0


def validate(properties: Mapping[str, Any]) -> None:
    key = slo_math.exclusive(properties, THRESHOLDS)
    if key == "thresholdFromExpression":
        slo_math.parse_expression(str(properties[key]))  # evaluated over the grid: cli.consistency
    elif key is not None:
        slo_math.number(properties, key)


def threshold_of(ctx: SloContext) -> float:
    """The one place the threshold comes from, for the verdict and the early decision
    alike: an early "pass" must be a final pass. Only one form may be given (two would
    leave the reader guessing which counts)."""
    key = slo_math.exclusive(ctx.properties, THRESHOLDS)
    if key is None:
        return DEFAULT_THRESHOLD
    if key == "thresholdRelToRate":
        return slo_math.resolve_threshold(ctx.properties, (key,), ctx.load_rate, ctx.resources, rate_key=key)
    return slo_math.reference_threshold(ctx.properties, ctx.load, ctx.resources, (key,))


def check(series: list[Series], ctx: SloContext) -> SloVerdict:
    try:
        validate(ctx.properties)
        threshold = threshold_of(ctx)
        samples = slo_math.prepare_all(series, ctx.warmup)
    except ValueError as exc:
        return SloVerdict(False, {"error": str(exc)})
    fits = [slo_math.slope(t, v) for t, v in samples]
    slopes = [s for s, _ in fits]
    median = float(np.median(slopes))
    details: dict[str, Any] = {
        "slopes": slopes,
        "intercepts": [i for _, i in fits],
        "median": median,
        "threshold": threshold,
        "samples": [int(t.size) for t, _ in samples],
    }
    return SloVerdict(median < threshold, details)


def decide_early(series: Series, ctx: SloContext) -> EarlyDecision:
    """One repetition's slope decided against the threshold with confidence (strict ``<``
    as in :func:`check`); the median over repetitions is left to the verdict. ``lag``:
    no early "fail" while too few micro-batches have ended since the warm-up
    (:func:`bench.slo.lag_batches.too_few_batches`)."""
    try:
        threshold = threshold_of(ctx)
    except ValueError as exc:
        return EarlyDecision(None, str(exc))
    return trend_decision(series, ctx, threshold, "lt", lag=True)


def _always(properties: Mapping[str, Any]) -> bool:
    return True


LAG_TREND = SloType(
    "lag-trend",
    "OLS slope of consumer lag over time after the warm-up, median over repetitions, "
    f"< threshold (records/s, default {DEFAULT_THRESHOLD:g}), thresholdRelToRate x generated records/s, "
    "thresholdRelToLoad x load value, thresholdRelToResources x resources or thresholdFromExpression (L, R)",
    check,
    sli="lag",
    validate=validate,
    properties=THRESHOLDS,
    decide_early=decide_early,
    cli_threshold=_always,
    analysed_as_trend=_always,
    series_label="lag (records)",
)


@hookimpl
def bench_register_slos(register: Registrar) -> None:
    register.slo(LAG_TREND)
    for slo in REFERENCE_LAG_TRENDS:
        register.slo(slo)
