"""What one Spark task of the source reads: offset ranges of Kafka partitions.

These objects are pickled on the driver and unpickled in Python workers, so they hold
plain values only (no Kafka client).
"""

from __future__ import annotations

from pyspark.sql.datasource import InputPartition

from bench.runtime.kafka.source.columns import SCHEMA


class KafkaRange(InputPartition):
    """One Kafka partition's offset range [start, end): one Spark task.

    ``columns``: the output columns, a subset of :data:`SCHEMA` in its order.
    """

    bootstrap: str
    topic: str
    partition: int
    start: int
    end: int
    columns: tuple[str, ...]

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        partition: int,
        start: int,
        end: int,
        columns: tuple[str, ...] = tuple(SCHEMA.fieldNames()),
    ) -> None:
        super().__init__((topic, partition, start, end))
        self.bootstrap = bootstrap
        self.topic = topic
        self.partition = partition
        self.start = start
        self.end = end
        self.columns = columns


class KafkaRanges(InputPartition):
    """Several partitions' ranges read one after another by one Spark task.

    Why: every Spark task of a Python source costs a round trip through a Python
    worker and an Arrow stream; with more Kafka partitions than task slots, one task
    per Kafka partition pays that many times per micro-batch for no parallelism
    (docs/performance.md, "Spark Kafka source"). ``tasks=N`` groups the ranges into N
    tasks of similar size.
    """

    ranges: list[KafkaRange]

    def __init__(self, ranges: list[KafkaRange]) -> None:
        super().__init__(tuple((r.partition, r.start, r.end) for r in ranges))
        self.ranges = ranges


def group_ranges(ranges: list[KafkaRange], tasks: int) -> list[KafkaRange | KafkaRanges]:
    """At most ``tasks`` groups, balanced by record count (largest range first into the
    lightest group); ``tasks <= 0`` or enough tasks: one task per range, as before."""
    if tasks <= 0 or len(ranges) <= tasks:
        return list(ranges)
    groups: list[list[KafkaRange]] = [[] for _ in range(tasks)]
    sizes = [0] * tasks
    for rng in sorted(ranges, key=lambda r: (-(r.end - r.start), r.partition)):
        i = sizes.index(min(sizes))
        groups[i].append(rng)
        sizes[i] += rng.end - rng.start
    return [KafkaRanges(sorted(g, key=lambda r: r.partition)) for g in groups if g]
