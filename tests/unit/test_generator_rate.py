"""The generator's achieved rate is the schedule's, not the time its last batches took to hand over.

Why: the check that a generator delivered its load (``MAX_GENERATOR_SHORTFALL``, 1 %)
failed a generator on schedule three times in a row on a busy CI machine ("achieved 99
of 100 records/s"): the last batches wait for the ones before them on their partition,
and that wait was counted as time the schedule ran. A generator that falls behind must
still report its shortfall.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from bench.api import GeneratorControl, GeneratorSpec
from bench.generator_contract import set_generator_control
from bench.runtime.load import generator


class _Batch:
    def __init__(self, size: int) -> None:
        self._relative_offset = 0
        self._builder = self
        self.n, self.size = 0, size  # records it holds: each full batch is one wait in send_batch

    def append(self, *args: Any, **kwargs: Any) -> object | None:
        if self.n == self.size:
            return None
        self.n += 1
        return True

    def close(self) -> None:
        pass


def _producer(send_delay: float, batch_size: int) -> type:
    class Producer:
        def __init__(self, **kwargs: Any) -> None:
            pass

        async def start(self) -> None:
            pass

        async def stop(self) -> None:
            pass

        async def partitions_for(self, topic: str) -> set[int]:
            return {0, 1}

        def create_batch(self) -> _Batch:
            return _Batch(batch_size)

        async def send_batch(self, batch: _Batch, topic: str, partition: int) -> asyncio.Future[None]:
            await asyncio.sleep(send_delay)  # waits for the batch before it, as aiokafka's does
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            done.set_result(None)
            return done

    return Producer


async def _run(monkeypatch: pytest.MonkeyPatch, keys: int, period_ms: float, send_delay: float,
               stop_after: float, batch_size: int) -> generator.GeneratorReport:
    monkeypatch.setattr(generator, "AIOKafkaProducer", _producer(send_delay, batch_size))
    control = GeneratorControl()
    set_generator_control(control)
    spec = GeneratorSpec("127.0.0.1:9", "input", [f"s_{i}" for i in range(keys)], period_ms, None, {"seed": 3}, {})
    asyncio.get_running_loop().call_later(stop_after, control.stop.set)
    return await generator.run_open_workload(spec, lambda key: generator.record_template(f'"{key}"', 1.0))


async def test_a_generator_on_schedule_reports_its_target_though_its_last_batches_wait(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # 2,000 records/s for 1.5 s; handing over the last two batches takes 0.2 s, which
    # counted as schedule time read about 12 % short
    report = await _run(monkeypatch, keys=1000, period_ms=500.0, send_delay=0.1, stop_after=1.5,
                        batch_size=1_000_000)
    assert report.target_rate == pytest.approx(2000.0)
    assert report.achieved_rate == pytest.approx(2000.0, rel=0.01), report
    assert report.seconds == pytest.approx(1.5, abs=0.3), report


async def test_a_generator_behind_its_schedule_still_reports_its_shortfall(monkeypatch: pytest.MonkeyPatch) -> None:
    # 100,000 records/s through batches of 100 that take 10 ms each to hand over: at
    # most 10,000 records/s get out, and the report says so
    report = await _run(monkeypatch, keys=10_000, period_ms=100.0, send_delay=0.01, stop_after=1.0,
                        batch_size=100)
    assert report.target_rate == pytest.approx(100_000.0)
    assert report.achieved_rate < 0.2 * report.target_rate, report
    assert report.records > 0
