"""Rows read between the SUT's own batch ends (bench.slo.batch_progress), and the probe that
uses them (bench.search.prediction.measure).

A simulated micro-batch SUT, sampled every 5 s as the platforms do: its batches read at
most ``cap`` records each, cost ``fixed`` s plus ``records / mu``, and run back to back.
Its lag's growth between two sampled commits varies with where the samples fall by
about a tenth; the rows between two batch ends do not."""

from __future__ import annotations

import numpy as np
import pytest
from bench.api import Series
from bench.platforms.children import driver_slis
from bench.runtime.spark.sut_query import batch_end
from bench.search import prediction
from bench.slo.batch_progress import batch_ends, rate_between_ends

RATE, MU, FIXED = 16_384.0, 5_500.0, 2.0


def simulate(cap: float, phase: float, seconds: float = 90.0, step: float = 5.0
             ) -> tuple[dict[str, Series], list[tuple[float, float]]]:
    """The sampled series (lag, generated-records, spark-input-rows, spark-batch-end) and
    the true (end, cumulative rows) of every batch."""
    start, committed, truth = phase, 0.0, []
    while start < seconds:
        n = min(RATE * start - committed, cap)
        committed += n
        start += FIXED + n / MU
        truth.append((start, committed))
    t = np.arange(0.0, seconds + step / 2, step)
    rows = [max((r for e, r in truth if e <= x), default=0.0) for x in t]
    ends = [max((e for e, _ in truth if e <= x), default=0.0) for x in t]
    times = list(map(float, t))
    return ({"lag": Series(times, [RATE * x - r for x, r in zip(t, rows, strict=True)]),
             "generated-records": Series(times, [RATE * x for x in t]),
             "spark-input-rows": Series(times, rows), "spark-batch-end": Series(times, ends)}, truth)


def exact(truth: list[tuple[float, float]], after: float, until: float) -> float:
    seen = [(e, r) for e, r in truth if after <= e <= until]
    (e0, r0), (e1, r1) = seen[0], seen[-1]
    return (r1 - r0) / (e1 - e0)


@pytest.mark.parametrize("cap", [50_000.0, 80_000.0])
def test_the_probe_reads_exactly_what_the_batches_read_wherever_the_samples_fall(cap: float) -> None:
    by_lag, by_batches = [], []
    for phase in (0.0, 1.3, 2.6, 3.9):
        series, truth = simulate(cap, phase)
        args = (series["lag"], 30.0, 7.0, 1.0, RATE, series["generated-records"])
        by_lag.append(prediction.measure(*args).per_instance_rate)
        probe = prediction.measure(*args, series["spark-input-rows"], series["spark-batch-end"])
        assert probe.source == "batches" and probe.saturated
        assert probe.per_instance_rate == pytest.approx(exact(truth, 30.0, 90.0), rel=1e-9)
        assert probe.lag_slope == pytest.approx(RATE - probe.per_instance_rate, rel=1e-9)
        by_batches.append(probe.per_instance_rate)
    # the lag's commit-to-commit growth moves with the sampling phase; the batch ends do not
    assert max(by_lag) / min(by_lag) > 1.05
    assert max(by_batches) / min(by_batches) == pytest.approx(1.0, abs=0.01)


def test_a_pair_repeated_by_samples_is_one_batch_end_and_end_zero_is_none() -> None:
    t = [0.0, 5.0, 10.0, 15.0, 20.0]
    rows = Series(t, [0.0, 0.0, 100.0, 100.0, 300.0])
    ends = Series(t, [0.0, 0.0, 9.0, 9.0, 19.0])
    assert batch_ends(rows, ends, 0.0) == [(9.0, 100.0), (19.0, 300.0)]
    assert batch_ends(rows, ends, 10.0) == [(19.0, 300.0)]
    assert rate_between_ends(rows, ends, 0.0) is not None
    assert rate_between_ends(rows, ends, 0.0).rate == pytest.approx(20.0)  # type: ignore[union-attr]
    assert rate_between_ends(rows, ends, 10.0) is None
    assert batch_ends(None, ends, 0.0) == [] and rate_between_ends(rows, None, 0.0) is None


def test_with_one_batch_end_after_the_warm_up_the_probe_reads_that_whole_batch() -> None:
    series, truth = simulate(1e12, 0.0, seconds=60.0)  # uncapped: batches grow past the probe
    assert len(batch_ends(series["spark-input-rows"], series["spark-batch-end"], 30.0)) < 2
    probe = prediction.measure(series["lag"], 30.0, 7.0, 1.0, RATE, series["generated-records"],
                               series["spark-input-rows"], series["spark-batch-end"])
    (e0, r0), (e1, r1) = truth[1], truth[2]  # the third batch, from the second's end to its own
    assert probe.source == "batches" and probe.per_instance_rate == pytest.approx((r1 - r0) / (e1 - e0), rel=1e-9)
    assert prediction.probe_complete(series, 30.0, RATE)
    # before the third batch ends, only the start-up batch and the JVM's first one: no rate
    early = {k: Series(v.timestamps[:7], v.values[:7]) for k, v in series.items()}  # up to 30 s
    assert prediction.last_batch_read(early["lag"], 5.0, early["spark-input-rows"],
                                      early["spark-batch-end"]) is None


def test_two_batch_ends_complete_the_probe() -> None:
    series, _ = simulate(50_000.0, 0.0)
    assert prediction.probe_complete(series, 30.0, RATE)


def test_a_sut_that_keeps_up_is_not_saturated_by_its_batches() -> None:
    t = [float(x) for x in range(0, 61, 5)]
    rows = Series(t, [1000.0 * x for x in t])  # a batch per sample, reading all that arrived
    ends = Series(t, [x - 0.5 if x else 0.0 for x in t])
    lag = Series(t, [5.0] * len(t))
    probe = prediction.measure(lag, 10.0, 1.0, 1.0, 1000.0, None, rows, ends)
    assert probe.source == "batches" and not probe.saturated
    assert probe.per_instance_rate == pytest.approx(1000.0)


def test_the_driver_reports_when_each_batch_ended() -> None:
    assert batch_end("2026-12-01T20:33:33.500Z", 1500) == pytest.approx(
        1_796_157_215.0, abs=1e-3)
    assert batch_end(None, 10) == 0.0 and batch_end("not a time", 10) == 0.0

    class Driver:
        last = {"progress": {"inputRows": 42, "batchEnd": 123.5}}

    values = driver_slis(Driver(), "exp")  # type: ignore[arg-type]
    assert values["spark-batch-end"] == 123.5 and values["spark-input-rows"] == 42.0
