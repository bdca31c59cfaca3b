"""Reading UC2 parameters.

Parameters arrive from three places (``UseCase.default_params``, ``--set key=value``
and the ParamPatcher of a load type), so a value may be an int, a float or a string
such as ``"60000"``; they are normalised here, once, with errors that name the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

DEFAULT_PARAMS: dict[str, Any] = {
    "windowSizeMs": 60_000,
    "allowedLatenessMs": 5_000,
    # 0 = let the runtime choose the trigger interval.
    "emitPeriodMs": 0,
}


def positive_ms(params: Mapping[str, Any], key: str, *, allow_zero: bool = False) -> int:
    raw = params.get(key, DEFAULT_PARAMS.get(key))
    try:
        value = float(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"parameter {key}={raw!r} is not a number of milliseconds") from None
    if value != int(value) or value < 0 or (value == 0 and not allow_zero):
        expected = "a non-negative" if allow_zero else "a positive"
        raise ValueError(f"parameter {key}={raw!r} must be {expected} whole number of milliseconds")
    return int(value)


@dataclass(frozen=True)
class Uc2Params:
    window_size_ms: int
    allowed_lateness_ms: int
    emit_period_ms: int

    @classmethod
    def from_mapping(cls, params: Mapping[str, Any]) -> Uc2Params:
        return cls(
            window_size_ms=positive_ms(params, "windowSizeMs"),
            allowed_lateness_ms=positive_ms(params, "allowedLatenessMs", allow_zero=True),
            emit_period_ms=positive_ms(params, "emitPeriodMs", allow_zero=True),
        )

    @property
    def trigger_seconds(self) -> float | None:
        return self.emit_period_ms / 1000.0 if self.emit_period_ms else None
