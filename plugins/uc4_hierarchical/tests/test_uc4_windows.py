"""UC4's window aggregation on a static DataFrame (the shared local SparkSession): the
latest value per child counts, and latestEventTime is the newest record of the window.
Marked e2e because it starts (or shares) a real Spark session."""

from __future__ import annotations

from typing import Any

import pytest
from bench_uc4.topology import aggregate_windows

pytestmark = pytest.mark.e2e

T0 = 1_700_000_000_000


def test_window_sums_latest_values_and_reports_the_newest_record_time(spark: Any) -> None:
    from pyspark.sql import functions as F

    rows = [("g", "s_0", T0 + 1000, -5.0), ("g", "s_0", T0 + 3000, 10.0), ("g", "s_1", T0 + 2000, 7.0)]
    raw = spark.createDataFrame(rows, "grp string, child string, ms long, value double")
    duplicated = raw.select("grp", "child", F.timestamp_millis("ms").alias("ts"), "value")
    (out,) = aggregate_windows(duplicated, 5000, 5000).collect()
    assert (out["identifier"], out["count"], out["sumInW"]) == ("g", 2, 17.0)
    assert (out["minInW"], out["maxInW"], out["averageInW"]) == (7.0, 10.0, 8.5)
    assert (out["windowStart"], out["timestamp"], out["latestEventTime"]) == (T0, T0 + 5000, T0 + 3000)
