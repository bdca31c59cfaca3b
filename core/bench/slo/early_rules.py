"""Early decisions beyond a plain trend: windowed lag, dropped records, latency.

Each rule answers pass, fail or undecided for one repetition's samples so far, and
decides only when the final verdict (the SLO type's ``check`` over the whole
repetition) cannot or very probably will not say otherwise:

* :func:`window_decision`: a windowed use case's lag rises and falls once per output
  period, so its residuals around a line are one long wave and the trend rule of
  :mod:`bench.slo.early_stop` never gets enough effective samples. Averaging the lag over
  each whole period removes the wave exactly (a periodic part has the same mean in
  every period), which leaves a short series of nearly independent period means whose
  slope is the lag's trend. The final verdict's slope is fitted to the raw samples,
  whose wave can tilt it by at most ``min(1.5 A / S, 7.5 A P / S^2)`` (``A`` the lag's
  range within one period, ``P`` the period, ``S`` the span: the steepest OLS slope of
  any function with range ``A`` is that of a step in the middle; over whole periods
  the wave's tilt cancels but for one partial period). With the repetition's duration
  known, the wave's own tilt over the final sample times is computed instead (its
  shape folded from the residuals by phase), which is far smaller than the bound.
  The period is the lag's own cycle where its drains lie further apart than the
  output period (a batch that outlasts its trigger,
  :func:`bench.slo.lag_batches.lag_cycle`), and the means' slope keeps the trend rule's
  allowance for correlated residuals, in case the cycle is irregular.
* :func:`dropped_decision`: the dropped-records counter never falls, so once the
  records dropped so far exceed ``maxRatio`` of all the records the whole repetition
  will generate, "fail" is certain. "Pass" needs the counter's growth so far, bounded
  above with confidence and continued to the end, to stay within the ratio.
* :func:`latency_decision`: per-interval percentiles aggregated by a median (the
  default), a max or a min. Certain by counting: more than half of all the values the
  repetition can still have are already on one side of the threshold (median), one
  value at or above it (max: fail), one below it (min: pass). With confidence, for
  the median: the share of values beyond the threshold is bounded away from one half
  (Wilson interval on the effective sample size), and the values' median is "far"
  from the threshold (:data:`FAR_FACTOR`).

The SLO types attach these through ``SloType.decide_early``; the core passes the
repetition's duration and the use case's period in ``SloContext``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from bench import slo_math
from bench.api import EarlyDecision, Series, SloContext
from bench.slo.lag_batches import lag_cycle

#: ``decide_early`` of an SLO type: one repetition's series and the verdict's context
EarlyRule = Callable[[Series, SloContext], EarlyDecision]

#: fewer samples after the warm-up give no early decision
MIN_SAMPLES = 10
#: nor does a shorter stretch of time after the warm-up (several saw-tooth periods)
MIN_SPAN_S = 20.0
DEFAULT_CONFIDENCE = 0.99
#: the confidence of the intervals a verdict is reported with (``bench.analysis.confidence``),
#: which flags one whose interval holds the threshold
REPORTED_CONFIDENCE = 0.95
#: residual autocorrelation is capped here: beyond it the sample size is "one"
MAX_AUTOCORRELATION = 0.9
#: and floored here. Residuals that alternate (a micro-batch saw-tooth sampled at an odd
#: multiple of half its cycle: UC1's lag every 5 s, in 2-s batches, reads 12.5k, 7.5k,
#: 12.5k, ...) tilt an OLS slope far less than independent ones of the same size, and
#: the AR(1) error shrinks by ``sqrt((1 + r1) / (1 - r1))``. Clipped at zero, that was
#: thrown away: the recorded samples' interval, which a dense-sample decision waits
#: for (``bench.slo.early_stop._dense_decision``) and the report flags by, held UC1's
#: 5,000 records/s on 2 instances until 125 s where the dense samples had decided at
#: 83 s; at this floor 95 s (the samples of one ``--sample-interval 1`` run). The floor
#: keeps the shrinking at most sqrt(3), and the
#: degrees of freedom never exceed the samples taken.
MIN_AUTOCORRELATION = -0.5

@dataclass(frozen=True)
class TrendFit:
    """A slope with an error bar honest about autocorrelated residuals."""

    slope: float
    stderr: float
    samples: int
    effective_samples: float

    def bounds(self, confidence: float) -> tuple[float, float]:
        half = t_quantile(0.5 + confidence / 2.0, max(1.0, self.effective_samples - 2.0)) * self.stderr
        return self.slope - half, self.slope + half


def t_quantile(p: float, dof: float) -> float:
    """Student-t quantile by the Cornish-Fisher expansion (no scipy in the core).

    Within 1 % of the exact value for dof >= 3 at the quantiles used here; below 3
    the exact quantile of 1 or 2 degrees of freedom (the expansion errs on the small
    side there, and a rule over few whole periods works with 2).
    """
    if dof < 2:  # one degree of freedom (Cauchy): exact, and conservative up to two
        return math.tan(math.pi * (p - 0.5))
    if dof < 3:  # two degrees of freedom: exact, and conservative up to three
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    z = NormalDist().inv_cdf(p)
    g1 = (z**3 + z) / 4.0
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96.0
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384.0
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160.0
    return z + g1 / dof + g2 / dof**2 + g3 / dof**3 + g4 / dof**4


def fit(t: np.ndarray, v: np.ndarray) -> TrendFit:
    """OLS slope of ``v`` on ``t`` with its autocorrelation-corrected standard error
    (lag-1 autocorrelation of the residuals, within :data:`MIN_AUTOCORRELATION` and
    :data:`MAX_AUTOCORRELATION`)."""
    n = int(t.size)
    if n < 3:
        raise slo_math.InsufficientData(f"{n} sample(s), need at least 3 for a slope's error")
    b, a = slo_math.slope(t, v)
    residuals = v - (a + b * t)
    dt = t - t.mean()
    sxx = float(np.dot(dt, dt))
    sse = float(np.dot(residuals, residuals))
    se = math.sqrt(sse / (n - 2) / sxx)
    r1 = float(np.dot(residuals[:-1], residuals[1:]) / sse) if sse > 0 else 0.0
    r1 = min(max(r1, MIN_AUTOCORRELATION), MAX_AUTOCORRELATION)
    inflation = (1.0 + r1) / (1.0 - r1)
    return TrendFit(b, se * math.sqrt(inflation), n, n / max(inflation, 1.0))

#: fewer whole periods after the warm-up give no windowed decision (2 degrees of freedom)
MIN_PERIODS = 4
#: a latency median must lie this factor beyond (or within) the threshold for a decision with confidence
FAR_FACTOR = 2.0
#: fewer latency values give no decision with confidence
MIN_LATENCY_VALUES = 10


def period_means(t: np.ndarray, v: np.ndarray, period: float) -> tuple[np.ndarray, np.ndarray, float]:
    """Mean time and mean value of each whole period from the first sample on, and the
    median range of the values within one period (the wave's height)."""
    if t.size == 0 or period <= 0:
        return np.empty(0), np.empty(0), 0.0
    index = np.floor((t - t[0]) / period).astype(int)
    whole = int(np.floor((t[-1] - t[0]) / period))  # periods [k P, (k+1) P) that ended
    times, means, ranges = [], [], []
    for k in range(whole):
        mask = index == k
        if not mask.any():
            continue
        times.append(float(t[mask].mean()))
        means.append(float(v[mask].mean()))
        ranges.append(float(v[mask].max() - v[mask].min()))
    return np.asarray(times), np.asarray(means), float(np.median(ranges)) if ranges else 0.0


def cycle_means(t: np.ndarray, v: np.ndarray, period: float) -> tuple[float, np.ndarray, np.ndarray, float]:
    """:func:`period_means` over the lag's own cycle (:func:`bench.slo.lag_batches.lag_cycle`),
    with that cycle: the early rule and the reported confidence average alike."""
    cycle = lag_cycle(t, v, period)
    return (cycle, *period_means(t, v, cycle))


def wave_tilt(t: np.ndarray, residuals: np.ndarray, period: float,
              span_end: float | None) -> tuple[float, float] | None:
    """The least and greatest slope the wave alone gives the final verdict's fit.

    The wave's shape is the residuals folded by phase (one bin per sampling step); its
    OLS slope over the sample times the whole repetition will have (last sample within
    two steps of ``span_end``) is what it adds to the final slope. None: the final span
    is unknown.
    """
    if span_end is None or t.size < 3:
        return None
    step = float(np.median(np.diff(t)))
    if step <= 0:
        return None
    bins = max(1, int(round(period / step)))
    phase = (((t - t[0]) % period) / period * bins).astype(int) % bins
    shape = np.zeros(bins)
    for b in range(bins):
        hit = phase == b
        shape[b] = float(residuals[hit].mean()) if hit.any() else 0.0
    tilts = []
    for end in (span_end + k * step for k in range(-2, 3)):
        times = np.arange(0.0, max(end, step * 3), step)
        values = shape[((times % period) / period * bins).astype(int) % bins]
        tilts.append(slo_math.slope(times, values)[0])
    return min(tilts), max(tilts)


def window_decision(
    series: Series, warmup: float, threshold: float, period: float, operator: str = "lt",
    confidence: float = DEFAULT_CONFIDENCE, min_periods: int = MIN_PERIODS, span_end: float | None = None,
) -> EarlyDecision:
    """The lag trend decided on whole output periods (see the module docstring)."""
    t, v = slo_math.after_warmup(series, warmup)
    declared = period
    period, times, means, wave = cycle_means(t, v, period)
    k = int(means.size)
    of = f"{period:.3g} s (the lag's own cycle; output period {declared:g} s)" if period > declared else f"{period:g} s"
    if k < max(3, min_periods):
        return EarlyDecision(None, f"{k} whole period(s) of {of} after warm-up, need {max(3, min_periods)}")
    try:
        trend = fit(times, means)
    except (slo_math.InsufficientData, ZeroDivisionError) as exc:
        return EarlyDecision(None, str(exc))
    slope = trend.slope
    intercept = float(means.mean() - slope * times.mean())
    # The means are independent only when the period is the wave's. A micro-batch that
    # overruns the trigger makes the wave longer than the declared period: its means
    # then drift together, and the fit's autocorrelation correction widens the interval.
    half = t_quantile(0.5 + confidence / 2.0, max(1.0, trend.effective_samples - 2.0)) * trend.stderr
    span = max(float(t[-1] - t[0]), 1e-9)
    tilt = wave_tilt(t, v - (intercept + slope * t), period, span_end)
    if tilt is None:
        margin = min(1.5 * wave / span, 7.5 * wave * period / span**2)
        tilt = (-margin, margin)
    low, high = slope - half + tilt[0], slope + half + tilt[1]
    margin = max(-tilt[0], tilt[1])
    if operator in ("lt", "lte"):
        passed = True if high < threshold else False if low >= threshold else None
    elif operator in ("gt", "gte"):
        passed = True if low > threshold else False if high <= threshold else None
    else:
        raise ValueError(f"operator: {operator!r} is not one of {', '.join(slo_math.OPERATORS)}")
    word = "undecided" if passed is None else ("pass" if passed else "fail")
    return EarlyDecision(
        passed, f"{word} over {k} periods of {of}: slope {slope:.4g} in [{low:.4g}, {high:.4g}] "
        f"(wave margin {margin:.3g}) vs {threshold:.4g}", slope, low, high, threshold,
    )


def final_span(t: np.ndarray, ctx: SloContext) -> float | None:
    """An upper bound of the span after the warm-up the final verdict will see; None: unknown.

    The last sample may come one or two intervals after ``duration`` (sampling is not
    exact), so twice the largest gap seen is added.
    """
    if ctx.duration is None or ctx.duration <= 0:
        return None
    gap = float(np.max(np.diff(t))) if t.size > 1 else 0.0
    return max(float(ctx.duration) - ctx.warmup, 0.0) + 2.0 * gap


def dropped_decision(series: Series, ctx: SloContext, max_ratio: float,
                     confidence: float = DEFAULT_CONFIDENCE) -> EarlyDecision:
    """Fail once the drops so far exceed the ratio of the whole repetition; pass once their
    growth, bounded above with confidence and continued to the end, cannot reach it."""
    if ctx.load_rate is None or ctx.load_rate <= 0:
        return EarlyDecision(None, "the load rate is unknown")
    t, v = slo_math.after_warmup(series, ctx.warmup)
    span_end = final_span(t, ctx)
    if span_end is None or t.size < 2:
        return EarlyDecision(None, "the repetition's duration or samples are unknown")
    dropped = float(np.sum(np.clip(np.diff(v), 0.0, None)))
    allowed = max_ratio * ctx.load_rate * span_end
    if dropped > allowed:
        return EarlyDecision(False, f"fail: {dropped:.0f} dropped > {allowed:.0f} allowed for the whole repetition",
                             threshold=allowed)
    span = float(t[-1] - t[0])
    if t.size < MIN_SAMPLES or span < MIN_SPAN_S:
        return EarlyDecision(None, f"{t.size} samples over {span:.0f} s after warm-up")
    trend = fit(t, np.maximum.accumulate(v))  # a reset counter counts on from where it was
    _, high = trend.bounds(confidence)
    if not math.isfinite(high):
        return EarlyDecision(None, "the drop rate's bound is not finite")
    # at least the ratio's own margin must stay: generated records are only bounded above
    projected = dropped + max(high, 0.0) * max(span_end - span, 0.0)
    generated_now = ctx.load_rate * span
    passed = True if projected <= max_ratio * generated_now else None
    return EarlyDecision(passed, f"{'pass' if passed else 'undecided'}: {dropped:.0f} dropped, at most "
                         f"{projected:.0f} by the end vs {max_ratio * generated_now:.0f}",
                         trend.slope, None, high, max_ratio * generated_now)


def _wilson(k: int, n: float, confidence: float) -> tuple[float, float]:
    if n <= 0:
        return 0.0, 1.0
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    p = k / max(n, 1.0) if n >= 1 else 0.5
    p = min(max(p, 0.0), 1.0)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def latency_decision(series: Series, ctx: SloContext, threshold: float, aggregation: str,
                     interval: float | None = None, confidence: float = DEFAULT_CONFIDENCE) -> EarlyDecision:
    """A latency SLO's repetition decided by counting (certain) or with confidence (median)."""
    t, v = slo_math.after_warmup(series, ctx.warmup)
    n = int(v.size)
    if n == 0:
        return EarlyDecision(None, "no latency values after warm-up")
    above = int(np.sum(v >= threshold))
    below = n - above
    if aggregation == "max":
        return EarlyDecision(False, f"fail: a value >= {threshold:g}") if above else EarlyDecision(
            None, "a max passes only at the end")
    if aggregation == "min":
        return EarlyDecision(True, f"pass: a value < {threshold:g}") if below else EarlyDecision(
            None, "a min fails only at the end")
    if aggregation != "median":
        return EarlyDecision(None, f"queryAggregation {aggregation!r} is decided only at the end")
    span_end = final_span(t, ctx)
    if span_end is not None and t.size > 1:
        step = interval or float(np.median(np.diff(t)))
        most = int(math.floor(span_end / step)) + 2 if step > 0 else None
        if most is not None:
            if above > most // 2:
                return EarlyDecision(False, f"fail: {above} of at most {most} values >= {threshold:g}",
                                     threshold=threshold)
            if below > most // 2:
                return EarlyDecision(True, f"pass: {below} of at most {most} values < {threshold:g}",
                                     threshold=threshold)
    if n < MIN_LATENCY_VALUES:
        return EarlyDecision(None, f"{n} latency values, need {MIN_LATENCY_VALUES}")
    median = float(np.median(v))
    centred = v - median
    denom = float(np.dot(centred, centred))
    r1 = float(np.dot(centred[:-1], centred[1:]) / denom) if denom > 0 else 0.0
    r1 = min(max(r1, 0.0), 0.9)
    n_eff = n * (1 - r1) / (1 + r1)
    low, high = _wilson(above, n_eff, confidence)
    if low > 0.5 and median >= threshold * FAR_FACTOR:
        return EarlyDecision(False, f"fail: median {median:.0f} ms, share >= threshold in [{low:.2f}, {high:.2f}]",
                             median, low, high, threshold)
    if high < 0.5 and median * FAR_FACTOR < threshold:
        return EarlyDecision(True, f"pass: median {median:.0f} ms, share >= threshold in [{low:.2f}, {high:.2f}]",
                             median, low, high, threshold)
    return EarlyDecision(None, f"undecided: median {median:.0f} ms vs {threshold:g}", median, low, high, threshold)


def _confidence(ctx: SloContext) -> float:
    value = slo_math.number(ctx.properties, "earlyStopConfidence", minimum=0.5)
    return min(value or DEFAULT_CONFIDENCE, 0.999999)


def dropped_rule(default_max_ratio: float) -> EarlyRule:
    """``decide_early`` of the dropped-records SLO, with the default its ``check`` uses."""

    def decide(series: Series, ctx: SloContext) -> EarlyDecision:
        try:
            max_ratio = slo_math.number(ctx.properties, "maxRatio", minimum=0.0)
            confidence = _confidence(ctx)
        except ValueError as exc:
            return EarlyDecision(None, str(exc))
        return dropped_decision(series, ctx, default_max_ratio if max_ratio is None else max_ratio, confidence)

    return decide


def latency_rule(default_aggregation: str) -> EarlyRule:
    """``decide_early`` of the latency SLO: its ``threshold`` (ms) and ``queryAggregation``
    (``default_aggregation`` when absent, as its ``check`` reads them)."""

    def decide(series: Series, ctx: SloContext) -> EarlyDecision:
        try:
            threshold = slo_math.number(ctx.properties, "threshold", minimum=0.0)
            confidence = _confidence(ctx)
        except ValueError as exc:
            return EarlyDecision(None, str(exc))
        if threshold is None:
            return EarlyDecision(None, "no threshold")
        aggregation = str(ctx.properties.get("queryAggregation", default_aggregation))
        return latency_decision(series, ctx, float(threshold), aggregation, confidence=confidence)

    return decide
