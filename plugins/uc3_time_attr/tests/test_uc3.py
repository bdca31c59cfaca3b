"""UC3 end to end: fixed input through the real broker and the real Spark query, with
both window methods (Spark's sliding windows and panes), which must agree exactly.

Hopping windows of 3 h advancing 2 h (so panes are 1 h and a record lies in one or
two windows), hour of day in Europe/Berlin (UTC+1), allowed lateness 1 h. Input (UTC):
  step A  21:00-22:59 for two sensors
  step B  23:00-00:59 (across midnight, UTC and local); its max 00:59 sets the watermark
          to 23:59, closing the window [20:00, 23:00)
  step C  late records: 21:30 (its only window closed: dropped), 22:30 (one of its
          two windows closed: counted in the open one only), 23:30 (on time)
Each step's records lie within the lateness of each other, so how a step is split into
micro-batches cannot change the result. In update mode a window is emitted again
whenever it changes; its last emission must equal the numpy reference.
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest
from bench.testing import run_topology
from bench_uc3 import USE_CASE
from bench_uc3.time_attr import time_attribute_value

pytestmark = pytest.mark.e2e

HOUR = 3_600_000
SIZE, ADVANCE, LATENESS = 3 * HOUR, 2 * HOUR, HOUR
ZONE = "Europe/Berlin"
T21 = int(datetime(2026, 3, 28, 21, tzinfo=UTC).timestamp() * 1000)
SENSORS = ("s_0", "s_1")
PARAMS = {
    "windowSizeMs": SIZE, "advanceMs": ADVANCE, "allowedLatenessMs": LATENESS,
    "timeAttribute": "hourOfDay", "timeZone": ZONE,
}

Rec = tuple[str, int, float]
Key = tuple[str, int, int]  # sensor, hour of day, window start


def records(rng: np.random.Generator, start: int, end: int, per_sensor: int) -> list[Rec]:
    return [
        (sensor, int(ts), float(np.round(rng.normal(1000, 40), 3)))
        for sensor in SENSORS
        for ts in rng.integers(start, end, per_sensor)
    ]


def encode(recs: list[Rec]) -> list[tuple[str, str, int]]:
    return [(s, json.dumps({"identifier": s, "timestamp": t, "valueInW": v}), t) for s, t, v in recs]


def windows_of(ts: int) -> list[int]:
    start, out = ts // ADVANCE * ADVANCE, []
    while start + SIZE > ts:
        out.append(start)
        start -= ADVANCE
    return out


def final_outputs(result: list[dict[str, Any]]) -> dict[Key, dict[str, Any]]:
    """The last emission of every (key, window), in offset order within each partition."""
    final: dict[Key, dict[str, Any]] = {}
    for row in result:
        o = json.loads(row["value"])
        assert row["key"] == f"{o['identifier']};hourOfDay={o['timeAttributeValue']}"
        assert o["timeAttribute"] == "hourOfDay" and o["hourOfDay"] == o["timeAttributeValue"]
        assert o["windowEnd"] - o["windowStart"] == SIZE
        final[(o["identifier"], o["timeAttributeValue"], o["windowStart"])] = o
    return final


@pytest.fixture(scope="module")
def scenario(kafka_bootstrap: str, spark: Any) -> dict[str, Any]:
    rng = np.random.default_rng(7)
    step_a = records(rng, T21, T21 + 2 * HOUR, 12)
    step_b = records(rng, T21 + 2 * HOUR, T21 + 4 * HOUR - 60_000, 12)
    step_b.append(("s_1", T21 + 4 * HOUR - 60_000, 999.5))  # max 00:59 -> watermark 23:59
    watermark = T21 + 3 * HOUR - 60_000
    late = [
        ("s_0", T21 + HOUR // 2, 5000.0),  # 21:30
        ("s_1", T21 + 3 * HOUR // 2, 6000.0),  # 22:30
        ("s_0", T21 + 5 * HOUR // 2, 7000.0),  # 23:30
    ]
    steps = [{"input": encode(step_a)}, {"input": encode(step_b)}, {"input": encode(late)}]
    results = {
        method: run_topology(
            USE_CASE, steps, bootstrap_servers=kafka_bootstrap, spark=spark,
            params={**PARAMS, "windowMethod": method},
        )
        for method in ("sliding", "panes")
    }
    expected: dict[Key, list[float]] = defaultdict(list)
    closed_pairs = 0
    for recs, is_late in ((step_a, False), (step_b, False), (late, True)):
        for sensor, ts, value in recs:
            for start in windows_of(ts):
                if is_late and start + SIZE <= watermark:
                    closed_pairs += 1
                    continue
                expected[(sensor, time_attribute_value(ts, "hourOfDay", ZONE), start)].append(value)
    return {"results": results, "expected": expected, "closed_pairs": closed_pairs}


@pytest.mark.parametrize("method", ["sliding", "panes"])
def test_every_statistic_equals_the_numpy_reference(scenario: dict[str, Any], method: str) -> None:
    final = final_outputs(scenario["results"][method])
    expected = scenario["expected"]
    assert set(final) == set(expected)
    assert {h for _, h, _ in final} == {22, 23, 0, 1}  # local hours across local midnight
    for key, values in expected.items():
        a, out = np.asarray(values), final[key]
        assert out["count"] == a.size, key
        assert (out["min"], out["max"]) == (a.min(), a.max()), key
        assert out["sum"] == pytest.approx(a.sum(), rel=1e-9), key
        assert out["mean"] == pytest.approx(a.mean(), rel=1e-9), key
        assert out["populationVariance"] == pytest.approx(a.var(), rel=1e-9, abs=1e-9), key


def test_both_window_methods_give_identical_results(scenario: dict[str, Any]) -> None:
    sliding = final_outputs(scenario["results"]["sliding"])
    panes = final_outputs(scenario["results"]["panes"])
    assert set(sliding) == set(panes)
    for key, s in sliding.items():
        p = panes[key]
        assert (s["count"], s["min"], s["max"], s["windowEnd"]) == (p["count"], p["min"], p["max"], p["windowEnd"])
        for field in ("sum", "mean", "populationVariance"):
            assert s[field] == pytest.approx(p[field], rel=1e-12, abs=1e-9), (key, field)


def test_late_records_are_dropped_and_counted(scenario: dict[str, Any]) -> None:
    # the native operator counts one row per closed (record, window) pair here
    assert scenario["closed_pairs"] == 2
    assert scenario["results"]["sliding"].dropped == scenario["closed_pairs"]
    for result in scenario["results"].values():
        values = [json.loads(r["value"]) for r in result]
        assert all(o["max"] < 5000.0 for o in values if o["windowStart"] == T21 - HOUR)  # [20:00, 23:00)
        assert any(o["max"] == 6000.0 for o in values)  # 22:30 counted in [22:00, 01:00)
        assert result.malformed == 0
