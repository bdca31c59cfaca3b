"""A fail that no saw-tooth undoes is not "inside the noise" (``confidence.net_rise``).

One quarter-core UC1 instance far behind 16,000 records/s commits a batch every 40-50 s;
its lag rises at the whole input rate in between, and the slope of 60 s of that has an
interval reaching below the threshold. The lag's rise less its largest fall bounds the
trend from below; a SUT that keeps up rises by one batch at most between its falls.
"""

from __future__ import annotations

import numpy as np
from bench.analysis.confidence import fit_repetition, judge, net_rise

RATE = 16_000.0
THRESHOLD = 0.01 * RATE


def far_behind() -> tuple[np.ndarray, np.ndarray]:
    """5-s samples over 60 s: the lag rises at the input rate, one batch of 312,000 commits at 45 s."""
    t = np.arange(0.0, 65.0, 5.0)
    v = 480_000.0 + RATE * t - np.where(t >= 45, 312_000.0, 0.0)
    return t, v


def keeping_up() -> tuple[np.ndarray, np.ndarray]:
    """A batch every 20 s takes all that waited: the lag rises at the input rate and falls to zero."""
    t = np.arange(0.0, 65.0, 5.0)
    return t, RATE * (t % 20.0)


def test_a_lag_that_rose_more_than_its_largest_fall_is_a_sure_fail() -> None:
    t, v = far_behind()
    rise = net_rise(t, v)
    fall = 312_000.0 - 5 * RATE  # between the samples around the commit: the batch less 5 s of input
    assert rise is not None and rise == (v[-1] - v[0] - fall) / 60.0 > THRESHOLD
    fit = fit_repetition(t, v)
    assert fit.slope > THRESHOLD
    plain = judge([fit.__class__(fit.slope, fit.intercept, fit.samples, fit.stderr, fit.effective_samples)],
                  THRESHOLD)
    assert plain.inside_noise, plain  # the saw-tooth's interval alone reaches below the threshold
    sure = judge([fit], THRESHOLD)
    assert not sure.inside_noise and not sure.unstable, sure
    assert sure.low is not None and sure.low >= THRESHOLD


def test_a_saw_tooth_that_keeps_up_gets_no_such_bound() -> None:
    t, v = keeping_up()
    rise = net_rise(t, v)
    assert rise is not None and rise <= 0
    assert net_rise(t[:1], v[:1]) is None
