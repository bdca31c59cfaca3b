"""Load types declare which way load grows; the search walks loads by intensity."""

from __future__ import annotations

import math

import pytest
from bench.api import SearchProblem, message_period_load_type, param_load_type
from bench.config.model import load_intensity_order, parse_benchmark, parse_execution
from bench.search.strategies import STRATEGIES

KEYS = 1000


def bench_doc() -> dict[str, object]:
    return {
        "name": "b", "useCase": "uc1",
        "loadTypes": [{"typeName": "NumSensors"}, message_period_load_type()],
        "resourceTypes": [{"typeName": "Instances"}],
        "slos": [{"name": "lag-trend", "sloType": "lag-trend"}],
    }


def execution(load_type: str, values: list[float]) -> dict[str, object]:
    return {"name": "e", "benchmark": "b", "load": {"loadType": load_type, "loadValues": values},
            "resources": {"resourceType": "Instances", "resourceValues": [1, 2, 3, 4]}}


def test_message_period_and_advance_grow_load_downwards() -> None:
    assert message_period_load_type()["direction"] == "decreasing"
    assert param_load_type("Advance", "advanceMs", "decreasing")["direction"] == "decreasing"
    assert param_load_type("WindowSize", "windowSizeMs")["direction"] == "increasing"


def test_intensity_order_follows_the_load_type() -> None:
    bench = parse_benchmark(bench_doc())
    assert load_intensity_order(bench, parse_execution(execution("MessagePeriod", [250, 1000, 500]))) == [
        1000, 500, 250]
    assert load_intensity_order(bench, parse_execution(execution("NumSensors", [4000, 1000]))) == [1000, 4000]


@pytest.mark.parametrize("strategy", [s for s in STRATEGIES if s.name in ("linear", "binary", "full")],
                         ids=lambda s: s.name)
async def test_demand_search_by_period_keeps_the_lower_bound_right(strategy: object) -> None:
    """1000 keys at period p ms send 1000 * 1000 / p records/s; an instance takes 2500/s.
    Walked by intensity (1000, 500, 250 ms) the lower bound carries each demand to a
    heavier load; walked numerically it would carry 250 ms's demand (2) to 1000 ms."""
    bench = parse_benchmark(bench_doc())
    ex = parse_execution(execution("MessagePeriod", [250, 500, 1000]))
    ran: list[tuple[float, float]] = []

    async def run(period: float, instances: float) -> bool:
        ran.append((period, instances))
        return KEYS * 1000 / period <= 2500 * instances

    problem = SearchProblem(load_intensity_order(bench, ex), [1, 2, 3, 4], run, metric="demand", lower_bound=True)
    table = await strategy.search(problem)  # type: ignore[attr-defined]
    assert table == {p: math.ceil(KEYS * 1000 / p / 2500) for p in (250, 500, 1000)}


@pytest.mark.parametrize("name", ["uc1", "uc2", "uc3", "uc4"])
def test_every_use_case_offers_message_period(name: str) -> None:
    from bench.execution.deployment import build_objects
    from bench.plugins import load_plugins

    registry = load_plugins()
    use_case = registry.use_cases[name]
    bench = parse_benchmark(use_case.default_benchmark())
    (period,) = [t for t in bench.loadTypes if t.typeName == "MessagePeriod"]
    assert period.direction == "decreasing"
    doc = {"name": "e", "benchmark": bench.name, "load": {"loadType": "MessagePeriod", "loadValues": [250]},
           "resources": {"resourceType": "Instances", "resourceValues": [1]}}
    ex = parse_execution({**(bench.defaultExecution or {}), **doc})
    objects = build_objects(registry, bench, ex, {}, 250, 1)
    (generator,) = [o for o in objects if o.get("kind") == "BenchGenerator"]
    assert generator["spec"]["periodMs"] == 250
