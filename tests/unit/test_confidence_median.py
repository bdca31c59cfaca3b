"""The median slope's interval when the middle repetition is the short, noisy one.

Since a repetition ends once the SLOs still open are decided, the third repetition of a
use case with dropped records (UC2, UC3) may hold only 10 lag samples. When its slope
falls in the middle, its wide interval alone decided "margin inside the noise" for a
verdict the two other repetitions fixed with confidence.
"""

from __future__ import annotations

from bench.analysis.confidence import RepetitionFit, judge

THRESHOLD = 60.0  # 1 % of 6,000 records/s


def fit(slope: float, half_width_at_95: float, samples: int) -> RepetitionFit:
    """A repetition whose 95 % interval is about slope +- half_width (t of its samples - 2)."""
    from bench.slo.early_stop import t_quantile

    t = t_quantile(0.975, samples - 2.0)
    return RepetitionFit(slope, 0.0, samples, half_width_at_95 / t, float(samples))


def test_two_sure_repetitions_fix_the_median_whatever_the_noisy_middle_one_says() -> None:
    # UC3, 6,000 records/s on one instance: the recorded fits of one run
    fits = [fit(-1616.6, 1109.0, 16), fit(-2250.8, 1546.0, 13), fit(-2204.8, 2657.0, 10)]
    c = judge(fits, THRESHOLD)
    assert c.median == -2204.8
    assert not c.unstable, c
    assert c.high is not None and c.high < THRESHOLD and c.low is not None and c.low < c.median


def test_no_sure_majority_keeps_the_flag() -> None:
    # UC3, 1,500 records/s on one instance, the same run: every interval reaches past 15
    fits = [fit(-66.9, 115.0, 20), fit(-138.1, 183.0, 13), fit(-17.4, 221.0, 10)]
    c = judge(fits, 15.0)
    assert c.inside_noise and c.unstable
    assert c.high is not None and c.high > 15.0


def test_one_sure_repetition_of_three_is_not_enough() -> None:
    fits = [fit(-3000.0, 500.0, 30), fit(-100.0, 400.0, 10), fit(40.0, 400.0, 10)]
    c = judge(fits, THRESHOLD)
    assert c.median == -100.0 and c.inside_noise


def test_a_failing_verdict_cleared_the_same_way() -> None:
    fits = [fit(500.0, 300.0, 20), fit(900.0, 1000.0, 10), fit(1200.0, 400.0, 16)]
    c = judge(fits, THRESHOLD)
    assert c.median == 900.0 and not c.inside_noise
    assert c.low is not None and c.low >= THRESHOLD
