"""Reading numbers from loosely typed input.

Numbers reach bench from YAML, from ``--set key=value`` and from load values, so one
value may be ``3``, ``3.0`` or ``"3"``. SLO properties, patcher values and use-case
parameters all read them here, so that they accept the same forms and refuse NaN and
infinity the same way, each with an error that names what was wrong.
"""

from __future__ import annotations

import math
from typing import Any


def finite_float(raw: Any, name: str, error: type[ValueError] = ValueError) -> float:
    """``raw`` as a finite float; ``name`` starts the message (e.g. ``"maxRatio: 'x'"``).

    ``error`` lets a caller raise its own ``ValueError`` subclass (the patchers'
    ``PatcherError``) without catching and re-raising.
    """
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise error(f"{name} is not a number") from None
    if not math.isfinite(value):
        raise error(f"{name} is not a finite number")
    return value


def whole_number(raw: Any, key: str, *, allow_zero: bool = False, unit: str = "") -> int:
    """Use-case parameter ``key`` as a whole, positive (``allow_zero``: non-negative) int.

    ``unit`` (e.g. ``"milliseconds"``) only words the error message.
    """
    of_unit = f" of {unit}" if unit else ""
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise ValueError(f"parameter {key}={raw!r} is not a number{of_unit}") from None
    if not math.isfinite(value) or value != int(value) or value < 0 or (value == 0 and not allow_zero):
        kind = "a non-negative" if allow_zero else "a positive"
        raise ValueError(f"parameter {key}={raw!r} must be {kind} whole number{of_unit}")
    return int(value)


def readable(value: float | None, digits: int = 4) -> str:
    """A measured number as people write it: 10,000 and 12,346, not 1e+04; 0.0123, 1.5.
    One rule for the progress lines, the printed tables and the report."""
    if value is None or not math.isfinite(value):
        return "-"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"
