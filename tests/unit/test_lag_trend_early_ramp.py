"""The lag-trend SLO does not decide "fail" early on a SUT whose batches are not yet seen twice.

A micro-batch SUT's first batch with data can outlast the warm-up: meanwhile the lag
rises at exactly the input rate, a line the trend rule is sure of, which reverses when
the batch commits. One commit is not enough: the next batch reads all that piled up
meanwhile, and whether it keeps up is what the slope will say.
"""

from __future__ import annotations

import bench_slo_lag_trend as lag_trend
import numpy as np
from bench.api import Series, SloContext
from bench.slo.lag_batches import too_few_batches

RATE = 20_000.0
CTX = SloContext(load=RATE, resources=1, warmup=30, properties={"thresholdRelToRate": 0.01}, load_rate=RATE,
                 duration=120)


def _series(values: np.ndarray, step: float = 1.0) -> Series:
    return Series([1_800_000_000 + step * i for i in range(len(values))], [float(v) for v in values])


def test_a_lag_rising_at_the_whole_input_rate_is_not_decided_early() -> None:
    t = np.arange(52.0)  # 22 s after the warm-up, a sample a second
    ramp = _series(RATE * t)
    assert lag_trend.check([ramp], CTX).passed is False  # the verdict if the repetition ended now
    decision = lag_trend.decide_early(ramp, CTX)
    assert decision.passed is None
    assert "whole input rate" in decision.reason and "too few micro-batches" in decision.reason


def test_a_ramp_that_ends_in_one_drain_is_not_decided_early() -> None:
    """The first batch after the warm-up committed in the last sample: the slope of the
    ramp and its one drop is as sure as it is meaningless (the trend rule alone says
    "fail"), since the next batch reads the whole pile."""
    t = np.arange(62.0)
    lag = RATE * t
    lag[-1] = 0.0  # everything committed at once: the SUT may well keep up
    series = _series(lag)
    assert too_few_batches(series, CTX) is True
    from bench.slo.early_stop import decide_series
    assert decide_series(series, CTX.warmup, 200.0).passed is False  # what the guard holds back
    assert lag_trend.decide_early(series, CTX).passed is None


def test_a_lag_that_fell_twice_after_the_warm_up_is_decided_as_before() -> None:
    t = np.arange(62.0)
    lag = RATE * t
    lag[40:] -= 40_000  # two small batches committed after the warm-up: the SUT falls behind
    lag[52:] -= 40_000
    series = _series(lag)
    assert too_few_batches(series, CTX) is False
    decision = lag_trend.decide_early(series, CTX)
    assert decision.passed is False, decision.reason


def test_a_sut_that_consumes_part_of_the_input_is_decided_early_as_before() -> None:
    t = np.arange(52.0)
    steady = _series(0.5 * RATE * t)  # half the input consumed, smoothly: it falls behind for sure
    assert too_few_batches(steady, CTX) is False
    assert lag_trend.decide_early(steady, CTX).passed is False


def test_a_pass_is_never_held_back() -> None:
    t = np.arange(52.0)
    flat = _series(5_000 + 10 * np.sin(t))
    assert lag_trend.decide_early(flat, CTX).passed is True


def test_without_a_known_input_rate_nothing_is_held_back() -> None:
    t = np.arange(52.0)
    ctx = SloContext(load=RATE, resources=1, warmup=30, properties={"threshold": 200}, load_rate=None)
    assert too_few_batches(_series(RATE * t), ctx) is False
    assert lag_trend.decide_early(_series(RATE * t), ctx).passed is False


def test_a_sampling_jitter_of_a_few_records_is_not_consumption() -> None:
    t = np.arange(52.0)
    jittery = RATE * t + np.where(t % 2 == 0, 0.0, -30.0)  # the lag "falls" 30 records every other second
    assert too_few_batches(_series(jittery), CTX) is True
    assert lag_trend.decide_early(_series(jittery), CTX).passed is None


def test_a_generic_trend_slo_on_the_lag_holds_back_the_same_fail() -> None:
    from bench.builtin.slos import decide_generic_early

    t = np.arange(52.0)
    props = {"sli": "lag", "queryAggregation": "trend", "operator": "lt", "thresholdRelToRate": 0.01}
    ctx = SloContext(load=RATE, resources=1, warmup=30, properties=props, load_rate=RATE, duration=120)
    assert decide_generic_early(_series(RATE * t), ctx).passed is None
    assert decide_generic_early(_series(0.5 * RATE * t), ctx).passed is False
    other = SloContext(load=RATE, resources=1, warmup=30, properties={**props, "sli": "input-rate"},
                       load_rate=RATE, duration=120)
    assert decide_generic_early(_series(RATE * t), other).passed is False  # not the lag: no such rule


def test_a_ramp_after_one_drain_at_the_warm_up_is_not_decided_early() -> None:
    """UC1 at 5,000 records/s on one quarter-core instance (300-s
    repetitions, 60-s warm-up): a batch committed just after the warm-up, then the lag
    rose at the whole input rate, and the 1-s samples decided "fail" at 83 s at a slope
    of 4,999; the other two repetitions passed (-4,982 and -2,748)."""
    rate = 5_000.0
    ctx = SloContext(load=rate, resources=1, warmup=60, properties={"thresholdRelToRate": 0.01}, load_rate=rate,
                     duration=300)
    t = np.arange(84.0)
    lag = np.where(t <= 60.0, rate * t, rate * (t - 61.0) + 200_000.0)  # the drain: 60 -> 61 s
    series = _series(lag)
    assert too_few_batches(series, ctx) is True
    from bench.slo.early_stop import decide_series
    assert decide_series(series, ctx.warmup, 50.0).passed is False  # what the guard holds back
    assert lag_trend.decide_early(series, ctx).passed is None
