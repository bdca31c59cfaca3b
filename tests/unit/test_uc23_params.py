"""What UC2 and UC3 share: registration and the shape of their default benchmarks.

Each plugin's own parameters are tested in its folder (plugins/*/tests).
"""

from __future__ import annotations

from typing import Any

import pytest
from bench.model import parse_benchmark, validate_benchmark
from bench.plugins import load_plugins


@pytest.fixture(scope="module")
def registry() -> Any:
    return load_plugins()


def test_plugins_are_found_through_their_entry_points(registry: Any) -> None:
    found = {p.name: p for p in registry.plugins}
    assert found["uc2"].distribution == "bench-uc2" and found["uc2"].error is None
    assert found["uc3"].distribution == "bench-uc3" and found["uc3"].error is None
    assert registry.use_cases["uc2"].topology is not None
    assert registry.use_cases["uc3"].generator in registry.generators


@pytest.mark.parametrize("name", ["uc2", "uc3"])
def test_default_benchmark_is_valid_and_has_the_shared_shape(registry: Any, name: str) -> None:
    doc = registry.use_cases[name].default_benchmark()
    validate_benchmark(parse_benchmark(doc), registry)
    assert doc["useCase"] == name
    assert {t["name"] for t in doc["kafkaConfig"]["topics"]} == {"input", "output"}
    assert {s["sloType"] for s in doc["slos"]} == {"lag-trend", "dropped-records"}
    load_types = {t["typeName"]: t for t in doc["loadTypes"]}
    assert {"NumSensors", "WindowSize", "MessagePeriod"} <= set(load_types)
    assert load_types["WindowSize"]["patchers"][0]["properties"] == {"key": "windowSizeMs"}
