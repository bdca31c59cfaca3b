"""Loads sized from a probe (bench.search.sizing): between the capacity boundaries, within
what the load path pushes, with the CPU limit lowered where one instance takes it all."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from bench.analysis.report import build_report
from bench.analysis.runs import open_run
from bench.api import ExperimentSpec, Sample
from bench.config.model import parse_benchmark, parse_execution
from bench.execution import autosize
from bench.execution.config import RunConfig
from bench.execution.run import Engine
from bench.search import load_values, sizing, sizing_record
from bench.search.sizing_record import AutoSize, ProbeFigures, Sizing

from tests.unit import verdict_runs
from tests.unit.fakes import FAKE_USE_CASE, FakePlatform, fake_benchmark
from tests.unit.test_engine import SimClock


def sensors(load: float) -> float:
    """NumSensors at a 1-s period: the load is its records/s."""
    return load


def period(load: float) -> float:
    """MessagePeriod of 1,000 sensors: a shorter period is more records/s."""
    return 1000 * 1000.0 / load


def levels(load: float) -> float:
    """UC4's nesting levels of 4 children: whole values only."""
    return 4.0 ** int(load)  # a parameter of type int: 4.5 levels are 4


def probe(capacity: float, *, cpu: float = 0.25, saturated: bool = True, asked: float = 20000,
          written: float | None = 20000) -> ProbeFigures:
    return ProbeFigures(capacity, saturated, asked, written, cpu)


@pytest.mark.parametrize("rate_of", [sensors, period])
def test_three_loads_need_one_two_and_three_instances_clear_of_the_boundaries(rate_of: load_values.RateOf) -> None:
    chosen, lower, _ = sizing.plan(probe(2400), rate_of)
    assert lower is None
    demands = [sizing.demand_of(r, 2400) for r in chosen.values()]
    assert sorted(demands) == [1, 2, 3]
    for rate in chosen.values():
        share = rate / 2400 - math.floor(rate / 2400)
        # inside an instance's share, nearer its lower edge than its middle, never at an edge
        assert sizing.BOUNDARY_MARGIN <= share <= 0.5, (rate, share)


def test_decreasing_loads_come_as_their_values_ascending() -> None:
    chosen, _, _ = sizing.plan(probe(2400), period)
    assert list(chosen) == sorted(chosen)
    assert chosen[min(chosen)] == max(chosen.values())  # the shortest period asks the most


def test_loads_the_load_path_cannot_push_are_left_out() -> None:
    """The generators wrote 7,000 of 20,000: 70 % of that is the heaviest usable load."""
    chosen, _, _ = sizing.plan(probe(2400, written=7000), sensors)
    assert max(chosen.values()) <= 4900
    assert len(chosen) == 2


def test_an_instance_that_takes_all_the_path_pushes_gets_a_lower_cpu_limit() -> None:
    chosen, lower, why = sizing.plan(probe(9000, written=10000), sensors)
    assert lower is not None and lower < 0.25
    # at the lower limit, proportionally slower, the heaviest multiple fits the path
    assert max(sizing.MULTIPLES) * 9000 * lower / 0.25 <= 7000 * 1.001
    assert "lower CPU limit" in why


def test_an_unsaturated_probe_lowers_the_limit_more() -> None:
    _, saturated, _ = sizing.plan(probe(20000), sensors)
    _, unsaturated, _ = sizing.plan(probe(20000, saturated=False), sensors)
    assert saturated is not None and unsaturated is not None and unsaturated < saturated


def test_a_micro_batch_sut_that_kept_up_with_the_probe_is_probed_again_at_half_its_limit() -> None:
    """Two quarter-core UC1 instances kept up with 40,000 records/s (20,047 each): twice
    the table read ``4000: 1, 25000: 1, 74000: 2``. At an eighth of a core they fell
    behind it (17,863 each) and the loads sized showed three demands."""
    kept_up = ProbeFigures(20047, False, 40000, 40103, 0.25, 40000, 26, "batches", 2)
    chosen, lower, why = sizing.plan(kept_up, sensors)
    assert lower == 0.125 and "lower CPU limit per instance (0.125 core)" in why
    # not for a SUT the heavier probe measures, a saturated one, a fallen-behind path, a given limit
    assert sizing.halved(ProbeFigures(20047, False, 40000, 40103, 0.25, 40000, 26, "lag", 2)) is None
    assert sizing.halved(ProbeFigures(17863, True, 40000, 40103, 0.25, 40000, 26, "batches", 2)) is None
    assert sizing.halved(ProbeFigures(20047, False, 40000, 30000, 0.25, 40000, 26, "batches", 2)) is None
    assert sizing.plan(kept_up, sensors, cpu_fixed="--set sut.cpuPerInstance")[1] is None
    assert sizing.halved(ProbeFigures(20047, False, 40000, 40103, 0.08, 40000, 26, "batches", 2)) is None


def test_a_cpu_limit_the_user_gave_is_kept_and_the_advice_says_what_to_do() -> None:
    chosen, lower, _ = sizing.plan(probe(40000, saturated=False), sensors, cpu_fixed="--set sut.cpuPerInstance")
    assert lower is None
    advice = sizing.advice(chosen, 40000, "--set sut.cpuPerInstance")
    assert advice is not None and "--set sut.cpuPerInstance" in advice and "--loads" in advice
    assert "\n" not in advice


def test_no_limit_cannot_be_lowered() -> None:
    assert sizing.lower_cpu(probe(20000, cpu=0), 14000) is None


def test_stepped_loads_take_whole_values_clear_of_boundaries() -> None:
    assert len(load_values.candidates_near(1500, levels)) > 1 and len(load_values.candidates_near(1500, sensors)) == 1
    chosen = sizing.choose_loads(capacity=1500, usable=20000, rate_of=levels)
    assert all(v == int(v) for v in chosen)
    assert all(sizing.clear_of_boundary(r, 1500) for r in chosen.values())
    assert len({sizing.demand_of(r, 1500) for r in chosen.values()}) == len(chosen) >= 2


def test_a_stepped_loads_lightest_is_the_heaviest_step_below_its_multiple() -> None:
    """UC4 read 2,766 records/s per instance: 0.2 x that is 553, between the steps 256 and
    1,024; one instance failed 1,024 in every run. The lighter step is taken, though
    nearer zero than the boundary margin: it is never further from a demand of one."""
    chosen = sizing.choose_loads(capacity=2766, usable=32768, rate_of=levels, multiples=(0.2, 1.3))
    assert chosen == {4.0: 256.0, 6.0: 4096.0}
    # a continuous load keeps its multiples, at the roundest values near them (553 and 3,596)
    assert sizing.choose_loads(capacity=2766, usable=32768, rate_of=sensors, multiples=(0.2, 1.3)) == {
        500.0: 500.0, 4000.0: 4000.0}


def test_a_stepped_load_sized_from_a_lower_bound_takes_the_step_its_instances_kept_up_with() -> None:
    """Two half-core UC4 instances kept up with the probe's 16,384 records/s (8,305 each, a
    lower bound). No step lies clear of a boundary at 1.3 x (4,096 asks 0.49 x, 16,384
    1.97 x), and the run sized one load: the step the instances kept up with is the
    heaviest, asking at most two. From a saturated figure the boundaries stand."""
    chosen, lower, _ = sizing.plan(probe(8305, saturated=False, cpu=0.5, asked=16384, written=16384), levels,
                                   multiples=(0.2, 1.3), cpu_fixed="--set sut.cpuPerInstance")
    assert chosen == {5.0: 1024.0, 7.0: 16384.0} and lower is None
    assert sizing.choose_loads(capacity=8305, usable=32768, rate_of=levels, multiples=(0.2, 1.3)) == {5.0: 1024.0}
    # a continuous load is not a step: its heaviest keeps the lower bound's path fill
    assert 16384.0 not in sizing.choose_loads(capacity=8305, usable=32768, rate_of=sensors, multiples=(0.2, 1.3),
                                              lower_bound=True).values()


def test_a_stepped_load_at_the_users_cpu_limit_takes_the_step_below_rather_than_one_far_beyond() -> None:
    """Eighth-core UC4 instances (a limit the user gave) read 4,596 records/s each: the
    steps 4,096 and 16,384 ask 0.89 and 3.6 x that. 16,384 was sized, and 2 to 5
    instances failed it; 4,096 then failed on one and passed on two. The step below is
    sized, and the resources reach one above the two it asks."""
    figures = probe(4596, cpu=0.125, asked=16384, written=16384)
    chosen, lower, why = sizing.plan(figures, levels, multiples=(0.2, 1.3), cpu_fixed="--set sut.cpuPerInstance")
    assert chosen == {4.0: 256.0, 6.0: 4096.0} and lower is None
    assert "step below" in why and "0.89 x" in why
    assert sizing.resources_for(list(chosen.values()), 4596) == [1.0, 2.0, 3.0]
    assert sizing.advice(chosen, 4596, "--set sut.cpuPerInstance") is None
    # where bench may lower the limit it does that instead; a step at the multiple's own
    # demand (1.48 x) stands; a continuous load keeps its multiples
    assert sizing.plan(figures, levels, multiples=(0.2, 1.3))[1] is not None
    assert sizing.plan(probe(2766, asked=16384, written=16384), levels, multiples=(0.2, 1.3),
                       cpu_fixed="given")[0] == {4.0: 256.0, 6.0: 4096.0}
    assert sizing.step_below(figures, {256.0: 256.0, 16384.0: 16384.0}, sensors, (0.2, 1.3)) is None
    # no step in the top of one instance's share: the step beyond stays
    assert sizing.plan(probe(6000, cpu=0.125, asked=16384, written=16384), levels, multiples=(0.2, 1.3),
                       cpu_fixed="given")[0] == {5.0: 1024.0, 7.0: 16384.0}


def test_load_for_inverts_either_direction_to_two_digits() -> None:
    assert load_values.load_for(3600, sensors) == 3600
    assert load_values.load_for(3600, period) == pytest.approx(280)  # 1e6 / 3600 = 277.8
    assert load_values.two_digits(12345) == 12000


def test_resources_leave_room_above_the_heaviest_demand() -> None:
    assert sizing.resources_for([1200, 3600, 6000], 2400) == [1.0, 2.0, 3.0, 4.0]


def test_the_sizing_file_reads_back_as_written() -> None:
    made = Sizing([probe(2400)], [1200.0, 3600.0], [1.0, 2.0, 3.0], {1200.0: 1200.0, 3600.0: 3600.0}, 0.125,
                  0.25, "why", None)
    again = Sizing.from_json(made.to_json())
    assert again == made
    assert Sizing.from_json({"probes": "broken"}) is None
    lines = made.describe()
    assert any("2,400 records/s" in line for line in lines)
    assert any("CPU per instance 0.125 (the use case's 0.25)" in line for line in lines)


class CommittingPlatform(FakePlatform):
    """The fake platform with the SUT's committed records per second (``processed-rate``)."""

    async def sample(self, spec: ExperimentSpec) -> Sample:
        before = self.lag
        got = await super().sample(spec)
        gen = next(o for o in spec.objects if o["kind"] == "BenchGenerator")
        rate = gen["spec"]["sensors"] * 1000 / gen["spec"]["periodMs"]
        return Sample(got.timestamp, {**got.values, "processed-rate": rate - (self.lag - before) / self.interval})


async def test_a_run_left_to_bench_is_sized_said_kept_and_resumed_without_a_new_probe(tmp_path: Path) -> None:
    """The fake instances process 1,000 records/s each: the loads come out at 500, 1,500
    and 2,500, the table shows 1, 2, 3; a resume reads the sizing back and probes nothing."""
    registry = verdict_runs.registry()
    execution = parse_execution({
        "benchmark": "fake", "load": {"loadType": "NumSensors", "loadValues": [4500, 6500]},
        "resources": {"resourceType": "Instances", "resourceValues": [1, 2]},
        "execution": {"duration": 90, "warmup": 10, "repetitions": 1, "afterTeardownDelay": 0,
                      "sampleInterval": 5, "earlyStop": False}})

    def cfg(resume: bool) -> RunConfig:
        return RunConfig(use_case=FAKE_USE_CASE, benchmark=parse_benchmark(fake_benchmark()), execution=execution,
                         results_dir=tmp_path, retries=0, resume=resume, auto=AutoSize(True, True))

    said: list[str] = []
    clock = SimClock()
    platform = CommittingPlatform()
    outcome = await Engine(registry, cfg(False), platform, lambda m, t: said.append(m), clock=clock,
                           sleep=clock.sleep).run()
    assert platform.experiments[0] == (autosize.PROBE_RATE_PER_CORE * (os.cpu_count() or 1),
                                      autosize.PROBE_INSTANCES)  # the probe
    assert outcome.table == {200.0: 1.0, 1300.0: 2.0, 2500.0: 3.0}
    assert outcome.sizing is not None and outcome.sizing.resources == [1.0, 2.0, 3.0, 4.0]
    first = said.index(next(m for m in said if m.startswith("sized for this machine")))
    assert all("load=" not in m or "probe" in m for m in said[:first])  # said before the first experiment
    stored = json.loads((tmp_path / f"exp{outcome.exp_id}-sizing.json").read_text())
    assert stored["loads"] == [200.0, 1300.0, 2500.0]
    configured = json.loads((tmp_path / f"exp{outcome.exp_id}-execution-configuration.json").read_text())
    assert configured["load"]["loadValues"] == [200.0, 1300.0, 2500.0]
    assert "sizing probe" in build_report([open_run(tmp_path)])

    said.clear()
    again = CommittingPlatform()
    resumed = await Engine(registry, cfg(True), again, lambda m, t: said.append(m), clock=clock,
                           sleep=clock.sleep).run()
    assert again.experiments == []  # every experiment answered from disk, no probe
    assert resumed.table == outcome.table
    assert any("not probed again" in m for m in said)


def test_uc1_two_instances_fit_three_demands_at_the_probe_s_rate() -> None:
    """Two quarter-core UC1 instances read 20,051 records/s each of the probe's 40,000 on
    a quiet 2-core machine. The path kept up, so loads up to twice the probe's (80,000
    were pushed beside three instances) fit three demands at the use case's CPU limit; a
    path that fell behind the probe (30,000 of 40,000) has the limit lowered."""
    asked = autosize.PROBE_RATE_PER_CORE * 2
    chosen, lower, _ = sizing.plan(probe(20051.0, asked=asked, written=asked), sensors)
    assert lower is None
    assert sorted(sizing.demand_of(r, 20051.0) for r in chosen.values()) == [1, 2, 3]
    assert asked < max(chosen.values()) <= sizing_record.PATH_HEADROOM * asked
    _, lower, _ = sizing.plan(probe(20051.0, asked=asked, written=30000.0), sensors)
    assert lower is not None


def test_a_micro_batch_figure_puts_the_third_load_most_of_the_way_to_the_path() -> None:
    """Two UC1 instances read 23,172 records/s each behind their input; in runs two passed
    53,000 (2.3 x) and failed 64,000, which three passed. The third load goes three
    quarters of the way from 2.3 x to the 80,000 the path pushes; a figure read from
    committed offsets (the calibrated SUT, in proportion) keeps its multiple."""
    asked = autosize.PROBE_RATE_PER_CORE * 2
    batches = ProbeFigures(23172.0, True, asked, asked, 0.25, source="batches", instances=2)
    chosen, lower, why = sizing.plan(batches, sensors)
    light, middle, heavy = chosen.values()
    assert "the heaviest 75% of the way from 2.3 x to the 80,000 records/s the load path pushes" in why
    assert lower is None and light == 4000 and middle == 30000
    # three quarters of the way, 73,324, at its roundest value not above it
    assert 2.3 * 23172 + 0.75 * (2 * asked - 2.3 * 23172) == pytest.approx(73324, abs=1) and heavy == 70000
    committed = ProbeFigures(23172.0, True, asked, asked, 0.25, source="committed", instances=2)
    assert max(sizing.plan(committed, sensors)[0].values()) == 50000
    # two multiples (120-s experiments): no third demand to stretch
    assert max(sizing.plan(batches, sensors, multiples=(0.2, 1.3))[0].values()) == 30000


def test_the_demands_shown_are_as_many_as_their_experiments_time_fits() -> None:
    """k demands take at least 2k - 1 experiments: UC1's 90-s ones fit 3 in the budget,
    UC2's 120-s ones 2, never fewer than 2 nor more than asked."""
    assert sizing.demands_within(60) == 3 and sizing.demands_within(90) == 3
    assert sizing.demands_within(120) == 2 and sizing.demands_within(300) == 2
    assert sizing.demands_within(90 * 3) == 2  # three repetitions of 90 s
    assert sizing.demands_within(60, most=1) == 1  # one resource amount given: one demand to show


def test_a_dry_run_says_which_values_a_probe_will_size() -> None:
    """Without it the placeholders it prints (load=500) read as the loads a run measures."""
    from bench.cli.commands import cli
    from click.testing import CliRunner

    sized = CliRunner().invoke(cli, ["run", "--plugin", "calibrated", "--dry-run"])
    assert sized.exit_code == 0, sized.output
    assert "# loads and resources: sized for this machine by a probe of two instances" in sized.output
    half = CliRunner().invoke(cli, ["run", "--plugin", "calibrated", "--loads", "500", "--dry-run"])
    assert "# resources: sized for this machine" in half.output and "loads and resources" not in half.output
    given = CliRunner().invoke(cli, ["run", "--plugin", "calibrated", "--loads", "500", "--resources", "1,2",
                                     "--dry-run"])
    assert given.exit_code == 0 and "sized for this machine" not in given.output


def test_a_lower_bound_sends_the_heaviest_load_up_to_what_the_path_pushes() -> None:
    """UC1's two instances kept up with the probe's 40,000 records/s (20,075 each, a lower
    bound), then two kept up with the 46,000 sized for three. Where the figure is only a
    lower bound the heaviest load goes up to what the path pushes; a saturated probe's
    stays at its multiple."""
    asked = 40_000.0
    bound, _, _ = sizing.plan(probe(20075.0, saturated=False, asked=asked, written=asked), sensors)
    usable = sizing_record.PATH_HEADROOM * asked
    assert sorted(bound)[:2] == [4000, 30000] and 0.9 * usable <= max(bound.values()) <= usable, bound
    assert len({sizing.demand_of(r, 20075.0) for r in bound.values()}) == 3
    measured, _, _ = sizing.plan(probe(20075.0, asked=asked, written=asked), sensors)
    assert sorted(measured) == [4000, 30000, 50000]


def test_only_a_probe_that_kept_up_and_is_not_micro_batch_is_probed_heavier() -> None:
    kept_up = probe(20000, saturated=False)
    assert sizing.probe_heavier(kept_up)
    assert not sizing.probe_heavier(probe(20000))  # saturated: its figure is the capacity
    assert not sizing.probe_heavier(probe(20000, saturated=False, written=10000))  # the path fell behind
    kept_up.source = "batches"
    assert not sizing.probe_heavier(kept_up)  # a micro-batch SUT reads what it is given


def test_a_lower_bound_starts_each_walk_one_amount_lower() -> None:
    """The instances are faster than a lower bound says: UC1's 46,000 records/s, predicted
    3 from 20,075 per instance, passed on 3 and 2 and failed on 1 (three experiments where
    a start at 2 decides it in two). A saturated figure starts at its prediction, at most
    one amount above the lighter sized load's."""
    resources = [1.0, 2.0, 3.0, 4.0, 5.0]
    rates = {6000.0: 6000.0, 26000.0: 26000.0, 74000.0: 74000.0}

    def made(saturated: bool) -> Sizing:
        return Sizing([probe(20075.0, saturated=saturated, asked=40000, written=40000)], list(rates), resources,
                      rates)

    # saturated: each walk starts at most one amount above the lighter load's (predicted 4)
    assert autosize.search_guesses(made(True), "demand", list(rates), resources) == {
        6000.0: 0, 26000.0: 1, 74000.0: 2}
    given = Sizing([probe(20075.0, asked=40000, written=40000)], None, resources, rates)  # the user's loads
    assert autosize.search_guesses(given, "demand", list(rates), resources) == {6000.0: 0, 26000.0: 1, 74000.0: 3}
    assert autosize.search_guesses(made(False), "demand", list(rates), resources) == {
        6000.0: 0, 26000.0: 0, 74000.0: 2}
    assert made(False).lower_bound and not made(True).lower_bound


def test_a_flood_far_above_the_instances_is_probed_again_near_them() -> None:
    """Two eighth-core instances of a CPU-bound SUT read 193 records/s each of 40,000 on
    2 cores, where one alone then passed 251: probed again at twice what they read. A
    probe near its instances' records/s, or one that kept up, is not repeated."""
    flood = ProbeFigures(193.0, True, 40_000.0, 40_000.0, 0.125, instances=2.0)
    assert sizing.probe_closer(flood) == pytest.approx(sizing.CLOSER * 386.0)
    near = ProbeFigures(16_475.0, True, 40_000.0, 40_000.0, 0.25, instances=2.0)  # UC2's
    assert sizing.probe_closer(near) is None
    kept_up = ProbeFigures(193.0, False, 40_000.0, 40_000.0, 0.125, instances=2.0)
    assert sizing.probe_closer(kept_up) is None


def test_the_next_probe_is_heavier_nearer_or_none() -> None:
    assert sizing.next_probe(probe(20000, saturated=False, asked=40000, written=40000)) == 80000
    assert sizing.next_probe(ProbeFigures(193.0, True, 40_000.0, 40_000.0, 0.125, instances=2.0)) == \
        pytest.approx(sizing.CLOSER * 386.0)
    assert sizing.next_probe(probe(16475, asked=40000, written=40000)) is None


async def test_a_sized_run_predicts_from_its_sizing_probe_without_a_second_one(tmp_path: Path) -> None:
    """``--predict`` on a sized run: the same experiments as without it (no second probe),
    and the prediction from the sizing probe's 1,000 records/s is right for every load."""
    registry = verdict_runs.registry()
    execution = parse_execution({
        "benchmark": "fake", "load": {"loadType": "NumSensors", "loadValues": [4500]},
        "resources": {"resourceType": "Instances", "resourceValues": [1]},
        "execution": {"duration": 90, "warmup": 10, "repetitions": 1, "afterTeardownDelay": 0,
                      "sampleInterval": 5, "earlyStop": False}})
    ran: dict[bool, list[tuple[float, float]]] = {}
    said: list[str] = []
    for predict in (False, True):
        cfg = RunConfig(use_case=FAKE_USE_CASE, benchmark=parse_benchmark(fake_benchmark()), execution=execution,
                        results_dir=tmp_path / str(predict), retries=0, auto=AutoSize(True, True), predict=predict)
        clock = SimClock()
        platform = CommittingPlatform()
        outcome = await Engine(registry, cfg, platform, lambda m, t: said.append(m), clock=clock,
                               sleep=clock.sleep).run()
        ran[predict] = platform.experiments
        assert outcome.table == {200.0: 1.0, 1300.0: 2.0, 2500.0: 3.0}
    assert ran[True] == ran[False]
    stored = json.loads(next((tmp_path / "True").glob("exp*-prediction.json")).read_text())
    assert stored["hitRate"] == 1.0 and len(stored["entries"]) == 3, stored
    assert stored["probe"]["per_instance_rate"] == pytest.approx(1000, rel=0.05), stored
    assert "probe: the sizing probe's figure, not measured again" in said


def test_a_stepped_load_without_a_step_at_the_heaviest_multiple_gets_a_lower_cpu_limit() -> None:
    """UC4 at 4,995 records/s per instance: its steps 1,024, 4,096, 16,384 needed 1 and 4
    instances. At the limit that puts 4,096 at 1.3 instances they need 1 and 2."""
    figures = probe(4995, asked=16384, written=16384)
    chosen, lower, why = sizing.plan(figures, levels, multiples=(0.2, 1.3))
    assert sorted(sizing.demand_of(r, 4995) for r in chosen.values()) == [1, 4]  # what was chosen before
    assert lower is not None and 0.15 <= lower <= 0.16, (lower, why)
    slower = 4995 * lower / 0.25
    again, none, _ = sizing.plan(probe(slower, cpu=lower, asked=16384, written=16384), levels,
                                 multiples=(0.2, 1.3), cpu_fixed="estimated")
    assert none is None and again == {4.0: 256.0, 6.0: 4096.0}
    assert sorted(sizing.demand_of(r, slower) for r in again.values()) == [1, 2]
    assert "steps" in why
    # a limit the user gave is kept; a continuous load is never lowered for its steps
    assert sizing.plan(figures, levels, multiples=(0.2, 1.3), cpu_fixed="given")[1] is None
    assert sizing.step_cpu(figures, {}, sensors, (0.2, 1.3)) is None


async def test_a_probe_that_saw_no_batch_end_is_repeated_at_a_tenth_of_its_load(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Eighth-core UC3 instances at 40,000 records/s committed nothing in 88 s: the probe
    was inconclusive and the run fell back to the use case's loads. Probed again at a
    tenth of the load, the instances end batches and the loads are sized."""
    from bench.search.prediction import ProbeInconclusive

    calls: list[float] = []
    real = autosize.measure

    def first_inconclusive(*args: object, **kwargs: object) -> object:
        calls.append(float(args[2]))  # type: ignore[arg-type]
        if len(calls) == 1:
            raise ProbeInconclusive("its lag rose at the whole input rate between commits and fell 0 time(s)")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(autosize, "measure", first_inconclusive)
    execution = parse_execution({
        "benchmark": "fake", "load": {"loadType": "NumSensors", "loadValues": [4500]},
        "resources": {"resourceType": "Instances", "resourceValues": [1]},
        "execution": {"duration": 90, "warmup": 10, "repetitions": 1, "afterTeardownDelay": 0,
                      "sampleInterval": 5, "earlyStop": False}})
    cfg = RunConfig(use_case=FAKE_USE_CASE, benchmark=parse_benchmark(fake_benchmark()), execution=execution,
                    results_dir=tmp_path, retries=0, auto=AutoSize(True, True))
    said: list[str] = []
    clock = SimClock()
    outcome = await Engine(verdict_runs.registry(), cfg, CommittingPlatform(), lambda m, t: said.append(m),
                           clock=clock, sleep=clock.sleep).run()
    flood = autosize.PROBE_RATE_PER_CORE * (os.cpu_count() or 1)
    assert calls == [flood, flood / sizing.FLOOD_RATIO]
    assert any("probing again at a tenth of its load" in m for m in said)
    assert outcome.sizing is not None and outcome.sizing.loads == [200.0, 1300.0, 2500.0]


def test_two_probes_a_tenth_apart_give_the_same_loads() -> None:
    """UC1's two-instance probe read 11,205 and 12,598 records/s per instance in two runs on
    one machine, and the two-digit loads followed (2,200, 15,000, 53,000 and 2,500,
    16,000, 54,000): two tables for one curve. The roundest values near the targets are
    the same for both, clear of both figures' boundaries."""
    asked = autosize.PROBE_RATE_PER_CORE * 2
    figures = (11205.0, 12598.0)
    tables = [sizing.plan(ProbeFigures(c, True, asked, asked, 0.25, source="batches", instances=2), sensors)[0]
              for c in figures]
    assert tables[0] == tables[1] == {2000.0: 2000.0, 15000.0: 15000.0, 60000.0: 60000.0}
    for c in figures:
        assert [sizing.demand_of(r, c) for r in tables[0].values()][:2] == [1, 2]
        assert all(sizing.clear_of_boundary(r, c) for r in list(tables[0].values())[:2])


def test_the_roundest_value_inside_the_band_comes_first() -> None:
    assert load_values.round_candidates(1681, 2241, 2241, sensors)[0] == (2000.0, 2000.0)
    # no one-digit value inside: a two-digit one ending in 5, then the nearest two digits
    assert load_values.round_candidates(12667, 16752, 14567, sensors)[:2] == [(15000.0, 15000.0),
                                                                              (14000.0, 14000.0)]
    assert load_values.round_candidates(1100, 1190, 1150, sensors)[0] == (1100.0, 1100.0)
    # a message period: the band is in records/s, the roundness in the load's own value
    value, rate = load_values.round_candidates(3130, 4140, 3600, period)[0]
    assert value == 300.0 and rate == pytest.approx(1e6 / 300)
    assert load_values.round_candidates(1101, 1190, 1150, levels) == []  # no step inside
