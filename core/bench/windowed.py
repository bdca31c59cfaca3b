"""What the default benchmarks of windowed use cases share (UC2, UC3, a third party's).

A window operator drops records that arrive after the watermark, so such a use case
holds two SLOs: the lag trend, and the ratio of dropped to generated records. Its
window parameters are SUT parameters that a load type sets, and its records' period
is the generator's. Both UC2 and UC3 take these from here, so that their defaults
cannot drift apart.
"""

from __future__ import annotations

from typing import Any

#: late records dropped by the window operator: at most 1 % of the generated ones
MAX_DROPPED_RATIO = 0.01


def windowed_slos() -> list[dict[str, Any]]:
    """Fresh SLO definitions (a caller may edit them without touching another's)."""
    return [
        {"name": "lag-trend", "sloType": "lag-trend", "properties": {"thresholdRelToLoad": 0.01}},
        {"name": "dropped-records", "sloType": "dropped-records", "properties": {"maxRatio": MAX_DROPPED_RATIO}},
    ]


def param_load_type(type_name: str, key: str, direction: str = "increasing") -> dict[str, Any]:
    """A load type whose value becomes the SUT parameter ``key`` (``direction``: see model.TypeDef)."""
    return {
        "typeName": type_name,
        "direction": direction,
        "patchers": [{"type": "ParamPatcher", "resource": "sut", "properties": {"key": key}}],
    }


def message_period_load_type() -> dict[str, Any]:
    """The ``MessagePeriod`` load type: the generator's period per key, in ms."""
    return {
        "typeName": "MessagePeriod",
        "direction": "decreasing",  # a shorter period is more records/s
        "patchers": [
            {"type": "GenericResourcePatcher", "resource": "generator", "properties": {"path": "spec/periodMs"}}
        ],
    }
