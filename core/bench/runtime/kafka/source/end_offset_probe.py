"""Where each partition of a topic begins and ends, as the driver plans micro-batches.

End offsets are read from Fetch high watermarks, not from ListOffsets, because tansu
answers ListOffsets(latest) with the start of the last batch.
"""

from __future__ import annotations

import time
from typing import Any

from bench.runtime.kafka.source.client_conf import client_conf


class EndOffsetProbe:
    """Reads (low, end) offsets of a topic's partitions from Fetch high watermarks.

    ListOffsets(latest) only positions the probe inside the last producer batch; one
    short fetch from there returns that batch and the true high watermark. The probe
    unassigns afterwards so it does not prefetch (and so re-read) the whole topic.
    """

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self._consumer: Any = None
        self._known: dict[tuple[str, int], int] = {}

    def _client(self) -> Any:
        if self._consumer is None:
            from confluent_kafka import Consumer

            self._consumer = Consumer(client_conf(self.bootstrap, "bench-probe"))
        return self._consumer

    def partitions(self, topic: str, timeout: float = 5.0) -> list[int]:
        """Partition ids now; a brand-new topic may have none yet (never cached)."""
        md = self._client().list_topics(topic, timeout=timeout)
        meta = md.topics.get(topic)
        if meta is None or meta.error is not None:
            return []
        return sorted(meta.partitions)

    def offsets(self, topic: str, timeout: float = 10.0) -> dict[int, tuple[int, int]]:
        from confluent_kafka import KafkaError, TopicPartition

        c = self._client()
        parts = self.partitions(topic)
        if not parts:
            return {}
        result: dict[int, tuple[int, int]] = {}
        positions: dict[int, int] = {}
        for p in parts:
            low, listed = c.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout, cached=False)
            low = max(0, low)
            positions[p] = max(low, listed - 1, self._known.get((topic, p), 0) - 1)
            result[p] = (low, max(low, listed))
        c.assign([TopicPartition(topic, p, positions[p]) for p in parts])
        pending = set(parts)
        seen_end: dict[int, int] = {}
        deadline = time.monotonic() + timeout
        try:
            while pending and time.monotonic() < deadline:
                for msg in c.consume(num_messages=1000, timeout=0.05):
                    p = msg.partition()
                    err = msg.error()
                    if err is not None:
                        if err.code() == KafkaError._PARTITION_EOF:
                            pending.discard(p)
                            seen_end[p] = max(seen_end.get(p, 0), msg.offset())
                        continue
                    seen_end[p] = max(seen_end.get(p, 0), msg.offset() + 1)
                    if msg.offset() >= positions[p]:
                        pending.discard(p)
            for p in parts:
                _, high = c.get_watermark_offsets(TopicPartition(topic, p), cached=True)
                low, listed = result[p]
                end = max(listed, high, seen_end.get(p, 0), self._known.get((topic, p), 0))
                self._known[(topic, p)] = end
                result[p] = (low, end)
        finally:
            c.unassign()
        return result

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None
