"""Windowed outputs carry their window's latest event time (``latestEventTime``), which the latency SLI reads."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import numpy as np
from bench.runtime.kafka.latency import event_time_ms
from bench_uc2.params import Uc2Params
from bench_uc2.topology import downsample
from bench_uc2.topology import to_key_value as uc2_key_value
from bench_uc3.params import Uc3Params
from bench_uc3.topology import aggregate, latest_in_windows
from bench_uc3.topology import to_key_value as uc3_key_value

from .test_uc23_spark import measurements, random_records


def test_latest_record_time_per_window_of_a_batch() -> None:
    ts = np.array([5, 12, 19, 30, 31], dtype=np.int64)
    starts = np.array([0, 10, 20, 30, 40])
    ends = starts + 10
    # [0,10): 5; [10,20): 19; [20,30): none -> end - 1; [30,40): 31; [40,50): none
    assert latest_in_windows(ts, starts, ends).tolist() == [5, 19, 29, 31, 49]
    assert latest_in_windows(np.array([], dtype=np.int64), starts[:1], ends[:1]).tolist() == [9]


def test_uc2_output_has_the_newest_record_time_of_its_window(spark: Any) -> None:
    records = random_records(3, 2, 3 * 3_600_000, 200)
    params = Uc2Params(window_size_ms=3_600_000, allowed_lateness_ms=0, emit_period_ms=0)
    rows = uc2_key_value(downsample(measurements(spark, records), params)).collect()
    newest: dict[tuple[str, int], int] = defaultdict(int)
    for sensor, ts, _ in records:
        key = (sensor, ts // 3_600_000 * 3_600_000)
        newest[key] = max(newest[key], ts)
    for row in rows:
        out = json.loads(row.value)
        assert out["latestEventTime"] == newest[(out["identifier"], out["windowStart"])]
        assert event_time_ms(row.value.encode()) == out["latestEventTime"]
        assert {"count", "sum", "min", "max", "mean", "populationVariance", "windowEnd"} <= set(out)


def test_uc3_sliding_output_has_the_newest_record_time_of_its_window(spark: Any) -> None:
    """(The panes method's times come from :func:`latest_in_windows`, tested above; it needs a stream.)"""
    records = random_records(4, 2, 2 * 86_400_000, 300)
    params = Uc3Params.from_mapping({"windowSizeMs": 86_400_000, "advanceMs": 43_200_000,
                                     "timeAttribute": "hourOfDay", "windowMethod": "sliding"})
    rows = uc3_key_value(aggregate(measurements(spark, records), params), params).collect()
    assert rows
    for row in rows:
        out = json.loads(row.value)
        start = out["windowStart"]
        in_window = [ts for s, ts, _ in records if s == out["identifier"] and start <= ts < start + 86_400_000]
        assert out["latestEventTime"] in in_window
