"""UC4 parameters: defaults and tolerant parsing (``--set`` delivers strings)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.api import ParamSpec

DEFAULT_PARAMS: dict[str, Any] = {
    "windowSizeMs": 5000,
    "gracePeriodMs": 5000,
    "feedback": True,
}


#: what the topology reads, checked before a run (``bench.api.ParamSpec``)
PARAMS: tuple[ParamSpec, ...] = (
    ParamSpec("windowSizeMs", int, min=1, doc="tumbling window length"),
    ParamSpec("gracePeriodMs", int, min=1, doc="how late a record may arrive"),
    ParamSpec("feedback", bool, doc="aggregate groups of groups through the feedback topic"),
    ParamSpec("triggerSeconds", float, min=0, doc="micro-batch trigger interval (default: --trigger)"),
)


def flag(value: Any) -> bool:
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in {"true", "1", "yes", "on"}:
            return True
        if lowered in {"false", "0", "no", "off", ""}:
            return False
        raise ValueError(f"feedback must be true or false, got {value!r}")
    return bool(value)


def millis(params: Mapping[str, Any], key: str) -> int:
    value = int(float(params.get(key, DEFAULT_PARAMS[key])))
    if value <= 0:
        raise ValueError(f"{key} must be positive, got {value}")
    return value


def integer(params: Mapping[str, Any], key: str, default: int) -> int:
    value = params.get(key, default)
    number = float(value)
    if number != int(number) or number < 1:
        raise ValueError(f"{key} must be a whole number >= 1, got {value!r}")
    return int(number)
