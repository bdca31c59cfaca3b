"""An ended experiment's Prometheus series are dropped (bench.metrics.forget_experiment)."""

from __future__ import annotations

from bench import metrics


def test_only_the_ended_experiment_s_series_are_dropped() -> None:
    metrics.CONSUMER_LAG.labels("forget-a", "g").set(3)
    metrics.SPARK_BATCH_DURATION.labels("forget-a").set(1)
    metrics.GENERATOR_RATE.labels("forget-b").set(2)
    metrics.forget_experiment("forget-a")
    left = [k for g in metrics.PER_EXPERIMENT for k in g._metrics if k[0].startswith("forget-")]
    assert left == [("forget-b",)]
    metrics.forget_experiment("forget-b")
    metrics.forget_experiment("forget-never-seen")  # nothing to drop is no error
    assert not [k for g in metrics.PER_EXPERIMENT for k in g._metrics if k[0].startswith("forget-")]
