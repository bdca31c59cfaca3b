"""UC2/UC3 parameters, default benchmarks and plugin registration (no Spark)."""

from __future__ import annotations

from typing import Any

import pytest
from bench.model import parse_benchmark, validate_benchmark
from bench.plugins import load_plugins
from bench_uc2.params import Uc2Params
from bench_uc3.params import DAY_MS, Uc3Params, time_attribute


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


def test_uc3_has_its_extra_load_types(registry: Any) -> None:
    doc = registry.use_cases["uc3"].default_benchmark()
    keys = {
        t["typeName"]: t["patchers"][0].get("properties", {}).get("key")
        for t in doc["loadTypes"]
    }
    assert keys["Advance"] == "advanceMs"
    assert keys["NumOverlappingWindows"] == "numOverlappingWindows"
    assert keys["NumTimeAttributeValues"] == "timeAttribute"


def test_uc2_params_accept_strings_from_the_command_line() -> None:
    p = Uc2Params.from_mapping({"windowSizeMs": "1000", "allowedLatenessMs": "0", "emitPeriodMs": 2500})
    assert (p.window_size_ms, p.allowed_lateness_ms, p.trigger_seconds) == (1000, 0, 2.5)
    assert Uc2Params.from_mapping({}).window_size_ms == 60_000
    assert Uc2Params.from_mapping({}).trigger_seconds is None


@pytest.mark.parametrize(
    "bad", [{"windowSizeMs": 0}, {"windowSizeMs": "abc"}, {"windowSizeMs": 1.5}, {"allowedLatenessMs": -1}]
)
def test_uc2_rejects_bad_params_naming_them(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=next(iter(bad))):
        Uc2Params.from_mapping(bad)


def test_uc3_defaults_are_the_published_ones() -> None:
    p = Uc3Params.from_mapping({})
    assert (p.window_size_ms, p.advance_ms, p.slice_ms) == (3 * DAY_MS, DAY_MS, DAY_MS)
    assert (p.time_attribute, p.time_zone, p.window_method, p.trigger_seconds) == ("hourOfDay", "UTC", "sliding", 5.0)


def test_uc3_overlapping_windows_derive_the_advance() -> None:
    p = Uc3Params.from_mapping({"windowSizeMs": 600_000, "numOverlappingWindows": "4"})
    assert (p.advance_ms, p.overlapping_windows, p.slice_ms) == (150_000, 4, 150_000)
    q = Uc3Params.from_mapping({"windowSizeMs": 250, "advanceMs": 100})
    assert (q.slice_ms, q.overlapping_windows) == (50, 3)


@pytest.mark.parametrize(("raw", "name"), [(24, "hourOfDay"), ("7", "dayOfWeek"), (168.0, "hourOfWeek"),
                                           ("hourOfWeek", "hourOfWeek")])
def test_time_attribute_by_name_or_number_of_values(raw: Any, name: str) -> None:
    assert time_attribute(raw) == name


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"timeAttribute": 12}, "timeAttribute"),
        ({"timeZone": "Mars/Olympus"}, "timeZone"),
        ({"windowMethod": "tumbling"}, "windowMethod"),
        ({"advanceMs": 4 * DAY_MS}, "advanceMs"),
        ({"windowSizeMs": 1000, "numOverlappingWindows": 3}, "numOverlappingWindows"),
        ({"emitPeriodMs": -5}, "emitPeriodMs"),
    ],
)
def test_uc3_rejects_bad_params_naming_them(bad: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        Uc3Params.from_mapping(bad)
