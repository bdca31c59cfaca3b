"""The UC4 query: registry join, duplication to parents, per-group tumbling windows.

Design (why, not what):

* Registry join = a stateful operator (``applyInPandasWithState``) keyed by a bucket
  of sensors (a hash of the child's name). Each registry event is exploded into one
  row per child (its parent list) and unioned with the measurements; the operator
  keeps each child's parents in its bucket's state and duplicates each measurement
  to them. A new registry event therefore takes
  effect in the micro-batch in which it arrives, without restarting the query, and
  the registry is partitioned like the data (no driver-side copy, no broadcast
  of a tree with 4^n leaves per batch). Within a batch the newest registry row
  (Kafka timestamp, then offset) of a child is applied before its measurements:
  "latest config event wins" in processing order, which is robust to generators
  whose record timestamps precede the registry event. ``transformWithStateInPandas``
  would also fit but needs the RocksDB state store; ``applyInPandasWithState`` runs
  on the default one. The operator uses no timeout, so it drops no late rows itself.
* Windows: the watermark is defined after the join (grace period), so the windowed
  aggregation is the only operator that decides lateness, by window end. Per
  (window, group) the records are collected and reduced to the latest value of each
  child (count = children seen, sum, mean, min, max), emitted in append mode once
  the watermark passes the window end.
* Feedback: group results are written to ``aggregation-feedback`` with timestamp =
  window end, read back as measurements of the group and duplicated to its parent,
  so a group at height h aggregates leaf values of window W - (h - 1) in window W,
  as in the reference's Kafka Streams UC4. When the query falls behind by more
  than a window per batch, fed-back results arrive after their window closed and
  are counted in ``numRowsDroppedByWatermark`` (the dropped-records SLO sees it).
* Without feedback (the 2023 study's variant) each leaf goes to all its ancestors
  directly; every group's window W then holds the leaf values of W itself.
* Registry limitation: a sensor that disappears from the registry keeps its last
  parents (there is no per-child event for it); moves and additions are exact.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from bench.api import StreamingPlan, TopologyContext

from bench_uc4 import registry
from bench_uc4.params import flag, millis

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame

UNION_SCHEMA = "child string, kind int, ts timestamp, value double, parents string, reg_ts long, reg_offset long"
DUPLICATED_SCHEMA = "grp string, child string, ts timestamp, value double"
STATE_SCHEMA = "registry string"
KIND_REGISTRY = 0
KIND_MEASUREMENT = 1
FEEDBACK_SCHEMA = "identifier string, timestamp long, sumInW double"


def explode_registry(frames: Iterator[pd.DataFrame], feedback: bool) -> Iterator[pd.DataFrame]:
    """Registry events (raw Kafka rows) -> one row per child with its parents as JSON.

    Malformed events are skipped: a bad configuration event must not stop the query.
    """
    import pandas as pd

    for frame in frames:
        rows: list[dict[str, Any]] = []
        for value, ts, offset in zip(frame["value"], frame["timestamp"], frame["offset"], strict=True):
            if value is None:
                continue
            try:
                tree = registry.parse(value)
            except (ValueError, TypeError):
                continue
            reg_ts = int(pd.Timestamp(ts).value // 1_000_000) if ts is not None else 0
            for child, parents in registry.parents_of(tree, feedback).items():
                rows.append(
                    {
                        "child": child,
                        "kind": KIND_REGISTRY,
                        "ts": ts,
                        "value": None,
                        "parents": json.dumps(parents),
                        "reg_ts": reg_ts,
                        "reg_offset": int(offset),
                    }
                )
        yield pd.DataFrame(rows, columns=["child", "kind", "ts", "value", "parents", "reg_ts", "reg_offset"])


def _no_rows() -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame({"grp": pd.Series([], dtype=object), "child": pd.Series([], dtype=object),
                         "ts": pd.Series([], dtype="datetime64[ns]"), "value": pd.Series([], dtype=float)})


def duplicate_to_parents(key: tuple[int], frames: Iterator[pd.DataFrame], state: Any) -> Iterator[pd.DataFrame]:
    """Per bucket of children: apply each child's newest registry row, then send its
    measurements to each of its parents.

    The state is one JSON map per bucket (child -> [parents, reg_ts, reg_offset]), not
    one row per child: ``applyInPandasWithState`` costs several ms of Spark's own work
    per group and batch, which at 1,365 children (5 levels) took 15-20 s of a 25-s batch
    on half a core; a few buckets per task slot cost a few calls. The map is
    written back only when a registry row changed it.
    """
    import pandas as pd

    chunks = [f for f in frames if len(f)]
    if not chunks:
        yield _no_rows()
        return
    if len(chunks) == 1:
        frame = chunks[0]
    else:
        with warnings.catch_warnings():  # all-NA columns (value of registry rows) are expected
            warnings.simplefilter("ignore", FutureWarning)
            frame = pd.concat(chunks, ignore_index=True)
    known: dict[str, list[Any]] = json.loads(state.get[0]) if state.exists else {}
    kind = frame["kind"].to_numpy()
    is_registry = kind == KIND_REGISTRY
    if is_registry.any():
        rows = frame.loc[is_registry, ["child", "parents", "reg_ts", "reg_offset"]].astype(
            {"reg_ts": "int64", "reg_offset": "int64"})
        # latest timestamp, then offset, per child (the newest row of the batch wins)
        newest = rows.sort_values(["child", "reg_ts", "reg_offset"]).drop_duplicates("child", keep="last")
        changed = False
        for child, parents, reg_ts, reg_offset in zip(newest["child"], newest["parents"], newest["reg_ts"],
                                                      newest["reg_offset"], strict=True):
            current = known.get(child)
            if current is None or (int(reg_ts), int(reg_offset)) >= (current[1], current[2]):
                known[child] = [json.loads(parents), int(reg_ts), int(reg_offset)]
                changed = True
        if changed:
            state.update((json.dumps(known),))
    measurements = frame.loc[kind == KIND_MEASUREMENT, ["child", "ts", "value"]]
    pairs = [(child, parent) for child in measurements["child"].unique() if child in known
             for parent in known[child][0]]
    if not pairs:
        yield _no_rows()
        return
    out = measurements.merge(pd.DataFrame(pairs, columns=["child", "grp"]), on="child", how="inner")
    yield out[["grp", "child", "ts", "value"]]


def buckets_for(partitions: int) -> int:
    """Buckets of children for the registry join: several per task slot, so that
    hashing them to partitions is unlikely to leave a slot without one (not measured
    beyond 3 slots), and few enough that Spark's per-group cost stays small."""
    return max(8, 4 * max(1, partitions))


def _measurement_rows(df: DataFrame) -> DataFrame:
    from pyspark.sql import functions as F

    return df.select(
        F.col("identifier").alias("child"),
        F.lit(KIND_MEASUREMENT).alias("kind"),
        F.col("timestamp").alias("ts"),
        F.col("valueInW").cast("double").alias("value"),
        F.lit(None).cast("string").alias("parents"),
        F.lit(None).cast("long").alias("reg_ts"),
        F.lit(None).cast("long").alias("reg_offset"),
    )


def _feedback_rows(raw: DataFrame) -> DataFrame:
    from pyspark.sql import functions as F

    parsed = raw.select(F.from_json(F.col("value"), FEEDBACK_SCHEMA).alias("r")).where(
        F.col("r.identifier").isNotNull() & F.col("r.timestamp").isNotNull() & F.col("r.sumInW").isNotNull()
    )
    return parsed.select(
        F.col("r.identifier").alias("identifier"),
        F.timestamp_millis(F.col("r.timestamp")).alias("timestamp"),
        F.col("r.sumInW").alias("valueInW"),
    )


def _registry_rows(raw: DataFrame, feedback: bool) -> DataFrame:
    def explode(frames: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        return explode_registry(frames, feedback)

    return raw.select("value", "timestamp", "offset").mapInPandas(explode, UNION_SCHEMA)


def aggregate_windows(duplicated: DataFrame, window_ms: int, grace_ms: int) -> DataFrame:
    """Per (tumbling window, group): latest value of each child, then sum/count/mean/min/max.

    ``latestEventTime``: the newest record time in the window (epoch ms), from which the
    latency SLI measures (``timestamp`` is the window end, later than any record in it).
    """
    from pyspark.sql import functions as F

    windowed = (
        duplicated.withWatermark("ts", f"{grace_ms} milliseconds")
        .groupBy(F.window("ts", f"{window_ms} milliseconds"), F.col("grp"))
        .agg(F.collect_list(F.struct("child", "ts", "value")).alias("recs"), F.max("ts").alias("newest_ts"))
    )
    newest_first = F.expr(
        "array_sort(recs, (l, r) -> CASE WHEN l.child < r.child THEN -1 WHEN l.child > r.child THEN 1"
        " WHEN l.ts > r.ts THEN -1 WHEN l.ts < r.ts THEN 1 ELSE 0 END)"
    )
    latest = F.expr("filter(sorted, (x, i) -> i = 0 OR sorted[i - 1].child != x.child)")
    values = F.expr("transform(latest, x -> x.value)")
    total = F.expr("aggregate(latest, CAST(0 AS DOUBLE), (acc, x) -> acc + x.value)")
    return (
        windowed.withColumn("sorted", newest_first)
        .withColumn("latest", latest)
        .select(
            F.col("grp").alias("identifier"),
            F.unix_millis(F.col("window.start")).alias("windowStart"),
            F.unix_millis(F.col("window.end")).alias("timestamp"),
            F.size("latest").cast("long").alias("count"),
            total.alias("sumInW"),
            F.array_min(values).alias("minInW"),
            F.array_max(values).alias("maxInW"),
            F.unix_millis(F.col("newest_ts")).alias("latestEventTime"),
        )
        .withColumn("averageInW", F.col("sumInW") / F.col("count"))
    )


def build(ctx: TopologyContext) -> StreamingPlan:
    from pyspark.sql import functions as F

    feedback = flag(ctx.params.get("feedback", True))
    window_ms = millis(ctx.params, "windowSizeMs")
    grace_ms = millis(ctx.params, "gracePeriodMs")

    measurements = _measurement_rows(ctx.read_measurements("input"))
    if feedback:
        measurements = measurements.unionByName(
            _measurement_rows(_feedback_rows(ctx.read_topic("aggregation-feedback")))
        )
    union = measurements.unionByName(_registry_rows(ctx.read_topic("configuration"), feedback))
    buckets = buckets_for(int(ctx.spark.conf.get("spark.sql.shuffle.partitions") or 1))
    bucketed = union.withColumn("bucket", F.pmod(F.hash("child"), F.lit(buckets)))
    duplicated = bucketed.groupBy("bucket").applyInPandasWithState(
        duplicate_to_parents, DUPLICATED_SCHEMA, STATE_SCHEMA, "append", "NoTimeout"
    )
    results = aggregate_windows(duplicated, window_ms, grace_ms)
    out = results.select(
        F.col("identifier").alias("key"),
        F.to_json(
            F.struct("identifier", "timestamp", "windowStart", "count", "sumInW", "averageInW", "minInW", "maxInW",
                     "latestEventTime")
        ).alias("value"),
    )
    if feedback:
        out = out.withColumn("topic", F.explode(F.array(F.lit("output"), F.lit("aggregation-feedback"))))
    trigger = ctx.params.get("triggerSeconds")
    return StreamingPlan(df=out, trigger_seconds=float(trigger) if trigger is not None else None)
