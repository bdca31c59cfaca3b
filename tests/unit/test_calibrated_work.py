"""The calibrated SUT's ``workUs``: CPU really spent per record, with the event loop
turning meanwhile (its heartbeats and fetches)."""

from __future__ import annotations

import asyncio
import time

from bench.runtime.calibrated_sut import WORK_TURN_S, work


def test_work_spends_the_cpu_and_lets_the_loop_turn() -> None:
    turns = 0

    async def other() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    async def main() -> float:
        task = asyncio.create_task(other())
        await asyncio.sleep(0)
        before = time.thread_time()
        await work(0.05)
        spent = time.thread_time() - before
        task.cancel()
        return spent

    spent = asyncio.run(main())
    assert spent >= 0.05
    assert turns >= int(0.05 / WORK_TURN_S) // 2  # the loop ran between slices of work


def test_no_work_is_no_cpu() -> None:
    before = time.thread_time()
    asyncio.run(work(0.0))
    assert time.thread_time() - before < 0.01
