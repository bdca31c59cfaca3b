"""How sure a lag-trend verdict is: the median slope's interval and its margin.

A verdict is the median of the repetitions' OLS slopes compared with a threshold. Three
things make it fragile, and any flags the experiment ``unstable``:

* the repetitions disagree: some slopes lie below the threshold, some at or above it,
  so another repetition could have flipped the median;
* the margin ``threshold - median`` lies inside the noise: ``|median - threshold| <
  t * se``, with ``se`` the standard error of the median repetition's slope (the mean
  of the two middle ones for an even count), inflated for the autocorrelated residuals
  of a micro-batch saw-tooth exactly as early stopping does it
  (:func:`bench.slo.early_stop.fit`), and ``t`` its Student quantile; unless the
  repetitions' own bounds fix the median on one side (:func:`_median_of_bounds`);
* a step: one half of a repetition (by time) has a slope whose interval lies wholly
  on the other side of the threshold. A quarter-core instance's first micro-batch can
  take half a minute, and whether it ends inside a short repetition decided the
  verdict: UC1 at 40,000 records/s on 3 instances passed (slope -16,452 against 400)
  and then failed (25,709) in two runs of the same 60-s experiment, neither flagged by
  the other two rules (``benchmarks/reproducibility.py --quick``).

Two things the engine knows about each repetition count as well
(:func:`evidence`, kept with the verdict as ``repetition_evidence`` for ``bench analyze``):
the bounds of the early decision that ended it, and whether it ran only for other SLOs.
A repetition decided early on its dense samples or over whole output periods records one
sample per ``sampleInterval``, 4 of them when UC3's ends at 82 s, too few to show again
what ended it; its decision's bounds stand for it in :func:`_median_of_bounds`. A
repetition run after this SLO was settled, ended by another SLO's decision (a
dropped-records SLO judged by the worst repetition, ``repetitionAggregation: max``),
holds a slope of a few samples that no rule judged: it counts in the median, as the
method has it, but neither in "the repetitions disagree" nor with bounds. UC3's 12,000
records/s on one instance was flagged for both (recorded slopes -1,231, -4,552 and
+1,643 against 120, the last over the 4 samples of a repetition the dropped-records SLO
ended at 82 s), while its first two repetitions had decided "pass" with confidence: the
flag said what the few recorded samples alone show, not what decided the verdict.

The slope error is imported from :mod:`bench.slo.early_stop`, not re-derived, so that the
confidence printed here and the confidence that ended a repetition early are the same
number. For a use case with an output period (UC3) it is the error of the slope of the
lag's means over its whole cycles, as the rule over whole periods
(:func:`bench.slo.early_rules.window_decision`) judges it: the plain fit cannot see through
the lag's rise and fall: UC3's 1,500 records/s on one instance was flagged unstable
(slope -87.1 against 15) in a run whose repetitions that rule had each decided "pass".
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from bench import slo_math
from bench.results.store import ExperimentRecord, Repetition, ResultStore, bounds_pair, read_series
from bench.slo import early_rules, early_stop

#: two-sided confidence of the printed intervals; 0.95 as a reader expects of an error bar
#: (early stopping's dense-sample decisions check it too: bench.slo.early_stop._dense_decision)
DEFAULT_CONFIDENCE = early_stop.REPORTED_CONFIDENCE


@dataclass(frozen=True)
class RepetitionFit:
    """One repetition: slope, intercept (at t = 0 of the epoch axis) and its error."""

    slope: float
    intercept: float
    samples: int
    stderr: float | None = None
    effective_samples: float | None = None
    #: the bounds of the early decision that ended it, at early stopping's confidence
    decided: tuple[float, float] | None = None
    #: run after this SLO was settled and ended by another's decision: no evidence for it
    incidental: bool = False
    #: the lag's rise over the repetition less its largest fall between two samples, per
    #: second (:func:`net_rise`); None with fewer than two samples
    rise: float | None = None


@dataclass(frozen=True)
class Confidence:
    """The verdict's numbers: ``margin > 0`` means the median lies below the threshold."""

    median: float
    threshold: float
    margin: float
    low: float | None
    high: float | None
    stderr: float | None
    confidence: float
    disagree: bool
    inside_noise: bool
    step: bool = False

    @property
    def unstable(self) -> bool:
        return self.disagree or self.inside_noise or self.step

    @property
    def reasons(self) -> list[str]:
        """Why the verdict is unstable, in words: ``bench analyze``, the report and the
        end of ``bench run`` print the same ones, so a rule added here shows in all."""
        return reasons_of(asdict(self))

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "unstable": self.unstable}


#: each rule's flag in :class:`Confidence` and the words that print it
REASONS = (("disagree", "repetitions disagree"), ("inside_noise", "margin inside the noise"),
           ("step", "one half of a repetition says otherwise"))


def reasons_of(flags: Mapping[str, Any]) -> list[str]:
    """The words of :attr:`Confidence.reasons` for a confidence as stored in a result file."""
    return [words for key, words in REASONS if flags.get(key)]


def explain(slos: Mapping[str, Any]) -> str:
    """Which SLO made an experiment unstable, with its figures: ``slope -67 in [-171, 37]
    against 15 (margin inside the noise)``. A bare "unstable" would leave a user to
    open the result files to learn whether the verdict missed by a little or by a lot."""
    parts = []
    for name, details in slos.items():
        conf = details.get("confidence") if isinstance(details, Mapping) else None
        if not isinstance(conf, Mapping) or not conf.get("unstable"):
            continue
        low, high = conf.get("low"), conf.get("high")
        interval = f" in [{low:.4g}, {high:.4g}]" if isinstance(low, int | float) and isinstance(high, int | float) \
            else ""
        parts.append(f"{name} slope {conf['median']:.4g}{interval} against {conf['threshold']:.4g} "
                     f"({', '.join(reasons_of(conf))})")
    # an experiment marked unstable without a stored confidence (older result files): any rule
    return "; ".join(parts) or " or ".join(words for _, words in REASONS)


#: whole cycles before their means' slope gives a repetition's error: with fewer, the
#: error of so few means is itself unsure (4 means leave 2 degrees of freedom), and the
#: plain fit's stands
MIN_CYCLES = 8


def trend_fit(t: np.ndarray, v: np.ndarray, period: float | None = None) -> early_stop.TrendFit:
    """The slope with its error: over the lag's whole cycles where the use case has an
    output period and at least :data:`MIN_CYCLES` of them lie in the samples, else over
    the samples."""
    if period:
        _, times, means, _ = early_rules.cycle_means(t, v, period)
        if means.size >= MIN_CYCLES:
            return early_stop.fit(times, means)
    return early_stop.fit(t, v)


def fit_repetition(t: np.ndarray, v: np.ndarray, period: float | None = None) -> RepetitionFit:
    """OLS slope as the verdict computes it, plus its error when three samples allow one
    (``period``: the use case's output period, see :func:`trend_fit`)."""
    slope, intercept = slo_math.slope(t, v)
    rise = net_rise(t, v)
    try:
        trend = trend_fit(t, v, period)
    except (slo_math.InsufficientData, ZeroDivisionError, ValueError):
        return RepetitionFit(slope, intercept, int(t.size), rise=rise)
    stderr = trend.stderr if math.isfinite(trend.stderr) else None
    return RepetitionFit(slope, intercept, int(t.size), stderr, trend.effective_samples, rise=rise)


def net_rise(t: np.ndarray, v: np.ndarray) -> float | None:
    """A lower bound of the lag's trend that no saw-tooth undoes: its rise from the first
    sample to the last, less its largest fall between two samples, per second.

    A micro-batch SUT far behind its input commits a batch every 40-50 s; its lag rises at
    the whole input rate between them, and the slope of 60 s of that saw-tooth has a wide
    interval: one quarter-core UC1 instance at 16,000 records/s, slope 8,598 in [-6,074,
    23,270] against 160, was flagged "inside the noise". Its lag rose by 532,000 records in
    those 60 s and fell by at most 312,000 at once: more than a batch's commit takes back.
    A SUT that keeps up rises by at most one batch between its falls, so its bound is
    about zero or below."""
    if t.size < 2 or float(t[-1] - t[0]) <= 0:
        return None
    falls = -np.diff(v)
    largest = max(0.0, float(falls.max()))
    return (float(v[-1] - v[0]) - largest) / float(t[-1] - t[0])


def _middle(fits: Sequence[RepetitionFit]) -> list[RepetitionFit]:
    ordered = sorted(fits, key=lambda f: f.slope)
    mid = len(ordered) // 2
    return [ordered[mid]] if len(ordered) % 2 else [ordered[mid - 1], ordered[mid]]


def judge(fits: Sequence[RepetitionFit], threshold: float, confidence: float = DEFAULT_CONFIDENCE) -> Confidence:
    """The median slope's interval and whether the verdict on it is unstable."""
    if not fits:
        raise slo_math.InsufficientData("no repetition has a slope")
    median = float(np.median([f.slope for f in fits]))
    below = [f.slope < threshold for f in fits if not f.incidental]
    disagree = any(below) and not all(below)
    middle = _middle(fits)
    errors = [f.stderr for f in middle]
    dofs = [f.effective_samples for f in middle]
    if any(e is None for e in errors) or any(d is None for d in dofs):
        return Confidence(median, threshold, threshold - median, None, None, None, confidence, disagree, False)
    # The mean of two independent slopes has half the root of their summed variances.
    stderr = math.sqrt(sum(float(e) ** 2 for e in errors if e is not None)) / len(errors)
    dof = max(1.0, min(float(d) for d in dofs if d is not None) - 2.0)
    half = early_stop.t_quantile(0.5 + confidence / 2.0, dof) * stderr
    low, high = median - half, median + half
    inside = abs(median - threshold) < half
    if inside:
        bounds = _median_of_bounds(fits, confidence)
        if bounds is not None and (bounds[1] < threshold or bounds[0] >= threshold):
            (low, high), inside = bounds, False
    return Confidence(median, threshold, threshold - median, low, high, stderr, confidence, disagree, inside)


def _median_of_bounds(fits: Sequence[RepetitionFit], confidence: float) -> tuple[float, float] | None:
    """Bounds of the median slope from every repetition's own interval: where each slope
    lies within its bounds, the median lies between the median of the lower and of the
    upper bounds. It clears a verdict that two sure repetitions of three fix while the
    middle one is short and noisy: the third repetition of a UC3 experiment, ended by its
    dropped records alone after 10 samples, made 6,000 records/s on one instance "inside
    the noise" (slopes -1,617, -2,251 and -2,205 against 60; the middle one's interval
    [-4,862, 452]) although the other two lay wholly below the threshold. The middle
    repetition's interval stays the one reported unless
    this one decides.

    A repetition decided early is bounded by its decision; one without an error of its
    own, or ``incidental``, by nothing (the others may still fix the median). A lag that
    rose more than its largest fall takes back bounds its slope from below
    (:func:`net_rise`)."""
    lows, highs = [], []
    for f in fits:
        if f.decided is not None:
            low, high = f.decided
        elif f.incidental:
            low, high = -math.inf, math.inf
        else:
            low, high = (-math.inf, math.inf) if f.stderr is None or f.effective_samples is None else \
                early_stop.TrendFit(f.slope, f.stderr, f.samples, f.effective_samples).bounds(confidence)
            if f.rise is not None:  # the lag rose more than its largest fall takes back
                low = max(low, f.rise)
        lows.append(low)
        highs.append(high)
    return float(np.median(lows)), float(np.median(highs))


def evidence(repetitions: Sequence[Repetition], slo: str) -> list[dict[str, Any]]:
    """What ended each repetition, as far as ``slo``'s confidence goes: ``{"decided":
    [low, high]}``, ``{"incidental": True}`` or ``{}`` (its samples say all)."""
    out: list[dict[str, Any]] = []
    for rep in repetitions:
        if slo in rep.decided:
            out.append({"decided": list(rep.decided[slo])})
        elif rep.early_stopped and rep.waited_for is not None and slo not in rep.waited_for:
            out.append({"incidental": True})
        else:
            out.append({})
    return out


def with_evidence(fit: RepetitionFit, found: Any) -> RepetitionFit:
    """``fit`` with one repetition's :func:`evidence`, as stored (anything else: unchanged)."""
    if not isinstance(found, Mapping):
        return fit
    bounds = bounds_pair(found.get("decided"))
    if bounds is not None:
        return replace(fit, decided=(bounds[0], bounds[1]))
    return replace(fit, incidental=found.get("incidental") is True)


#: fewer samples in a half give no step judgement (a slope's error needs a few)
MIN_HALF_SAMPLES = 5


def half_against(t: np.ndarray, v: np.ndarray, threshold: float, passed: bool,
                 confidence: float = DEFAULT_CONFIDENCE, period: float | None = None) -> bool:
    """Whether one half of the repetition (split at its middle time) says the opposite
    of ``passed`` with confidence: its slope's whole interval lies on the other side."""
    if t.size < 2 * MIN_HALF_SAMPLES:
        return False
    middle = (float(t[0]) + float(t[-1])) / 2.0
    for half in (t <= middle, t > middle):
        if int(half.sum()) < MIN_HALF_SAMPLES:
            continue
        try:
            trend = trend_fit(t[half], v[half], period)
        except (slo_math.InsufficientData, ZeroDivisionError, ValueError):
            continue
        if not math.isfinite(trend.stderr):
            continue
        low, high = trend.bounds(confidence)
        if (passed and low >= threshold) or (not passed and high < threshold):
            return True
    return False


def annotate(record: ExperimentRecord, store: ResultStore, trend: Collection[str], period: float | None = None,
             repetitions: Sequence[Repetition] = ()) -> None:
    """The slope interval and margin of every lag-trend-like verdict, from its stored series.

    Read back from the SLI files that the engine writes before it records the
    experiment, so the numbers come from exactly the samples of the verdict; an SLO
    whose files or samples do not allow an error estimate gets none. ``trend``: the SLOs
    judged as a median of slopes below a threshold, named by their types
    (``SloType.is_trend``, :meth:`SloEvaluator.trend_slos`), not by the verdict's form:
    a ``generic`` trend SLO's (the calibrated use case's) carries no ``median``, and
    judged by form it would get no confidence in a run. ``period``: the use case's output
    period (:func:`trend_fit`), stored with the verdict for ``bench analyze``;
    ``repetitions``: the experiment's, for their :func:`evidence` (stored with it too).
    """
    for name, details in record.slos.items():
        slopes, threshold = details.get("slopes"), details.get("threshold")
        if name not in trend or not isinstance(slopes, list) or not isinstance(threshold, int | float):
            continue
        warmup = float(details.get("warmup") or 0.0)
        found = evidence(repetitions, name) if len(repetitions) == len(slopes) else []
        if any(found):
            details["repetition_evidence"] = found
        try:
            fits, samples = [], []
            for rep in range(len(slopes)):
                t, v = slo_math.usable(read_series(store.sli_path(record.load, record.resources, name, rep)),
                                       warmup, rep)
                fits.append(with_evidence(fit_repetition(t, v, period), found[rep] if found else None))
                samples.append((t, v))
            confidence = judge(fits, float(threshold))
            passed = confidence.median < float(threshold)
            if any(half_against(t, v, float(threshold), passed, period=period) for t, v in samples):
                confidence = replace(confidence, step=True)
        except (OSError, ValueError):
            continue
        details["confidence"] = confidence.as_dict()
        if period:
            details["period"] = period
        record.unstable = record.unstable or confidence.unstable
