"""Loads sized from a probe (bench.search.sizing): between the capacity boundaries, within
what the load path pushes, with the CPU limit lowered where one instance takes it all."""

from __future__ import annotations

import math

import pytest
from bench.search import sizing
from bench.search.sizing import ProbeFigures, Sizing


def sensors(load: float) -> float:
    """NumSensors at a 1-s period: the load is its records/s."""
    return load


def period(load: float) -> float:
    """MessagePeriod of 1,000 sensors: a shorter period is more records/s."""
    return 1000 * 1000.0 / load


def levels(load: float) -> float:
    """UC4's nesting levels of 4 children: whole values only."""
    if load != int(load):
        raise ValueError("levels are whole")
    return 4.0 ** load


def probe(capacity: float, *, cpu: float = 0.25, saturated: bool = True, asked: float = 20000,
          written: float | None = 20000) -> ProbeFigures:
    return ProbeFigures(capacity, saturated, asked, written, cpu)


@pytest.mark.parametrize("rate_of", [sensors, period])
def test_three_loads_need_one_two_and_three_instances_clear_of_the_boundaries(rate_of: sizing.RateOf) -> None:
    chosen, lower, _ = sizing.plan(probe(2400), rate_of)
    assert lower is None
    demands = [sizing.demand_of(r, 2400) for r in chosen.values()]
    assert sorted(demands) == [1, 2, 3]
    for rate in chosen.values():
        share = rate / 2400 - math.floor(rate / 2400)
        assert 0.3 <= share <= 0.7, (rate, share)  # near 0.5 of an instance, not at an edge


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
    assert 2.5 * 9000 * lower / 0.25 <= 7000 * 1.001
    assert "lower CPU limit" in why


def test_an_unsaturated_probe_lowers_the_limit_more() -> None:
    _, saturated, _ = sizing.plan(probe(20000), sensors)
    _, unsaturated, _ = sizing.plan(probe(20000, saturated=False), sensors)
    assert saturated is not None and unsaturated is not None and unsaturated < saturated


def test_a_cpu_limit_the_user_gave_is_kept_and_the_advice_says_what_to_do() -> None:
    chosen, lower, _ = sizing.plan(probe(20000, saturated=False), sensors, cpu_fixed="--set sut.cpuPerInstance")
    assert lower is None
    advice = sizing.advice(chosen, 20000, "--set sut.cpuPerInstance")
    assert advice is not None and "--set sut.cpuPerInstance" in advice and "--loads" in advice
    assert "\n" not in advice


def test_no_limit_cannot_be_lowered() -> None:
    assert sizing.lower_cpu(probe(20000, cpu=0), 14000) is None


def test_stepped_loads_take_whole_values_clear_of_boundaries() -> None:
    assert sizing.stepped(levels) and not sizing.stepped(sensors)
    chosen = sizing.choose_loads(capacity=1500, usable=20000, rate_of=levels)
    assert all(v == int(v) for v in chosen)
    assert all(sizing.clear_of_boundary(r, 1500) for r in chosen.values())
    assert len({sizing.demand_of(r, 1500) for r in chosen.values()}) == len(chosen) >= 2


def test_load_for_inverts_either_direction_to_two_digits() -> None:
    assert sizing.load_for(3600, sensors) == 3600
    assert sizing.load_for(3600, period) == pytest.approx(280)  # 1e6 / 3600 = 277.8
    assert sizing.two_digits(12345) == 12000


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
