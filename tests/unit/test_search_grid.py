"""The grid search (bench.search.grid) on simulated verdicts: exact demand at every point
of two load dimensions, in fewer experiments than grid size x resources."""

from __future__ import annotations

import asyncio
import itertools
import math

import pytest
from bench.search.grid import INFERRED, UNDECIDED, GridProblem, grid_order, grid_search


def model(capacity: float, key_cost: float):  # noqa: ANN201 - a test's closure
    """Records/s = keys x per-key rate; each key costs ``key_cost`` of an instance's capacity share."""
    def demand(keys: float, rate: float) -> int:
        return math.ceil(keys * rate * (1 + key_cost * keys) / capacity - 1e-9)
    return demand


def run_grid(loads, loads2, resources, demand, errors=frozenset()):  # noqa: ANN001, ANN201
    asked: list[tuple[float, float, float]] = []

    async def run(a: float, b: float, r: float) -> bool | None:
        asked.append((a, b, r))
        if (a, b, r) in errors:
            return None
        return demand(a, b) <= r

    result = asyncio.run(grid_search(GridProblem(loads, loads2, resources, run)))
    return result, asked


@pytest.mark.parametrize("key_cost", [0.0, 0.001, 0.004])
def test_the_grid_is_exact_and_cheaper_than_every_experiment(key_cost: float) -> None:
    keys, rates, resources = [100, 200, 400, 800], [1, 2, 4], [1, 2, 3, 4, 5, 6, 7, 8]
    demand = model(1000, key_cost)
    result, asked = run_grid(keys, rates, resources, demand)
    for a, b in itertools.product(keys, rates):
        d = demand(a, b)
        assert result.demand[(a, b)] == (float(d) if d <= resources[-1] else None), (a, b, d)
    assert len(asked) == len(set(asked)) == result.experiments
    assert result.experiments < len(keys) * len(rates) * len(resources)
    # halving between the bounds: at most log2 of the resource count a point, not all of them
    assert result.experiments <= len(keys) * len(rates) * math.ceil(math.log2(len(resources) + 1))
    assert result.experiments < len(keys) * len(rates) * len(resources) / 2


def test_a_flat_grid_is_one_experiment_and_the_rest_inferred() -> None:
    result, asked = run_grid([10, 20, 30], [1, 2], [1, 2, 3], lambda a, b: 1)
    assert asked == [(30, 2, 2), (30, 2, 1)]  # the fewest resources pass at the heaviest point: every point
    assert all(v == 1 for v in result.demand.values())
    assert sum(n == INFERRED for n in result.notes.values()) == 5


def test_nothing_passing_at_the_lightest_point_decides_the_grid() -> None:
    result, asked = run_grid([1, 2], [1, 2], [1, 2], lambda a, b: 9)
    assert all(v is None for v in result.demand.values())
    assert asked == [(2, 2, 2), (1, 1, 2)]  # the most fails at both corners; the mixed ones are implied


def test_an_error_leaves_the_points_it_could_change_undecided() -> None:
    demand = model(1000, 0.0)
    result, _ = run_grid([500, 1500], [1], [1, 2, 3], demand, errors={(1500, 1, 2)})
    assert result.demand[(1500, 1)] == 3 and result.notes[(1500, 1)] == UNDECIDED  # 2 might have passed
    assert result.demand[(500, 1)] == 1 and (500, 1) not in result.notes


def test_an_error_below_the_demand_marks_it_undecided() -> None:
    result, _ = run_grid([1], [1], [1, 2, 3], lambda a, b: 3, errors={(1, 1, 2)})
    assert result.demand[(1, 1)] == 3.0 and result.notes[(1, 1)] == UNDECIDED


def test_order_visits_every_point_once_corners_first() -> None:
    order = grid_order(4, 3)
    assert order[:4] == [(3, 2), (0, 0), (3, 0), (0, 2)]
    assert sorted(order) == sorted(itertools.product(range(4), range(3)))
    assert grid_order(1, 1) == [(0, 0)]


def test_the_slice_of_one_second_value() -> None:
    result, _ = run_grid([1, 2], [5, 6], [1, 2], lambda a, b: a)
    table, _notes = result.slice(6)
    assert table == {1: 1.0, 2: 2.0}


def test_unsorted_resources_are_refused() -> None:
    with pytest.raises(ValueError, match="resources"):
        run_grid([1], [1], [2, 1], lambda a, b: 1)
