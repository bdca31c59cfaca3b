"""UC3's registration and the shape of its default benchmark, which UC2 and UC3 share
(bench.api.windowed_slos, param_load_type, message_period_load_type)."""

from __future__ import annotations

from typing import Any

from bench.model import parse_benchmark, validate_benchmark


def test_plugins_are_found_through_their_entry_points(registry: Any) -> None:
    found = {p.name: p for p in registry.plugins}
    assert found["uc3"].distribution == "bench-uc3" and found["uc3"].error is None
    assert registry.use_cases["uc3"].generator in registry.generators


def test_default_benchmark_is_valid_and_has_the_shared_shape(registry: Any) -> None:
    name = "uc3"
    doc = registry.use_cases[name].default_benchmark()
    validate_benchmark(parse_benchmark(doc), registry)
    assert doc["useCase"] == name
    assert {t["name"] for t in doc["kafkaConfig"]["topics"]} == {"input", "output"}
    assert {s["sloType"] for s in doc["slos"]} == {"lag-trend", "dropped-records"}
    load_types = {t["typeName"]: t for t in doc["loadTypes"]}
    assert {"NumSensors", "WindowSize", "MessagePeriod"} <= set(load_types)
    assert load_types["WindowSize"]["patchers"][0]["properties"] == {"key": "windowSizeMs"}
