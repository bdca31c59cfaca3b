"""A cancellation an awaited call swallowed still ends the sampling loop.

Why: ``asyncio.wait_for`` in Python 3.11 loses a cancellation that arrives in the step
its inner call finishes; a SIGTERM to a run in a loaded CI suite left the run sampling
for another minute (tests/e2e/test_no_orphans.py timed out).
"""

from __future__ import annotations

import asyncio

import pytest
from bench.execution.collector import raise_if_cancelled


async def _swallowing_then_check(reached: list[str]) -> None:
    try:
        await asyncio.sleep(10)
    except asyncio.CancelledError:
        pass  # as wait_for does when its inner call has just finished
    reached.append("swallowed")
    raise_if_cancelled()
    reached.append("went on")


async def test_a_swallowed_cancellation_is_raised_at_the_next_check() -> None:
    reached: list[str] = []
    task = asyncio.create_task(_swallowing_then_check(reached))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert reached == ["swallowed"]


async def test_a_timeout_that_took_back_its_own_cancellation_lets_the_loop_go_on() -> None:
    """``asyncio.timeout`` cancels the task and takes the request back (``uncancel``)
    when it expires: the loop goes on, as it did before the check."""
    raise_if_cancelled()  # a task never cancelled
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.01):
            await asyncio.sleep(10)
    raise_if_cancelled()
