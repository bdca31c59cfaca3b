"""The sizing probe's own failure answers the heaviest sized load's experiment on the
probe's instances, and its pass the middle load's on two (bench.execution.probe_verdict),
on the fake platform."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from bench.analysis.confidence import Confidence
from bench.analysis.runs import open_run
from bench.api import ExperimentSpec, Sample, SloVerdict
from bench.config.model import parse_benchmark, parse_execution
from bench.execution import probe_verdict
from bench.execution.config import RunConfig
from bench.execution.run import Engine, RunOutcome
from bench.results import tables
from bench.search.sizing_record import AutoSize, ProbeFigures, Sizing

from tests.unit import verdict_runs
from tests.unit.test_engine import SimClock
from tests.unit.test_sizing_machines import USE_CASE, BatchMachine, batch_run, benchmark


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

    def enter(self, key: tuple[float, float], passed: bool, why: str) -> None:
        self.cache[key] = passed
        self.answered[key] = why


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


async def test_a_probe_that_kept_up_answers_the_middle_load_on_two_instances(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two instances kept up with the probe's 40,000 records/s at a quarter core and at an
    eighth (21,000 each at an eighth): a load of at most three quarters of that on two
    instances or more passes there, and is not measured. The middle load (25,000) on two
    is such a one: the table is the same as without the answer, its entry noted
    inferred, and ``bench report``'s reading of the result file finds it again."""
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    said: list[str] = []
    outcome = await batch_run(tmp_path, BatchMachine(4.2), said)
    stored = json.loads((tmp_path / "exp0-sizing.json").read_text())
    passed = stored["probePass"]
    assert passed["cpu"] == 0.125 and passed["instances"] == 2 and passed["rate"] == pytest.approx(30_000, rel=0.01)
    measured = [(e.load, int(e.resources)) for e in outcome.records]
    middle = sorted(outcome.table)[1]
    assert outcome.table[middle] == 2 and (middle, 1) in measured and (middle, 2) not in measured, measured
    assert any(m.startswith(f"load={middle:g} resources=2: PASS, not measured") for m in said), said
    assert outcome.notes[middle] == "inferred" and len({*outcome.table.values()}) == 3, outcome.table
    answered = json.loads((tmp_path / "exp0-result.json").read_text())["answered"]
    assert {(a["load"], a["resources"], a["passed"]) for a in answered} >= {(middle, 2.0, True)}
    recorded = open_run(tmp_path, 0).recorded_run_table()
    assert recorded is not None and recorded.table == outcome.table and recorded.inferred(middle)

    monkeypatch.setattr(probe_verdict, "probe_pass", lambda *a, **k: None)
    said_again: list[str] = []
    again = await batch_run(tmp_path / "without", BatchMachine(4.2), said_again)
    assert again.table == outcome.table and (middle, 2) in [(e.load, int(e.resources)) for e in again.records]
    assert len(again.records) == len(outcome.records) + 1


def test_the_pass_covers_lighter_loads_on_as_many_instances_or_more() -> None:
    runner = Runner()
    passed = {"load": 40_000.0, "kept_up": 40_000.0, "rate": 30_000.0, "instances": 2.0, "cpu": 0.125}
    rates = {2_000.0: 2_000.0, 30_000.0: 30_000.0, 31_000.0: 31_000.0}
    got = probe_verdict.answer(runner, None, rates, list(rates), [1.0, 2.0, 3.0], passed)  # type: ignore[arg-type]
    assert got == [(2_000.0, 2.0), (2_000.0, 3.0), (30_000.0, 2.0), (30_000.0, 3.0)]
    assert "kept up with 40,000 records/s, and this load asks 75% of it" in runner.answered[(30_000.0, 2.0)]


@pytest.mark.parametrize(("probed", "run", "holds"), [(0.125, 0.125, True), (0.125, 0.25, True), (0.25, 0.125, False),
                                                      (0.125, 0.0, True), (0.0, 0.125, False), (0.0, 0.0, True)])
def test_the_pass_holds_only_for_instances_at_least_as_fast_as_the_probes(probed: float, run: float,
                                                                            holds: bool) -> None:
    assert (probe_verdict.strongest([{"rate": 1.0, "cpu": probed}], run) is not None) is holds


class Evaluator:
    """SLOs named by their types; each passes on the probe's series, or fails (``failing``)."""

    def __init__(self, slis: dict[str, str], trend: list[str], failing: frozenset[str] = frozenset()) -> None:
        self._slis, self._trend, self._failing = slis, trend, failing

    def slis(self) -> dict[str, str]:
        return self._slis

    def trend_slos(self) -> list[str]:
        return self._trend

    def slo_types(self) -> dict[str, str]:
        return {name: name for name in self._slis}

    def verdicts(self, collected: Any, load: float, resources: float, rate: float) -> dict[str, SloVerdict]:
        assert (load, resources, rate) == (40_000.0, 2.0, 40_000.0)  # the probe's own
        return {name: SloVerdict(name not in self._failing, {}) for name in self._slis}


class PassRunner:
    def __init__(self, slis: dict[str, str], trend: list[str], failing: frozenset[str] = frozenset()) -> None:
        self.evaluator = Evaluator(slis, trend, failing)


KEPT_UP = ProbeFigures(20_000.0, False, 40_000.0, 40_000.0, 0.125, 40_000.0, 30.0, "committed", 2.0)


@pytest.mark.parametrize(("figures", "slis", "sure"), [
    (KEPT_UP, {"lag-trend": "lag"}, True),
    # a latency SLO is not answered by the instances keeping up
    (KEPT_UP, {"lag-trend": "lag", "latency": "latency"}, False),
    (dataclasses.replace(KEPT_UP, saturated=True), {"lag-trend": "lag"}, False),
    # the generators wrote a fifth less than asked: the path fell behind
    (dataclasses.replace(KEPT_UP, input_rate=32_000.0), {"lag-trend": "lag"}, False),
    # read 1.2 x what was written, eating its start's backlog: it keeps up with the input, no more
    (dataclasses.replace(KEPT_UP, per_instance_rate=24_000.0), {"lag-trend": "lag"}, True),
    (dataclasses.replace(KEPT_UP, source="estimated"), {"lag-trend": "lag"}, False),
    # dropped records the probe's own verdict passed: a lighter load drops no more (UC2, UC3)
    (KEPT_UP, {"lag-trend": "lag", "dropped-records": "dropped-records"}, True),
    (KEPT_UP, {"lag-trend": "lag", "dropped-records": "dropped-records", "failing": "dropped-records"}, False),
])
def test_only_instances_that_surely_kept_up_pass(figures: ProbeFigures, slis: dict[str, str], sure: bool) -> None:
    failing = frozenset({"dropped-records"}) if "failing" in slis else frozenset()
    slis = {k: v for k, v in slis.items() if k != "failing"}
    runner = PassRunner(slis, ["lag-trend"], failing)
    got = probe_verdict.probe_pass(runner, {}, figures, 10.0)  # type: ignore[arg-type]
    assert (got is not None) is sure
    if got is not None:
        assert got["rate"] == pytest.approx(0.75 * 40_000) and got["cpu"] == 0.125 and got["instances"] == 2


def test_a_table_notes_the_entry_a_probe_answered_inferred() -> None:
    verdicts = [(1_000.0, 1.0, True), (5_000.0, 1.0, False), (9_000.0, 2.0, False), (9_000.0, 3.0, True)]
    built = tables.build_run_table("demand", verdicts, loads=[1_000.0, 5_000.0, 9_000.0], resources=[1.0, 2.0, 3.0],
                                   lower_bound=True, answered={(5_000.0, 2.0): True, (1_000.0, 1.0): False})
    assert built.table == {1_000.0: 1.0, 5_000.0: 2.0, 9_000.0: 3.0}  # a measured verdict wins over an answer
    assert built.notes == {5_000.0: "inferred"}
    without = tables.build_run_table("demand", verdicts, loads=[1_000.0, 5_000.0, 9_000.0],
                                     resources=[1.0, 2.0, 3.0], lower_bound=True)
    assert without.table[5_000.0] == 3.0  # the lower bound's upper estimate, where nothing passed


async def test_an_answer_the_search_never_asks_for_is_no_verdict_of_the_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two half-core instances (given) kept up with the probe; one alone then passed the
    heaviest load, so the lighter ones need one too and are not measured. The probe's
    pass on two for them was never asked for: UC1's table read `3000: 2 (inferred),
    25000: 2 (inferred), 74000: 1` when it counted."""
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    outcome = await batch_run(tmp_path, BatchMachine(8.0), [], cpu=0.5)
    heaviest = max(outcome.table)
    assert [(e.load, int(e.resources)) for e in outcome.records][-1] == (heaviest, 1)
    assert set(outcome.table.values()) == {1}, outcome.table
    assert json.loads((tmp_path / "exp0-result.json").read_text()).get("answered") is None
    assert json.loads((tmp_path / "exp0-sizing.json").read_text())["probePass"]["instances"] == 2
