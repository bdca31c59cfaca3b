"""Reading UC2 parameters.

Parameters arrive from three places (``UseCase.default_params``, ``--set key=value``
and the ParamPatcher of a load type), so a value may be an int, a float or a string
such as ``"60000"``; they are normalised here, once, with errors that name the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bench.api import ParamSpec, whole_number

DEFAULT_PARAMS: dict[str, Any] = {
    "windowSizeMs": 60_000,
    "allowedLatenessMs": 5_000,
    # 0 = let the runtime choose the trigger interval.
    "emitPeriodMs": 0,
}


#: what the topology reads, checked before a run (``bench.api.ParamSpec``)
PARAMS: tuple[ParamSpec, ...] = (
    ParamSpec("windowSizeMs", int, min=1, doc="tumbling window length"),
    ParamSpec("allowedLatenessMs", int, min=0, doc="watermark delay"),
    ParamSpec("emitPeriodMs", int, min=0, doc="trigger interval; 0 lets the runtime choose"),
)


def positive_ms(params: Mapping[str, Any], key: str, *, allow_zero: bool = False) -> int:
    return whole_number(params.get(key, DEFAULT_PARAMS.get(key)), key, allow_zero=allow_zero, unit="milliseconds")


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
