"""The reference's dropped-records SLO types, under the reference's names.

``dropped records``: the counter of records a window operator dropped (the SLI
``dropped-records``) stays strictly below ``threshold`` at every sample after the
warm-up, in every repetition: the reference's checker takes the maximum over all
samples of all repetitions (those before the warm-up's end, counted from the first
repetition's first sample, as 0) and passes when it is ``< threshold``. The threshold is any
of the reference's forms (``threshold``, ``thresholdRelToLoad`` x the load value,
``thresholdRelToResources``, ``thresholdFromExpression``), taken in its order.
``dropped records ratio``: the same with threshold = ``ratio`` x the load value.

bench's own ``dropped-records`` type, a ratio of the generated records, stays as it is.
An SLO naming an external checker gets that checker's verdict (:mod:`bench.slo.external`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from bench import slo_math
from bench.api import Series, SloContext, SloType, SloVerdict
from bench.slo import external as external_slo

DROPPED_SLI = "dropped-records"


def validate_dropped_records(properties: Mapping[str, Any]) -> None:
    external_slo.check_url(properties)
    key = slo_math.reference_threshold_key(properties)
    if key is None:
        raise ValueError(f"threshold: required, give one of {', '.join(slo_math.REFERENCE_THRESHOLDS)}")
    if key == "thresholdFromExpression":
        slo_math.parse_expression(str(properties[key]))  # evaluated over the grid: cli.consistency
    else:
        slo_math.number(properties, key)


def validate_dropped_ratio(properties: Mapping[str, Any]) -> None:
    external_slo.check_url(properties)
    if properties.get("ratio") is None:
        raise ValueError("ratio: required, the dropped records allowed per unit of load (e.g. 0.01)")
    slo_math.number(properties, "ratio", minimum=0.0)


def _ratio_threshold(ctx: SloContext) -> float:
    ratio = slo_math.number(ctx.properties, "ratio", minimum=0.0)
    assert ratio is not None
    return ratio * ctx.load


def _check(series: list[Series], ctx: SloContext, threshold: float) -> SloVerdict:
    external = external_slo.external_url(ctx.properties)
    if external is not None:
        return external_slo.external_verdict(
            external, series, external_slo.metadata(ctx.properties, threshold, ctx.warmup))
    samples = [(t, v) for s in series for t, v in zip(s.timestamps, s.values, strict=True) if not math.isnan(v)]
    if not samples:
        return SloVerdict(False, {"error": "no samples (no repetition produced this SLI)", "threshold": threshold})
    # The reference's rule: the warm-up ends warmup s after the first repetition's first
    # sample (whole seconds); every later sample counts with its value (whole records),
    # every earlier one as 0; the largest must stay below the threshold.
    start = math.trunc(series[0].timestamps[0]) + math.trunc(ctx.warmup) if series[0].timestamps else 0
    counted = [float(math.trunc(v)) if t >= start else 0.0 for t, v in samples]
    worst = max(counted)
    return SloVerdict(worst < threshold, {"sli": DROPPED_SLI, "aggregate": worst, "operator": "lt",
                                          "threshold": threshold, "samples": len(counted)})


def check_dropped_records(series: list[Series], ctx: SloContext) -> SloVerdict:
    try:
        validate_dropped_records(ctx.properties)
        threshold = slo_math.reference_threshold(ctx.properties, ctx.load, ctx.resources)
    except ValueError as exc:
        return SloVerdict(False, {"error": str(exc)})
    return _check(series, ctx, threshold)


def check_dropped_ratio(series: list[Series], ctx: SloContext) -> SloVerdict:
    try:
        validate_dropped_ratio(ctx.properties)
        threshold = _ratio_threshold(ctx)
    except ValueError as exc:
        return SloVerdict(False, {"error": str(exc)})
    return _check(series, ctx, threshold)


REFERENCE_SLO_TYPES = (
    SloType(
        "dropped records",
        "the reference's SLO: the dropped-records counter stays below threshold (or thresholdRelToLoad x load "
        "value, thresholdRelToResources, thresholdFromExpression) at every sample after the warm-up",
        check_dropped_records,
        sli=DROPPED_SLI,
        validate=validate_dropped_records,
        properties=(*slo_math.REFERENCE_THRESHOLDS, *external_slo.URL_KEYS),
    ),
    SloType(
        "dropped records ratio",
        "the reference's SLO: the dropped-records counter stays below ratio x load value after the warm-up",
        check_dropped_ratio,
        sli=DROPPED_SLI,
        validate=validate_dropped_ratio,
        properties=("ratio", *external_slo.URL_KEYS),
    ),
)
