"""The Spark parts of UC2/UC3 on static DataFrames (the shared local SparkSession).

Streaming semantics (watermarks, late records, update mode) are covered by the e2e
tests; here the column expressions and aggregations are checked against numpy and
``zoneinfo`` on batch data, where ``withWatermark`` is a no-op. Marked e2e because
every test here starts (or shares) a real Spark session.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pytest
from bench_uc2.params import Uc2Params
from bench_uc2.topology import downsample
from bench_uc2.topology import to_key_value as uc2_key_value
from bench_uc3.params import Uc3Params
from bench_uc3.time_attr import time_attribute_column, time_attribute_value
from bench_uc3.topology import aggregate
from bench_uc3.topology import to_key_value as uc3_key_value

pytestmark = pytest.mark.e2e


def ms(text: str, zone: str = "UTC") -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=ZoneInfo(zone)).timestamp() * 1000)


def measurements(spark: Any, records: list[tuple[str, int, float]]) -> Any:
    from pyspark.sql import functions as F

    df = spark.createDataFrame(records, "identifier string, ts long, valueInW double")
    return df.select("identifier", F.timestamp_millis("ts").alias("timestamp"), "valueInW")


@pytest.fixture(scope="module")
def session(spark: Any) -> Iterator[Any]:
    yield spark


# midnight, a DST switch in Berlin (2026-03-29 01:00 UTC), a Sunday -> Monday change
STAMPS = [
    ms("2026-03-28T22:59:59.999"), ms("2026-03-28T23:00:00"), ms("2026-03-29T00:59:59"),
    ms("2026-03-29T01:00:00"), ms("2026-03-29T01:30:00"), ms("2026-03-29T23:59:59.999"),
    ms("2026-03-30T00:00:00"), ms("2026-10-25T00:30:00"), ms("2026-10-25T01:30:00"), 0, 86_399_999,
]


ZONES = ("UTC", "Europe/Berlin", "Asia/Kolkata")
ATTRIBUTES = ("hourOfDay", "dayOfWeek", "hourOfWeek")


def test_time_attribute_matches_zoneinfo_whatever_the_session_zone(session: Any) -> None:
    from pyspark.sql import functions as F

    columns = [time_attribute_column(F.col("timestamp"), a, z).alias(f"{a}@{z}") for a in ATTRIBUTES for z in ZONES]
    before = session.conf.get("spark.sql.session.timeZone")
    session.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
    try:
        rows = measurements(session, [("s", t, 0.0) for t in STAMPS]).select(*columns).collect()
    finally:
        session.conf.set("spark.sql.session.timeZone", before)
    for name in rows[0].asDict():
        attribute, zone = name.split("@")
        got = [r[name] for r in rows]
        assert got == [time_attribute_value(t, attribute, zone) for t in STAMPS], name


def random_records(seed: int, sensors: int, span_ms: int, n: int) -> list[tuple[str, int, float]]:
    rng = np.random.default_rng(seed)
    start = ms("2026-03-28T20:00:00")
    return [
        (f"s_{int(rng.integers(sensors))}", start + int(rng.integers(span_ms)), float(1000 + rng.normal(0, 50)))
        for _ in range(n)
    ]


def numpy_stats(values: list[float]) -> dict[str, float]:
    a = np.asarray(values)
    return {"count": a.size, "sum": a.sum(), "min": a.min(), "max": a.max(), "mean": a.mean(),
            "populationVariance": a.var()}


def assert_stats(got: dict[str, Any], want: dict[str, float]) -> None:
    assert got["count"] == want["count"]
    assert got["min"] == want["min"] and got["max"] == want["max"]
    for f in ("sum", "mean", "populationVariance"):
        assert got[f] == pytest.approx(want[f], rel=1e-9), f


def test_uc2_statistics_per_sensor_and_tumbling_window(session: Any) -> None:
    records = random_records(1, 3, 4 * 3_600_000, 400)
    params = Uc2Params(window_size_ms=3_600_000, allowed_lateness_ms=0, emit_period_ms=0)
    rows = uc2_key_value(downsample(measurements(session, records), params)).collect()
    groups: dict[tuple[str, int], list[float]] = defaultdict(list)
    for sensor, ts, value in records:
        groups[(sensor, ts // 3_600_000 * 3_600_000)].append(value)
    got = {(r.key, json.loads(r.value)["windowStart"]): json.loads(r.value) for r in rows}
    assert set(got) == set(groups)
    for (sensor, start), values in groups.items():
        out = got[(sensor, start)]
        assert (out["identifier"], out["windowEnd"]) == (sensor, start + 3_600_000)
        assert_stats(out, numpy_stats(values))


def test_uc3_sliding_statistics_per_sensor_attribute_and_hopping_window(session: Any) -> None:
    records = random_records(2, 2, 3 * 86_400_000, 600)
    params = Uc3Params.from_mapping(
        {"windowSizeMs": 2 * 86_400_000, "advanceMs": 86_400_000 // 2, "timeAttribute": "dayOfWeek",
         "timeZone": "Europe/Berlin"}
    )
    rows = uc3_key_value(aggregate(measurements(session, records), params), params).collect()
    size, advance = params.window_size_ms, params.advance_ms
    groups: dict[tuple[str, int, int], list[float]] = defaultdict(list)
    for sensor, ts, value in records:
        attr = time_attribute_value(ts, "dayOfWeek", "Europe/Berlin")
        start = ts // advance * advance
        while start + size > ts:
            groups[(sensor, attr, start)].append(value)
            start -= advance
    got = {}
    for r in rows:
        out = json.loads(r.value)
        assert r.key == f"{out['identifier']};dayOfWeek={out['timeAttributeValue']}"
        assert out["timeAttribute"] == "dayOfWeek" and out["dayOfWeek"] == out["timeAttributeValue"]
        assert out["windowEnd"] - out["windowStart"] == size
        got[(out["identifier"], out["timeAttributeValue"], out["windowStart"])] = out
    assert set(got) == set(groups)
    for key, values in groups.items():
        assert_stats(got[key], numpy_stats(values))
