"""``bench analyze`` over a result folder the real engine wrote reaches the run's own
verdicts: every SLO judged again by its registered type, with the run's warm-up cut.

Why: the analysis had its own lag-trend fit and its own warm-up cut (the time since the
first sample against the warm-up, where the run added the warm-up to the first
timestamp), judged the trend alone, and read the files (timestamps to the millisecond)
where the run judged the unrounded series. A sample a fraction of a millisecond from the
cut then counted in one and not the other, and a failed dropped-records SLO showed as
PASS.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from bench.analysis.analyze import analyze, run_settings
from bench.analysis.runs import open_run
from bench.api import ExperimentSpec, Sample
from bench.config.model import parse_benchmark, parse_execution
from bench.execution.config import RunConfig, no_progress
from bench.execution.run import Engine

from tests.unit import verdict_runs
from tests.unit.fakes import FAKE_USE_CASE, FakePlatform, fake_benchmark
from tests.unit.test_engine import SimClock

T0 = 1_700_000_000.0004  # stored as ...000.000
WARMUP = 10.0
STEP = 5.0
BOUNDARY = 2  # the sample at the cut: WARMUP / STEP


class ShapedPlatform(FakePlatform):
    """Load 10: a lag growing 3000 records/s (over the threshold) but for one huge value on
    the sample at the warm-up cut, placed 0.8 ms early in memory and so exactly on the cut
    in the file: with it the fitted slope is far below the threshold, without it above.
    Load 20: a flat lag, but half the generated records dropped."""

    async def sample(self, spec: ExperimentSpec) -> Sample:
        i = self.samples_in_rep
        self.samples_in_rep += 1
        t = T0 + i * STEP
        if float(spec.load) == 10.0:
            lag = 1e9 if i == BOUNDARY else 3000.0 * i * STEP
            if i == BOUNDARY:
                t -= 0.0008
            return Sample(t, {"lag": lag, "dropped-records": 0.0})
        return Sample(t, {"lag": 100.0 + (i % 2) * 10.0, "dropped-records": 0.5 * float(spec.load) * i * STEP})


def _config(folder: Path) -> RunConfig:
    doc = fake_benchmark()
    doc["slos"] = [
        {"name": "lag-trend", "sloType": "lag-trend", "properties": {"threshold": 2000}},
        {"name": "dropped-records", "sloType": "dropped-records", "properties": {"maxRatio": 0.01}},
    ]
    execution = parse_execution({
        "benchmark": "fake", "load": {"loadType": "NumSensors", "loadValues": [10, 20]},
        "resources": {"resourceType": "Instances", "resourceValues": [1]},
        "execution": {"metric": "demand", "duration": 60, "warmup": WARMUP, "repetitions": 1,
                      "afterTeardownDelay": 0, "sampleInterval": STEP, "earlyStop": False,
                      "strategy": {"name": "full", "restrictions": []}},
    })
    return RunConfig(use_case=FAKE_USE_CASE, benchmark=parse_benchmark(doc), execution=execution,
                     results_dir=folder, retries=0)


def _run(folder: Path) -> dict[float, dict[str, bool]]:
    clock = SimClock()
    engine = Engine(verdict_runs.registry(), _config(folder), ShapedPlatform(), no_progress, clock=clock,
                    sleep=clock.sleep)
    outcome = asyncio.run(engine.run())
    return {r.load: {name: bool(d["passed"]) for name, d in r.slos.items()} for r in outcome.records}


def test_analyze_reaches_the_runs_verdict_on_every_slo(tmp_path: Path) -> None:
    stored = _run(tmp_path)
    # the boundary sample decided the run: it is in the warm-up window's first sample
    assert stored[10.0] == {"lag-trend": True, "dropped-records": True}
    assert stored[20.0] == {"lag-trend": True, "dropped-records": False}
    run = open_run(tmp_path)
    result = analyze(run, run_settings(run))
    again = {load: {n: v.passed for n, v in e.slos.items()} for (load, _), e in result.experiments.items()}
    assert again == stored
    assert {load: e.passed for (load, _), e in result.experiments.items()} == {10.0: True, 20.0: False}
    assert result.experiments[(20.0, 1.0)].other_slos_failed == ["dropped-records"]
    assert result.table == {10.0: 1.0, 20.0: None}


def test_the_boundary_sample_is_what_decides(tmp_path: Path) -> None:
    """A warm-up one millisecond longer leaves the boundary sample out: the lag trend then
    fails, in the analysis as it would have in the run."""
    _run(tmp_path)
    run = open_run(tmp_path)
    longer = analyze(run, run_settings(run, warmup=WARMUP + 0.001))
    assert not longer.experiments[(10.0, 1.0)].slos["lag-trend"].passed
    assert analyze(run, run_settings(run, warmup=WARMUP)).experiments[(10.0, 1.0)].slos["lag-trend"].passed
