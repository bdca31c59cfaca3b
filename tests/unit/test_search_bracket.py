"""The bracket search (bench's default): which experiments it runs, and that what it
infers is what the monotone assumption gives.

On monotone verdicts it must find the table linear finds; with a flat table it must
measure one load only; with errors it must not infer over them. That its inferred
entries are found again in the stored verdicts is checked over random verdicts, errors
included, in test_tables_agree.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from bench.api import SearchProblem
from bench.search.bracket import bracket
from bench.search.strategies import STRATEGIES

from tests.unit.test_search import Table, capacity_table, demand_table, explicit, random_monotone

LINEAR = {s.name: s for s in STRATEGIES}["linear"]


async def _run(table: Table, loads: list[float], resources: list[float], metric: str = "demand",
               lower_bound: bool = True) -> dict[float, float | None]:
    return await bracket(SearchProblem(loads, resources, table.run, metric=metric, lower_bound=lower_bound))


@pytest.mark.parametrize("metric", ["demand", "capacity"])
async def test_random_monotone_tables_give_linear_s_table(metric: str) -> None:
    rng = random.Random(f"bracket-{metric}")
    for _ in range(300):
        loads, resources, demand = random_monotone(rng, most_loads=7)

        def passes(load: float, res: float, demand: dict[Any, Any] = demand) -> bool:
            return demand[load] is not None and res >= demand[load]

        ours, theirs = Table(passes), Table(passes)
        found = await _run(ours, loads, resources, metric)
        problem = SearchProblem(loads, resources, theirs.run, metric=metric, lower_bound=True)
        assert found == await LINEAR.search(problem), (loads, resources, demand)
        # every value it gives passes, measured or not; every failure it saw is below it
        for key, value in found.items():
            if value is not None:
                assert passes(*((value, key) if metric == "capacity" else (key, value)))


async def test_a_flat_table_is_one_experiment() -> None:
    table = demand_table({1000: 1, 2000: 1, 3000: 1, 4000: 1})
    assert await _run(table, [1000, 2000, 3000, 4000], [1, 2, 3]) == {1000: 1, 2000: 1, 3000: 1, 4000: 1}
    assert table.calls == [(4000, 1)]


async def test_the_heaviest_load_first_then_the_lightest_below_its_demand() -> None:
    table = demand_table({1000: 2, 2000: 3})
    assert await _run(table, [1000, 2000], [1, 2, 3, 4]) == {1000: 2, 2000: 3}
    assert table.calls == [(2000, 1), (2000, 2), (2000, 3), (1000, 1), (1000, 2)]


async def test_a_load_failing_below_the_heavier_demand_takes_it_unmeasured() -> None:
    table = demand_table({1000: 3, 2000: 3})
    assert await _run(table, [1000, 2000], [1, 2, 3]) == {1000: 3, 2000: 3}
    assert (1000, 3) not in table.calls and [c for c in table.calls if c[0] == 1000] == [(1000, 1), (1000, 2)]


async def test_loads_between_two_of_the_same_demand_are_not_measured() -> None:
    demand = {1000: 2, 1500: 2, 2000: 2, 2500: 2, 3000: 3, 4000: 4}
    table = demand_table(demand)
    assert await _run(table, list(demand), [1, 2, 3, 4]) == demand
    assert {c[0] for c in table.calls} == set(demand) - {1500}  # between 1000 and 2000, both 2


async def test_the_guess_between_two_neighbours_is_interpolated() -> None:
    """Halfway between demands 1 and 5 the walk starts at 3, not at the bottom."""
    demand = {1000: 1, 2000: 3, 3000: 5}
    table = demand_table(demand)
    assert await _run(table, list(demand), [1, 2, 3, 4, 5]) == demand
    assert [c for c in table.calls if c[0] == 2000] == [(2000, 3), (2000, 2)]


async def test_no_load_passes_anywhere() -> None:
    table = demand_table({1000: None, 2000: None})
    assert await _run(table, [1000, 2000], [1, 2]) == {1000: None, 2000: None}
    assert len(table.calls) == 4


async def test_an_error_below_the_bound_is_never_inferred_over() -> None:
    """1000 on 1 errs and 1000 on 2 fails: the demand of 1000 may be 1, so it stays open
    (None, which the table marks undecided) instead of taking 2000's demand of 3."""
    verdicts = {(2000, 1): False, (2000, 2): False, (2000, 3): True, (1000, 1): None, (1000, 2): False}

    calls: list[tuple[float, float]] = []

    async def run(load: float, res: float) -> bool | None:
        calls.append((load, res))
        return verdicts[(load, res)]

    found = await bracket(SearchProblem([1000, 2000], [1, 2, 3], run))
    assert found == {1000: None, 2000: 3}
    assert len(calls) == len(set(calls))


async def test_capacity_measures_the_fewest_resources_first_and_infers_between() -> None:
    capacity = {1: 3000, 2: 3000, 3: 3000, 4: 3000}
    table = capacity_table(capacity)
    assert await _run(table, [1000, 2000, 3000, 4000], [1, 2, 3, 4], metric="capacity") == capacity
    assert table.calls[0] == (1000, 1)
    assert {c[1] for c in table.calls} == {1, 4}


async def test_the_assumption_stands_in_for_a_load_it_bounds() -> None:
    """2000 passes on 1: by the assumption 1000 does too, unmeasured, even where (as
    here) it would not have: the price of the assumption, which the table marks."""
    table = explicit({(2000, 1)})
    found = await _run(table, [1000, 2000], [1, 2])
    assert found == {1000: 1, 2000: 1}
    assert table.calls == [(2000, 1)]  # 1000 is never measured: its bounds meet at 1


async def test_without_the_lower_bound_it_refuses() -> None:
    with pytest.raises(ValueError, match="lower-bound"):
        await _run(demand_table({1000: 1}), [1000], [1], lower_bound=False)
