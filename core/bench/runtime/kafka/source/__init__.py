"""A Kafka streaming source for Spark written as a Python data source ("bench-kafka").

Why: the Spark Kafka connector JARs are not installable from PyPI, and Spark's own
connector commits no offsets to a consumer group, so consumer lag (the main SLI of the
method) could not be measured. This source reads Kafka partitions by offset range with
confluent-kafka (a synchronous client that works inside executor tasks), and an
offset committer commits the end offsets of every finished micro-batch to the SUT's
consumer group.

One concept per module; this package re-exports their public names, so importers say
``from bench.runtime.kafka.source import ...``:

- :mod:`.columns`: the row schema and column pruning;
- :mod:`.client_conf`: the confluent-kafka settings every client starts from;
- :mod:`.end_offset_probe`: each partition's (low, end) offsets, for planning;
- :mod:`.offsets`: the offset JSON and the per-trigger record budget;
- :mod:`.ranges`: the offset ranges one Spark task reads;
- :mod:`.data_source`: the Spark ``DataSource`` and its stream reader (driver side);
- :mod:`.range_reader`: reading one range in a Python worker, and ``DataLossError``;
- :mod:`.arrow_batches`: records to Arrow record batches;
- :mod:`.worker_heap`: keeping a reused worker's garbage collections short;
- :mod:`.offset_committer`: committing read offsets to the SUT's consumer group.
"""

from __future__ import annotations

from bench.runtime.kafka.source.arrow_batches import ARROW_ROWS
from bench.runtime.kafka.source.columns import SCHEMA, output_columns, schema_of, select_columns
from bench.runtime.kafka.source.data_source import SOURCE_NAME, KafkaDataSource, KafkaStreamReader
from bench.runtime.kafka.source.end_offset_probe import EndOffsetProbe
from bench.runtime.kafka.source.offset_committer import OffsetCommitter
from bench.runtime.kafka.source.offsets import make_offset, parse_any_offset, parse_offset
from bench.runtime.kafka.source.range_reader import DataLossError, close_readers, read_range
from bench.runtime.kafka.source.ranges import KafkaRange, KafkaRanges, group_ranges
from bench.runtime.kafka.source.worker_heap import freeze_worker_heap

#: the former private name, read by tests/e2e/test_spark_source.py
_ARROW_ROWS = ARROW_ROWS

__all__ = [
    "ARROW_ROWS",
    "SCHEMA",
    "SOURCE_NAME",
    "DataLossError",
    "EndOffsetProbe",
    "KafkaDataSource",
    "KafkaRange",
    "KafkaRanges",
    "KafkaStreamReader",
    "OffsetCommitter",
    "close_readers",
    "freeze_worker_heap",
    "group_ranges",
    "make_offset",
    "output_columns",
    "parse_any_offset",
    "parse_offset",
    "read_range",
    "schema_of",
    "select_columns",
]
