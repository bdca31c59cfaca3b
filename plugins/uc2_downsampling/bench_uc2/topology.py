"""The UC2 Spark query: per-sensor tumbling event-time windows with statistics.

Output mode is ``append``: a tumbling window is final once the watermark passes its
end, so append emits exactly one record per (sensor, window), which is what a
downsampling pipeline stores, and it lets Spark evict each window's state as soon as
it is emitted. ``update`` would re-emit a growing partial result every trigger and
multiply the output volume by (window size / trigger interval) without adding
information. The price of append is latency: a window appears ``allowedLatenessMs``
after its end (plus one trigger).

Records older than the watermark (max event time seen minus ``allowedLatenessMs``)
for a window that has already closed are dropped by Spark's state operator and
counted in ``numRowsDroppedByWatermark``, the SLI of the dropped-records SLO. Spark
counts the rows reaching the state operator, i.e. after the partial (map-side)
aggregation: several late records of one sensor and one window within one
micro-batch count as one row. The SLI is thus a lower bound on dropped records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bench.api import StreamingPlan, TopologyContext, statistics_columns

from bench_uc2.params import Uc2Params

if TYPE_CHECKING:
    from pyspark.sql import DataFrame



STAT_FIELDS = ("count", "sum", "min", "max", "mean", "populationVariance")


def downsample(measurements: DataFrame, params: Uc2Params) -> DataFrame:
    """Windowed statistics per sensor with columns identifier, windowStart, windowEnd, stats, latestEventTime.

    ``latestEventTime`` (epoch ms) is the newest record time in the window: the earliest
    moment its result could exist, from which the latency SLI measures (bench.runtime.kafka.latency).
    """
    from pyspark.sql import functions as F

    windowed = (
        measurements.withWatermark("timestamp", f"{params.allowed_lateness_ms} milliseconds")
        .groupBy(F.window("timestamp", f"{params.window_size_ms} milliseconds").alias("w"), "identifier")
        .agg(*statistics_columns(), F.max("timestamp").alias("latest"))
    )
    return windowed.select(
        "identifier",
        F.unix_millis(F.col("w.start")).alias("windowStart"),
        F.unix_millis(F.col("w.end")).alias("windowEnd"),
        *STAT_FIELDS,
        F.unix_millis(F.col("latest")).alias("latestEventTime"),
    )


def to_key_value(stats: DataFrame) -> DataFrame:
    """Key = sensor id (so a sensor's windows stay in one partition), value = JSON."""
    from pyspark.sql import functions as F

    fields = ["identifier", "windowStart", "windowEnd", *STAT_FIELDS, "latestEventTime"]
    return stats.select(
        F.col("identifier").alias("key"),
        F.to_json(F.struct(*[F.col(f) for f in fields])).alias("value"),
    )


def topology(ctx: TopologyContext) -> StreamingPlan:
    params = Uc2Params.from_mapping(ctx.params)
    stats = downsample(ctx.read_measurements("input"), params)
    return StreamingPlan(df=to_key_value(stats), output_mode="append", trigger_seconds=params.trigger_seconds)
