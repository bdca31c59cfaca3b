"""Parsing the values of command-line options that click cannot type by itself.

A library, not a front end: it raises :class:`bench.errors.OptionError` and never
touches click, so ``runner`` (and tests, and other front ends) can use it, and the CLI
only turns the error into an exit code.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bench.config.files import parse_yaml_value
from bench.errors import OptionError


def split_floats(name: str, raw: str | None) -> list[float] | None:
    """``--loads 1000,2000`` -> [1000.0, 2000.0]; None when the option was not given."""
    if raw is None:
        return None
    try:
        values = [float(part) for part in raw.split(",") if part.strip()]
    except ValueError:
        raise OptionError(f"--{name}: {raw!r} is not a comma-separated list of numbers") from None
    if not values:
        raise OptionError(f"--{name}: no values given")
    return values


def parse_sets(items: Iterable[str]) -> dict[str, Any]:
    """``--set KEY=VALUE`` pairs; values are read as YAML scalars (``500`` is a number)."""
    params: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise OptionError(f"--set {item!r}: expected KEY=VALUE")
        params[key.strip()] = parse_yaml_value(raw, f"--set {key.strip()}") if raw.strip() else ""
    return params
