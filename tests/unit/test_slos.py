"""SLO types on synthetic series whose right answer is known exactly.

Why exact data: a verdict is a comparison with a threshold, so an off-by-a-little
slope flips verdicts near it. Series built from integers on a 5 s step make the OLS
arithmetic exact in float64, which lets the tests check the strict ``<`` at the edge.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import bench_slo_lag_trend
import numpy as np
import pytest
from bench.api import Registrar, Series, SloContext, SloType
from bench.builtin.slos import bench_register_slos, check_dropped, check_generic, validate_dropped, validate_generic
from bench.plugins import load_plugins
from bench.slo_math import InsufficientData, after_warmup, slope

T0 = 1_700_000_000.0  # epoch seconds, large on purpose (precision)


def ramp(rate: float, seconds: int = 300, start: float = 0.0, step: int = 5, t0: float = T0) -> Series:
    """Lag growing by ``rate`` records/s from ``start``, sampled every ``step`` s."""
    t = [t0 + i for i in range(0, seconds + 1, step)]
    return Series(t, [start + rate * (x - t0) for x in t])


def ctx(
    properties: Mapping[str, Any] | None = None,
    warmup: float = 0.0,
    load_rate: float | None = None,
    load: float = 1000,
    resources: float = 2,
) -> SloContext:
    return SloContext(load, resources, warmup, properties or {}, load_rate)


def lag_check(series: Sequence[Series], **kwargs: Any) -> Any:
    return bench_slo_lag_trend.check(list(series), ctx(**kwargs))


# ----------------------------------------------------------------- slope


def test_slope_is_exact_on_epoch_timestamps() -> None:
    s = ramp(1234.0, start=500.0)
    fitted, intercept = slope(s.timestamps, s.values)
    assert fitted == 1234.0
    # the plot draws intercept + slope * t on the same axis: it must reproduce the data
    line = intercept + fitted * np.asarray(s.timestamps)
    assert np.allclose(line, s.values, rtol=0, atol=1e-3)


def test_slope_of_noisy_saw_tooth_is_its_trend() -> None:
    """Micro-batch lag is a saw-tooth; OLS over whole periods recovers the drift."""
    t = np.arange(0, 600, 5, dtype=float)
    tooth = np.tile([0, 400, 800, 1200], len(t) // 4)
    fitted, _ = slope(t, 10 * t + tooth)
    assert fitted == pytest.approx(10.0, abs=0.2)


@pytest.mark.parametrize(("t", "v"), [([], []), ([T0], [5.0]), ([T0, T0], [1.0, 2.0])])
def test_slope_refuses_too_little_data(t: list[float], v: list[float]) -> None:
    with pytest.raises(InsufficientData):
        slope(t, v)


def test_warmup_cut_is_relative_to_the_first_sample_and_drops_nan() -> None:
    s = Series([T0, T0 + 5, T0 + 10, T0 + 15, T0 + 20], [math.nan, 1.0, 2.0, math.nan, 4.0])
    t, v = after_warmup(s, 10)
    assert t.tolist() == [T0 + 10, T0 + 20] and v.tolist() == [2.0, 4.0]


# ----------------------------------------------------------------- lag trend


def test_lag_trend_is_registered_through_its_entry_point() -> None:
    registry = load_plugins()
    slo = registry.slos["lag-trend"]
    assert isinstance(slo, SloType) and slo.sli == "lag"
    info = next(p for p in registry.plugins if p.name == "lag-trend")
    assert info.distribution == "bench-slo-lag-trend" and not info.builtin


def test_lag_trend_median_of_repetitions_below_threshold_passes() -> None:
    verdict = lag_check([ramp(100), ramp(5000), ramp(1500)])
    assert verdict.passed
    d = verdict.details
    assert d["slopes"] == [100.0, 5000.0, 1500.0]
    assert d["median"] == 1500.0 and d["threshold"] == 2000.0
    assert d["samples"] == [61, 61, 61] and len(d["intercepts"]) == 3


def test_lag_trend_threshold_is_strict() -> None:
    at_threshold = lag_check([ramp(2000)])
    assert not at_threshold.passed and at_threshold.details["median"] == 2000.0
    assert lag_check([ramp(1999)]).passed
    assert not lag_check([ramp(10)], properties={"threshold": 10}).passed


def test_lag_trend_median_fails_when_most_repetitions_grow() -> None:
    verdict = lag_check([ramp(0), ramp(2500), ramp(3000)])
    assert not verdict.passed and verdict.details["median"] == 2500.0


def test_lag_trend_negative_lag_is_fitted_not_clamped() -> None:
    """Lag can read negative (log-end sampled before the commit); it is still data."""
    falling = lag_check([ramp(-50, start=-10)])
    assert falling.passed and falling.details["slopes"] == [-50.0]
    rising = lag_check([ramp(3000, start=-1_000_000)])
    assert not rising.passed and rising.details["slopes"] == [3000.0]


def test_lag_trend_warmup_excludes_the_start_up_burst() -> None:
    burst = ramp(100_000, seconds=60)
    flat = Series([T0 + 60 + i for i in range(5, 301, 5)], [6_000_000.0] * 60)
    series = Series(burst.timestamps + flat.timestamps, burst.values + flat.values)
    whole = lag_check([series])
    assert not whole.passed and "error" not in whole.details
    verdict = lag_check([series], warmup=65)
    assert verdict.passed and verdict.details["slopes"] == [0.0]
    assert verdict.details["samples"] == [60]


def test_lag_trend_ignores_nan_samples() -> None:
    s = ramp(700)
    s.values[3] = math.nan
    s.values[10] = math.nan
    verdict = lag_check([s])
    assert verdict.passed and verdict.details["slopes"] == [700.0] and verdict.details["samples"] == [59]


@pytest.mark.parametrize(
    ("series", "why"),
    [
        ([], "no series"),
        ([Series([], [])], "0 usable sample"),
        ([Series([T0], [1.0])], "1 usable sample"),
        ([Series([T0, T0 + 5, T0 + 10], [math.nan] * 3)], "0 usable sample"),
        ([ramp(10), Series([T0], [1.0])], "repetition 1"),
    ],
)
def test_lag_trend_never_passes_silently_without_data(series: list[Series], why: str) -> None:
    verdict = lag_check(series)
    assert not verdict.passed and why in verdict.details["error"]


def test_lag_trend_warmup_longer_than_the_run_fails() -> None:
    verdict = lag_check([ramp(10, seconds=60)], warmup=120)
    assert not verdict.passed and "120 s warm-up" in verdict.details["error"]


def test_lag_trend_threshold_relative_to_rate() -> None:
    props = {"thresholdRelToRate": 0.01}
    too_steep = lag_check([ramp(1500)], properties=props, load_rate=100_000)
    assert not too_steep.passed and too_steep.details["threshold"] == 1000.0
    verdict = lag_check([ramp(1500)], properties=props, load_rate=200_000)
    assert verdict.passed and verdict.details["threshold"] == 2000.0


@pytest.mark.parametrize(("properties", "threshold"), [
    ({"thresholdRelToLoad": 0.5}, 500.0),                      # x the load value (1000), not the rate
    ({"thresholdRelToResources": 300}, 600.0),                  # x the resources (2)
    ({"thresholdFromExpression": "L/2 + 100*R"}, 700.0),         # L = 1000, R = 2
    ({"thresholdFromExpression": "2L - 1500"}, 500.0),
])
def test_lag_trend_takes_the_reference_threshold_forms_with_their_meaning(properties: dict[str, Any],
                                                                         threshold: float) -> None:
    """One key, one meaning: bench's type resolves them as the reference's ``lag trend``,
    here with a generated rate (100,000 records/s) far from the load value (1,000)."""
    below = lag_check([ramp(threshold - 1)], properties=properties, load=1000, resources=2, load_rate=100_000)
    at = lag_check([ramp(threshold)], properties=properties, load=1000, resources=2, load_rate=100_000)
    assert below.passed and below.details["threshold"] == threshold
    assert not at.passed  # strict <, as the reference
    reference = load_plugins().slos["lag trend"].check(
        [ramp(threshold - 1)], ctx(properties, load=1000, resources=2, load_rate=100_000))
    assert reference.details["threshold"] == threshold


def test_lag_trend_relative_threshold_without_load_rate_fails() -> None:
    verdict = lag_check([ramp(0)], properties={"thresholdRelToRate": 0.01})
    assert not verdict.passed and "thresholdRelToRate" in verdict.details["error"]


@pytest.mark.parametrize(
    ("properties", "message"),
    [
        ({"threshold": 100, "thresholdRelToLoad": 0.01}, "threshold: give only one of"),
        ({"threshold": "lots"}, "threshold: 'lots' is not a number"),
        ({"threshold": True}, "threshold: True is not a number"),
        ({"thresholdRelToLoad": math.inf}, "thresholdRelToLoad: inf is not a finite number"),
        ({"thresholdRelToRate": 0.01, "thresholdRelToLoad": 0.01}, "give only one of"),
        ({"thresholdFromExpression": "L /"}, "thresholdFromExpression: 'L /' ends too early"),
    ],
)
def test_lag_trend_validation(properties: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        bench_slo_lag_trend.validate(properties)
    verdict = lag_check([ramp(0)], properties=properties, load_rate=1000)
    assert not verdict.passed and message in verdict.details["error"]


def test_lag_trend_accepts_numeric_strings_and_defaults() -> None:
    bench_slo_lag_trend.validate({})
    bench_slo_lag_trend.validate({"threshold": "2500"})
    assert lag_check([ramp(2400)], properties={"threshold": "2500"}).passed


# ----------------------------------------------------------------- generic


def generic(series: Sequence[Series], **properties: Any) -> Any:
    load_rate = properties.pop("load_rate", None)
    resources = properties.pop("resources", 2)
    load = properties.pop("load", 1000)
    return check_generic(list(series), ctx({"sli": "latency", **properties}, load_rate=load_rate, load=load,
                                           resources=resources))


def steps(values: Sequence[float]) -> Series:
    return Series([T0 + 5 * i for i in range(len(values))], list(values))


def test_builtin_slos_are_registered() -> None:
    found: list[SloType] = []
    bench_register_slos(register=Registrar(found.append))
    by_name = {s.name: s for s in found}
    assert set(by_name) == {"generic", "dropped-records", "latency", "dropped records", "dropped records ratio"}
    assert by_name["generic"].sli is None and by_name["dropped-records"].sli == "dropped-records"
    assert by_name["latency"].sli_name({"percentile": 95}) == "latency-p95"


@pytest.mark.parametrize(
    ("how", "expected"),
    [("mean", 3.0), ("median", 2.0), ("max", 10.0), ("min", 0.0), ("p50", 2.0), ("p100", 10.0), ("p25", 1.0)],
)
def test_generic_query_aggregations(how: str, expected: float) -> None:
    verdict = generic([steps([0, 1, 2, 2, 10])], queryAggregation=how, operator="lte", threshold=100)
    assert verdict.passed and verdict.details["values"] == [expected]


def test_generic_trend_is_the_ols_slope() -> None:
    verdict = generic([ramp(3), ramp(5)], queryAggregation="trend", repetitionAggregation="max", operator="lt",
                      threshold=5)
    assert not verdict.passed
    assert verdict.details["values"] == [3.0, 5.0] and verdict.details["aggregate"] == 5.0
    assert len(verdict.details["intercepts"]) == 2


@pytest.mark.parametrize(
    ("across", "expected"), [("median", 20.0), ("mean", 110 / 3), ("min", 10.0), ("max", 80.0), ("p0", 10.0)]
)
def test_generic_aggregation_across_repetitions(across: str, expected: float) -> None:
    series = [steps([10, 10]), steps([80, 80]), steps([20, 20])]
    verdict = generic(series, queryAggregation="mean", repetitionAggregation=across, threshold=0, operator="gt")
    assert verdict.details["aggregate"] == pytest.approx(expected) and verdict.passed


@pytest.mark.parametrize(
    ("operator", "value", "passed"),
    [
        ("lt", 100, False),
        ("lt", 99, True),
        ("lte", 100, True),
        ("lte", 101, False),
        ("gt", 100, False),
        ("gt", 101, True),
        ("gte", 100, True),
        ("gte", 99, False),
    ],
)
def test_generic_operators_at_the_edge(operator: str, value: float, passed: bool) -> None:
    verdict = generic([steps([value, value])], operator=operator, threshold=100)
    assert verdict.passed is passed


def test_generic_default_is_median_of_means_lte() -> None:
    verdict = generic([steps([1, 3]), steps([5, 5]), steps([9, 9])], threshold=5)
    assert verdict.passed and verdict.details["aggregate"] == 5.0
    assert verdict.details["operator"] == "lte" and verdict.details["repetitionAggregation"] == "median"


def test_generic_threshold_relative_to_load_and_resources() -> None:
    series = [steps([300, 300])]
    by_load = generic(series, thresholdRelToLoad=0.25, load=1000, load_rate=250_000)
    assert not by_load.passed and by_load.details["threshold"] == 250.0  # x the load value, not records/s
    by_rate = generic(series, thresholdRelToRate=0.001, load_rate=250_000)
    assert not by_rate.passed and by_rate.details["threshold"] == 250.0
    by_resources = generic(series, thresholdRelToResources=100, resources=3)
    assert by_resources.passed and by_resources.details["threshold"] == 300.0


def test_generic_relative_to_rate_without_rate_fails() -> None:
    verdict = generic([steps([1, 1])], thresholdRelToRate=0.5)
    assert not verdict.passed and "thresholdRelToRate" in verdict.details["error"]


def test_generic_warmup_and_nan() -> None:
    series = Series([T0, T0 + 5, T0 + 10, T0 + 15], [1000.0, 2.0, math.nan, 4.0])
    verdict = check_generic([series], ctx({"sli": "x", "threshold": 3}, warmup=5))
    assert verdict.passed and verdict.details["values"] == [3.0] and verdict.details["samples"] == [2]


def test_generic_without_data_fails() -> None:
    verdict = generic([steps([1])], queryAggregation="trend", threshold=5)
    assert not verdict.passed and "1 usable sample" in verdict.details["error"]
    verdict = generic([Series([], [])], threshold=5)
    assert not verdict.passed and "0 usable sample" in verdict.details["error"]


@pytest.mark.parametrize(
    ("properties", "message"),
    [
        ({"threshold": 1}, "sli: None is not an SLI name"),
        ({"sli": "", "threshold": 1}, "sli: '' is not an SLI name"),
        ({"sli": "x", "threshold": 1, "operator": "foo"}, "operator: 'foo' is not one of lt, lte, gt, gte"),
        ({"sli": "x", "threshold": 1, "queryAggregation": "avg"}, "queryAggregation: 'avg' is not one of"),
        ({"sli": "x", "threshold": 1, "queryAggregation": "p101"}, "queryAggregation: 'p101'"),
        ({"sli": "x", "threshold": 1, "queryAggregation": "pNN"}, "queryAggregation: 'pNN'"),
        ({"sli": "x", "threshold": 1, "repetitionAggregation": "trend"}, "repetitionAggregation: 'trend' is not"),
        ({"sli": "x", "threshold": 1, "aggregation": "mean"}, "aggregation: not a property"),
        ({"sli": "x"}, "threshold: required, give one of threshold, thresholdRelToLoad, thresholdRelToResources"),
        ({"sli": "x", "thresholdRelToLoad": "x"}, "thresholdRelToLoad: 'x' is not a number"),
        ({"sli": "x", "thresholdFromExpression": "L * os"}, "unexpected 'o'"),
        ({"promQLQuery": "up", "threshold": 1}, "promQLQuery: bench samples its SLIs itself"),
    ],
)
def test_generic_validation(properties: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        validate_generic(properties)
    verdict = check_generic([steps([0, 0])], ctx(properties))
    assert not verdict.passed and message in verdict.details["error"]


def test_generic_valid_properties() -> None:
    validate_generic({"sli": "lag", "queryAggregation": "p99.9", "operator": "gte", "threshold": "-3"})


# ----------------------------------------------------------------- dropped records


def counter(increments: Sequence[float], start: float = 0.0) -> Series:
    """Cumulative counter sampled every 5 s: one increment per step."""
    values = list(np.cumsum([start, *increments]))
    return steps(values)


def test_dropped_records_ratio_of_generated() -> None:
    # 20 steps of 5 s = 100 s at 1000 records/s = 100,000 generated; 500 dropped
    verdict = check_dropped([counter([25] * 20)], ctx(load_rate=1000))
    assert verdict.passed
    assert verdict.details["dropped"] == [500.0] and verdict.details["generated"] == [100_000.0]
    assert verdict.details["ratio"] == [0.005] and verdict.details["maxRatio"] == 0.01


def test_dropped_records_bound_is_inclusive_and_uses_the_worst_repetition() -> None:
    at_bound = counter([50] * 20)  # 1000 / 100,000 = 0.01
    assert check_dropped([at_bound], ctx(load_rate=1000)).passed
    worse = counter([51] * 20)
    verdict = check_dropped([at_bound, worse, counter([0] * 20)], ctx(load_rate=1000))
    assert not verdict.passed and verdict.details["maxObservedRatio"] == pytest.approx(0.0102)


def test_dropped_records_repetition_aggregation() -> None:
    at_bound, worse, none = counter([50] * 20), counter([51] * 20), counter([0] * 20)
    median = check_dropped([at_bound, worse, none], ctx({"repetitionAggregation": "median"}, load_rate=1000))
    assert median.passed and median.details["aggregate"] == pytest.approx(0.01)
    assert median.details["repetitionAggregation"] == "median"
    assert median.details["maxObservedRatio"] == pytest.approx(0.0102)  # the worst is still reported
    two_worse = check_dropped([worse, worse, none], ctx({"repetitionAggregation": "median"}, load_rate=1000))
    assert not two_worse.passed
    stated_max = check_dropped([at_bound, worse, none], ctx({"repetitionAggregation": "max"}, load_rate=1000))
    assert not stated_max.passed and stated_max.details["repetitionAggregation"] == "max"


def test_dropped_records_counts_after_warmup_only() -> None:
    series = counter([10_000, 10_000] + [0] * 20, start=7)  # the burst is in the first 10 s
    assert not check_dropped([series], ctx(load_rate=1000)).passed
    verdict = check_dropped([series], ctx(load_rate=1000, warmup=10))
    assert verdict.passed and verdict.details["dropped"] == [0.0]


def test_dropped_records_survives_a_counter_reset() -> None:
    series = steps([0, 100, 200, 0, 100, 200])  # restarted query: counter back to 0
    verdict = check_dropped([series], ctx({"maxRatio": 1}, load_rate=100))
    assert verdict.details["dropped"] == [400.0]


def test_dropped_records_max_ratio_property() -> None:
    series = [counter([100] * 20)]  # ratio 0.02
    assert not check_dropped(series, ctx(load_rate=1000)).passed
    assert check_dropped(series, ctx({"maxRatio": 0.05}, load_rate=1000)).passed


@pytest.mark.parametrize(
    ("series", "load_rate", "why"),
    [
        ([counter([1] * 5)], None, "load rate"),
        ([counter([1] * 5)], 0.0, "load rate"),
        ([], 1000.0, "no series"),
        ([steps([3])], 1000.0, "1 usable sample"),
    ],
)
def test_dropped_records_without_data_fails(series: list[Series], load_rate: float | None, why: str) -> None:
    verdict = check_dropped(series, ctx(load_rate=load_rate))
    assert not verdict.passed and why in verdict.details["error"]


@pytest.mark.parametrize(
    ("properties", "message"),
    [
        ({"maxRatio": -0.1}, "maxRatio: -0.1 must be >= 0"),
        ({"maxRatio": "most"}, "maxRatio: 'most' is not a number"),
        ({"repetitionAggregation": "worst"}, "repetitionAggregation: 'worst'"),
        ({"repetitionAggregation": "trend"}, "repetitionAggregation: 'trend'"),
    ],
)
def test_dropped_records_validation(properties: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        validate_dropped(properties)


# ----------------------------------------------------------------- calibrated's built-in lag trend


@pytest.mark.parametrize("rates", [[100, 5000, 1500], [2000], [1999], [0, 30000]])
def test_calibrated_generic_lag_trend_agrees_with_the_plugin(rates: list[int]) -> None:
    """The built-in calibrated use case writes the lag-trend SLO with ``generic`` so that
    the core needs no plugin; it must give the plugin's verdict and slopes."""
    from bench.builtin.calibrated import TREND_SLO, default_benchmark

    assert default_benchmark()["slos"] == [TREND_SLO]
    series = [ramp(r) for r in rates]
    # calibrated's load is records/s (one record/s per key), so x load value = x records/s
    ctx = SloContext(load=200_000, resources=1, warmup=0, properties=TREND_SLO["properties"], load_rate=200_000)
    generic = check_generic(series, ctx)
    plugin = bench_slo_lag_trend.check(series, ctx)
    assert generic.passed is plugin.passed
    assert generic.details["slopes"] == plugin.details["slopes"]
    assert generic.details["threshold"] == plugin.details["threshold"] == 2000.0


def test_the_core_finds_trend_slos_by_their_types_capabilities_not_their_names() -> None:
    """bench analyze re-evaluates exactly the SLOs whose type says it is a trend in records/s."""
    from bench.api import SloType, SloVerdict, trend_slos
    from bench.builtin.slos import SLO_TYPES

    types = {t.name: t for t in SLO_TYPES}
    types["mine"] = SloType("mine", "a third party's trend", lambda s, c: SloVerdict(True),
                            analysed_as_trend=lambda p: True, series_label="queue (records)")
    lag = {"sli": "lag", "queryAggregation": "trend", "operator": "lt"}
    slos = [
        {"name": "a", "sloType": "generic", "properties": lag},
        {"name": "b", "sloType": "generic", "properties": {**lag, "operator": "lte"}},
        {"name": "c", "sloType": "dropped-records", "properties": {"maxRatio": 0.01}},
        {"name": "d", "sloType": "mine", "properties": {}},
        {"name": "e", "sloType": "unknown", "properties": lag},
    ]
    assert trend_slos(slos, types) == ["a", "d"]
    assert types["generic"].takes_cli_threshold({**lag, "operator": "lte"})
    assert not types["dropped-records"].takes_cli_threshold({}) and types["dropped-records"].can_decide_early()
    assert types["mine"].axis_label({}) == "queue (records)"
    assert types["latency"].axis_label({"percentile": 95}) == "latency-p95"
