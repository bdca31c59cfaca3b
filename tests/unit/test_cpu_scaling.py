"""One instance's records/s at a lowered CPU limit, a Spark process's fixed cost taken off
first (``bench.search.cpu_scaling``), and UC4's steps sized with it."""

from __future__ import annotations

import pytest
from bench.search import cpu_scaling, sizing
from bench.search.sizing_record import ProbeFigures

from tests.unit.test_sizing import levels

#: UC4's default probe: two quarter-core instances, 6,653 records/s each (6fbe289)
UC4 = ProbeFigures(6653.0, True, 16384.0, 16384.0, 0.25, instances=2.0)


def sustained(instances: int, cpu: float, fixed: float = 0.1) -> float:
    """What a SUT process whose fixed cost is ``fixed`` core sustains in all, its figure
    taken from UC4's probe (the fake platform's model, tests/unit/test_sizing_machines.py)."""
    per_core = UC4.per_instance_rate * UC4.instances / (UC4.instances * UC4.cpu - fixed)
    return per_core * max(instances * cpu - fixed, 0.0)


def test_without_a_fixed_cost_the_figure_scales_in_proportion() -> None:
    assert cpu_scaling.rate_at(UC4, 0.125) == pytest.approx(6653 / 2)
    assert cpu_scaling.cpu_for(UC4, 6653 / 2) == pytest.approx(0.125)


@pytest.mark.parametrize("cpu", [0.06, 0.118, 0.2, 0.25, 0.5])
def test_the_estimate_and_the_limit_for_a_figure_are_inverse(cpu: float) -> None:
    rate = cpu_scaling.rate_at(UC4, cpu, 0.1)
    assert cpu_scaling.cpu_for(UC4, rate, 0.1) == pytest.approx(cpu)
    assert rate * UC4.instances == pytest.approx(sustained(2, cpu))


def test_a_fixed_cost_makes_a_lower_limit_read_less_than_in_proportion() -> None:
    """At 0.118 core two UC4 instances fell 248 records/s short of 4,096 in one run of
    two: in proportion each was taken to read 3,140."""
    assert cpu_scaling.rate_at(UC4, 0.118) == pytest.approx(3140, rel=0.001)
    assert 4096 / 1.15 < 2 * cpu_scaling.rate_at(UC4, 0.118, 0.1) < 4096 * 1.15  # on the boundary
    assert cpu_scaling.rate_at(UC4, 0.04, 0.1) == 0.0  # below the fixed cost: nothing left


def test_a_fixed_cost_that_takes_all_the_probes_cpu_falls_back_to_the_proportion() -> None:
    eighth = ProbeFigures(1000.0, True, 2000.0, 2000.0, 0.05, instances=2.0)
    assert cpu_scaling.rate_at(eighth, 0.025, 0.1) == pytest.approx(500)
    assert cpu_scaling.cpu_for(eighth, 500, 0.1) == pytest.approx(0.025)


def test_uc4s_steps_get_a_limit_where_4096_is_clear_of_both_boundaries() -> None:
    """In proportion the limit was 0.118 core: 4,096 on two such instances lies on the
    boundary. With the fixed cost taken off, one instance at the new limit falls clearly
    behind 4,096 and two keep up with room, as the loads' demands 1 and 2 ask."""
    proportional = sizing.step_cpu(UC4, {4.0: 256.0, 7.0: 16384.0}, levels, (0.2, 1.3))
    assert proportional is not None and proportional[0] == pytest.approx(0.118, abs=0.001)
    assert sustained(2, proportional[0]) < 4096 * 1.15
    stepped = sizing.step_cpu(UC4, {4.0: 256.0, 7.0: 16384.0}, levels, (0.2, 1.3), fixed_cpu=0.1)
    assert stepped is not None
    cpu, rates = stepped
    assert 0.13 <= cpu <= 0.16, cpu
    assert 4096.0 in rates and 256.0 in rates
    assert sustained(1, cpu) < 4096 / 1.15 and sustained(2, cpu) > 4096 * 1.15
    assert sustained(1, cpu) > 256 * 1.15  # the lightest step still on one
    chosen, lower, why = sizing.plan(UC4, levels, multiples=(0.2, 1.3), fixed_cpu=0.1)
    assert lower == cpu and "steps" in why
    again, _, _ = sizing.plan(ProbeFigures(cpu_scaling.rate_at(UC4, cpu, 0.1), True, 16384.0, 16384.0, cpu,
                                           instances=2.0), levels, multiples=(0.2, 1.3), cpu_fixed="estimated")
    assert again == {4.0: 256.0, 6.0: 4096.0}
