"""The sizing probe's own failure answers the heaviest sized load's experiment on the
probe's instances (bench.execution.probe_verdict), on the fake platform."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bench.analysis.confidence import Confidence
from bench.api import ExperimentSpec, Sample
from bench.config.model import parse_benchmark, parse_execution
from bench.execution import probe_verdict
from bench.execution.config import RunConfig
from bench.execution.run import Engine, RunOutcome
from bench.search.sizing_record import AutoSize, Sizing

from tests.unit import verdict_runs
from tests.unit.test_engine import SimClock
from tests.unit.test_sizing_machines import USE_CASE, BatchMachine, benchmark


class LargerBatchesMachine(BatchMachine):
    """Three or more instances read twice what two do per instance: a micro-batch SUT's
    larger amounts do better than the probe's two instances behind their input (UC1's
    two read 23,172 records/s each, three passed 53,000)."""

    async def sample(self, spec: ExperimentSpec) -> Sample:
        sut = next(o for o in spec.objects if o["kind"] == "BenchSut")
        speed = self.speed
        self.speed = speed * (2.0 if sut["spec"]["replicas"] >= 3 else 1.0)
        try:
            return await super().sample(spec)
        finally:
            self.speed = speed


async def sized_run(tmp_path: Path, search: dict[str, Any] | None = None, speed: float = 1.0
                    ) -> tuple[RunOutcome, list[tuple[float, int]]]:
    execution: dict[str, Any] = {
        "benchmark": "fake", "load": {"loadType": "NumSensors", "loadValues": [1000]},
        "resources": {"resourceType": "Instances", "resourceValues": [1]},
        "execution": {"duration": 90, "warmup": 10, "repetitions": 1, "afterTeardownDelay": 0,
                      "sampleInterval": 5, "earlyStop": False}}
    if search is not None:
        execution["execution"]["strategy"] = search
    cfg = RunConfig(use_case=USE_CASE, benchmark=parse_benchmark(benchmark()), execution=parse_execution(execution),
                    results_dir=tmp_path, retries=0, auto=AutoSize(True, True, None))
    clock = SimClock()
    machine = LargerBatchesMachine(speed)
    outcome = await Engine(verdict_runs.registry(), cfg, machine, lambda m, t: None, clock=clock,
                           sleep=clock.sleep).run()
    return outcome, [(e.load, int(e.resources)) for e in outcome.records]


async def test_the_probes_failure_answers_the_heaviest_load_on_two_instances(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two quarter-core instances read 10,000 records/s each of the probe's 40,000: loads
    2,000, 13,000 and 60,000 (three quarters of the way from 23,000 to the 80,000 the path
    pushes, at its roundest). The
    heaviest passes on three; on two it is not measured: the probe failed a lighter load
    there. Four experiments, where the same run without the probe's verdict takes five
    for the same table."""
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    outcome, measured = await sized_run(tmp_path)
    stored = json.loads((tmp_path / "exp0-sizing.json").read_text())
    fail = stored["probeFail"]
    assert fail["instances"] == 2 and fail["rate"] == pytest.approx(40_000, rel=0.01)
    assert fail["low"] >= fail["threshold"] and fail["slo"] == "lag-trend"
    heaviest = max(outcome.table)
    assert outcome.table == {min(outcome.table): 1, sorted(outcome.table)[1]: 2, heaviest: 3}
    assert (heaviest, 3) in measured and (heaviest, 2) not in measured and len(measured) == 4

    monkeypatch.setattr(probe_verdict, "answer", lambda *a, **k: [])
    again, measured_again = await sized_run(tmp_path / "without")
    assert again.table == outcome.table and (heaviest, 2) in measured_again and len(measured_again) == 5


@pytest.mark.parametrize(("speed", "answered"), [(1.0, True), (1.95, False)])
async def test_a_short_windows_unsure_trend_leaves_the_growth_between_batch_ends(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, speed: float, answered: bool) -> None:
    """The probe's lag over its short window is a saw-tooth of a few batches, whose slope's
    interval straddles any threshold (made so here). Its instances' reading stands in:
    two that read 20,000 of 40,000 records/s grew the lag by 20,000 a second between
    batch ends, 50 times the threshold of 400; two that read 39,000 grew it by 1,000,
    under 10 times: nothing is answered."""
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    unsure = Confidence(5_000.0, 400.0, -4_600.0, -9_000.0, 19_000.0, 5_000.0, 0.95, False, True)
    monkeypatch.setattr(probe_verdict.confidence, "judge", lambda *a, **k: unsure)
    await sized_run(tmp_path, speed=speed)
    fail = json.loads((tmp_path / "exp0-sizing.json").read_text())["probeFail"]
    if not answered:
        assert fail is None
        return
    assert fail["basis"] == "batches" and fail["slope"] == pytest.approx(20_000, rel=0.05), fail
    made = Sizing.from_json(json.loads((tmp_path / "exp0-sizing.json").read_text()))
    assert made is not None and any("its lag grew 20," in line for line in made.describe())


async def test_a_search_that_measures_every_pair_gets_no_answer(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    outcome, measured = await sized_run(tmp_path, {"name": "full", "restrictions": ["LowerBound"]})
    assert (max(outcome.table), 2) in measured


FAIL = {"load": 40_000.0, "rate": 40_000.0, "instances": 2.0, "cpu": 0.25, "slo": "lag trend", "slope": 20_000.0,
        "low": 19_000.0, "threshold": 400.0}


class Runner:
    def __init__(self) -> None:
        self.cache: dict[tuple[float, float], bool | None] = {(50_000.0, 1.0): True}
        self.answered: dict[tuple[float, float], str] = {}


def test_the_answer_covers_heavier_loads_on_as_many_instances_or_fewer_and_keeps_measured_verdicts() -> None:
    runner = Runner()
    rates = {2_000.0: 2_000.0, 40_000.0: 40_000.0, 50_000.0: 50_000.0}
    got = probe_verdict.answer(runner, FAIL, rates, list(rates), [1.0, 2.0, 3.0])  # type: ignore[arg-type]
    assert got == [(40_000.0, 1.0), (40_000.0, 2.0), (50_000.0, 2.0)]
    assert runner.cache[(50_000.0, 1.0)] is True and runner.cache[(50_000.0, 2.0)] is False
    assert "failed 40,000 records/s" in runner.answered[(50_000.0, 2.0)]
    assert probe_verdict.answer(runner, None, rates, list(rates), [1.0]) == []  # type: ignore[arg-type]


@pytest.mark.parametrize(("probed", "run", "holds"), [(0.25, 0.25, True), (0.25, 0.125, True), (0.25, 0.5, False),
                                                      (0.25, 0.0, False), (0.0, 0.25, True), (0.0, 0.0, True)])
def test_the_failure_holds_only_for_instances_no_faster_than_the_probes(probed: float, run: float,
                                                                          holds: bool) -> None:
    assert probe_verdict.applies({**FAIL, "cpu": probed}, run) is holds
    assert (probe_verdict.lightest([{**FAIL, "cpu": probed}], run) is not None) is holds


def test_the_failure_is_kept_in_the_sizing_file_and_said() -> None:
    made = Sizing([], [1.0], None, {1.0: 1.0}, probe_fail=dict(FAIL))
    back = Sizing.from_json(json.loads(made.dumps()))
    assert back is not None and back.probe_fail == FAIL
    assert any("the probe failed 40,000 records/s on 2 instances" in line for line in made.describe())
    old = {k: v for k, v in made.to_json().items() if k != "probeFail"}
    assert Sizing.from_json(old) is not None and Sizing.from_json(old).probe_fail is None  # type: ignore[union-attr]
