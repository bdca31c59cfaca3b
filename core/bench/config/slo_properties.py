"""The property keys of an SLO: which a type reads, and which the evaluator reads for all.

A property no code reads is a setting accepted and ignored: ``treshold: 50`` would
judge by the default threshold without a word. Each SLO type declares its keys
(``SloType.properties``); :func:`check_keys` refuses any other before a run, naming
the nearest known key, and an external checker's address on a type that never calls
one.
"""

from __future__ import annotations

from collections.abc import Mapping
from difflib import get_close_matches
from typing import Any

from bench.api import SloType

#: keys the evaluator reads for every SLO, whatever its type: the warm-up (``warmup`` in
#: bench's and the oldest schema, ``warmupSeconds`` in the reference's current one)
COMMON_PROPERTIES = ("warmup", "warmupSeconds")
#: keys users bring from elsewhere, with what to write instead
_HINTS = {
    "promQLQuery": "bench samples its SLIs itself and runs no PromQL query; name the SLI with sli "
                   "(lag, dropped-records, latency-p99, ...)",
    "aggregation": "queryAggregation aggregates within a repetition, repetitionAggregation across repetitions",
}
#: the keys an SLO type that posts to an external checker reads (``bench.slo.external``)
#: the keys that name an external checker (bench.slo.external reads them)
URL_KEYS = ("externalSloChecker", "externalSloUrl")
EXTERNAL_PROPERTIES = URL_KEYS


def warmup_of(properties: Mapping[str, Any], default: float) -> float:
    """The SLO's warm-up in seconds: ``warmup``, else ``warmupSeconds``, else ``default``."""
    for key in COMMON_PROPERTIES:
        value = properties.get(key)
        if value is not None and not (isinstance(value, str) and not value.strip()):
            return float(value)
    return default


def known_keys(slo_type: SloType) -> tuple[str, ...] | None:
    """Every key an SLO of this type may hold; None when the type declares none."""
    if slo_type.properties is None:
        return None
    return (*slo_type.properties, *COMMON_PROPERTIES)


def check_keys(slo_type: SloType, properties: Mapping[str, Any], types: Mapping[str, SloType]) -> None:
    """Raises ``ValueError`` (one line) for a key the type does not read (``types``: the
    registered ones, to name those that do call an external checker)."""
    known = known_keys(slo_type)
    if known is None:
        return
    for key in properties:
        if key in known:
            continue
        if key in EXTERNAL_PROPERTIES:
            callers = [name for name, t in types.items() if key in (t.properties or ())]
            raise ValueError(f"{key}: SLO type {slo_type.name!r} never calls an external checker; remove it"
                             + (f", or use an SLO of type {', '.join(map(repr, callers))}" if callers else ""))
        if key in _HINTS and slo_type.properties is not None:
            raise ValueError(f"{key}: not a property of SLO type {slo_type.name!r}; {_HINTS[key]}")
        close = get_close_matches(str(key), list(known), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else f" (it reads {', '.join(known)})"
        raise ValueError(f"{key}: not a property of SLO type {slo_type.name!r}{hint}")
