"""The reference's SLO types give the reference checkers' verdicts on the same series.

Each reference rule is written out again here from the reference's checker services
(generic, record lag, dropped records), in their terms: a request document with one
result list per repetition, pandas aggregations, a warm-up relative to the first
timestamp. bench's SLO types must agree with them on small hand-made series, including
the cases where bench's types of similar names decide differently.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pytest
from bench.api import Series, SloContext
from bench.builtin.reference_slos import check_dropped_ratio, check_dropped_records
from bench.builtin.slos import check_generic
from bench.slo.external import document, external_url, is_bundled
from bench.slo_math import evaluate_expression, reference_threshold
from bench_slo_lag_trend.reference import check_lag_trend, check_lag_trend_ratio

T0 = 1_700_000_000.0


def series(values: Sequence[float], step: float = 5.0, t0: float = T0) -> Series:
    return Series([t0 + i * step for i in range(len(values))], [float(v) for v in values])


def ctx(props: Mapping[str, Any], load: float = 100, resources: float = 5, warmup: float = 0) -> SloContext:
    return SloContext(load, resources, warmup, dict(props), load_rate=None)


# ----------------------------------------------------------------- the reference's rules, re-stated


def ref_aggregate(values: pd.Series, how: str) -> Any:
    if how.startswith("p"):
        return values.quantile(float(how[1:]) / 100)
    if how == "mode":
        return values.mode().iloc[0]
    return values.aggregate(how)


def ref_generic(doc: Mapping[str, Any]) -> bool:
    """The generic checker: the first result of every repetition, values after
    first timestamp + warmup, queryAggregation within, repetitionAggregation across."""
    meta = doc["metadata"]
    per_rep = []
    for repetition in doc["results"]:
        df = pd.DataFrame(repetition[0]["values"], columns=["timestamp", "value"])
        kept = df[df["timestamp"] >= df["timestamp"][0] + int(meta["warmup"])]["value"].astype(float)
        per_rep.append(ref_aggregate(kept, meta["queryAggregation"]))
    result = ref_aggregate(pd.Series(per_rep, dtype=float), meta["repetitionAggregation"])
    threshold = float(meta["threshold"])
    return {"lt": result < threshold, "lte": result <= threshold, "gt": result > threshold,
            "gte": result >= threshold}[meta["operator"]]


def ref_lag_trend(doc: Mapping[str, Any]) -> bool:
    """The record-lag checker: per repetition the OLS slope of every sample at least
    warmup s after the first (NaN as 0); the median of the slopes below the threshold."""
    slopes = []
    for repetition in doc["results"]:
        rows = [(int(v[0]), int(v[1]) if v[1] != "NaN" else 0) for r in repetition for v in r["values"]]
        t = np.array([r[0] for r in rows], dtype=float)
        y = np.array([r[1] for r in rows], dtype=float)
        keep = t - t[0] >= doc["metadata"]["warmup"]
        # centred, as scikit-learn's LinearRegression centres before fitting
        x = t[keep] - t[keep].mean() if keep.any() else t[keep]
        slopes.append(float(np.polyfit(x, y[keep], 1)[0]) if keep.sum() >= 2 else float("inf"))
    return float(np.median(slopes)) < doc["metadata"]["threshold"]


def ref_dropped(doc: Mapping[str, Any]) -> bool:
    """The dropped-records checker: every value after the warm-up below the threshold."""
    results = doc["results"]
    start = int(results[0][0]["values"][0][0]) + int(doc["metadata"]["warmup"])
    values = [int(v[1]) if int(v[0]) >= start else 0 for rep in results for r in rep for v in r["values"]]
    return max(values) < doc["metadata"]["threshold"]


# ----------------------------------------------------------------- generic

DATA = [
    [[10, 12, 30, 31, 29, 40], [11, 11, 12, 90, 13, 12], [5, 50, 5, 50, 5, 50]],
    [[0, 0, 0, 0], [100, 200, 300, 400]],
    [[7, 7, 7, 8, 8, 9, 9, 9]],
    [[1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1], [3, 3, 3, 3, 3, 100]],
]
AGGREGATIONS = ["mean", "median", "mode", "sum", "count", "max", "min", "std", "var", "skew", "kurt", "p99", "p50",
                "p0.5"]


@pytest.mark.parametrize("within", AGGREGATIONS)
def test_generic_matches_the_reference_checker(within: str) -> None:
    for data in DATA:
        reps = [series(values) for values in data]
        for across in ("mean", "median", "p90"):
            for threshold in (3.0, 12.0, 40.0):
                for operator in ("lte", "gt"):
                    props = {"sli": "x", "queryAggregation": within, "repetitionAggregation": across,
                             "operator": operator, "threshold": threshold}
                    meta = {"warmup": 5, "threshold": threshold, "queryAggregation": within,
                            "repetitionAggregation": across, "operator": operator}
                    verdict = check_generic(reps, ctx(props, warmup=5))
                    assert verdict.passed is bool(ref_generic(document(reps, meta))), (data, props, verdict.details)


def test_repetition_aggregation_is_across_repetitions_not_within() -> None:
    reps = [series([0, 100, 0, 0]), series([25, 25, 25, 25]), series([30, 30, 30, 30])]
    # the max within each repetition (100, 25, 30), then the least of those across them
    within_max = {"sli": "x", "queryAggregation": "max", "repetitionAggregation": "min", "threshold": 25}
    verdict = check_generic(reps, ctx(within_max))
    assert verdict.passed and verdict.details["values"] == [100.0, 25.0, 30.0]
    means = {"sli": "x", "queryAggregation": "mean", "repetitionAggregation": "max", "threshold": 30}
    verdict = check_generic(reps, ctx(means))
    assert verdict.passed and verdict.details["values"] == [25.0, 25.0, 30.0]


def test_first_last_and_trend_within_a_repetition() -> None:
    reps = [series([5, 1, 2, 9]), series([4, 4, 4, 8])]
    first = check_generic(reps, ctx({"sli": "x", "queryAggregation": "first", "repetitionAggregation": "max",
                                     "threshold": 0, "operator": "gt"}))
    assert first.details["values"] == [5.0, 4.0]
    last = check_generic(reps, ctx({"sli": "x", "queryAggregation": "last", "repetitionAggregation": "min",
                                    "threshold": 0, "operator": "gt"}))
    assert last.details["aggregate"] == 8.0
    trend = check_generic([series([0, 10, 20, 30])], ctx({"sli": "x", "queryAggregation": "trend", "threshold": 2,
                                                          "repetitionAggregation": "mean", "operator": "lte"}))
    assert trend.details["values"] == [pytest.approx(2.0)] and trend.passed


# ----------------------------------------------------------------- thresholds


@pytest.mark.parametrize(
    ("props", "load", "resources", "expected"),
    [
        ({"threshold": 12.34}, 100, 5, 12.34),
        ({"thresholdRelToLoad": 0.1}, 100, 5, 10.0),  # x the load value, not records/s
        ({"thresholdRelToResources": 0.1}, 100, 5, 0.5),
        ({"thresholdFromExpression": "1111"}, 8, 5, 1111.0),
        ({"thresholdFromExpression": "L*5"}, 8, 5, 40.0),
        ({"thresholdFromExpression": "R*((2^L+4)-60)+111"}, 8, 5, 1111.0),
        ({"thresholdFromExpression": "180 * L * 0.8"}, 10, 1, 1440.0),
        ({"threshold": "", "thresholdRelToLoad": 0.1}, 100, 5, 10.0),  # empty means not given
        ({"threshold": 7, "thresholdRelToLoad": 0.1}, 100, 5, 7.0),  # the first form given counts
    ],
)
def test_thresholds_as_the_reference_computes_them(props: dict[str, Any], load: float, resources: float,
                                                   expected: float) -> None:
    assert reference_threshold(props, load, resources) == pytest.approx(expected)


@pytest.mark.parametrize("text", ["", "L +", "(L", "L ** 2", "__import__('os')", "L / 0", "R L"])
def test_expressions_that_are_not_arithmetic_over_l_and_r_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="thresholdFromExpression"):
        evaluate_expression(text, load=1, resources=1)


@pytest.mark.parametrize(("text", "value"), [("-2^2", -4.0), ("2^3^2", 512.0), ("(1+2)*3-4/2", 7.0),
                                             ("2L + R", 11.0), ("L % 3", 1.0)])
def test_expression_precedence(text: str, value: float) -> None:
    assert evaluate_expression(text, load=4, resources=3) == value


# ----------------------------------------------------------------- lag trend


LAGS = [
    [[0, 100, 200, 300, 400, 500]],
    [[0, 10, 5, 15, 10, 20], [100, 90, 80, 70, 60, 50], [0, 1000, 0, 1000, 0, 1000]],
    [[float("nan"), 50, 100, float("nan"), 200, 250]],
    [[5000, 5000, 5000, 5001, 5000, 4999], [0, 0, 2000, 4000, 6000, 8000]],
]


@pytest.mark.parametrize("data", LAGS)
@pytest.mark.parametrize("threshold", [-50, 0.5, 1.5, 19.5, 20.5, 200, 2000])  # no slope sits on one
@pytest.mark.parametrize("warmup", [0, 10])
def test_lag_trend_matches_the_reference_checker(data: list[list[float]], threshold: float, warmup: float) -> None:
    reps = [series(values) for values in data]
    verdict = check_lag_trend(reps, ctx({"threshold": threshold}, warmup=warmup))
    assert verdict.passed is ref_lag_trend(document(reps, {"warmup": warmup, "threshold": threshold}))


@pytest.mark.parametrize("threshold", [9.5, 10.0, 10.5, 11.0])
def test_lag_trend_on_fractional_timestamps_matches_the_reference(threshold: float) -> None:
    # Prometheus timestamps carry milliseconds; the reference's checker reads whole seconds
    # (and whole records: a lag is a count)
    reps = [Series([T0 + 0.7 + 5.3 * i for i in range(12)], [float(int(10 * 5.3 * i) + i % 3) for i in range(12)]),
            Series([T0 + 400.2 + 4.9 * i for i in range(12)], [float(int(10.4 * 4.9 * i)) for i in range(12)])]
    for warmup in (0, 7, 12):
        verdict = check_lag_trend(reps, ctx({"threshold": threshold}, warmup=warmup))
        assert verdict.passed is ref_lag_trend(document(reps, {"warmup": warmup, "threshold": threshold}))


def test_lag_trend_ratio_is_relative_to_the_load_value() -> None:
    reps = [series([0, 100, 200, 300])]  # 20 records/s
    assert not check_lag_trend_ratio(reps, ctx({"ratio": 0.1}, load=200)).passed  # 20 < 20: no
    assert check_lag_trend_ratio(reps, ctx({"ratio": 0.1}, load=201)).passed


# ----------------------------------------------------------------- dropped records


DROPS = [[[0, 0, 0, 0]], [[0, 50, 120, 200]], [[0, 10, 20, 30], [0, 100, 150, 199]], [[0, 1999, 1999]]]


@pytest.mark.parametrize("data", DROPS)
@pytest.mark.parametrize("threshold", [1, 100, 199, 200, 2000])
def test_dropped_records_matches_the_reference_checker(data: list[list[float]], threshold: float) -> None:
    reps = [series(values) for values in data]
    verdict = check_dropped_records(reps, ctx({"threshold": threshold}))
    assert verdict.passed is ref_dropped(document(reps, {"warmup": 0, "threshold": threshold}))


@pytest.mark.parametrize("threshold", [5, 50, 51, 120, 121])
@pytest.mark.parametrize("warmup", [0, 10, 30])
def test_dropped_records_warmup_is_the_reference_one(threshold: float, warmup: float) -> None:
    # repetitions run one after another; the warm-up ends warmup s after the first one's start
    reps = [series([0, 120, 50, 50, 50], t0=T0 + 0.6), series([0, 50, 50], t0=T0 + 200.3),
            series([0, 0, 4], t0=T0 + 400.9)]
    verdict = check_dropped_records(reps, ctx({"threshold": threshold}, warmup=warmup))
    assert verdict.passed is ref_dropped(document(reps, {"warmup": warmup, "threshold": threshold}))


def test_more_dropped_records_than_an_absolute_threshold_fail() -> None:
    verdict = check_dropped_records([series([0, 100, 200])], ctx({"threshold": 100}))
    assert not verdict.passed and verdict.details["aggregate"] == 200.0
    assert check_dropped_ratio([series([0, 50, 99])], ctx({"ratio": 0.01}, load=10_000)).passed


# ----------------------------------------------------------------- external checker


@pytest.fixture
def checker() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A tiny SLO checker that answers with the reference's generic rule and records each request."""
    received: list[dict[str, Any]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            received.append(body)
            answer = b"true" if ref_generic(body) else b"false"
            self.send_response(200)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", received
    finally:
        server.shutdown()
        server.server_close()


def test_an_external_checker_gets_the_reference_document_and_decides(
        checker: tuple[str, list[dict[str, Any]]]) -> None:
    url, received = checker
    reps = [series([10, 20, 30]), series([40, 50, 60])]
    props = {"sli": "x", "externalSloUrl": url, "warmup": 5, "queryAggregation": "max",
             "repetitionAggregation": "median", "operator": "lte", "thresholdRelToLoad": 0.5}
    verdict = check_generic(reps, ctx(props, load=90, warmup=5))
    assert verdict.passed  # median of (30, 60) = 45 <= 0.5 x 90
    doc = received[0]
    assert doc["metadata"] == {"warmup": 5, "threshold": 45.0, "queryAggregation": "max",
                               "repetitionAggregation": "median", "operator": "lte"}
    assert len(doc["results"]) == 2 and doc["results"][1][0]["values"][0] == [T0, "40"]
    assert not check_generic(reps, ctx(props, load=80, warmup=5)).passed  # 45 > 40: the checker says no


def test_current_schema_sends_warmup_seconds(checker: tuple[str, list[dict[str, Any]]]) -> None:
    url, received = checker
    props = {"sli": "x", "externalSloChecker": url, "warmupSeconds": 0, "warmup": 0, "threshold": 100,
             "queryAggregation": "mean", "repetitionAggregation": "mean", "operator": "lt"}
    check_generic([series([1, 2])], ctx(props))
    assert received[0]["metadata"]["warmupSeconds"] == 0 and "warmup" not in received[0]["metadata"]


def test_an_unreachable_checker_fails_the_slo_saying_why() -> None:
    props = {"sli": "x", "externalSloChecker": "http://127.0.0.1:9/", "threshold": 1}
    verdict = check_generic([series([1, 2])], ctx(props))
    assert not verdict.passed and "could not reach the external SLO checker" in verdict.details["error"]


def test_the_reference_bundled_checkers_are_evaluated_by_bench_itself() -> None:
    assert is_bundled("http://localhost:80/evaluate-slope") and is_bundled("http://localhost:8082")
    assert external_url({"externalSloUrl": "http://localhost:80/evaluate-slope"}) is None
    assert external_url({"externalSloChecker": "http://checker.example:8080/"}) == "http://checker.example:8080/"


def test_bench_lag_trend_names_its_rate_relative_threshold_too() -> None:
    import bench_slo_lag_trend

    reps = [series([0, 100, 200, 300])]  # 20 records/s
    rate = SloContext(load=5, resources=1, warmup=0, properties={"thresholdRelToRate": 0.01}, load_rate=1000.0)
    assert not bench_slo_lag_trend.check(reps, rate).passed  # 20 >= 0.01 x 1000 records/s
    assert bench_slo_lag_trend.check(reps, SloContext(5, 1, 0, {"thresholdRelToRate": 0.03}, 1000.0)).passed
