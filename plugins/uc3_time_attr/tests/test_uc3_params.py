"""UC3 parameters and load types: the forms they arrive in and the errors that name them (no Spark)."""

from __future__ import annotations

from typing import Any

import pytest
from bench_uc3.benchmark import default_benchmark
from bench_uc3.params import DAY_MS, Uc3Params, time_attribute


def test_uc3_has_its_extra_load_types() -> None:
    doc = default_benchmark()
    keys = {
        t["typeName"]: t["patchers"][0].get("properties", {}).get("key")
        for t in doc["loadTypes"]
    }
    assert keys["Advance"] == "advanceMs"
    assert keys["NumOverlappingWindows"] == "numOverlappingWindows"
    assert keys["NumTimeAttributeValues"] == "timeAttribute"


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
