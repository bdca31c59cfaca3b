"""UC2 end to end: fixed input through the real broker and the real Spark query.

Input (UTC), tumbling windows of 1 minute, allowed lateness 2 minutes:
  step A  23:58:00-23:59:59 for three sensors            (windows W1, W2)
  step B  00:00:00-00:01:59, plus W2 records 23:59:30+   (W3, W4 across midnight; W2 late but open)
  step C  late records for W1, one per sensor             (the watermark 23:59:59 closed W1)
  step D  one record at 00:10 that closes W2..W4
Each step's records lie within the lateness of each other, so how the source splits a
step into micro-batches cannot change which records are dropped. The reference is
computed with numpy from the same lists.
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest
from bench.testing import run_topology
from bench_uc2 import USE_CASE

pytestmark = pytest.mark.e2e

WINDOW = 60_000
LATENESS = 120_000
T0 = int(datetime(2026, 3, 28, 23, 58, tzinfo=UTC).timestamp() * 1000)
MIDNIGHT = T0 + 2 * WINDOW
SENSORS = ("s_0", "s_1", "s_2")

Rec = tuple[str, int, float]


def records(rng: np.random.Generator, start: int, end: int, per_sensor: int) -> list[Rec]:
    out = []
    for sensor in SENSORS:
        for ts in rng.integers(start, end, per_sensor):
            out.append((sensor, int(ts), float(np.round(rng.normal(1000, 40), 3))))
    return out


def encode(recs: list[Rec]) -> list[tuple[str, str, int]]:
    return [(s, json.dumps({"identifier": s, "timestamp": t, "valueInW": v}), t) for s, t, v in recs]


def stats(values: list[float]) -> dict[str, float]:
    a = np.asarray(values, dtype=np.float64)
    return {"count": a.size, "sum": a.sum(), "min": a.min(), "max": a.max(), "mean": a.mean(),
            "populationVariance": a.var()}


@pytest.fixture(scope="module")
def scenario(kafka_bootstrap: str, spark: Any) -> dict[str, Any]:
    rng = np.random.default_rng(42)
    step_a = records(rng, T0, MIDNIGHT, 8)
    step_b = records(rng, MIDNIGHT, MIDNIGHT + 2 * WINDOW - 1000, 8) + records(rng, MIDNIGHT - 30_000, MIDNIGHT, 2)
    step_b.append(("s_0", MIDNIGHT + 2 * WINDOW - 1, 1000.0))  # the max: watermark 23:59:59.999 closes W1
    late = [(s, T0 + 10_000 + i, 5000.0 + i) for i, s in enumerate(SENSORS)]  # W1, one per sensor
    flush = [("s_0", MIDNIGHT + 10 * WINDOW, 1.0)]
    result = run_topology(
        USE_CASE,
        [{"input": encode(step_a)}, {"input": encode(step_b)}, {"input": encode(late)}, {"input": encode(flush)}],
        bootstrap_servers=kafka_bootstrap,
        spark=spark,
        params={"windowSizeMs": WINDOW, "allowedLatenessMs": LATENESS},
    )
    accepted = step_a + step_b
    expected: dict[tuple[str, int], list[float]] = defaultdict(list)
    for sensor, ts, value in accepted:
        expected[(sensor, ts - ts % WINDOW)].append(value)
    return {"result": result, "expected": expected, "late": late}


def test_every_window_statistic_equals_the_numpy_reference(scenario: dict[str, Any]) -> None:
    result, expected = scenario["result"], scenario["expected"]
    outputs = [(r["key"], json.loads(r["value"])) for r in result]
    got = {(o["identifier"], o["windowStart"]): o for _, o in outputs}
    assert len(got) == len(outputs), "append mode emits each window once"
    assert set(got) == set(expected)
    assert {start for _, start in got} == {T0, T0 + WINDOW, MIDNIGHT, MIDNIGHT + WINDOW}
    for key, o in outputs:
        assert key == o["identifier"]
        assert o["windowEnd"] - o["windowStart"] == WINDOW
    for group, values in expected.items():
        want, out = stats(values), got[group]
        assert out["count"] == want["count"], group
        assert (out["min"], out["max"]) == (want["min"], want["max"]), group
        for field in ("sum", "mean", "populationVariance"):
            assert out[field] == pytest.approx(want[field], rel=1e-9), (group, field)


def test_late_records_are_dropped_and_counted(scenario: dict[str, Any]) -> None:
    result, late = scenario["result"], scenario["late"]
    assert result.dropped == len(late)  # one per (sensor, window): Spark counts rows after partial aggregation
    first_window = [json.loads(r["value"]) for r in result if json.loads(r["value"])["windowStart"] == T0]
    assert all(o["max"] < 5000.0 for o in first_window)
    assert result.malformed == 0
