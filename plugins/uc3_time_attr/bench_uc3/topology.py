"""The UC3 Spark query: statistics per (sensor, time attribute) over hopping windows.

Output mode is ``update`` with a trigger of ``emitPeriodMs`` (default 5 s): windows
last days, so UC3 emits early results periodically, as the reference does; each
trigger re-emits the current statistics of every window that received records.

Two window methods (``windowMethod``), so the window-method comparison can be run:

``sliding``
    Spark's native ``window(ts, size, advance)``: each record is expanded into the
    ``size / advance`` windows that contain it and each (window, key) aggregate is a
    row of Spark's state store. Work per record grows with the overlap.

``panes``
    Each record updates one pane (slice of ``gcd(size, advance)`` ms) and every
    updated window is recombined from its panes (``bench_uc3.panes``). Chaining two
    Spark aggregations (per pane, then per window) is not an option: PySpark 4.x
    allows several stateful operators in one query only in append mode (which would
    emit a window once, after it closes, days later, defeating the periodic early
    results of UC3). So the panes live in the state of one ``applyInPandasWithState``
    operator per (sensor, attribute value), which supports update mode. It uses no
    state timeout because Spark's event-time-timeout filter drops records by their
    timestamp, whereas the native method drops a (record, window) pair by the window's
    end; the same rule is applied in Python from the watermark, so both methods give
    identical statistics, late records included.

Dropped records: the native method's state operator counts ``numRowsDroppedByWatermark``
(rows after the map-side partial aggregation: per late (key, window) pair and batch,
so this is not a record count). The panes method drops the same records itself and
Spark's counter stays 0 for it: use the ``sliding`` method where the dropped-records
SLO matters. Panes of a key that receives no more records stay in state (no timeout);
in the benchmark every sensor keeps sending, so this is bounded.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from bench.api import StreamingPlan, TopologyContext, statistics_columns

from bench_uc3.params import Uc3Params
from bench_uc3.time_attr import time_attribute_column

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame

STAT_FIELDS = ("count", "sum", "min", "max", "mean", "populationVariance")
KEY_FIELDS = ("identifier", "attributeValue", "windowStart", "windowEnd")
OUTPUT_DDL = (
    "identifier string, attributeValue int, windowStart long, windowEnd long, count long, "
    "sum double, min double, max double, mean double, populationVariance double, latestEventTime long"
)
#: Panes as one float64 matrix (start, count, sum, min, max, M2 by row) in bytes: a
#: state schema with array columns fails to deserialize in PySpark 4.3's Python worker
#: (KeyError 'elementType'), and epoch milliseconds and counts are exact in float64.
STATE_DDL = "panes binary"


def with_attribute(measurements: DataFrame, params: Uc3Params) -> DataFrame:
    from pyspark.sql import functions as F

    return measurements.withWatermark("timestamp", f"{params.allowed_lateness_ms} milliseconds").withColumn(
        "attributeValue", time_attribute_column(F.col("timestamp"), params.time_attribute, params.time_zone)
    )



def sliding(keyed: DataFrame, params: Uc3Params) -> DataFrame:
    from pyspark.sql import functions as F

    window = F.window("timestamp", f"{params.window_size_ms} milliseconds", f"{params.advance_ms} milliseconds")
    return (
        keyed.groupBy(window.alias("w"), "identifier", "attributeValue")
        .agg(*statistics_columns(), F.max("timestamp").alias("latest"))
        .select(
            "identifier",
            "attributeValue",
            F.unix_millis(F.col("w.start")).alias("windowStart"),
            F.unix_millis(F.col("w.end")).alias("windowEnd"),
            *STAT_FIELDS,
            F.unix_millis(F.col("latest")).alias("latestEventTime"),
        )
    )


def latest_in_windows(ts_ms: Any, starts: Any, ends: Any) -> Any:
    """Per window [start, end): the newest of this batch's record times in it (epoch ms).

    An emitted window is one this batch updated, so it holds at least one of the batch's
    records; its early result exists because of them, and the latency SLI measures from the
    newest. (Records of earlier batches are older in processing; the pane state keeps no
    record times.) A window without one (cannot happen) gets ``end - 1``.
    """
    import numpy as np

    ts = np.sort(np.asarray(ts_ms, dtype=np.int64))
    ends = np.asarray(ends, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.int64)
    if not ts.size:
        return ends - 1
    idx = np.searchsorted(ts, ends, side="left") - 1
    found = ts[np.clip(idx, 0, ts.size - 1)]
    return np.where((idx >= 0) & (found >= starts), found, ends - 1)


def panes_update_function(params: Uc3Params) -> Any:
    """The per-key function of ``applyInPandasWithState`` (a closure over plain ints)."""
    size, advance, slice_ms = params.window_size_ms, params.advance_ms, params.slice_ms

    def update(key: tuple[Any, ...], batches: Iterator[pd.DataFrame], state: Any) -> Iterator[pd.DataFrame]:
        import numpy as np
        import pandas as pd

        from bench_uc3.panes import Panes, apply_batch, panes_from_bytes, panes_to_bytes

        frames = list(batches)
        if not frames:
            return
        data = pd.concat(frames) if len(frames) > 1 else frames[0]
        old = panes_from_bytes(state.get[0]) if state.exists else Panes.empty()
        result = apply_batch(
            old,
            data["tsMs"].to_numpy(np.int64),
            data["valueInW"].to_numpy(np.float64),
            int(state.getCurrentWatermarkMs()),
            size,
            advance,
            slice_ms,
        )
        if len(result.panes):
            state.update((panes_to_bytes(result.panes),))
        elif state.exists:
            state.remove()
        w = result.windows
        latest = latest_in_windows(data["tsMs"].to_numpy(np.int64), w.start, w.end)
        yield pd.DataFrame(
            {
                "identifier": [str(key[0])] * len(w.start),
                "attributeValue": np.full(len(w.start), int(key[1]), dtype=np.int32),
                "windowStart": w.start,
                "windowEnd": w.end,
                "count": w.count,
                "sum": w.sum,
                "min": w.min,
                "max": w.max,
                "mean": w.mean,
                "populationVariance": w.variance,
                "latestEventTime": latest,
            }
        )

    return update


def panes(keyed: DataFrame, params: Uc3Params) -> DataFrame:
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout

    # ``timestamp`` stays in the input: it carries the watermark that the function reads.
    rows = keyed.select("identifier", "attributeValue", "timestamp", F.unix_millis("timestamp").alias("tsMs"),
                        "valueInW")
    return rows.groupBy("identifier", "attributeValue").applyInPandasWithState(
        panes_update_function(params), OUTPUT_DDL, STATE_DDL, "Update", GroupStateTimeout.NoTimeout
    )


def aggregate(measurements: DataFrame, params: Uc3Params) -> DataFrame:
    """Windowed statistics with columns identifier, attributeValue, windowStart, windowEnd, stats."""
    keyed = with_attribute(measurements, params)
    return panes(keyed, params) if params.window_method == "panes" else sliding(keyed, params)


def to_key_value(stats: DataFrame, params: Uc3Params) -> DataFrame:
    """Key ``<sensor>;<attribute>=<value>``; value = JSON of the window's statistics."""
    from pyspark.sql import functions as F

    name = params.time_attribute
    key = F.concat_ws(";", F.col("identifier"), F.concat(F.lit(f"{name}="), F.col("attributeValue").cast("string")))
    value = F.to_json(
        F.struct(
            F.col("identifier"),
            F.lit(name).alias("timeAttribute"),
            F.col("attributeValue").alias("timeAttributeValue"),
            F.col("attributeValue").alias(name),  # e.g. "hourOfDay": 13, as the reference's records
            F.col("windowStart"),
            F.col("windowEnd"),
            *[F.col(f) for f in STAT_FIELDS],
            F.col("latestEventTime"),
        )
    )
    return stats.select(key.alias("key"), value.alias("value"))


def topology(ctx: TopologyContext) -> StreamingPlan:
    params = Uc3Params.from_mapping(ctx.params)
    stats = aggregate(ctx.read_measurements("input"), params)
    return StreamingPlan(df=to_key_value(stats, params), output_mode="update", trigger_seconds=params.trigger_seconds)
