"""An experiment is settled before its last repetition only when the stand-ins bracket
every SLO's verdict.

Why: the lowest and the highest series stand in for the repetitions not yet run, which
brackets a mean, a median or a maximum, but not a spread: one repetition has a
standard deviation of 0 across repetitions whatever the others will show, so a generic
SLO on ``std`` (``var``, ``skew``, ``kurt``, ``mode``) was "settled" after one.
"""

from __future__ import annotations

import pytest
from bench.api import Series
from bench.config.base import ExecutionParams, SloDef
from bench.plugins import load_plugins
from bench.slo.evaluator import SloEvaluator

REGISTRY = load_plugins()
SERIES = Series(timestamps=[float(t) for t in range(0, 60, 5)], values=[100.0] * 12)


def _evaluator(key: str, aggregation: str) -> SloEvaluator:
    props = {"sli": "lag", "queryAggregation": "mean", "repetitionAggregation": "median", "operator": "lte",
             "threshold": 50, key: aggregation}
    return SloEvaluator(REGISTRY, [SloDef(name="spread", sloType="generic", properties=props)],
                        ExecutionParams(warmup=0, duration=60))


@pytest.mark.parametrize("aggregation", ["std", "var", "skew", "kurt", "mode"])
@pytest.mark.parametrize("key", ["repetitionAggregation", "queryAggregation"])
def test_a_non_monotone_aggregation_is_never_settled_early(key: str, aggregation: str) -> None:
    evaluator = _evaluator(key, aggregation)
    settled, still = evaluator.settlement({"lag": [SERIES]}, 100.0, 1.0, 100.0, remaining=2)
    assert settled is None and still == ["spread"]


@pytest.mark.parametrize("aggregation", ["mean", "median", "max"])
def test_a_monotone_aggregation_still_settles(aggregation: str) -> None:
    """The bracket still settles where it holds: one repetition's mean of 100 above a
    threshold of 50 fails a maximum across repetitions whatever comes; a mean or a
    median may still pass with two repetitions to come."""
    evaluator = _evaluator("repetitionAggregation", aggregation)
    settled, _ = evaluator.settlement({"lag": [SERIES]}, 100.0, 1.0, 100.0, remaining=2)
    assert settled is (False if aggregation == "max" else None)
