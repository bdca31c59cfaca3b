"""The ``bench-kafka`` Spark data source and its stream reader (the driver side).

The reader plans each micro-batch on the driver: it probes the end offsets, caps them
at ``max_records_per_trigger`` and cuts the offset ranges into Spark tasks; the tasks
themselves run :func:`~bench.runtime.kafka.source.range_reader.read_range` in Python
workers. Spark pickles the reader and the ranges by module path, so these classes must
stay importable from the worker (they are, as part of the installed ``bench``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadLimit, ReadMaxRows
from pyspark.sql.types import StructType

from bench.runtime.kafka.source.columns import SCHEMA, output_columns
from bench.runtime.kafka.source.end_offset_probe import EndOffsetProbe
from bench.runtime.kafka.source.offsets import limit_ends, make_offset, parse_offset
from bench.runtime.kafka.source.range_reader import read_range
from bench.runtime.kafka.source.ranges import KafkaRange, KafkaRanges, group_ranges

SOURCE_NAME = "bench-kafka"


class KafkaStreamReader(DataSourceStreamReader):
    def __init__(self, options: Mapping[str, str], schema: StructType | None = None) -> None:
        self.columns = output_columns(schema)
        self.bootstrap = options["bootstrap"]
        self.topic = options["topic"]
        raw_max = options.get("max_records_per_trigger") or ""
        self.max_records = int(raw_max) if raw_max and raw_max.lower() != "none" else None
        self.starting = options.get("starting_offsets", "earliest")
        self.fail_on_data_loss = options.get("fail_on_data_loss", "true").lower() != "false"
        raw_tasks = options.get("tasks") or "0"
        try:
            self.tasks = int(raw_tasks)
        except ValueError:
            raise ValueError(f"bench-kafka option tasks={raw_tasks!r}: expected a whole number") from None
        self._probe: EndOffsetProbe | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_probe"] = None  # a Kafka client is not picklable; executors need none
        return state

    @property
    def probe(self) -> EndOffsetProbe:
        if self._probe is None:
            self._probe = EndOffsetProbe(self.bootstrap)
        return self._probe

    def initialOffset(self) -> dict:
        offsets = self.probe.offsets(self.topic)
        if self.starting == "latest":
            return make_offset(self.topic, {p: end for p, (_, end) in offsets.items()})
        return make_offset(self.topic, {p: low for p, (low, _) in offsets.items()})

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.max_records:
            return ReadMaxRows(self.max_records)
        return super().getDefaultReadLimit()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        _, begin = parse_offset(start)
        offsets = self.probe.offsets(self.topic)
        if not offsets:
            return start
        ends = {p: max(end, begin.get(p, low)) for p, (low, end) in offsets.items()}
        for p, v in begin.items():  # a partition never disappears from the offset
            ends.setdefault(p, v)
        if isinstance(limit, ReadMaxRows):
            ends = limit_ends(begin, ends, {p: low for p, (low, _) in offsets.items()}, limit.max_rows)
        return make_offset(self.topic, ends)

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        _, begin = parse_offset(start)
        _, stop = parse_offset(end)
        ranges = [
            KafkaRange(self.bootstrap, self.topic, p, begin.get(p, 0), stop[p], self.columns)
            for p in sorted(stop)
            if stop[p] > begin.get(p, 0)
        ]
        return list(group_ranges(ranges, self.tasks))

    def read(self, partition: InputPartition) -> Iterator[Any]:
        if isinstance(partition, KafkaRanges):
            return (batch for rng in partition.ranges for batch in read_range(rng, self.fail_on_data_loss))
        assert isinstance(partition, KafkaRange)
        return read_range(partition, self.fail_on_data_loss)

    def commit(self, end: dict) -> None:
        """Nothing: Spark calls this one batch late; the progress listener's
        :class:`~bench.runtime.kafka.source.offset_committer.OffsetCommitter` commits."""

    def stop(self) -> None:
        if self._probe is not None:
            self._probe.close()


class KafkaDataSource(DataSource):
    """``spark.readStream.format("bench-kafka")`` and ``writeStream.format("bench-kafka")``.

    Read options: ``bootstrap``, ``topic``, ``max_records_per_trigger``, ``tasks`` (Spark
    tasks per micro-batch; 0 = one per Kafka partition; see :class:`KafkaRanges`),
    ``starting_offsets`` (earliest | latest), ``fail_on_data_loss`` (true | false: raise
    :class:`~bench.runtime.kafka.source.range_reader.DataLossError` or skip when records
    of a range were deleted). Write options: see :mod:`bench.runtime.kafka.sink`.
    """

    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def schema(self) -> StructType:
        return SCHEMA

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return KafkaStreamReader(self.options, schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> Any:
        from bench.runtime.kafka.sink import KafkaStreamWriter

        return KafkaStreamWriter(self.options, schema)
