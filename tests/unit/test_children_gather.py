"""A start or stop wait cancelled by Ctrl-C leaves nothing for asyncio to log (bench.platforms.children).

``wait_for(gather(...))`` left the cancelled gather's CancelledError
unread, and asyncio printed "_GatheringFuture exception was never retrieved" with a
traceback under bench's one-line "interrupted".
"""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest
from bench.platforms.children import gather_within


def logged_while(body: Any) -> list[str]:
    """The messages asyncio's exception handler received while ``body`` ran, and after a collection."""
    messages: list[str] = []

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: messages.append(str(ctx.get("message"))))
        await body()
        gc.collect()
        await asyncio.sleep(0)

    asyncio.run(main())
    return messages


def test_a_cancelled_wait_leaves_no_unread_exception() -> None:
    async def body() -> None:
        never = asyncio.Event()
        waiting = asyncio.ensure_future(gather_within([never.wait(), never.wait()], 60.0))
        await asyncio.sleep(0.01)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        del waiting

    assert logged_while(body) == []


def test_a_timed_out_wait_raises_timeout_and_leaves_no_unread_exception() -> None:
    async def body() -> None:
        with pytest.raises(TimeoutError):
            await gather_within([asyncio.Event().wait()], 0.01)

    assert logged_while(body) == []


def test_the_awaitables_outcome_still_comes_through() -> None:
    async def fails() -> None:
        raise ValueError("boom")

    async def body() -> None:
        with pytest.raises(ValueError, match="boom"):
            await gather_within([fails()], 5.0)

    assert logged_while(body) == []
