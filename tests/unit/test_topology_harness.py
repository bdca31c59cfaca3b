"""bench.testing's wait for an idle query also waits for the listener to catch up.

Spark's listener bus delivers progress events on its own thread, after the query has
moved on; a harness that only waited for a quiet spell returned totals without the
last batches when that thread lagged (a busy machine, or a slow offset commit first).
"""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest
from bench.runtime.spark.sut_query import ProgressTotals
from bench.testing import _wait_idle


def _progress(batch_id: int, rows: int) -> Any:
    return SimpleNamespace(batchId=batch_id, numInputRows=rows, stateOperators=[], observedMetrics={},
                           timestamp="", inputRowsPerSecond=0.0, processedRowsPerSecond=0.0, durationMs={})


class _DoneQuery:
    """A query that has processed batches 0..last, whose events are not delivered yet."""

    def __init__(self, last: int | None) -> None:
        self.lastProgress = None if last is None else SimpleNamespace(batchId=last)

    def processAllAvailable(self) -> None:
        pass

    def exception(self) -> None:
        return None


def test_the_totals_include_the_last_batch_even_when_its_event_arrives_after_a_quiet_spell() -> None:
    totals = ProgressTotals()

    def deliver_late() -> None:
        time.sleep(0.6)  # three times the quiet spell the harness waits for
        for batch in range(3):
            totals.add(_progress(batch, 100))

    thread = threading.Thread(target=deliver_late)
    thread.start()
    try:
        _wait_idle(_DoneQuery(last=2), totals, idle_seconds=0.2, limit_s=10)
        assert totals.input_rows == 300
        assert totals.events[-1]["batchId"] == 2
    finally:
        thread.join()


def test_a_query_without_any_batch_does_not_wait_for_events() -> None:
    totals = ProgressTotals()
    _wait_idle(_DoneQuery(last=None), totals, idle_seconds=0.05, limit_s=5)
    assert totals.input_rows == 0 and totals.events == []


def test_events_that_never_come_end_in_a_clear_error_at_the_limit() -> None:
    with pytest.raises(RuntimeError, match="progress of batch 4 never reached the listener within 0.5 s"):
        _wait_idle(_DoneQuery(last=4), ProgressTotals(), idle_seconds=0.05, limit_s=0.5)
