"""The default UC2 Benchmark: what `bench run --plugin uc2` measures without a file."""

from __future__ import annotations

from typing import Any

from bench.api import standard_benchmark

SLOS = [
    {"name": "lag-trend", "sloType": "lag-trend", "properties": {"thresholdRelToLoad": 0.01}},
    # late records dropped by the window operator: at most 1 % of the generated ones
    {"name": "dropped-records", "sloType": "dropped-records", "properties": {"maxRatio": 0.01}},
]
TOPICS = {"input": 4, "output": 4}


def param_load_type(type_name: str, key: str) -> dict[str, Any]:
    """A load type whose value becomes the SUT parameter ``key``."""
    return {
        "typeName": type_name,
        "patchers": [{"type": "ParamPatcher", "resource": "sut", "properties": {"key": key}}],
    }


MESSAGE_PERIOD = {
    "typeName": "MessagePeriod",
    "patchers": [{"type": "GenericResourcePatcher", "resource": "generator", "properties": {"path": "spec/periodMs"}}],
}


def default_benchmark() -> dict[str, Any]:
    return standard_benchmark(
        "uc2", TOPICS, load_types=[param_load_type("WindowSize", "windowSizeMs"), MESSAGE_PERIOD], slos=SLOS
    )
