"""The bench-kafka source and sink on the real broker and a real SparkSession."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from bench.api import StreamingPlan, TopologyContext, UseCase
from bench.testing import run_topology

pytestmark = pytest.mark.e2e


def _bench() -> dict:
    return {"kafkaConfig": {"topics": [{"name": "input", "numPartitions": 3}, {"name": "output", "numPartitions": 2}]}}


def _raw_copy(ctx: TopologyContext) -> StreamingPlan:
    from pyspark.sql import functions as F

    raw = ctx.read_topic("input")
    value = F.concat_ws("|", F.col("value"), F.col("partition").cast("string"), F.col("offset").cast("string"))
    return StreamingPlan(raw.select("key", value.alias("value")))


def _parsed_copy(ctx: TopologyContext) -> StreamingPlan:
    from pyspark.sql import functions as F

    rec = ctx.read_measurements("input")
    value = F.to_json(F.struct(F.col("identifier"), F.unix_millis("timestamp").alias("ts"), F.col("valueInW")))
    return StreamingPlan(rec.select(F.col("identifier").alias("key"), value.alias("value")))


def _record(i: int) -> tuple[str, str, int]:
    key = f"s_{i % 7}"
    return key, json.dumps({"identifier": key, "timestamp": 1000 * i, "valueInW": float(i)}), 1000 * i


def test_every_record_once_and_offsets_committed(kafka_bootstrap: str, spark: object) -> None:
    uc = UseCase("raw-copy", "test", _bench, topology=_raw_copy)
    records = [_record(i) for i in range(900)]
    result = run_topology(
        uc,
        [{"input": records[:600]}, {"input": records[600:]}],
        bootstrap_servers=kafka_bootstrap,
        spark=spark,
        max_records_per_trigger=250,
    )
    sources = Counter(tuple(r["value"].rsplit("|", 2)[1:]) for r in result)
    assert sum(sources.values()) == 900
    assert all(n == 1 for n in sources.values()), "a Kafka record was read twice"
    assert sorted(r["value"].split("|")[0] for r in result) == sorted(v for _, v, _ in records)
    assert len([p for p in result.progress if p["numInputRows"]]) >= 4  # the limit split the input
    assert max(p["numInputRows"] for p in result.progress) <= 250
    assert result.committed["input"] == result.end_offsets["input"]
    assert sum(result.end_offsets["input"].values()) == 900


def test_malformed_records_counted_and_skipped(kafka_bootstrap: str, spark: object) -> None:
    uc = UseCase("parsed-copy", "test", _bench, topology=_parsed_copy)
    good = [_record(i) for i in range(40)]
    bad = [
        ("x", "not json", 1),
        ("x", '{"identifier": "s_1", "timestamp": 5}', 2),  # no valueInW
        ("x", '{"identifier": "s_1", "timestamp": "soon", "valueInW": 1.0}', 3),
        ("x", None, 4),
        ("x", "\udcff".encode("utf-8", "surrogatepass").decode("latin-1"), 5),
    ]
    result = run_topology(
        uc,
        [{"input": good[:20] + bad}, {"input": good[20:]}],  # the query must survive step 1
        bootstrap_servers=kafka_bootstrap,
        spark=spark,
    )
    assert result.malformed == len(bad)
    assert len(result) == len(good)
    docs = sorted((json.loads(r["value"])["ts"], r["key"]) for r in result)
    assert docs == sorted((ts, k) for k, _, ts in good)
    assert result.committed["input"] == result.end_offsets["input"]
