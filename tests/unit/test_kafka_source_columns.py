"""Column pruning of the bench-kafka source: which columns a user-specified schema selects."""

from __future__ import annotations

import pytest
from bench.runtime.kafka.source import SCHEMA, output_columns, schema_of
from pyspark.sql.types import LongType, StringType, StructField, StructType


def test_no_schema_means_every_column() -> None:
    assert output_columns(None) == tuple(SCHEMA.fieldNames())


def test_requested_columns_come_in_schema_order() -> None:
    asked = StructType([StructField("offset", LongType()), StructField("value", StringType())])
    assert output_columns(asked) == ("value", "offset")
    assert schema_of(("value", "offset")).fieldNames() == ["value", "offset"]


def test_unknown_column_is_named() -> None:
    with pytest.raises(ValueError, match="no column 'payload'.*columns: key, value"):
        output_columns(StructType([StructField("payload", StringType())]))


def test_wrong_type_is_named() -> None:
    with pytest.raises(ValueError, match="column 'offset' is bigint, not string"):
        output_columns(StructType([StructField("offset", StringType())]))


def test_read_topic_rejects_unknown_columns_before_spark_is_touched() -> None:
    from bench.runtime.spark.sut_query import read_topic

    with pytest.raises(ValueError, match="unknown topic column.*'vlaue'"):
        read_topic(None, "localhost:1", "t", columns=("vlaue",))  # type: ignore[arg-type]
