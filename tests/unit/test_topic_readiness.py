"""A new topic is ready when every broker of a cluster knows it, not the first one asked."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from bench.runtime.kafka import admin as topic_admin


class _Response:
    def __init__(self, topics: list[dict[str, Any]]) -> None:
        self._topics = topics

    def to_object(self) -> dict[str, Any]:
        return {"topics": self._topics}


class _Admin:
    """Broker 2 learns the topic only after three requests to it; broker 1 knows it at once."""

    def __init__(self, late_broker_after: int = 3) -> None:
        self._client = SimpleNamespace(cluster=SimpleNamespace(
            brokers=lambda: [SimpleNamespace(nodeId=2), SimpleNamespace(nodeId=1)]))
        self.asked: list[int | None] = []
        self.late_after = late_broker_after

    async def _send_request(self, request: Any, node: int | None) -> _Response:
        self.asked.append(node)
        known = node != 2 or self.asked.count(2) > self.late_after
        if known:
            return _Response([{"topic": "t", "error_code": 0, "partitions": [{}, {}]}])
        return _Response([{"topic": "t", "error_code": 3, "partitions": []}])


def test_waits_until_the_late_broker_knows_the_topic() -> None:
    admin = _Admin()
    asyncio.run(topic_admin._wait_for_partitions(admin, {"t": 2}, timeout=5))  # type: ignore[arg-type]
    assert admin.asked.count(2) == 4  # three "unknown" answers, then ready
    assert set(admin.asked) == {1, 2}


def test_a_broker_that_never_learns_it_is_an_error_naming_the_topic() -> None:
    admin = _Admin(late_broker_after=10**6)
    with pytest.raises(RuntimeError, match=r"\['t'\].*every broker"):
        asyncio.run(topic_admin._wait_for_partitions(admin, {"t": 2}, timeout=0.3))  # type: ignore[arg-type]


def test_unknown_brokers_fall_back_to_any_one() -> None:
    admin = _Admin()
    admin._client = SimpleNamespace()  # no cluster metadata
    assert topic_admin._broker_ids(admin) == [None]  # type: ignore[arg-type]


def test_a_broker_that_cannot_be_asked_does_not_hold_the_wait_up() -> None:
    admin = _Admin(late_broker_after=10**6)

    async def dead_broker_2(request: Any, node: int | None) -> _Response:
        if node == 2:
            raise ConnectionError("broker 2 is gone")
        return _Response([{"topic": "t", "error_code": 0, "partitions": [{}, {}]}])

    admin._send_request = dead_broker_2  # type: ignore[method-assign]
    asyncio.run(topic_admin._wait_for_partitions(admin, {"t": 2}, timeout=0.3))  # type: ignore[arg-type]
