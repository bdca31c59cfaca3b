"""Built-in SLO types: ``generic`` (any SLI against a threshold), ``dropped-records`` and ``latency``.

The method's main SLO lives in its own distribution (plugins/slo_lag_trend) to prove
that SLOs are ordinary plugins; these are built in because every use case can use them.
A check never passes on missing data: too few samples give a failing verdict whose
details say why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from bench import slo_math
from bench.api import EarlyDecision, Registrar, Series, SloContext, SloType, SloVerdict
from bench.builtin.reference_slos import REFERENCE_SLO_TYPES
from bench.hookspecs import hookimpl
from bench.slo import external as external_slo
from bench.slo.early_rules import dropped_rule, latency_rule
from bench.slo.early_stop import trend_decision

DEFAULT_MAX_RATIO = 0.01


def _failed(reason: str, **details: Any) -> SloVerdict:
    return SloVerdict(False, {"error": reason, **details})


# ----------------------------------------------------------------- generic

#: the threshold forms of the generic SLO: the reference's four, taken in its order (the
#: first given counts), then bench's own ``thresholdRelToRate`` (x the generated records/s)
GENERIC_THRESHOLDS = (*slo_math.REFERENCE_THRESHOLDS, "thresholdRelToRate")
#: defaults where the reference requires the key: a mean per repetition, the median
#: across repetitions (robust to one noisy repetition), at most the threshold
DEFAULT_QUERY_AGGREGATION = "mean"
DEFAULT_REPETITION_AGGREGATION = "median"


def validate_generic(properties: Mapping[str, Any]) -> None:
    external_slo.check_url(properties)
    sli = properties.get("sli")
    if not isinstance(sli, str) or not sli:
        if properties.get("promQLQuery"):
            raise ValueError("promQLQuery: bench samples its SLIs itself and runs no PromQL query; name the SLI "
                             "with sli (lag, dropped-records, latency-p99, ...)")
        raise ValueError(f"sli: {sli!r} is not an SLI name (required, e.g. lag or dropped-records)")
    query = properties.get("promQLQuery")
    if query:  # kept only where it is the query of the SLI bench samples itself (a reference file's)
        from bench.config.reference import sli_of_query

        if sli_of_query(query) != sli:
            raise ValueError(f"promQLQuery: {str(query)[:60]!r} is not the query of sli {sli!r}, and bench runs no "
                             "PromQL query; leave promQLQuery out")
    if "aggregation" in properties:
        raise ValueError("aggregation: not a property of the generic SLO; queryAggregation aggregates within a "
                         "repetition, repetitionAggregation across repetitions")
    slo_math.check_reference_aggregation(
        "queryAggregation", properties.get("queryAggregation", DEFAULT_QUERY_AGGREGATION), within=True)
    slo_math.check_reference_aggregation(
        "repetitionAggregation", properties.get("repetitionAggregation", DEFAULT_REPETITION_AGGREGATION),
        within=False)
    operator = properties.get("operator", "lte")
    if operator not in slo_math.OPERATORS:
        raise ValueError(f"operator: {operator!r} is not one of {', '.join(slo_math.OPERATORS)}")
    key = slo_math.reference_threshold_key(properties, GENERIC_THRESHOLDS)
    if key is None:
        raise ValueError(f"threshold: required, give one of {', '.join(GENERIC_THRESHOLDS)}")
    if key == "thresholdFromExpression":
        slo_math.parse_expression(str(properties[key]))  # evaluated over the grid: cli.consistency
    else:
        slo_math.number(properties, key)


def _generic_threshold(ctx: SloContext) -> float:
    """The one place the generic SLO's threshold comes from, for its verdict and its
    early decision alike."""
    props = ctx.properties
    if slo_math.reference_threshold_key(props, GENERIC_THRESHOLDS) == "thresholdRelToRate":
        return slo_math.resolve_threshold(props, ("thresholdRelToRate",), ctx.load_rate, ctx.resources,
                                          rate_key="thresholdRelToRate")
    return slo_math.reference_threshold(props, ctx.load, ctx.resources)


def check_generic(series: list[Series], ctx: SloContext) -> SloVerdict:
    """The reference's generic SLO: each repetition's samples after the warm-up
    aggregated with ``queryAggregation``, those values across repetitions with
    ``repetitionAggregation``, the result compared with the threshold by ``operator``."""
    props = ctx.properties
    try:
        validate_generic(props)
        within = str(props.get("queryAggregation", DEFAULT_QUERY_AGGREGATION))
        across = str(props.get("repetitionAggregation", DEFAULT_REPETITION_AGGREGATION))
        operator = str(props.get("operator", "lte"))
        threshold = _generic_threshold(ctx)
        external = external_slo.external_url(props)
        if external is not None:
            return external_slo.external_verdict(external, series, external_slo.metadata(
                props, threshold, ctx.warmup, ("queryAggregation", "repetitionAggregation", "operator")))
        if not series:
            raise slo_math.InsufficientData("no series (no repetition produced this SLI)")
        need = slo_math.MIN_SAMPLES if within == "trend" else 1
        samples = [slo_math.after_warmup(s, ctx.warmup) for s in series]
        for i, (t, _) in enumerate(samples):
            if t.size < need:
                raise slo_math.InsufficientData(
                    f"repetition {i}: {t.size} usable sample(s) after a {ctx.warmup:g} s warm-up, need {need}")
        values = [slo_math.reference_aggregate(v, within, t) for t, v in samples]
        result = slo_math.reference_aggregate(values, across)
    except ValueError as exc:
        return _failed(str(exc), sli=props.get("sli"))
    details: dict[str, Any] = {
        "sli": props["sli"],
        "queryAggregation": within,
        "repetitionAggregation": across,
        "operator": operator,
        "values": values,
        "aggregate": result,
        "threshold": threshold,
        "samples": [int(t.size) for t, _ in samples],
    }
    if within == "trend":
        # Named as every trend SLO names them, so that plots draw the trend lines of all.
        details["slopes"] = values
        details["intercepts"] = [slo_math.slope(t, v)[1] for t, v in samples]
    return SloVerdict(slo_math.compare(result, operator, threshold), details)


def decide_generic_early(series: Series, ctx: SloContext) -> EarlyDecision:
    """Only a trend per repetition has a rule for an early decision; a mean, a
    percentile, ... of the samples so far says nothing sure about the full series."""
    props = ctx.properties
    if external_slo.external_url(props) is not None:
        return EarlyDecision(None, "an external SLO checker decides this SLO once every repetition ran")
    if props.get("queryAggregation") != "trend":
        return EarlyDecision(None, "SLO type 'generic' cannot stop early unless queryAggregation is trend")
    try:
        threshold = _generic_threshold(ctx)
    except ValueError as exc:
        return EarlyDecision(None, str(exc))
    return trend_decision(series, ctx, threshold, str(props.get("operator", "lte")), lag=props.get("sli") == "lag")


def generic_takes_cli_threshold(properties: Mapping[str, Any]) -> bool:
    """A generic SLO on the lag's trend bounds the lag's growth in records/s, which is what
    ``--threshold`` sets."""
    return properties.get("sli") == "lag" and properties.get("queryAggregation") == "trend"


def generic_is_trend(properties: Mapping[str, Any]) -> bool:
    """The offline analysis re-evaluates a median of the lag's slopes strictly below a
    threshold; a generic SLO is that exactly when its properties say so."""
    return (generic_takes_cli_threshold(properties)
            and properties.get("repetitionAggregation", DEFAULT_REPETITION_AGGREGATION) == "median"
            and properties.get("operator", "lte") == "lt")


# ----------------------------------------------------------------- dropped records


#: the dropped-records SLO's ``repetitionAggregation`` when a benchmark states none: the
#: worst repetition, as before the key existed, so that no file changes meaning
DEFAULT_DROPPED_AGGREGATION = "max"


def validate_dropped(properties: Mapping[str, Any]) -> None:
    slo_math.number(properties, "maxRatio", minimum=0.0)
    slo_math.check_aggregation("repetitionAggregation",
                               properties.get("repetitionAggregation", DEFAULT_DROPPED_AGGREGATION), allow_trend=False)


def _dropped(values: np.ndarray) -> float:
    """Growth of a cumulative counter; equals last - first unless the counter reset
    (a restarted query starts from 0), where summing the increments still counts right."""
    steps = np.diff(values)
    return float(np.sum(np.clip(steps, 0.0, None)))


def check_dropped(series: list[Series], ctx: SloContext) -> SloVerdict:
    """Records dropped as too late, as a fraction of the records generated meanwhile.

    One ratio per repetition, aggregated across them by ``repetitionAggregation``: by
    default ``max``, the worst repetition, which keeps every repetition running until it
    is decided; ``median`` is the reference's own choice for its UC2 (a generic SLO on
    the dropped records with ``repetitionAggregation: median``), under which two passing
    repetitions of three settle the experiment as they settle the lag trend's median."""
    try:
        validate_dropped(ctx.properties)
        max_ratio = slo_math.number(ctx.properties, "maxRatio")
        max_ratio = DEFAULT_MAX_RATIO if max_ratio is None else max_ratio
        across = str(ctx.properties.get("repetitionAggregation", DEFAULT_DROPPED_AGGREGATION))
        samples = slo_math.prepare_all(series, ctx.warmup)
    except ValueError as exc:
        return _failed(str(exc))
    if ctx.load_rate is None or ctx.load_rate <= 0:
        return _failed(f"the load rate (records/s) is unknown or not positive: {ctx.load_rate!r}")
    dropped = [_dropped(v) for _, v in samples]
    generated = [ctx.load_rate * float(t[-1] - t[0]) for t, _ in samples]
    ratios = [d / g for d, g in zip(dropped, generated, strict=True)]
    result = slo_math.aggregate(np.asarray(ratios), across)
    details: dict[str, Any] = {
        "dropped": dropped,
        "generated": generated,
        "ratio": ratios,
        "maxObservedRatio": max(ratios),
        "repetitionAggregation": across,
        "aggregate": result,
        "maxRatio": max_ratio,
        "samples": [int(t.size) for t, _ in samples],
    }
    return SloVerdict(result <= max_ratio, details)


# ----------------------------------------------------------------- latency

#: ``percentile`` values and the SLI each reads (bench.runtime.kafka.latency.PERCENTILES)
LATENCY_PERCENTILES = {"50": "latency-p50", "95": "latency-p95", "99": "latency-p99", "max": "latency-max"}
DEFAULT_LATENCY_PERCENTILE = "99"


def _percentile_key(properties: Mapping[str, Any]) -> str:
    raw = properties.get("percentile", DEFAULT_LATENCY_PERCENTILE)
    key = str(raw).strip().lower().removeprefix("p")
    if isinstance(raw, float) and raw.is_integer():
        key = str(int(raw))
    if isinstance(raw, bool) or key not in LATENCY_PERCENTILES:
        raise ValueError(f"percentile: {raw!r} is not one of {', '.join(LATENCY_PERCENTILES)} (e.g. 99 or p99)")
    return key


def latency_sli(properties: Mapping[str, Any]) -> str:
    """``percentile: 99`` -> ``latency-p99``; an invalid one still names a series (validate refuses it)."""
    try:
        return LATENCY_PERCENTILES[_percentile_key(properties)]
    except ValueError:
        return LATENCY_PERCENTILES[DEFAULT_LATENCY_PERCENTILE]


def validate_latency(properties: Mapping[str, Any]) -> None:
    _percentile_key(properties)
    if properties.get("threshold") is None:
        raise ValueError("threshold: required, the latency bound in milliseconds (e.g. 2000)")
    slo_math.number(properties, "threshold", minimum=0.0)
    if "aggregation" in properties:
        raise ValueError("aggregation: not a property of the latency SLO; queryAggregation aggregates within a "
                         "repetition, repetitionAggregation across repetitions")
    slo_math.check_aggregation("queryAggregation", properties.get("queryAggregation", "median"), allow_trend=False)
    slo_math.check_aggregation("repetitionAggregation", properties.get("repetitionAggregation", "median"),
                               allow_trend=False)


def check_latency(series: list[Series], ctx: SloContext) -> SloVerdict:
    """The chosen percentile of the output's event-time latency stays below ``threshold`` ms.

    The SLI has one value per sample interval (that interval's pNN over its output
    records; NaN where nothing was written). Per repetition the values after the
    warm-up are aggregated with ``queryAggregation`` (default median: one slow
    interval on a shared machine should not fail a SUT that keeps up, while a SUT that
    falls behind has latencies that grow in every interval), then across repetitions
    with ``repetitionAggregation`` (default median, as for a trend), the two keys
    meaning what they mean in the reference's generic SLO. A repetition without any
    output after the warm-up fails: results that never came are not on time.
    """
    props = ctx.properties
    try:
        validate_latency(props)
        threshold = float(props["threshold"])
        per_rep = str(props.get("queryAggregation", "median"))
        across = str(props.get("repetitionAggregation", "median"))
        if not series:
            raise slo_math.InsufficientData("no series (no repetition produced this SLI)")
        samples = [slo_math.after_warmup(s, ctx.warmup) for s in series]
        for i, (t, _) in enumerate(samples):
            if t.size == 0:
                raise slo_math.InsufficientData(f"repetition {i}: no output after a {ctx.warmup:g} s warm-up")
    except ValueError as exc:
        return _failed(str(exc), sli=latency_sli(props), threshold=props.get("threshold"))
    values = [slo_math.aggregate(v, per_rep) for _, v in samples]
    result = slo_math.aggregate(np.asarray(values), across)
    details: dict[str, Any] = {
        "sli": latency_sli(props),
        "queryAggregation": per_rep,
        "repetitionAggregation": across,
        "operator": "lt",
        "values": values,
        "aggregate": result,
        "threshold": threshold,
        "unit": "ms",
        "samples": [int(t.size) for t, _ in samples],
    }
    return SloVerdict(result < threshold, details)


SLO_TYPES = (
    SloType(
        "generic",
        "the reference's generic SLO on any SLI (property sli): queryAggregation within each repetition "
        "(mean|median|mode|sum|count|max|min|std|var|skew|kurt|first|last|trend|pNN), repetitionAggregation "
        "across them, compared (lt|lte|gt|gte) with threshold, thresholdRelToLoad (x load value), "
        "thresholdRelToResources, thresholdFromExpression (L, R) or thresholdRelToRate (x records/s)",
        check_generic,
        sli=None,
        validate=validate_generic,
        # promQLQuery: a reference file's query, read into sli when it names an SLI bench samples
        properties=("sli", "queryAggregation", "repetitionAggregation", "operator", *GENERIC_THRESHOLDS,
                    *external_slo.URL_KEYS, "promQLQuery"),
        decide_early=decide_generic_early,
        cli_threshold=generic_takes_cli_threshold,
        analysed_as_trend=generic_is_trend,
    ),
    SloType(
        "dropped-records",
        "records dropped by watermark (Spark numRowsDroppedByWatermark) stay at most maxRatio "
        f"(default {DEFAULT_MAX_RATIO:g}) of the generated records, aggregated across repetitions by "
        "repetitionAggregation (default max: in every repetition; median as the reference's UC2)",
        check_dropped,
        sli="dropped-records",
        validate=validate_dropped,
        properties=("maxRatio", "repetitionAggregation"),
        decide_early=dropped_rule(DEFAULT_MAX_RATIO),
        dense_early=True,
    ),
    SloType(
        "latency",
        "event-time latency of the output (broker append time minus the result's latest event time): "
        "its pNN per sample interval (percentile 50|95|99|max, default 99) aggregated per repetition "
        "(queryAggregation, default median) and across them (repetitionAggregation, default median) stays "
        "below threshold milliseconds",
        check_latency,
        sli=None,
        validate=validate_latency,
        properties=("percentile", "threshold", "queryAggregation", "repetitionAggregation"),
        sli_for=latency_sli,
        decide_early=latency_rule("median"),
    ),
)


@hookimpl
def bench_register_slos(register: Registrar) -> None:
    for slo in (*SLO_TYPES, *REFERENCE_SLO_TYPES):
        register.slo(slo)
