"""The step rule of the verdict confidence (bench.analysis.confidence.half_against).

A short repetition's verdict can hang on whether one slow micro-batch ended inside it:
the lag climbs at the full rate, then drops when the batch ends, and the whole window's
slope says "pass". The halves of such a repetition disagree with confidence, and the
verdict is flagged; a steady trend, with or without a saw-tooth, is not.
"""

from __future__ import annotations

import numpy as np
import pytest
from bench.analysis.confidence import MIN_HALF_SAMPLES, Confidence, fit_repetition, half_against, judge

T = np.arange(0.0, 46.0, 2.0)  # a 60-s repetition after its 15-s warm-up, a sample every 2 s
THRESHOLD = 400.0  # 1 % of 40,000 records/s


def climb_then_drop(t: np.ndarray) -> np.ndarray:
    """Lag rising at 40,000/s until a batch ends at 30 s and drains it to a small remainder."""
    return np.where(t < 30.0, 500_000 + 40_000 * t, 50_000 + 2_000 * (t - 30.0))


def test_a_pass_made_by_one_late_batch_is_flagged() -> None:
    v = climb_then_drop(T)
    fit = fit_repetition(T, v)
    assert fit.slope < THRESHOLD, "the whole window's slope must pass for the case to mean anything"
    assert half_against(T, v, THRESHOLD, passed=True)


def test_a_steady_drain_with_a_saw_tooth_is_not_flagged() -> None:
    rng = np.random.default_rng(7)
    saw = 20_000 * ((T % 6.0) / 6.0)  # a 6-s micro-batch period
    v = 400_000 - 9_000 * T + saw + rng.normal(0, 2_000, T.size)
    assert fit_repetition(T, v).slope < THRESHOLD
    assert not half_against(T, v, THRESHOLD, passed=True)


def test_a_steady_fail_is_not_flagged() -> None:
    v = 100_000 + 39_000 * T
    assert not half_against(T, v, THRESHOLD, passed=False)


def test_a_fail_whose_first_half_kept_up_is_flagged() -> None:
    v = np.where(T < 22.0, 10_000 - 50.0 * T, 10_000 - 50.0 * 22 + 30_000 * (T - 22.0))
    assert half_against(T, v, THRESHOLD, passed=False)


@pytest.mark.parametrize("n", [2 * MIN_HALF_SAMPLES - 1, 3])
def test_too_few_samples_give_no_step(n: int) -> None:
    t = T[:n]
    assert not half_against(t, climb_then_drop(t), THRESHOLD, passed=True)


def test_the_step_alone_makes_the_confidence_unstable() -> None:
    from dataclasses import replace

    steady = judge([fit_repetition(T, 100_000 + 39_000 * T)], THRESHOLD)
    assert not steady.unstable, steady
    flagged = replace(steady, step=True)
    assert flagged.unstable and flagged.as_dict()["unstable"] and flagged.as_dict()["step"]


def test_the_reasons_name_each_rule_that_flagged_the_verdict() -> None:
    flagged = Confidence(median=30.0, threshold=20.0, margin=-10.0, low=-5.0, high=65.0, stderr=17.0,
                         confidence=0.95, disagree=False, inside_noise=True, step=True)
    assert flagged.reasons == ["margin inside the noise", "one half of a repetition says otherwise"]
    steady = Confidence(median=300.0, threshold=20.0, margin=-280.0, low=250.0, high=350.0, stderr=20.0,
                        confidence=0.95, disagree=False, inside_noise=False)
    assert steady.reasons == [] and not steady.unstable
