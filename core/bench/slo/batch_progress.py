"""What a Spark SUT read, from its own account of each micro-batch: rows over the time
between two batch ends.

Why not the lag, or the slope of the rows read over the samples' times: both are step
functions of the batches, sampled every few seconds. A probe or a measurement window
that holds two or three batches then reads a rate off by up to a sampling interval at
each end of its span: a simulated SUT processing 4,508 records/s, its lag sampled every
5 s, read 4,444-5,333 from the growth between two commits, depending on where the
samples fell (tests/unit/test_batch_progress.py). The driver reports, with each batch's
cumulative rows (``spark-input-rows``), the second at which that batch ended
(``spark-batch-end``): two of those bound a span exactly, at any sampling interval.

Exact is not representative: what an instance reads per second can depend on its
batches' size. UC4's probe on one quarter-core instance read 8,566 records/s this way,
in batches taken from a lag of 0.4-0.8 million records, where 2-3 instances in 5-13-s
batches read 3,770-6,260 each (docs/measurements-log.md, "Prediction on UC2" and the
prediction rows).
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.api import Series


@dataclass(frozen=True)
class BatchRate:
    """Rows read per second between the first and the last batch end of a span."""

    rate: float
    #: distinct batch ends in the span (the first one bounds it: ``ends - 1`` batches counted)
    ends: int
    seconds: float


def batch_ends(rows: Series | None, ends: Series | None, after: float) -> list[tuple[float, float]]:
    """The distinct (batch end, cumulative rows) pairs of batches that ended at or after
    ``after`` (epoch seconds), in order; empty without both series.

    Each sample repeats the last batch's pair until the next batch ends, so a pair is
    kept once; a sample without a batch yet (end 0) is not one."""
    if rows is None or ends is None:
        return []
    seen: dict[float, float] = {}
    for end, count in zip(ends.values, _aligned(rows, ends), strict=True):
        end = float(end)
        if end > 0 and end >= after and count is not None:
            seen.setdefault(end, float(count))
    return sorted(seen.items())


def _aligned(rows: Series, ends: Series) -> list[float | None]:
    """The rows value sampled at each of ``ends``' timestamps (both come from one sample)."""
    by_time = dict(zip(rows.timestamps, rows.values, strict=True))
    return [by_time.get(t) for t in ends.timestamps]


def rate_between_ends(rows: Series | None, ends: Series | None, after: float) -> BatchRate | None:
    """Rows read per second from the first to the last batch end at or after ``after``;
    None with fewer than two batch ends there (no span to divide by)."""
    pairs = batch_ends(rows, ends, after)
    if len(pairs) < 2:
        return None
    (t0, r0), (t1, r1) = pairs[0], pairs[-1]
    if t1 <= t0:
        return None
    return BatchRate(rate=max(r1 - r0, 0.0) / (t1 - t0), ends=len(pairs), seconds=t1 - t0)
