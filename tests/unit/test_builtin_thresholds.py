"""Every built-in use case judges its lag trend against 1 % of the generated records/s.

Why: ``thresholdRelToLoad`` multiplies the load *value* (the reference's meaning), and
a built-in load value is not always a rate (UC4's nesting levels, UC3's window sizes);
the built-in defaults say ``thresholdRelToRate`` so their verdicts do not move with
the load type. The context below gives a load value (100) other than the rate (250), so
a default that resolved against the load value would show.
"""

from __future__ import annotations

from typing import Any

import pytest
from bench.api import Series, SloContext
from bench.plugins import load_plugins

LOAD_VALUE = 100.0
LOAD_RATE = 250.0


def _trend_slos() -> list[tuple[str, dict[str, Any]]]:
    registry = load_plugins()
    found = []
    for name, use_case in sorted(registry.use_cases.items()):
        for slo in use_case.default_benchmark().get("slos", []):
            if registry.slos[slo["sloType"]].is_trend(slo.get("properties") or {}):
                found.append((name, slo))
    return found


def test_every_built_in_use_case_has_a_trend_slo() -> None:
    names = {name for name, _ in _trend_slos()}
    assert {"calibrated", "uc1", "uc2", "uc3", "uc4"} <= names


@pytest.mark.parametrize(("use_case", "slo"), _trend_slos(), ids=lambda v: v if isinstance(v, str) else "")
def test_the_default_trend_threshold_is_one_percent_of_the_generated_rate(use_case: str, slo: dict[str, Any]) -> None:
    slo_type = load_plugins().slos[slo["sloType"]]
    ctx = SloContext(load=LOAD_VALUE, resources=1.0, warmup=0.0, properties=slo["properties"], load_rate=LOAD_RATE)
    verdict = slo_type.check([Series(timestamps=[0.0, 1.0, 2.0], values=[0.0, 1.0, 2.0])], ctx)
    assert verdict.details.get("threshold") == pytest.approx(0.01 * LOAD_RATE), verdict.details
    assert "thresholdRelToLoad" not in slo["properties"]


def test_an_execution_override_in_another_threshold_form_replaces_the_default() -> None:
    from bench.config.model import effective_slos, parse_benchmark, parse_execution

    bench = parse_benchmark({
        "name": "b", "useCase": "uc1",
        "loadTypes": [{"typeName": "NumSensors", "patchers": []}],
        "resourceTypes": [{"typeName": "Instances", "patchers": []}],
        "slos": [{"name": "lag-trend", "sloType": "lag-trend", "properties": {"thresholdRelToRate": 0.01,
                                                                              "warmup": 5}}],
    })
    execution = parse_execution({
        "benchmark": "b", "load": {"loadType": "NumSensors", "loadValues": [1]},
        "resources": {"resourceType": "Instances", "resourceValues": [1]},
        "slos": [{"name": "lag-trend", "properties": {"thresholdRelToLoad": 0.02}}],
    })
    (slo,) = effective_slos(bench, execution)
    assert slo.properties == {"thresholdRelToLoad": 0.02, "warmup": 5}
