"""The probe's records/s per instance: what the SUT committed over the probe's own window.

A calibrated SUT of 1,100 records/s per instance probed at 5,200 records/s read 892:
the generators' count (its own sampling, its own ramp) against the lag's slope. These
synthetic series reproduce that disagreement; the probe must read 1,100 from the SUT's
committed offsets whatever the input's count says.
"""

from __future__ import annotations

import numpy as np
import pytest
from bench.api import Series
from bench.search import prediction

CAPACITY = 1100.0
LOAD_RATE = 5200.0
STEP = 2.0  # s between samples


def times(n: int, start: float = 1000.0) -> list[float]:
    return [start + STEP * i for i in range(n)]


def saturated_probe(generated_rate: float) -> dict[str, Series]:
    """60 s of samples: the input grows the end offsets by 5,200/s, the SUT commits
    1,100/s, the generators' count reads ``generated_rate``."""
    t = times(31)
    lag = Series(t, [(LOAD_RATE - CAPACITY) * (x - t[0]) for x in t])
    generated = Series(t, [generated_rate * (x - t[0]) for x in t])
    processed = Series(t[1:], [CAPACITY] * (len(t) - 1))
    return {"lag": lag, "generated-records": generated, "processed-rate": processed}


def test_the_committed_offsets_decide_not_the_generators_count() -> None:
    series = saturated_probe(generated_rate=4992.0)  # a count 4 % low: the old figure was 892
    old = prediction.measure(series["lag"], 10.0, 5200, 1, LOAD_RATE, series["generated-records"])
    assert old.per_instance_rate == pytest.approx(892.0, abs=1)  # the fallback reproduces the old error
    new = prediction.measure(series["lag"], 10.0, 5200, 1, LOAD_RATE, series["generated-records"],
                             processed=series["processed-rate"])
    assert new.source == "committed"
    assert new.per_instance_rate == pytest.approx(CAPACITY, rel=0.01)
    assert new.saturated


@pytest.mark.parametrize("generated_rate", [4700.0, 5200.0, 6000.0])
def test_whatever_the_load_the_figure_is_the_capacity(generated_rate: float) -> None:
    series = saturated_probe(generated_rate)
    probe = prediction.measure(series["lag"], 10.0, 5200, 2, LOAD_RATE, series["generated-records"],
                               processed=series["processed-rate"])
    assert probe.per_instance_rate == pytest.approx(CAPACITY / 2, rel=0.01)


def test_only_the_window_after_the_warm_up_counts() -> None:
    """The SUT joined its group late (nothing committed in the first 10 s) and then read
    a backlog at 3,000/s until the warm-up ended: none of that is its steady rate."""
    t = times(31)
    rates = [0.0 if x - t[0] <= 10 else 3000.0 if x - t[0] <= 20 else CAPACITY for x in t[1:]]
    lag = Series(t, [4100.0 * (x - t[0]) for x in t])
    probe = prediction.measure(lag, 20.0, 5200, 1, LOAD_RATE, processed=Series(t[1:], rates))
    assert probe.per_instance_rate == pytest.approx(CAPACITY, rel=0.01)


def test_committed_rate_is_the_growth_over_exactly_the_window() -> None:
    t = times(6)  # intervals of 2 s; rates 100, 200, 300, 400, 500 over them
    processed = Series(t[1:], [100.0, 200.0, 300.0, 400.0, 500.0])
    assert prediction.committed_rate(processed, t[1], t[3]) == pytest.approx(250.0)  # (200*2+300*2)/4
    assert prediction.committed_rate(processed, t[0], t[5]) == pytest.approx(350.0)  # no time before t[1]
    assert prediction.committed_rate(processed, t[0], t[5], grid=Series(t, [0.0] * 6)) == pytest.approx(300.0)
    assert prediction.committed_rate(None, t[0], t[5]) is None
    assert prediction.committed_rate(Series(t[5:], [1.0]), t[0], t[5]) is None  # too little of the window


def test_without_the_sli_the_lag_decides_as_before() -> None:
    series = saturated_probe(generated_rate=LOAD_RATE)
    probe = prediction.measure(series["lag"], 10.0, 5200, 1, LOAD_RATE, series["generated-records"])
    assert probe.source == "lag"
    assert probe.per_instance_rate == pytest.approx(CAPACITY, rel=0.01)


def test_one_whole_batch_after_the_warm_up_is_read_exactly_not_the_window_s_commits() -> None:
    """UC1 at 0.204 core, 12,000 records/s, as measured: a start-up batch, the JVM's first
    (15,966 rows in 22 s) and one of 264,859 rows in 35.3 s that ended after the warm-up;
    the committed offsets' window holds that one commit whole. The figure is that batch."""
    t = [1796566078.6 + 5.0 * i for i in range(13)]
    ends_at = [(1796566077.507, 0.0), (1796566102.035, 15966.0), (1796566137.338, 280825.0)]

    def last(x: float, k: int) -> float:
        return max((pair[k] for pair in ends_at if pair[0] <= x), default=0.0)

    rows = Series(t, [last(x, 1) for x in t])
    ends = Series(t, [last(x, 0) for x in t])
    lag = Series(t, [12000.0 * (x - t[0]) - last(x, 1) for x in t])
    committed = Series(t[1:], [(last(b, 1) - last(a, 1)) / 5.0 for a, b in zip(t, t[1:], strict=False)])
    probe = prediction.measure(lag, 30.0, 12000, 1, 12000.0, None, rows, ends, committed)
    assert probe.source == "batches" and probe.saturated
    assert probe.per_instance_rate == pytest.approx(264859.0 / 35.303, rel=1e-3)  # 7,503
    # the window's committed growth alone: the one batch counted over 30 s, not its 35
    window = prediction.committed_rate(committed, t[6], t[-1], grid=lag)
    assert window is not None and abs(window / probe.per_instance_rate - 1) > 0.1


def test_a_sut_behind_all_the_window_long_is_saturated_even_while_it_catches_up() -> None:
    """Two UC1 instances read 40,102 records/s of a load of 40,000 in the probe's window
    (their batches took all that waited) while the backlog of their start stayed at 2.5
    million records: what they read is their capacity, not a lower bound."""
    times = [float(t) for t in range(0, 70, 5)]
    lag = Series(times, [min(t, 30.0) * 80_000.0 + max(t - 30.0, 0.0) * -100.0 for t in times])
    ends = Series([32.0, 44.0, 56.0, 68.0], [32.0, 44.0, 56.0, 68.0])
    rows = Series([32.0, 44.0, 56.0, 68.0], [1_000_000.0, 1_481_224.0, 1_962_448.0, 2_443_672.0])
    probe = prediction.measure(lag, 30.0, 40_000, 2, 40_000.0, rows=rows, ends=ends)
    assert probe.source == "batches" and probe.saturated
    assert probe.per_instance_rate == pytest.approx(40_102 / 2, rel=0.01)
    # the same reading with the backlog gone by the window's end: a lower bound, as before
    caught_up = Series(times, [0.0 if t > 40 else v for t, v in zip(times, lag.values, strict=True)])
    assert not prediction.measure(caught_up, 30.0, 40_000, 2, 40_000.0, rows=rows, ends=ends).saturated


def test_a_sut_behind_all_along_that_reads_well_above_its_input_is_catching_up() -> None:
    """Two eighth-core UC1 instances read 29,805 records/s each of 40,000 in the probe's
    window, a start-up backlog still unread at its end: catching up, not saturated. The
    figure is the input's, a lower bound (two such instances then failed 60,000 in three
    runs of four); one that reads about its input stays saturated (the test above)."""
    times = [float(t) for t in range(0, 70, 5)]
    lag = Series(times, [min(t, 30.0) * 120_000.0 - max(t - 30.0, 0.0) * 19_610.0 for t in times])
    ends = Series([32.0, 44.0, 56.0, 68.0], [32.0, 44.0, 56.0, 68.0])
    rows = Series([32.0, 44.0, 56.0, 68.0], [1_000_000.0 + 715_320.0 * i for i in range(4)])
    probe = prediction.measure(lag, 30.0, 40_000, 2, 40_000.0, rows=rows, ends=ends)
    assert prediction.backlogged(np.asarray(lag.values), 59_610.0, 36.0)  # behind all the window long
    assert probe.source == "batches" and not probe.saturated
    assert probe.per_instance_rate == pytest.approx(20_000, rel=0.01)
