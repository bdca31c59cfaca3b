"""UC4 parameters: defaults and tolerant parsing (``--set`` delivers strings)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

DEFAULT_PARAMS: dict[str, Any] = {
    "windowSizeMs": 5000,
    "gracePeriodMs": 5000,
    "feedback": True,
}


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
