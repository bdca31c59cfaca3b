"""Stage latencies from the records of the stage topics, all on the broker's clock.

Every stage topic is created with LogAppendTime, the input topic too, so each record
carries the moment the broker made it readable. A stage's latency for one output
record is its append time minus the append time of the input record that caused it:
the same record one stage earlier (matched by sensor and event time), or, for a
window result, the record that completed it (matched by sensor and the result's
``latestEventTime``). When no record of that sensor has that time (UC4's results are
per group, not per sensor), the newest input record with that event time is taken.

Pure functions over ``(value, append time)`` pairs, so the arithmetic is tested
without a broker.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from bench.runtime.kafka.latency import event_time_ms

_IDENTIFIER = re.compile(rb'"identifier"\s*:\s*"((?:[^"\\]|\\.)*)"')

#: (value bytes, append time ms) of one record
Record = tuple[bytes, float]
Key = tuple[bytes, float]


def key_of(value: bytes | None) -> Key | None:
    """(identifier, event time) of a record value, or None when it lacks either."""
    if not value:
        return None
    event = event_time_ms(value)
    match = _IDENTIFIER.search(value)
    if event is None or match is None:
        return None
    return match.group(1), event


@dataclass
class Index:
    """Append times of a topic's records by (identifier, event time), and by event time alone."""

    by_key: dict[Key, float]
    by_time: dict[float, float]

    @classmethod
    def of(cls, records: Iterable[Record]) -> Index:
        by_key: dict[Key, float] = {}
        by_time: dict[float, float] = {}
        for value, appended in records:
            key = key_of(value)
            if key is None:
                continue
            # the first append of a key is the one that caused what follows (a re-delivery is later)
            by_key.setdefault(key, appended)
            by_time[key[1]] = max(by_time.get(key[1], appended), appended)
        return cls(by_key, by_time)

    def appended(self, key: Key) -> float | None:
        found = self.by_key.get(key)
        return found if found is not None else self.by_time.get(key[1])


def stage_latencies(inputs: Index, outputs: Iterable[Record], since_ms: float = 0.0) -> list[float]:
    """Output append time minus its input's append time (ms), for outputs whose input came at ``since_ms`` or later."""
    out: list[float] = []
    for value, appended in outputs:
        key = key_of(value)
        if key is None:
            continue
        before = inputs.appended(key)
        if before is None or before < since_ms:
            continue
        out.append(appended - before)
    return out


@dataclass
class StageStats:
    name: str
    records: int
    median: float
    p95: float
    p99: float
    mean: float

    def as_dict(self) -> dict[str, float | int | str]:
        return {"stage": self.name, "records": self.records, "median": self.median, "p95": self.p95,
                "p99": self.p99, "mean": self.mean}


def stats(name: str, latencies: Sequence[float]) -> StageStats:
    values = np.asarray(latencies, dtype=float)
    if not values.size:
        nan = float("nan")
        return StageStats(name, 0, nan, nan, nan, nan)
    return StageStats(name, int(values.size), float(np.median(values)), float(np.percentile(values, 95)),
                      float(np.percentile(values, 99)), float(np.mean(values)))


def format_table(rows: Sequence[StageStats], notes: Mapping[str, str] | None = None) -> str:
    """The per-stage table ``bench stages`` prints (ms)."""
    lines = [f"{'stage':<22} {'records':>8} {'median':>9} {'p95':>9} {'p99':>9}  (ms, broker clock)"]
    for row in rows:
        lines.append(f"{row.name:<22} {row.records:>8} {row.median:>9.0f} {row.p95:>9.0f} {row.p99:>9.0f}"
                     + (f"  {notes[row.name]}" if notes and row.name in notes else ""))
    return "\n".join(lines)
