"""The lag-trend SLO decides "fail" early only on growth already seen, not on growth to come.

A lag that rises for a while and falls back (UC4 at 256 records/s on one quarter-core
instance, every repetition 90-160 s in) gives its first minute a slope the
trend rule is sure of; held at the level it reached, that rise does not fail the whole
repetition's fit, so it must not fail the repetition early either.
"""

from __future__ import annotations

import bench_slo_lag_trend as lag_trend
import numpy as np
from bench.api import Series, SloContext
from bench.slo.early_stop import decide_series
from bench.slo.lag_batches import held_level_slope

RATE = 256.0
CTX = SloContext(load=4, resources=1, warmup=60, properties={"thresholdRelToRate": 0.05}, load_rate=RATE,
                 duration=300)
THRESHOLD = 0.05 * RATE


def _series(values: np.ndarray) -> Series:
    return Series([1_800_000_000.0 + i for i in range(len(values))], [float(v) for v in values])


def _bump(until: int) -> np.ndarray:
    """1-s samples: a lag sawing by 1,200 records around 1,300 in 3-s batches, rising to 3,000 from 90 s on."""
    t = np.arange(float(until + 1))
    saw = 1300.0 + 600.0 * ((t % 3) - 1)
    return saw + np.clip(t - 90.0, 0.0, None) * (1700.0 / 35.0)


def test_a_rise_inside_a_transient_is_not_decided_fail_early() -> None:
    series = _series(_bump(125))
    assert decide_series(series, CTX.warmup, THRESHOLD).passed is False  # what the plain rule says
    held = held_level_slope(series, CTX)
    assert held is not None and held < THRESHOLD
    decision = lag_trend.decide_early(series, CTX)
    assert decision.passed is None and "growth already seen" in decision.reason, decision.reason


def test_a_sut_falling_behind_for_good_is_still_decided_fail_early() -> None:
    t = np.arange(121.0)
    saw = 1300.0 + 600.0 * ((t % 3) - 1)
    series = _series(saw + np.clip(t - 60.0, 0.0, None) * 0.6 * RATE)  # 60 % of the input piles up
    held = held_level_slope(series, CTX)
    assert held is not None and held > THRESHOLD
    decision = lag_trend.decide_early(series, CTX)
    assert decision.passed is False, decision.reason


def test_without_a_known_duration_the_guard_says_nothing() -> None:
    ctx = SloContext(load=4, resources=1, warmup=60, properties={}, load_rate=RATE)
    assert held_level_slope(_series(_bump(125)), ctx) is None
