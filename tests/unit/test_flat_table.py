"""A sized run whose measured table came out flat measures once more where the missing
demand lies (bench.search.flat_table): the cases from docs/performance.md's runs, and the
engine on the fake platform with an eighth-core instance its process's fixed cost starves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench.search import flat_table

from tests.unit.test_sizing import levels, sensors
from tests.unit.test_sizing_machines import sized_table


def test_a_flat_continuous_table_gets_a_heavier_load_and_the_amount_it_needs() -> None:
    """UC3 at an eighth of a core: one instance failed 230 records/s, two kept up with
    1,500, and two instances read 1,150 each in the probe: 3,000 needs three."""
    added = flat_table.extend({230.0: 2.0, 1500.0: 2.0}, {230.0: 230.0, 1500.0: 1500.0}, [1, 2, 3], sensors,
                              usable=80_000, room=16, capacity=1150)
    assert added is not None and added.load == 3000 and added.rate == 3000
    assert added.resources == [1, 2, 3, 4] and "every load needs 2 instance(s)" in added.why
    # a micro-batch figure: above what three instances read (3,759 records/s), for two
    # eighth-core UC3 instances that read 1,253 each in the probe then passed 3,000
    batches = flat_table.extend({200.0: 2.0, 1500.0: 2.0}, {200.0: 200.0, 1500.0: 1500.0}, [1, 2, 3], sensors,
                                usable=9000, room=16, capacity=1253, batches=True)
    assert batches is not None and batches.load == 4000 and "the 3,759 3 instances read" in batches.why
    # without the probe's figure, 1.5 x the heaviest and a margin: 2,500
    alone = flat_table.extend({230.0: 2.0, 1500.0: 2.0}, {230.0: 230.0, 1500.0: 1500.0}, [1, 2, 3], sensors,
                              usable=80_000, room=16)
    assert alone is not None and alone.load == 2500


def test_a_stepped_load_takes_the_next_step_whatever_the_figure() -> None:
    """UC4 at half a core: its probe read 5,547 records/s per instance, so 4,096 was left
    out (one demand, as 1,024); 1,024 passed on one instance. The next step, 4,096, not
    16,384 above what two read in the probe (no amount of half-core instances on two
    cores kept up with that)."""
    added = flat_table.extend({5.0: 1.0}, {5.0: 1024.0}, [1, 2], levels, usable=32768, room=4, capacity=5547,
                              batches=True)
    assert added is not None and (added.load, added.rate) == (6.0, 4096.0) and added.resources == [1, 2, 3]


def test_a_step_between_a_demand_and_no_passing_amount() -> None:
    """UC4 at half a core: 1,024 records/s on one instance, 16,384 on none of five (the
    machine hosts four): the step between, 4,096."""
    added = flat_table.extend({5.0: 1.0, 7.0: None}, {5.0: 1024.0, 7.0: 16384.0}, [1, 2, 3, 4, 5], levels,
                              usable=32768, room=4)
    assert added is not None and (added.load, added.rate) == (6.0, 4096.0)
    assert added.resources == [1, 2, 3, 4, 5] and "a load between them" in added.why


def test_two_steps_as_near_the_middle_take_the_heavier() -> None:
    """UC4 at half a core again: 256 records/s on one instance, 16,384 on none of five.
    1,024 and 4,096 lie as near their middle, 2,048; the heavier is further from the
    demand known below."""
    added = flat_table.extend({4.0: 1.0, 7.0: None}, {4.0: 256.0, 7.0: 16384.0}, [1, 2, 3, 4, 5], levels,
                              usable=32768, room=4)
    assert added is not None and (added.load, added.rate) == (6.0, 4096.0)


def test_a_step_between_comes_before_more_amounts_and_none_passed_gets_two_amounts_more() -> None:
    """UC4 at an eighth of a core: 256 records/s on one instance, 16,384 on none of five,
    where the machine hosts sixteen; two amounts more, 16,384 failed on six and on seven
    (912 against 819), and the table stayed at one demand: the step between comes first.
    Where no load passed, the amounts the machine still hosts are all there is to add
    (UC4's default at 0.207 core: 4,096 failed on one to three, the machine hosts nine)."""
    added = flat_table.extend({4.0: 1.0, 7.0: None}, {4.0: 256.0, 7.0: 16384.0}, [1, 2, 3, 4, 5], levels,
                              usable=32768, room=2 / 0.125)
    assert added is not None and (added.load, added.rate) == (6.0, 4096.0) and "between them" in added.why
    alone = flat_table.extend({6.0: None}, {6.0: 4096.0}, [1, 2, 3], levels, usable=32768, room=2 / 0.207)
    assert alone is not None and alone.load is None and alone.resources == [1, 2, 3, 4, 5]
    assert "no passing amount up to 3 instances and the machine hosts 9" in alone.why


def test_a_curve_or_nowhere_to_go_adds_nothing() -> None:
    assert flat_table.extend({200.0: 1.0, 1300.0: 2.0}, {200.0: 200.0, 1300.0: 1300.0}, [1, 2, 3], sensors,
                             usable=80_000, room=8) is None
    # every load one demand, and the load path pushes nothing heavier
    assert flat_table.extend({200.0: 1.0, 1300.0: 1.0}, {200.0: 200.0, 1300.0: 1300.0}, [1, 2], sensors,
                             usable=2000, room=8) is None
    # no passing amount, no room and no step between
    assert flat_table.extend({6.0: 1.0, 7.0: None}, {6.0: 4096.0, 7.0: 16384.0}, [1, 2, 3, 4], levels,
                             usable=32768, room=4) is None


async def test_an_eighth_core_run_whose_one_instance_starves_still_shows_two_demands(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The process's fixed cost takes 0.12 of an eighth-core instance's 0.125 core: one
    instance reads 200 records/s, two 5,200. The sized loads (500 and 3,000, two demands
    in 120-s experiments) both need two; the run adds 6,000, which needs three, and says
    and keeps it. A resume measures nothing of it again and adds nothing more."""
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    said: list[str] = []
    table, machine = await sized_table(tmp_path, 1.0, 0.125, overhead=0.12, duration=120, said=said)
    stored = json.loads((tmp_path / "exp0-sizing.json").read_text())
    assert stored["loads"] == [500.0, 3000.0, 6000.0], stored
    assert stored["added"]["load"] == 6000.0 and 4.0 in stored["resources"], stored
    assert table == {500.0: 2.0, 3000.0: 2.0, 6000.0: 3.0}
    assert any("the measured table shows 1 demand(s): every load needs 2 instance(s)" in m for m in said), said
    configured = json.loads((tmp_path / "exp0-execution-configuration.json").read_text())
    assert configured["load"]["loadValues"] == [500.0, 3000.0, 6000.0]
    def pairs() -> list[tuple[float, float]]:
        return [(e["load"], e["resources"]) for e in json.loads((tmp_path / "exp0-result.json").read_text())[
            "experiments"]]

    measured = pairs()
    assert (500.0, 2.0) not in measured  # inferred from 3,000 on two; the added load's walk alone ran
    again, _ = await sized_table(tmp_path, 1.0, 0.125, overhead=0.12, duration=120, resume=True)
    assert again == table
    # nothing measured before is measured again (the resumed search walks the three loads
    # in one search, so it may measure 500 on two where the run inferred it)
    assert pairs()[:len(measured)] == measured and len(set(pairs())) == len(pairs())


async def test_resources_the_user_gave_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same starved eighth-core instance with ``--resources 1,2`` given: the heavier
    load would need an amount the user did not give, so nothing is added."""
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    table, _ = await sized_table(tmp_path, 1.0, 0.125, overhead=0.12, duration=120, resources=[1.0, 2.0])
    stored = json.loads((tmp_path / "exp0-sizing.json").read_text())
    assert stored["added"] is None and stored["resources"] is None, stored
    assert set(table.values()) == {2.0}, table


def test_the_advice_goes_where_the_measured_table_shows_a_curve_after_all() -> None:
    """UC4 at half a core: one load sized, so the advice to lower the CPU limit; the step
    added then gave ``5: 1, 6: 2``, and the advice no longer holds."""
    from bench.cli.auto_values import sizing_note
    from bench.search.sizing_record import ProbeFigures, Sizing

    made = Sizing([ProbeFigures(5695.0, True, 16384.0, 16384.0, 0.5)], [5.0, 6.0], [1.0, 2.0, 3.0],
                  advice="too few loads fit what the load path can push to show a curve: ...",
                  added={"load": 6.0, "rate": 4096.0, "resources": [1.0, 2.0, 3.0], "why": "a heavier one"})
    curve = sizing_note(0, made, {5.0: 1.0, 6.0: 2.0})
    assert not any("too few loads fit" in line for line in curve)
    assert "  measured once more, the table being flat: a heavier one" in curve
    assert any("too few loads fit" in line for line in sizing_note(0, made, {5.0: 1.0, 6.0: 1.0}))


def test_fewer_demands_than_sized_at_the_load_path_s_limit_says_what_shows_more() -> None:
    """UC1 on a fast machine: two quarter-core instances kept up with the probe's 40,000
    records/s (20,047 each, a lower bound), the loads were sized for demands 1, 2 and 3,
    and the table read ``4000: 1, 25000: 1, 74000: 2``: a heavier load than 74,000 on
    three instances is more than sizing asks (twice the probe's 40,000; beside one half-core
    instance the path pushed 240,000, so the line says the figure is a guess)."""
    from bench.cli.auto_values import sizing_note
    from bench.search.sizing_record import ProbeFigures, Sizing

    rates = {4000.0: 4000.0, 25000.0: 25000.0, 74000.0: 74000.0}
    made = Sizing([ProbeFigures(20047.0, False, 40000.0, 40000.0, 0.25, 40000.0, 60.0, "batches", 2.0)],
                  list(rates), [1.0, 2.0, 3.0, 4.0, 5.0], rates, 0.25)
    lines = sizing_note(0, made, {4000.0: 1.0, 25000.0: 1.0, 74000.0: 2.0})
    assert any("2 demand(s) where 3 were sized: 2 instance(s) kept up with 74000" in line
               and "no further than 80,000 records/s, twice the 40,000 the load path kept up with" in line
               and "--set sut.cpuPerInstance=0.125" in line and "heavier loads" in line for line in lines), lines
    # a path that fell behind in the probe: its limit is measured, and said as such
    assert "the load path here pushes about 80,000;" in (flat_table.path_bound(
        {4000.0: 1.0, 25000.0: 1.0, 74000.0: 2.0}, rates, 3, 80000.0, 0.25) or "")
    # the curve sized, or a heavier load the path pushes: nothing to say
    assert len(sizing_note(0, made, {4000.0: 1.0, 25000.0: 2.0, 74000.0: 3.0})) == 1
    assert flat_table.path_bound({4000.0: 1.0, 25000.0: 1.0, 50000.0: 2.0}, {**rates, 50000.0: 50000.0}, 3,
                                 80000.0, 0.25) is None
    # the missing demand at the light end: one eighth-core instance failed 5,000 records/s
    # (`5000: 2, 35000: 2, 70000: 3`); a lower limit would not help
    assert flat_table.path_bound({5000.0: 2.0, 35000.0: 2.0, 70000.0: 3.0},
                                 {5000.0: 5000.0, 35000.0: 35000.0, 70000.0: 70000.0}, 3, 80000.0, 0.125) is None
    # no CPU limit to lower, or a load without a passing amount (the flat-table rules' case)
    assert flat_table.path_bound({4000.0: 1.0, 74000.0: 2.0}, rates, 3, 80000.0, 0.0) is None
    assert flat_table.path_bound({4000.0: 1.0, 25000.0: 2.0, 74000.0: None}, rates, 3, 80000.0, 0.25) is None


def test_a_flat_table_at_a_given_half_core_goes_beyond_sizings_guess_of_the_load_path() -> None:
    """UC1 at a given half core: two instances kept up with the probe's 40,000 records/s,
    so sizing took the path to push 80,000 (a guess) and one instance passed every load
    up to 74,000. A heavier load goes to twice that guess, where one instance failed
    160,000 and two kept up with it; a path that fell behind in the probe is its limit."""
    from bench.search.sizing_record import ProbeFigures

    kept_up = ProbeFigures(20055.0, False, 40000.0, 40000.0, 0.5, 40000.0, 60.0, "batches", 2.0)
    assert flat_table.reach(kept_up) == 160_000
    rates = {4000.0: 4000.0, 25000.0: 25000.0, 74000.0: 74000.0}
    table = {4000.0: 1.0, 25000.0: 1.0, 74000.0: 1.0}
    added = flat_table.extend(table, rates, [1, 2, 3, 4], sensors, flat_table.reach(kept_up), room=4,
                              capacity=20055.0, batches=True)
    assert added is not None and 148_000 < added.rate <= 160_000, added
    assert "every load needs 1 instance(s)" in added.why
    # sizing's guess alone (80,000) left the table flat
    assert flat_table.extend(table, rates, [1, 2, 3, 4], sensors, kept_up.usable_rate, room=4, capacity=20055.0,
                             batches=True) is None
    behind = ProbeFigures(20055.0, True, 80000.0, 50000.0, 0.5, 80000.0, 60.0, "batches", 2.0)
    assert flat_table.reach(behind) == behind.usable_rate == 35_000


async def test_the_engine_measures_beyond_the_guess_where_one_instance_keeps_up_with_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A micro-batch SUT at a given half core on a machine four times as fast: one
    instance processes 80,000 records/s, what sizing took the path to push, so every
    sized load needs one; the load added beyond that guess needs two."""
    from tests.unit.test_sizing_machines import BatchMachine, batch_run

    monkeypatch.setattr("os.cpu_count", lambda: 2)
    outcome = await batch_run(tmp_path, BatchMachine(4.0), [], cpu=0.5)
    stored = json.loads((tmp_path / "exp0-sizing.json").read_text())
    added = stored["added"]
    assert added is not None and added["rate"] > 2 * stored["probes"][-1]["load_rate"], stored  # the guess
    table = outcome.table
    assert table[added["load"]] == 2.0 and len({d for d in table.values() if d is not None}) == 2, table


def test_the_line_under_a_table_still_flat_counts_the_sized_loads_not_the_one_added() -> None:
    """UC1 at a given half core: one instance passed 74,000 and then the 150,000 added
    beyond sizing's guess of the path. Three loads were sized for three demands; the
    line said "where 4 were sized", the added load counted with them."""
    from bench.cli.auto_values import sizing_note
    from bench.search.sizing_record import ProbeFigures, Sizing

    rates = {4000.0: 4000.0, 25000.0: 25000.0, 74000.0: 74000.0, 150000.0: 150000.0}
    made = Sizing([ProbeFigures(20049.0, False, 40000.0, 40000.0, 0.5, 40000.0, 60.0, "batches", 2.0)],
                  list(rates), [1.0, 2.0, 3.0, 4.0, 5.0], rates, 0.5,
                  added={"load": 150000.0, "rate": 150000.0, "resources": [1.0, 2.0, 3.0, 4.0, 5.0],
                         "why": "every load needs 1 instance(s): a heavier one"})
    lines = sizing_note(0, made, {4000.0: 1.0, 25000.0: 1.0, 74000.0: 1.0, 150000.0: 1.0})
    assert any("1 demand(s) where 3 were sized" in line and "no further than 150,000 records/s" in line
               for line in lines), lines
