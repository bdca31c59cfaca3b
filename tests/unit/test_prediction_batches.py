"""The prediction's probe on a micro-batch SUT's saw-tooth lag (bench.search.prediction).

UC2 at 100,000 records/s on one quarter-core instance fell behind (lag trends of 25,390
and 54,389 records/s), yet its 30 s of probe after the warm-up held a commit and read as "not
saturated, 100,246 records/s per instance". The probe must see whole
batches, or say it cannot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bench.api import ExperimentSpec, Sample, Series
from bench.execution.run import Engine
from bench.plugins import Registry
from bench.search import prediction

from tests.unit import verdict_runs
from tests.unit.fakes import CAPACITY, FakePlatform
from tests.unit.test_engine import SimClock
from tests.unit.test_prediction import config


def sawtooth(rate: float, processed: float, period: float, seconds: float, step: float = 5.0,
             offset: float = 0.0) -> tuple[Series, Series]:
    """(lag, generated records) of a SUT that commits every ``period`` s what it processed
    (``processed`` records/s) since its last commit; in between nothing is consumed."""
    t = np.arange(0.0, seconds + step / 2, step)
    generated = rate * t
    commits = np.floor((t + offset) / period) * period - offset
    committed = np.minimum(processed * np.maximum(commits, 0.0), generated)
    return Series(list(t), list(generated - committed)), Series(list(t), list(generated))


def test_a_probe_window_shorter_than_one_batch_is_inconclusive() -> None:
    """60 s of warm-up, 30 s of samples, one commit in them: no rate can be told."""
    lag, generated = sawtooth(100_000.0, 63_000.0, 45.0, 90.0)
    with pytest.raises(prediction.ProbeInconclusive, match="fell 1 time"):
        prediction.measure(lag, 60.0, 100_000.0, 1.0, 100_000.0, generated)
    assert not prediction.probe_complete({"lag": lag, "generated-records": generated}, 60.0, 100_000.0)


@pytest.mark.parametrize("offset", [0.0, 10.0, 25.0, 40.0])
def test_whole_batches_give_the_processed_rate_wherever_the_window_falls(offset: float) -> None:
    lag, generated = sawtooth(100_000.0, 63_000.0, 45.0, 240.0, offset=offset)
    assert prediction.probe_complete({"lag": lag, "generated-records": generated}, 60.0, 100_000.0)
    probe = prediction.measure(lag, 60.0, 100_000.0, 1.0, 100_000.0, generated)
    assert probe.saturated
    assert probe.batch_ends is not None and probe.batch_ends >= 2
    assert probe.per_instance_rate == pytest.approx(63_000.0, rel=0.02)


def test_a_lag_consumed_continuously_is_measured_as_before() -> None:
    t = [float(i) for i in range(0, 61, 5)]
    lag = Series(t, [500.0 * x for x in t])  # half the input consumed all along
    assert prediction.probe_complete({"lag": lag}, 10.0, 1000.0)
    probe = prediction.measure(lag, 10.0, 1000.0, 1.0, 1000.0)
    assert probe.batch_ends is None and probe.per_instance_rate == pytest.approx(500.0)


class BatchPlatform(FakePlatform):
    """Each instance processes CAPACITY records/s, committed every 45 s; the lag rises at
    the whole input rate in between."""

    period = 45.0

    async def start_sut(self, spec: ExperimentSpec) -> None:
        await super().start_sut(spec)
        self.started: float | None = None

    async def sample(self, spec: ExperimentSpec) -> Sample:
        sample = await super().sample(spec)
        if self.started is None:
            self.started = sample.timestamp
        elapsed = sample.timestamp - self.started
        sut = next(o for o in spec.objects if o["kind"] == "BenchSut")
        gen = next(o for o in spec.objects if o["kind"] == "BenchGenerator")
        rate = gen["spec"]["sensors"] * 1000 / gen["spec"]["periodMs"]
        generated = rate * elapsed
        done = min(sut["spec"]["replicas"] * CAPACITY * (elapsed // self.period) * self.period, generated)
        return Sample(sample.timestamp, {"lag": generated - done, "generated-records": generated})


async def test_the_probe_runs_on_until_it_has_seen_whole_batches(tmp_path: Path) -> None:
    """The probe's 40 s (10 s warm-up + 30 s) hold no commit; it goes on until two, and
    predicts the demand the instances' 1,000 records/s give."""
    registry: Registry = verdict_runs.registry()
    lines: list[str] = []
    clock = SimClock()
    platform = BatchPlatform()
    platform.now = clock
    cfg = config(tmp_path, True)
    cfg.execution.execution.duration = 300
    outcome: Any = await Engine(registry, cfg, platform, lambda m, _t=False: lines.append(m), clock=clock,
                                sleep=clock.sleep).run()
    probe = outcome.prediction.probe
    assert probe.batch_ends >= 2 and probe.seconds >= 80
    assert probe.per_instance_rate == pytest.approx(CAPACITY, rel=0.05)
    assert outcome.prediction.predicted == {4500.0: 5.0, 6500.0: 7.0}
    assert any("micro-batch commits" in line for line in lines if line.startswith("probe:"))


def test_a_commit_read_across_two_samples_is_one_commit() -> None:
    """The lag falls over two consecutive samples for one commit: one trough, not two
    five seconds apart whose difference would be taken for the growth."""
    from bench.slo.lag_batches import commit_times

    t = np.arange(0.0, 100.0, 5.0)
    v = 100_000.0 * t
    v[8:] -= 300_000.0  # half of the commit read at 40 s
    v[9:] -= 3_000_000.0  # the rest at 45 s
    assert list(commit_times(t, v)) == [45.0]
