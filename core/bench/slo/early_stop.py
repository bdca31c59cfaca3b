"""Early stopping of a repetition once every trend SLO is decided with confidence.

A lag-trend verdict compares one OLS slope with a threshold. Once the slope's
confidence interval lies entirely below the threshold (pass) or entirely at or above it
(fail), more samples would very probably not change the verdict, so the repetition can
end there instead of at ``duration``. Over- and well-provisioned experiments, the
bulk of a search, are then decided in a fraction of the time; borderline ones
(slope close to the threshold) never decide and run their full duration as before.

The rule, per SLO, on the samples after the warm-up (the very samples the final
verdict uses, so an early "pass" is a final pass by construction):

* at least :data:`MIN_SAMPLES` samples spanning at least :data:`MIN_SPAN_S` s;
* OLS slope ``b`` with standard error ``se``; the residuals of a micro-batch lag
  saw-tooth are autocorrelated, which makes the textbook ``se`` too small, so it is
  inflated by ``sqrt((1 + r1) / (1 - r1))`` (``r1``: lag-1 autocorrelation of the
  residuals, capped at 0.9) and the degrees of freedom shrink to the effective
  sample size ``n (1 - r1) / (1 + r1)``; residuals that alternate (``r1`` down to
  -0.5, :data:`bench.slo.early_rules.MIN_AUTOCORRELATION`) shrink ``se`` instead, and the
  degrees of freedom stay ``n``;
* decided when ``b + t * se < threshold`` (pass) or ``b - t * se >= threshold``
  (fail), ``t`` the Student quantile of the two-sided ``confidence`` (default 0.99).

Each SLO type says for itself whether and how it can be decided early
(``SloType.decide_early``); the core knows no SLO by name. The trend SLOs (the
lag-trend plugin, ``generic`` with ``queryAggregation: trend``) apply the rule
above through :func:`trend_decision`, with the thresholds their own ``check`` uses;
when the use case declares an output period (``UseCase.window_seconds``: a windowed
lag rises and falls once per period, which this rule cannot see through), the rule
over whole periods of :mod:`bench.slo.early_rules` decides where this one cannot. The
dropped-records and latency SLOs bring their own rules (:mod:`bench.slo.early_rules`). A
benchmark with an SLO that cannot be decided early (a mean, ...) runs a passing
repetition for its full duration; with one repetition, an SLO decided "fail" still
ends the experiment early (:func:`decided`). SLO properties ``earlyStopConfidence``
and ``earlyStopMinSamples`` tune the rule per SLO.

Across repetitions (:func:`settled_verdict`): once the repetitions run so far settle
the experiment's verdict whatever the remaining ones show (two of three lag slopes on
the same side of the threshold settle their median; one repetition dropping too many
records fails the experiment), the remaining repetitions are skipped.

On by default since it gave the reference's verdicts in every same-run comparison of
``benchmarks/time_to_verdict.py`` (docs/performance.md); ``execution.earlyStop:
false`` or ``bench run --no-early-stop`` gives the reference procedure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from bench import slo_math
from bench.api import EarlyDecision, Series, SloContext
from bench.config.slo_properties import warmup_of
from bench.slo.early_rules import (
    DEFAULT_CONFIDENCE,
    MAX_AUTOCORRELATION,
    MIN_SAMPLES,
    MIN_SPAN_S,
    REPORTED_CONFIDENCE,
    TrendFit,
    fit,
    t_quantile,
    window_decision,
)
from bench.slo.lag_batches import held_level_slope, too_few_batches

__all__ = ["DEFAULT_CONFIDENCE", "MAX_AUTOCORRELATION", "MIN_SAMPLES", "MIN_SPAN_S", "REPORTED_CONFIDENCE",
           "TrendFit", "fit", "t_quantile"]

#: kept under its old name: the decision of one SLO (see ``bench.api.EarlyDecision``)
Decision = EarlyDecision


def decide_series(
    series: Series,
    warmup: float,
    threshold: float,
    operator: str = "lt",
    confidence: float = DEFAULT_CONFIDENCE,
    min_samples: int = MIN_SAMPLES,
    min_span: float = MIN_SPAN_S,
) -> EarlyDecision:
    """Whether the trend of one repetition's series is decided against ``threshold``.

    ``operator`` is the SLO's pass condition (slope ``lt``/``lte``/``gt``/``gte``
    threshold); a confidence interval touching the threshold decides nothing.
    """
    t, v = slo_math.after_warmup(series, warmup)
    if t.size < max(3, min_samples):
        return EarlyDecision(None, f"{t.size} samples after warm-up, need {max(3, min_samples)}")
    if float(t[-1] - t[0]) < min_span:
        return EarlyDecision(None, f"{t[-1] - t[0]:.0f} s after warm-up, need {min_span:g} s")
    try:
        trend = fit(t, v)
    except (slo_math.InsufficientData, ZeroDivisionError) as exc:
        return EarlyDecision(None, str(exc))
    low, high = trend.bounds(confidence)
    if not (math.isfinite(low) and math.isfinite(high)):
        return EarlyDecision(None, "slope or its error is not finite", trend.slope, low, high, threshold)
    below, above = high < threshold, low > threshold
    if operator in ("lt", "lte"):
        passed = True if below else False if (above or (operator == "lt" and low >= threshold)) else None
    elif operator in ("gt", "gte"):
        passed = True if above else False if (below or (operator == "gt" and high <= threshold)) else None
    else:
        raise ValueError(f"operator: {operator!r} is not one of {', '.join(slo_math.OPERATORS)}")
    reason = "undecided" if passed is None else ("pass" if passed else "fail")
    return EarlyDecision(
        passed, f"{reason}: slope {trend.slope:.4g} in [{low:.4g}, {high:.4g}] vs {threshold:.4g}",
        trend.slope, low, high, threshold,
    )


def trend_decision(series: Series, ctx: SloContext, threshold: float, operator: str,
                   lag: bool = False) -> EarlyDecision:
    """The early decision of an SLO on the trend of ``series``, for ``SloType.decide_early``.

    The caller resolves ``threshold`` exactly as its ``check`` does; this adds the
    per-SLO tuning properties ``earlyStopConfidence`` and ``earlyStopMinSamples``.
    ``lag``: ``series`` is the consumer lag, and no "fail" is decided while a micro-batch
    SUT has committed fewer than two batches since the warm-up
    (:func:`bench.slo.lag_batches.too_few_batches`), nor while the growth seen so far, held
    at its level to the end of the repetition, would still pass
    (:func:`bench.slo.lag_batches.held_level_slope`).
    """
    decision = _trend_decision(series, ctx, threshold, operator)
    if not (lag and decision.passed is False and operator in ("lt", "lte")):
        return decision
    if too_few_batches(series, ctx):
        why = (f"the lag rose at the whole input rate ({ctx.load_rate or 0:,.0f} records/s) between its falls, "
               "and fell fewer than twice since the warm-up: too few micro-batches have ended there yet")
    else:
        held = held_level_slope(series, ctx)
        if held is None or decision.threshold is None or held >= decision.threshold:
            return decision
        why = (f"slope {decision.slope:.4g} so far, but the lag held at its present level to the end gives the "
               f"repetition {held:.4g} vs {decision.threshold:.4g}: fail only on growth already seen")
    return EarlyDecision(None, f"undecided: {why}", decision.slope, decision.low, decision.high, decision.threshold)


def _trend_decision(series: Series, ctx: SloContext, threshold: float, operator: str) -> EarlyDecision:
    try:
        confidence = slo_math.number(ctx.properties, "earlyStopConfidence", minimum=0.5)
        min_samples = slo_math.number(ctx.properties, "earlyStopMinSamples", minimum=3)
    except ValueError as exc:
        return EarlyDecision(None, str(exc))
    confidence = min(confidence or DEFAULT_CONFIDENCE, 0.999999)
    decision = decide_series(series, ctx.warmup, threshold, operator, confidence=confidence,
                             min_samples=int(min_samples or MIN_SAMPLES))
    if decision.passed is not None or ctx.period is None:
        return decision
    # a windowed use case's lag is one long wave around its trend: judge whole periods
    span_end = ctx.duration - ctx.warmup if ctx.duration else None
    windowed = window_decision(series, ctx.warmup, threshold, ctx.period, operator, confidence=confidence,
                               span_end=span_end)
    return windowed if windowed.passed is not None else decision


def decide(
    slos: Sequence[Any], registry: Any, series: Mapping[str, Series], execution: Any, spec: Any, elapsed: float,
    dense: Mapping[str, Series] | None = None,
) -> list[EarlyDecision]:
    """One decision per SLO, by its own type; a type without ``decide_early`` never decides.

    ``dense``: the same SLIs sampled more often than the recorded ``series``
    (``execution.earlySampleInterval``), for the SLOs on a trend and those whose type
    says so (``SloType.uses_dense``: the dropped-records SLO, whose "pass" bounds the
    counter's growth with confidence; the latency SLO counts recorded values and stays
    on them). A decision on them stands only
    where the verdict over the recorded samples so far, which is what this repetition
    will be judged on if it ends now, says the same (:func:`_dense_decision`)."""
    from bench.patchers.apply import load_rate

    rate = load_rate(spec.objects, spec.load)
    use_case = getattr(spec, "use_case", None)
    period = use_case.output_period(getattr(spec, "params", None) or {}) if use_case is not None else None
    out: list[EarlyDecision] = []
    for slo in slos:
        slo_type = registry.slos.get(slo.sloType)
        if slo_type is None or not slo_type.can_decide_early():
            out.append(EarlyDecision(None, f"SLO type {slo.sloType!r} cannot stop early", slo=slo.name))
            continue
        sli = slo_type.sli_name(slo.properties)
        s = series.get(sli)
        if s is None:
            out.append(EarlyDecision(None, f"no samples of {sli!r} yet", slo=slo.name))
            continue
        warmup = warmup_of(slo.properties, execution.warmup)
        ctx = SloContext(load=float(spec.load), resources=float(spec.resources), warmup=warmup,
                         properties=slo.properties, load_rate=rate, duration=float(execution.duration),
                         period=period)
        decision = slo_type.decide_early(s, ctx)
        fine = (dense or {}).get(sli)
        if decision.passed is None and fine is not None and slo_type.uses_dense(slo.properties):
            decision = _dense_decision(slo_type, s, fine, ctx, decision)
        out.append(replace(decision, slo=slo.name))
    return out


def _dense_decision(slo_type: Any, recorded: Series, fine: Series, ctx: SloContext,
                    fallback: EarlyDecision) -> EarlyDecision:
    """The rule on the densely sampled series, kept only where the recorded samples'
    own verdict agrees: an early end is then judged as it was decided, by construction.

    And only where the recorded samples' interval at the confidence the verdict is
    reported with lies on the same side of the threshold. Dense samples can be far
    surer than the recorded ones (more of them, residuals correlated differently): UC4
    at 1,024 records/s on one instance was decided "fail" at 67 s on them, and the same
    repetition's verdict was then flagged unstable, its
    recorded samples' interval [39.6, 984] reaching below the threshold of 51.2 (the
    recorded samples alone were undecided: [-338, 1361] at 0.99). A repetition ended
    early must not be reported as undecided in the same breath. Not for a use case with
    an output period: its rule over whole periods decides where the plain interval,
    which the report prints, cannot see through the wave; nor for an SLO not on a trend
    (dropped records), for which the report prints no slope interval."""
    decision: EarlyDecision = slo_type.decide_early(fine, ctx)
    if decision.passed is None:
        return fallback
    try:
        verdict = slo_type.check([recorded], ctx)
    except (ValueError, ArithmeticError):
        return fallback
    if "error" in verdict.details or verdict.passed is not decision.passed:
        return fallback
    if ctx.period is None and slo_type.is_trend(ctx.properties) and not _recorded_interval_agrees(
            recorded, ctx, decision):
        return fallback
    return replace(decision, reason=f"{decision.reason} (dense samples)")


def _recorded_interval_agrees(recorded: Series, ctx: SloContext, decision: EarlyDecision) -> bool:
    """Whether the recorded samples' slope interval (as ``bench.analysis.confidence``
    reports it for one repetition) lies wholly on the decided side of the threshold;
    True where they give no interval (too few samples), as the report then flags none."""
    if decision.threshold is None:
        return True
    sure = decide_series(recorded, ctx.warmup, decision.threshold, str(ctx.properties.get("operator", "lt")),
                         confidence=REPORTED_CONFIDENCE, min_samples=3, min_span=0.0)
    no_interval = sure.low is None or sure.high is None or not math.isfinite(sure.low)
    return no_interval or sure.passed is decision.passed


def decided(
    slos: Sequence[Any], registry: Any, series: dict[str, Series], execution: Any, spec: Any, elapsed: float,
    dense: Mapping[str, Series] | None = None,
) -> bool:
    """True once the experiment's verdict no longer depends on the rest of this repetition
    (:func:`early_state`)."""
    return early_state(slos, registry, series, execution, spec, elapsed, dense)[0]


def early_state(
    slos: Sequence[Any], registry: Any, series: dict[str, Series], execution: Any, spec: Any, elapsed: float,
    dense: Mapping[str, Series] | None = None,
) -> tuple[bool, list[EarlyDecision]]:
    """Whether the rest of this repetition can still change the experiment's verdict, and
    every SLO's decision, so that the progress line and the result files can say why a
    repetition ended early or why it ran on.

    It is over when every SLO is decided, either way; or, with a single repetition, when
    one SLO is decided "fail": the experiment fails whatever the others say. That lets
    use cases with an SLO that cannot stop early still end under-provisioned
    experiments early. With several repetitions one
    repetition's fail is not final (the lag trend is the median over repetitions)."""
    if not slos:
        return False, []
    decisions = decide(slos, registry, series, execution, spec, elapsed, dense)
    if all(d.passed is not None for d in decisions):
        return True, decisions
    return int(execution.repetitions) == 1 and any(d.passed is False for d in decisions), decisions


def described(decisions: Sequence[EarlyDecision]) -> list[str]:
    """Each decision as "SLO: reason", the words the progress line and the result files use."""
    return [f"{d.slo}: {d.reason}" if d.slo else d.reason for d in decisions]


#: slope of the stand-in repetitions that bound what a repetition not yet run could show
EXTREME_SLOPE = 1e12


def stand_ins(series: Series) -> tuple[Series, Series]:
    """Two repetitions shaped like ``series`` (same sample times) that bound any real
    one: values falling and rising by :data:`EXTREME_SLOPE` per second."""
    t0 = series.timestamps[0] if series.timestamps else 0.0
    low = [-(t - t0) * EXTREME_SLOPE for t in series.timestamps]
    return Series(list(series.timestamps), low, series.labels), Series(list(series.timestamps), [-v for v in low],
                                                                         series.labels)


def settled_verdict(
    check: Any, collected: Mapping[str, list[Series]], slis: Sequence[str], remaining: int
) -> bool | None:
    """The experiment's verdict if no outcome of the ``remaining`` repetitions can change
    it, else None.

    ``check(collected) -> {slo: passed}`` evaluates every SLO over the repetitions given.
    Each SLO is evaluated twice, with the remaining repetitions stood in for by the
    lowest and by the highest possible series (:func:`stand_ins`). Aggregations across
    repetitions that are monotone in each repetition (median of slopes, worst
    repetition, max, min) give one verdict for every real outcome iff they give it for
    both stand-ins; a mean of extreme values never settles, so it waits for the rest.
    Settled: "fail" as soon as one SLO fails both ways; "pass" once all pass both ways.
    """
    return settlement(check, collected, slis, remaining)[0]


def still_open(check: Any, collected: Mapping[str, list[Series]], slis: Sequence[str], remaining: int) -> list[str]:
    """The SLOs whose verdict the ``remaining`` repetitions could still turn either way."""
    return settlement(check, collected, slis, remaining)[1]


#: aggregations whose result does not move one way as one value rises (a spread, a shape,
#: the most frequent value): the lowest and the highest stand-ins do not bracket what the
#: remaining repetitions can give, so an SLO aggregating by one is never settled early
NON_MONOTONE_AGGREGATIONS = frozenset({"std", "var", "skew", "kurt", "mode"})


def monotone(properties: Mapping[str, Any]) -> bool:
    """Whether the stand-ins bracket this SLO's verdict (no non-monotone aggregation)."""
    return not any(str(properties.get(key, "")) in NON_MONOTONE_AGGREGATIONS
                   for key in ("queryAggregation", "repetitionAggregation"))


def settlement(
    check: Any, collected: Mapping[str, list[Series]], slis: Sequence[str], remaining: int,
    unbracketed: Sequence[str] = (),
) -> tuple[bool | None, list[str]]:
    """The settled verdict (:func:`settled_verdict`) and the SLOs still open, from one
    evaluation of the stand-ins: the engine needs both after every repetition.

    Why the open SLOs: a user watching an experiment run all its repetitions although
    the first ones agreed should see which SLO keeps it open, typically one judged by
    its worst repetition (dropped records), which no number of passing repetitions
    settles.
    """
    bounds = _bounds(check, collected, slis, remaining)
    if bounds is None:
        return None, []
    low, high = bounds
    for name in unbracketed:  # ``unbracketed``: SLOs the stand-ins cannot bracket stay open
        if name in low:
            low[name], high[name] = False, True
    still = [name for name in low if low[name] != high[name]]
    if any(not low[name] and not high[name] for name in low):
        return False, still
    if all(low[name] and high[name] for name in low):
        return True, still
    return None, still


def _bounds(
    check: Any, collected: Mapping[str, list[Series]], slis: Sequence[str], remaining: int
) -> tuple[dict[str, bool], dict[str, bool]] | None:
    """Each SLO's verdict with the remaining repetitions stood in for by the lowest and by
    the highest possible series; None when nothing is left to run or an SLI has no
    repetition yet."""
    if remaining <= 0:
        return None
    bounds = []
    for which in (0, 1):
        padded: dict[str, list[Series]] = {}
        for sli in slis:
            reps = collected.get(sli) or []
            if not reps:
                return None
            padded[sli] = [*reps, *([stand_ins(reps[0])[which]] * remaining)]
        bounds.append(check(padded))
    return bounds[0], bounds[1]
