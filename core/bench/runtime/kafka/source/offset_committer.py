"""Committing what a query has read to the SUT's consumer group, so lag is measurable.

Neither this source nor Spark's own ``kafka`` connector commits offsets to a consumer
group; the lag sampler reads the group's committed offsets, so someone has to.
"""

from __future__ import annotations

import json
from typing import Any

from bench.runtime.kafka.source.client_conf import client_conf
from bench.runtime.kafka.source.offsets import parse_any_offset


class OffsetCommitter:
    """Commits each finished micro-batch's end offsets to the SUT consumer group.

    Called from a StreamingQueryListener's ``onQueryProgress`` (see
    :mod:`bench.runtime.spark.session`): unlike ``reader.commit()``, which Spark calls
    only when the next batch starts, progress arrives right after a batch finishes,
    so the committed offsets equal the end offsets when the query is idle.
    """

    def __init__(self) -> None:
        self._groups: dict[str, tuple[str, str]] = {}  # topic -> (bootstrap, group)
        self._clients: dict[tuple[str, str], Any] = {}

    def watch(self, topic: str, bootstrap: str, group_id: str) -> None:
        self._groups[topic] = (bootstrap, group_id)

    def commit_progress(self, source_end_offsets: list[str | None]) -> None:
        from confluent_kafka import TopicPartition

        for raw in source_end_offsets:
            if not raw:
                continue
            try:
                per_topic = parse_any_offset(json.loads(raw))
            except (ValueError, KeyError, TypeError, AttributeError):
                continue  # another kind of source
            for topic, offsets in per_topic.items():
                target = self._groups.get(topic)
                if target is None or not offsets:
                    continue
                client = self._clients.get(target)
                if client is None:
                    from confluent_kafka import Consumer

                    client = Consumer(client_conf(target[0], target[1]))
                    self._clients[target] = client
                client.commit(
                    offsets=[TopicPartition(topic, p, o) for p, o in sorted(offsets.items())],
                    asynchronous=False,
                )

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()
