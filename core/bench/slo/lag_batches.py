"""A micro-batch SUT's lag: its drains, its real cycle, and when an early "fail" must wait.

Between two commits of a micro-batch SUT the lag rises at the input rate; at a commit
it falls by the batch. The trend rules assume noise around a line, which such a
saw-tooth is not until several of its teeth are seen: these helpers say how many were
and how long one is, for :mod:`bench.slo.early_stop` (no "fail" on too few) and
:func:`bench.slo.early_rules.window_decision` (means over the real cycle). A rise that
reverses later (a transient) is a line the rules are sure of too: :func:`held_level_slope`
asks whether the growth already seen fails the whole repetition.
"""

from __future__ import annotations

import numpy as np

from bench import slo_math
from bench.api import Series, SloContext

#: a lag rising at least this share of the input rate between its falls: nothing is
#: consumed between a micro-batch SUT's commits
NOTHING_CONSUMED = 0.9
#: a fall of more than this share of the lag's median rise from one sample to the next
#: is a drain (a micro-batch's commit); smaller ones are sampling jitter: samples a
#: second apart jitter by a few records without any batch ending
DRAIN_SHARE = 0.5
#: drains after the warm-up before a micro-batch lag's trend may be decided "fail"
MIN_DRAINS = 2
#: a median cycle between drains within this factor of the output period is that period
CYCLE_TOLERANCE = 1.5


def drain_times(t: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The times at which the lag fell by more than :data:`DRAIN_SHARE` of its median rise
    between two samples: a micro-batch committed there."""
    if t.size < 2:
        return np.empty(0)
    steps = np.diff(v)
    rises = steps[steps > 0]
    if rises.size == 0:
        return t[1:][steps < 0]
    return t[1:][steps < -DRAIN_SHARE * float(np.median(rises))]


def commit_times(t: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The times at which the lag rose by less than half its median rise between two
    samples: a micro-batch committed there, also one smaller than what arrives between
    two samples (a SUT far behind commits less than that, and its lag never falls).

    Consecutive such samples are one commit, at the last of them (its trough): a commit
    read half before and half after one sample would otherwise be two, five seconds
    apart, and the growth between them noise.

    Only for a lag that rises at the whole input rate between commits
    (:func:`rises_between_commits`), as the prediction's probe uses it: on a lag consumed
    continuously, whose rises vary, this would count noise."""
    if t.size < 2:
        return np.empty(0)
    steps = np.diff(v)
    rises = steps[steps > 0]
    low = steps < 0 if rises.size == 0 else steps < 0.5 * float(np.median(rises))
    last_of_run = low & ~np.append(low[1:], False)
    return t[1:][last_of_run]


def too_few_batches(series: Series, ctx: SloContext) -> bool:
    """The lag after the warm-up rose at nearly the whole input rate between its falls,
    and fell fewer than :data:`MIN_DRAINS` times: a micro-batch SUT whose batches are
    not yet seen twice.

    Why no early "fail" then: while a batch runs the lag rises at exactly the input
    rate, a line the trend rule is sure of, which reverses when the batch commits. UC3
    at 6,000 records/s on one quarter-core instance was decided "fail" 51 s in at a
    slope of 5,999, the whole input rate, and its full 120-s repetition passed at 54.1
    against a threshold of 60. One commit is not enough either: a ramp that
    ends in one drain has a slope the rule is just as sure of, and the next batch, which
    reads all that piled up, decides whether the SUT is behind.
    """
    if not rises_between_commits(series, ctx.warmup, ctx.load_rate):
        return False
    t, v = slo_math.after_warmup(series, ctx.warmup)
    return int(drain_times(t, v).size) < MIN_DRAINS


def rises_between_commits(series: Series, warmup: float, rate: float | None) -> bool:
    """Whether the lag after the warm-up rose at nearly the whole input rate (``rate``,
    records/s) between its falls: a micro-batch SUT's, which consumes nothing between
    commits (also the prediction's probe asks this)."""
    if not rate:
        return False
    t, v = slo_math.after_warmup(series, warmup)
    if t.size < 2 or t[-1] <= t[0]:
        return False
    steps, dt = np.diff(v), np.diff(t)
    rising = (steps > 0) & (dt > 0)
    return bool(rising.any()) and float(np.median(steps[rising] / dt[rising])) >= NOTHING_CONSUMED * rate


def lag_cycle(t: np.ndarray, v: np.ndarray, period: float) -> float:
    """The period the lag's wave really has: the output period, or the median time
    between its drains (:func:`drain_times`) where those lie further apart.

    A micro-batch that takes longer than its trigger commits once per batch, not once per
    output period: UC3's quarter-core batches took 8-15 s against a 5-s trigger.
    Means over the shorter period then follow the wave instead of
    cancelling it; a batch of a minute made whole periods of a rising ramp, which were
    decided "fail" at the whole input rate for a repetition that passes in full. One
    drain leaves the span itself as the period, so no decision follows; none leaves the
    output period (a lag without a wave, or one that never fell, which
    :func:`too_few_batches` holds back).
    """
    if t.size < 3 or period <= 0:
        return period
    ends = drain_times(t, v)
    if ends.size == 0:
        return period
    if ends.size == 1:
        return max(period, float(t[-1] - t[0]))
    cycle = float(np.median(np.diff(ends)))
    return cycle if cycle > CYCLE_TOLERANCE * period else period


def held_level_slope(series: Series, ctx: SloContext) -> float | None:
    """The slope the whole repetition's fit would give if the lag held, from now to the
    end, the level its trend line has reached: the growth already seen, and none more.

    Why an early "fail" needs this to fail too: a trend fitted to the first minute after
    the warm-up is sure of a transient's slope as of a lasting one's. UC4 at 4 levels on
    one quarter-core instance (256 records/s, threshold 12.8) rose from about 1,300 to
    3,000 records 90-125 s into every repetition and fell back by 150-160 s; bench's
    default decided two repetitions "fail" inside that bump (slopes 25.5 and 40.2 at 125
    and 116 s), where the reference's three full repetitions passed (median -2.93).
    Held at its level, that rise gives the 240-s fit a slope
    of 4-5, below the threshold: growth seen is not growth to come. None: the
    repetition's duration is unknown, or too few samples.
    """
    if ctx.duration is None or ctx.duration <= ctx.warmup:
        return None
    t, v = slo_math.after_warmup(series, ctx.warmup)
    if t.size < 3 or t[-1] <= t[0]:
        return None
    b, a = slo_math.slope(t, v)
    step = float(np.median(np.diff(t)))
    end = float(np.min(np.asarray(series.timestamps, dtype=float))) + float(ctx.duration)
    if step <= 0 or end <= t[-1]:
        return b
    rest = np.arange(t[-1] + step, end + step / 2, step)
    level = a + b * t[-1]
    return slo_math.slope(np.concatenate([t, rest]), np.concatenate([v, np.full(rest.size, level)]))[0]
