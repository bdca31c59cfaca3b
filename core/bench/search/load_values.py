"""Load values for a wanted records/s: a load type's value that asks it, read and typed
by a user (two significant digits), or the whole values of a stepped load.

A load type maps its value to records/s either way (sensors up, a message period down)
and some take whole values only (UC4's nesting levels, each 4x the last), so sizing
(:mod:`bench.search.sizing`) finds its loads here by searching ``rate_of`` (a load value
-> its records/s) rather than by inverting a formula.
"""

from __future__ import annotations

import math
from collections.abc import Callable

RateOf = Callable[[float], float]


def two_digits(x: float) -> float:
    """``x`` rounded to two significant digits: loads a user can read and type again."""
    if x <= 0:
        return x
    scale = 10 ** (math.floor(math.log10(x)) - 1)
    return round(x / scale) * scale


def _valid(rate_of: RateOf, x: float) -> tuple[float, float] | None:
    """(value, records/s) for ``x``, or for its nearest whole number where the load takes
    whole values only (sensors); None where neither is a load value."""
    for value in (x, float(round(x))):
        if value <= 0:
            continue
        try:
            return value, float(rate_of(value))
        except Exception:  # noqa: BLE001 - a patcher refusing the value: not a load value
            continue
    return None


def load_for(rate: float, rate_of: RateOf, lo: float = 1e-3, hi: float = 1e9) -> float | None:
    """The load value asking ``rate`` records/s of a load type (either direction), two
    significant digits (whole where it must be); None where no value in [lo, hi] comes near."""
    bounds = [v for v in (_valid(rate_of, 10.0 ** k) for k in range(round(math.log10(lo)), round(math.log10(hi)) + 1))
              if v is not None]
    if len(bounds) < 2:
        return None
    (x_lo, r_lo), (x_hi, r_hi) = bounds[0], bounds[-1]
    increasing = r_hi > r_lo
    if not min(r_lo, r_hi) <= rate <= max(r_lo, r_hi):
        return None
    a, b = math.log(x_lo), math.log(x_hi)
    for _ in range(80):
        m = (a + b) / 2
        got = _valid(rate_of, math.exp(m))
        if got is None:
            return None
        if (got[1] < rate) == increasing:
            a = m
        else:
            b = m
    found = _valid(rate_of, two_digits(math.exp((a + b) / 2)))
    return None if found is None else found[0]


#: mantissas (of a value's first two digits) by how round they read: one digit, then
#: a two-digit one ending in 5, then any two digits
ROUNDNESS: tuple[tuple[int, ...], ...] = (
    tuple(range(10, 100, 10)), tuple(range(15, 100, 10)), tuple(m for m in range(10, 100) if m % 5))


def round_candidates(lo: float, hi: float, target: float, rate_of: RateOf) -> list[tuple[float, float]]:
    """(load value, records/s) asking between ``lo`` and ``hi`` records/s, the roundest
    first and, among equally round ones, the nearest to ``target`` first.

    Why round: the probe's figure varies by a tenth or more between two runs on one
    machine (two UC1 instances read 11,205 and 12,598 records/s each), and two-digit
    loads follow it (2,200 and 2,500), so two runs printed two tables for one curve.
    The roundest value inside a band around each target is the same for both
    (2,000), while the band keeps it off the capacity boundaries."""
    ends = [load_for(r, rate_of) for r in (lo, hi)]
    if any(e is None for e in ends):
        return []
    a, b = sorted(float(e) for e in ends if e is not None)
    a, b = a / 1.1, b * 1.1  # the ends' two-digit rounding: the rates are checked below
    out: list[tuple[float, float]] = []
    seen: set[float] = set()
    for mantissas in ROUNDNESS:
        level: list[tuple[float, float, float]] = []
        for k in range(math.floor(math.log10(a)) - 1, math.floor(math.log10(b)) + 1):
            for m in mantissas:
                x = float(f"{m * 10.0 ** k:.6g}")
                got = _valid(rate_of, x) if a <= x <= b and x not in seen else None
                if got is None or got[0] in seen or not lo <= got[1] <= hi:
                    continue
                seen.add(got[0])
                level.append((abs(math.log(got[1] / target)), got[0], got[1]))
        out += [(v, r) for _, v, r in sorted(level)]
    return out


def whole_candidates(rate_of: RateOf, top: int = 64, most: float = 1e8) -> dict[float, float]:
    """Whole load values -> their records/s (up to ``most`` records/s), for a load whose
    steps are coarse (UC4's levels, each 4x the last)."""
    out: dict[float, float] = {}
    previous = 0.0
    for value in range(1, top + 1):
        try:
            rate = float(rate_of(float(value)))
        except (ValueError, TypeError, KeyError, ArithmeticError, OverflowError):
            continue
        out[float(value)] = rate
        if rate > most and rate > previous:
            break
        previous = rate
    return out


def candidates_near(target: float, rate_of: RateOf, whole: dict[float, float] | None = None
                    ) -> dict[float, float]:
    """Load values -> records/s to choose from for ``target`` records/s: the value that asks
    it (two digits), or, where the load's steps are too coarse to come within 10 % of
    it, the whole values (``whole``, computed once by the caller)."""
    found = load_for(target, rate_of)
    if found is not None:
        try:
            rate = float(rate_of(found))
        except (ValueError, TypeError, KeyError, ArithmeticError):
            rate = 0.0
        if rate > 0 and abs(math.log(rate / target)) < 0.1:
            return {found: rate}
    return dict(whole if whole is not None else whole_candidates(rate_of))
