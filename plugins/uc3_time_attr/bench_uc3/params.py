"""Reading and checking UC3 parameters.

Values come from ``UseCase.default_params``, ``--set key=value`` and ParamPatchers
(load types), so numbers may arrive as strings. Everything is checked here, before the
query starts, with errors that name the parameter and the allowed values.

Derived parameters exist so that load types can be expressed as one number:
``numOverlappingWindows`` (k > 0) sets ``advanceMs = windowSizeMs / k``, and
``timeAttribute`` may be the number of attribute values (24, 7, 168) as well as a name.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bench.api import ParamSpec, whole_number

DAY_MS = 86_400_000

#: time attribute name -> number of distinct values it takes
TIME_ATTRIBUTES: dict[str, int] = {"hourOfDay": 24, "dayOfWeek": 7, "hourOfWeek": 168}
WINDOW_METHODS = ("sliding", "panes")

DEFAULT_PARAMS: dict[str, Any] = {
    "windowSizeMs": 3 * DAY_MS,
    "advanceMs": DAY_MS,
    # 0 = unset; k > 0 overrides advanceMs with windowSizeMs / k
    "numOverlappingWindows": 0,
    "timeAttribute": "hourOfDay",
    "timeZone": "UTC",
    "allowedLatenessMs": 5_000,
    "windowMethod": "sliding",
    "emitPeriodMs": 5_000,
}


#: what the topology reads, checked before a run (``bench.api.ParamSpec``); the
#: relations between them (advance <= size, k divides size) are checked in from_mapping.
PARAMS: tuple[ParamSpec, ...] = (
    ParamSpec("windowSizeMs", int, min=1, doc="hopping window length"),
    ParamSpec("advanceMs", int, min=1, doc="hop between windows"),
    ParamSpec("numOverlappingWindows", int, min=0, doc="k > 0 sets advanceMs = windowSizeMs / k"),
    ParamSpec("timeAttribute", object, choices=(*TIME_ATTRIBUTES, *TIME_ATTRIBUTES.values()),
              doc="hourOfDay, dayOfWeek, hourOfWeek, or their number of values"),
    ParamSpec("timeZone", str, doc="IANA time zone of the time attribute"),
    ParamSpec("allowedLatenessMs", int, min=0, doc="watermark delay"),
    ParamSpec("windowMethod", str, choices=WINDOW_METHODS, doc="sliding windows or panes"),
    ParamSpec("emitPeriodMs", int, min=0, doc="trigger interval; 0 lets the runtime choose"),
)


def window_seconds(params: Mapping[str, Any]) -> float | None:
    """The wall-clock period of UC3's lag wave (``UseCase.window_seconds``): results are
    emitted once per trigger, ``emitPeriodMs``, and the lag drains with each emission.
    None when the runtime chooses the trigger (0): then there is no fixed period."""
    emit = whole_ms(params, "emitPeriodMs", allow_zero=True)
    return emit / 1000.0 if emit > 0 else None


def whole_ms(params: Mapping[str, Any], key: str, *, allow_zero: bool = False) -> int:
    return whole_number(params.get(key, DEFAULT_PARAMS.get(key)), key, allow_zero=allow_zero)


def time_attribute(raw: Any) -> str:
    """A time attribute name from a name or from its number of values (a load value)."""
    by_count = {count: name for name, count in TIME_ATTRIBUTES.items()}
    if isinstance(raw, str) and raw in TIME_ATTRIBUTES:
        return raw
    try:
        count = float(raw)
    except (TypeError, ValueError):
        count = math.nan
    if count in by_count:
        return by_count[int(count)]
    allowed = ", ".join(f"{n} (or {c})" for n, c in TIME_ATTRIBUTES.items())
    raise ValueError(f"parameter timeAttribute={raw!r} must be one of {allowed}")


@dataclass(frozen=True)
class Uc3Params:
    window_size_ms: int
    advance_ms: int
    time_attribute: str
    time_zone: str
    allowed_lateness_ms: int
    window_method: str
    emit_period_ms: int

    @classmethod
    def from_mapping(cls, params: Mapping[str, Any]) -> Uc3Params:
        size = whole_ms(params, "windowSizeMs")
        overlapping = whole_ms(params, "numOverlappingWindows", allow_zero=True)
        if overlapping:
            if size % overlapping:
                raise ValueError(
                    f"parameter numOverlappingWindows={overlapping} must divide windowSizeMs={size}"
                )
            advance = size // overlapping
        else:
            advance = whole_ms(params, "advanceMs")
        if advance > size:
            raise ValueError(f"parameter advanceMs={advance} must not exceed windowSizeMs={size}")
        zone = str(params.get("timeZone", DEFAULT_PARAMS["timeZone"]))
        try:
            ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"parameter timeZone={zone!r} is not an IANA time zone (e.g. UTC)") from None
        method = str(params.get("windowMethod", DEFAULT_PARAMS["windowMethod"]))
        if method not in WINDOW_METHODS:
            raise ValueError(f"parameter windowMethod={method!r} must be one of {', '.join(WINDOW_METHODS)}")
        return cls(
            window_size_ms=size,
            advance_ms=advance,
            time_attribute=time_attribute(params.get("timeAttribute", DEFAULT_PARAMS["timeAttribute"])),
            time_zone=zone,
            allowed_lateness_ms=whole_ms(params, "allowedLatenessMs", allow_zero=True),
            window_method=method,
            emit_period_ms=whole_ms(params, "emitPeriodMs", allow_zero=True),
        )

    @property
    def slice_ms(self) -> int:
        """The pane length: the largest length that both size and advance are multiples of."""
        return math.gcd(self.window_size_ms, self.advance_ms)

    @property
    def overlapping_windows(self) -> int:
        return math.ceil(self.window_size_ms / self.advance_ms)

    @property
    def trigger_seconds(self) -> float | None:
        return self.emit_period_ms / 1000.0 if self.emit_period_ms else None
