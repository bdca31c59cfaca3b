"""What UC4's end-to-end tests share: the leaves' records per window, registry events,
the last window the watermark closes and the results read back.

Each leaf of the full tree k=2, n=3 sends two records per 5 s window: a decoy, then
the value that must count (the latest). Values differ per leaf and window, so a wrong
membership, a missed duplicate or a double count changes a sum.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from bench_uc4 import registry

T0 = 1_700_000_000_000  # a multiple of the window size: window w = [T0 + 5 s w, T0 + 5 s (w + 1))
WINDOW_MS = 5000
WINDOWS = 7
LEAVES = registry.leaf_keys(3, 2)

Rows = list[tuple[str, str, int]]


def value(leaf: str, window: int) -> float:
    return float((int(leaf[2:]) + 1) * 10 + window)


def leaf_records(window: int) -> Rows:
    out = []
    for leaf in LEAVES:
        for offset_ms, v in ((1000, -1000.0), (3000, value(leaf, window))):  # a decoy, then the latest
            ts = T0 + window * WINDOW_MS + offset_ms
            out.append((leaf, json.dumps({"identifier": leaf, "timestamp": ts, "valueInW": v}), ts))
    return out


def registry_event(tree: registry.Node, ts: int) -> dict[str, Rows]:
    return {"configuration": [(registry.EVENT_KEY, registry.dumps(tree), ts)]}


def last_closed_window() -> int:
    """The watermark after the last step: max event time - grace."""
    watermark = T0 + (WINDOWS - 1) * WINDOW_MS + 3000 - 5000
    return (watermark - T0) // WINDOW_MS - 1


def observed(rows: list[dict[str, Any]]) -> dict[tuple[str, int], tuple[float, int]]:
    """(group, window) -> (sum, count) of the results, each checked for its shape (key,
    window end, average) and for being the only result of its group and window."""
    got: dict[tuple[str, int], tuple[float, int]] = {}
    for row in rows:
        doc = json.loads(row["value"])
        assert row["key"] == doc["identifier"]
        assert doc["timestamp"] - doc["windowStart"] == WINDOW_MS
        window = (doc["windowStart"] - T0) // WINDOW_MS
        assert (doc["identifier"], window) not in got, f"two results for {doc['identifier']} window {window}"
        got[(doc["identifier"], window)] = (doc["sumInW"], doc["count"])
        assert doc["averageInW"] == pytest.approx(doc["sumInW"] / doc["count"])
    return got
