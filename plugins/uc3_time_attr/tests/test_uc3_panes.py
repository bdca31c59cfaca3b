"""UC3's pane method against a brute-force model of Spark's native sliding windows.

The model keeps every record of every window and applies Spark's rule for late data
(a (record, window) pair is dropped when the window ends at or before the watermark;
the watermark of a batch is the max event time of earlier batches minus the lateness).
Per batch, the pane method must emit exactly the windows the model updates, with the
same statistics.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest
from bench_uc3.panes import (
    Panes,
    apply_batch,
    combine,
    merge,
    of_records,
    panes_from_bytes,
    panes_to_bytes,
    window_starts,
)

Emitted = list[dict[int, tuple[float, ...]]]


def brute_force(batches: list[list[tuple[int, float]]], size: int, advance: int, lateness: int) -> Emitted:
    windows: dict[int, list[float]] = defaultdict(list)
    watermark, max_ts = 0, None
    emitted: Emitted = []
    for batch in batches:
        updated = set()
        for ts, value in batch:
            start = (ts // advance) * advance
            while start + size > ts:
                if start + size > watermark:
                    windows[start].append(value)
                    updated.add(start)
                start -= advance
            max_ts = ts if max_ts is None else max(max_ts, ts)
        emitted.append({s: stats(windows[s]) for s in sorted(updated)})
        if max_ts is not None:
            watermark = max(watermark, max_ts - lateness)
    return emitted


def stats(values: list[float]) -> tuple[int, float, float, float, float, float]:
    a = np.asarray(values)
    return (a.size, float(a.sum()), float(a.min()), float(a.max()), float(a.mean()), float(a.var()))


def run_panes(batches: list[list[tuple[int, float]]], size: int, advance: int, lateness: int) -> Emitted:
    panes, watermark, max_ts = Panes.empty(), 0, None
    emitted: Emitted = []
    slice_ms = math.gcd(size, advance)
    for batch in batches:
        ts = np.array([t for t, _ in batch], dtype=np.int64)
        vals = np.array([v for _, v in batch], dtype=np.float64)
        update = apply_batch(panes, ts, vals, watermark, size, advance, slice_ms)
        panes = update.panes
        w = update.windows
        emitted.append(
            {
                int(w.start[i]): (int(w.count[i]), w.sum[i], w.min[i], w.max[i], w.mean[i], w.variance[i])
                for i in range(len(w.start))
            }
        )
        assert all(w.end == w.start + size)
        if batch:
            max_ts = max(ts.max(), max_ts) if max_ts is not None else int(ts.max())
        if max_ts is not None:
            watermark = max(watermark, int(max_ts) - lateness)
    return emitted


def assert_same(got: Emitted, want: Emitted) -> None:
    assert len(got) == len(want)
    for batch_got, batch_want in zip(got, want, strict=True):
        assert sorted(batch_got) == sorted(batch_want)
        for start, expected in batch_want.items():
            actual = batch_got[start]
            assert actual[0] == expected[0]
            assert actual[2] == expected[2] and actual[3] == expected[3]
            assert actual[1:] == pytest.approx(expected[1:], rel=1e-9, abs=1e-9)


@pytest.mark.parametrize(
    ("size", "advance", "lateness"),
    [(300, 100, 50), (300, 300, 0), (250, 100, 120), (1000, 150, 400), (70, 70, 1000)],
)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pane_method_matches_native_sliding_windows(size: int, advance: int, lateness: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    batches = []
    clock = 0
    for _ in range(12):
        clock += int(rng.integers(0, 200))
        n = int(rng.integers(0, 15))
        # mostly recent records, some far behind the clock (late), values around 1 kW
        ts = clock - rng.integers(0, 60, n) - (rng.random(n) < 0.3) * rng.integers(0, 900, n)
        vals = 1000 + rng.normal(0, 5, n)
        batches.append([(int(max(t, 0)), float(v)) for t, v in zip(ts, vals, strict=True)])
    assert_same(run_panes(batches, size, advance, lateness), brute_force(batches, size, advance, lateness))


def test_a_record_is_kept_while_its_last_window_is_open() -> None:
    # windows of 300 advancing 100; watermark 250: the record at 120 lies in windows
    # [-100, 200) (closed), [0, 300) and [100, 400) (open).
    update = apply_batch(Panes.empty(), np.array([120], np.int64), np.array([7.0]), 250, 300, 100, 100)
    assert update.dropped == 0
    assert update.windows.start.tolist() == [0, 100]
    late = apply_batch(Panes.empty(), np.array([99], np.int64), np.array([7.0]), 300, 300, 100, 100)
    assert late.dropped == 1 and len(late.windows.start) == 0 and len(late.panes) == 0


def test_panes_are_evicted_once_all_their_windows_closed() -> None:
    panes = of_records(np.array([0, 150, 420], np.int64), np.array([1.0, 2.0, 3.0]), 50)
    update = apply_batch(panes, np.array([430], np.int64), np.array([4.0]), 400, 300, 100, 50)
    # pane 0 (last window [0, 300)) and pane 150 (last window [100, 400)) are closed
    assert update.panes.start.tolist() == [400]
    assert update.panes.count.tolist() == [2]


def test_variance_combines_exactly_for_large_means() -> None:
    rng = np.random.default_rng(7)
    values = 1e6 + rng.normal(0, 0.01, 500)
    ts = np.arange(500, dtype=np.int64)
    merged = Panes.empty()
    for part in np.array_split(np.arange(500), 7):
        merged = merge(merged, of_records(ts[part], values[part], 10))
    w = combine(merged, np.array([0], np.int64), 500)
    assert w.count.tolist() == [500]
    assert w.variance[0] == pytest.approx(values.var(), rel=1e-6)
    assert w.mean[0] == pytest.approx(values.mean(), rel=1e-12)


def test_window_starts_cover_every_window_of_every_pane() -> None:
    starts = window_starts(np.array([0, 250], np.int64), 300, 100)
    assert starts.tolist() == [-200, -100, 0, 100, 200]


def test_panes_survive_the_state_store_round_trip() -> None:
    ts = np.array([1_774_735_200_123, 1_774_735_260_000, 1_774_738_800_000], np.int64)
    panes = of_records(ts, np.array([1.5, -2.25, 1e6]), 60_000)
    back = panes_from_bytes(panes_to_bytes(panes))
    for field in ("start", "count", "sum", "min", "max", "m2"):
        assert np.array_equal(getattr(back, field), getattr(panes, field)), field
    assert back.start.dtype == np.int64 and len(panes_from_bytes(panes_to_bytes(Panes.empty()))) == 0
