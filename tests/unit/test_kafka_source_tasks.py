"""Grouping Kafka partitions' ranges into fewer Spark tasks."""

from __future__ import annotations

from bench.runtime.kafka.source import KafkaRange, KafkaRanges, group_ranges


def _ranges(sizes: list[int]) -> list[KafkaRange]:
    return [KafkaRange("b:1", "t", p, 100, 100 + n) for p, n in enumerate(sizes)]


def _members(groups: list[KafkaRange | KafkaRanges]) -> list[list[int]]:
    return [[r.partition for r in g.ranges] if isinstance(g, KafkaRanges) else [g.partition] for g in groups]


def test_zero_tasks_or_enough_tasks_keep_one_task_per_partition() -> None:
    ranges = _ranges([5, 5, 5])
    assert group_ranges(ranges, 0) == ranges
    assert group_ranges(ranges, 3) == ranges
    assert group_ranges(ranges, 8) == ranges


def test_every_range_lands_in_exactly_one_group_balanced_by_size() -> None:
    ranges = _ranges([100, 10, 60, 50, 5])
    groups = group_ranges(ranges, 2)
    members = _members(groups)
    assert sorted(p for m in members for p in m) == [0, 1, 2, 3, 4]
    sizes = sorted(sum(r.end - r.start for r in g.ranges) for g in groups if isinstance(g, KafkaRanges))
    assert sizes == [110, 115]  # largest first into the lightest: 100+10+5 and 60+50


def test_one_task_reads_all_partitions_in_partition_order() -> None:
    groups = group_ranges(_ranges([3, 9, 1, 4]), 1)
    assert _members(groups) == [[0, 1, 2, 3]]
