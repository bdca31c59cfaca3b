"""The calibrated SUT stops between two slices of a fetch, not after the whole fetch.

A worker that is behind fetches seconds of records at once and paces through them;
finishing them after SIGTERM overran the platform's 5-s stop grace, so every stop of
an overloaded calibrated SUT cost the whole grace and a kill. The clock is faked: no
test here waits for real time.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest
from aiokafka import TopicPartition
from bench.runtime.calibrated_sut import SLICE_S, Worker

TP = TopicPartition("input", 0)
CAPACITY = 1000.0
FETCHED = 10_000  # ten seconds of work at capacity


@dataclass
class Record:
    offset: int


class FakeConsumer:
    def __init__(self) -> None:
        self.commits: list[dict[TopicPartition, int]] = []
        self.fetches = 0

    async def getmany(self, timeout_ms: int = 0) -> dict[TopicPartition, list[Record]]:
        self.fetches += 1
        return {TP: [Record(i) for i in range(FETCHED)]} if self.fetches == 1 else {}

    def assignment(self) -> set[TopicPartition]:
        return {TP}

    async def commit(self, offsets: dict[TopicPartition, int]) -> None:
        self.commits.append(dict(offsets))


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [1000.0]
    yield_once = asyncio.sleep  # the module's asyncio is everyone's: keep the real one

    async def fake_sleep(seconds: float) -> None:
        now[0] += seconds
        await yield_once(0)

    monkeypatch.setattr("bench.runtime.calibrated_sut.time.monotonic", lambda: now[0])
    monkeypatch.setattr("bench.runtime.calibrated_sut.asyncio.sleep", fake_sleep)
    return now


async def _step(stop_after_s: float | None, clock: list[float]) -> tuple[Worker, FakeConsumer]:
    consumer = FakeConsumer()
    worker = Worker(consumer, CAPACITY)  # type: ignore[arg-type]
    stop = asyncio.Event()
    worker.stopping = stop
    start = clock[0]
    real_take = worker.pacer.take

    async def take(n: int) -> Any:
        if stop_after_s is not None and clock[0] - start >= stop_after_s:
            stop.set()  # SIGTERM arrives while the worker is pacing through its fetch
        await real_take(n)

    worker.pacer.take = take  # type: ignore[method-assign]
    await worker.step()
    await worker.commit()
    return worker, consumer


async def test_a_stop_ends_the_fetch_between_two_slices(clock: list[float]) -> None:
    worker, consumer = await _step(stop_after_s=2.0, clock=clock)
    # about two seconds' worth processed (within a slice and the pacer's burst), not ten
    assert 2 * CAPACITY <= worker.processed <= 3.5 * CAPACITY
    assert worker.processed % int(CAPACITY * SLICE_S) == 0
    assert consumer.commits[-1] == {TP: worker.processed}  # exactly what was processed


async def test_without_a_stop_the_whole_fetch_is_processed(clock: list[float]) -> None:
    worker, consumer = await _step(stop_after_s=None, clock=clock)
    assert worker.processed == FETCHED
    assert consumer.commits[-1] == {TP: FETCHED}
