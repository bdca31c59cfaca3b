"""The default benchmark every windowed use case builds from bench.api's shared helpers
(windowed_slos, param_load_type, message_period_load_type): one test for all of them, so
the shape cannot drift between UC2 and UC3."""

from __future__ import annotations

from typing import Any

import pytest
from bench.config.model import parse_benchmark, validate_benchmark


@pytest.mark.parametrize("name", ["uc2", "uc3"])
def test_default_benchmark_is_valid_and_has_the_shared_shape(registry: Any, name: str) -> None:
    if name not in registry.use_cases:
        pytest.skip(f"use case {name} not installed")
    doc = registry.use_cases[name].default_benchmark()
    validate_benchmark(parse_benchmark(doc), registry)
    assert doc["useCase"] == name
    assert {t["name"] for t in doc["kafkaConfig"]["topics"]} == {"input", "output"}
    assert {s["sloType"] for s in doc["slos"]} == {"lag-trend", "dropped-records"}
    dropped = next(s for s in doc["slos"] if s["sloType"] == "dropped-records")
    assert dropped["properties"]["repetitionAggregation"] == "median"  # as the reference's UC2
    load_types = {t["typeName"]: t for t in doc["loadTypes"]}
    assert {"NumSensors", "WindowSize", "MessagePeriod"} <= set(load_types)
    assert load_types["WindowSize"]["patchers"][0]["properties"] == {"key": "windowSizeMs"}
