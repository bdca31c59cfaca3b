"""The default UC3 Benchmark: what `bench run --plugin uc3` measures without a file."""

from __future__ import annotations

from typing import Any

from bench.api import standard_benchmark

SLOS = [
    {"name": "lag-trend", "sloType": "lag-trend", "properties": {"thresholdRelToLoad": 0.01}},
    # late records dropped by the window operator: at most 1 % of the generated ones
    {"name": "dropped-records", "sloType": "dropped-records", "properties": {"maxRatio": 0.01}},
]
TOPICS = {"input": 4, "output": 4}


def _param(type_name: str, key: str) -> dict[str, Any]:
    return {
        "typeName": type_name,
        "patchers": [{"type": "ParamPatcher", "resource": "sut", "properties": {"key": key}}],
    }


def load_types() -> list[dict[str, Any]]:
    """Besides NumSensors (from standard_benchmark)."""
    return [
        _param("WindowSize", "windowSizeMs"),
        _param("Advance", "advanceMs"),
        # k overlapping windows: advanceMs = windowSizeMs / k (see bench_uc3.params)
        _param("NumOverlappingWindows", "numOverlappingWindows"),
        # 24, 7 or 168 values: hourOfDay, dayOfWeek, hourOfWeek
        _param("NumTimeAttributeValues", "timeAttribute"),
        {
            "typeName": "MessagePeriod",
            "patchers": [
                {"type": "GenericResourcePatcher", "resource": "generator", "properties": {"path": "spec/periodMs"}}
            ],
        },
    ]


def default_benchmark() -> dict[str, Any]:
    return standard_benchmark("uc3", TOPICS, load_types=load_types(), slos=SLOS)
