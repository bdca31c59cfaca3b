"""The options bench gives Spark's own Kafka source (without starting Spark)."""

from __future__ import annotations

from typing import Any

import pytest
from bench.runtime.spark.sut_query import NATIVE_FETCH_MAX_WAIT_MS, read_topic


class FakeReader:
    """Records the chain spark.readStream.format(...).option(...)...load()."""

    def __init__(self) -> None:
        self.source = ""
        self.given: dict[str, str] = {}

    def format(self, source: str) -> FakeReader:
        self.source = source
        return self

    def option(self, key: str, value: str) -> FakeReader:
        self.given[key] = value
        return self

    def options(self, **kw: str) -> FakeReader:
        self.given.update(kw)
        return self

    def load(self) -> FakeReader:
        return self

    def select(self, *cols: Any) -> FakeReader:
        return self


class FakeSpark:
    def __init__(self) -> None:
        self.readStream = FakeReader()


class FakeColumn:
    def cast(self, _type: str) -> FakeColumn:
        return self

    def alias(self, _name: str) -> FakeColumn:
        return self


def test_native_source_does_not_wait_half_a_second_per_read_task(monkeypatch: pytest.MonkeyPatch) -> None:
    from pyspark.sql import functions

    monkeypatch.setattr(functions, "col", lambda _name: FakeColumn())  # a Column needs a running JVM
    spark = FakeSpark()
    read_topic(spark, "localhost:9092", "input", connector="native", max_records_per_trigger=500)  # type: ignore[arg-type]
    opts = spark.readStream.given
    assert spark.readStream.source == "kafka"
    assert opts["kafka.fetch.max.wait.ms"] == str(NATIVE_FETCH_MAX_WAIT_MS)
    assert int(opts["kafka.fetch.max.wait.ms"]) < 500  # Kafka's default: the wait it removes
    assert opts["subscribe"] == "input" and opts["maxOffsetsPerTrigger"] == "500"
