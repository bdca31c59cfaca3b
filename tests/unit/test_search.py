"""Search strategies against tables of verdicts.

Why tables: a strategy must be judged on *which* experiments it asks for (each costs
minutes) and on what it concludes from them, including when the SUT violates the
monotonicity a strategy assumes (noise makes that common).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import pytest
from bench.api import SearchProblem, SearchStrategy
from bench.builtin.search import bench_register_search_strategies
from bench.search.strategies import STRATEGIES

NAMES = ("full", "linear", "binary", "initial-guess")
BY_NAME = {s.name: s for s in STRATEGIES}
RESOURCES = [1, 2, 3, 4, 5]
LOADS = [1000, 2000, 3000, 4000]


class Table:
    """A fake experiment runner: verdicts from a function, every call recorded."""

    def __init__(self, verdict: Callable[[float, float], bool]) -> None:
        self.verdict = verdict
        self.calls: list[tuple[float, float]] = []

    async def run(self, load: float, resources: float) -> bool:
        assert (load, resources) not in self.calls, f"ran {(load, resources)} twice"
        self.calls.append((load, resources))
        return self.verdict(load, resources)


def demand_table(demand: Mapping[Any, Any]) -> Table:
    """Monotone in resources: passes iff resources >= demand (None: never passes)."""
    return Table(lambda load, res: demand[load] is not None and res >= demand[load])  # type: ignore[operator]


def capacity_table(capacity: Mapping[Any, Any]) -> Table:
    """Monotone in load: passes iff load <= capacity (None: never passes)."""
    return Table(lambda load, res: capacity[res] is not None and load <= capacity[res])  # type: ignore[operator]


def explicit(passing: AbstractSet[tuple[Any, Any]]) -> Table:
    return Table(lambda load, res: (load, res) in passing)


async def search(
    name: str,
    table: Table,
    metric: str = "demand",
    lower_bound: bool = True,
    loads: Sequence[float] = LOADS,
    resources: Sequence[float] = RESOURCES,
) -> dict[float, float | None]:
    problem = SearchProblem(loads, resources, table.run, metric=metric, lower_bound=lower_bound)
    return await BY_NAME[name].search(problem)


def test_hook_registers_the_four_strategies() -> None:
    found: list[SearchStrategy] = []
    bench_register_search_strategies(register=lambda item: found.append(item))
    assert [s.name for s in found] == [*NAMES, "bracket"]
    assert all(isinstance(s, SearchStrategy) and s.description for s in found)


# ----------------------------------------------------------------- monotone: every strategy agrees


DEMAND = {1000: 1, 2000: 2, 3000: 2, 4000: 4}
CAPACITY = {1: 1000, 2: 3000, 3: 3000, 4: 4000, 5: 4000}


@pytest.mark.parametrize("lower_bound", [True, False])
@pytest.mark.parametrize("name", NAMES)
async def test_monotone_demand_is_found_by_every_strategy(name: str, lower_bound: bool) -> None:
    assert await search(name, demand_table(DEMAND), lower_bound=lower_bound) == DEMAND


@pytest.mark.parametrize("lower_bound", [True, False])
@pytest.mark.parametrize("name", NAMES)
async def test_monotone_capacity_is_found_by_every_strategy(name: str, lower_bound: bool) -> None:
    table = capacity_table(CAPACITY)
    assert await search(name, table, metric="capacity", lower_bound=lower_bound) == CAPACITY


def random_monotone(rng: random.Random, most_loads: int = 6) -> tuple[list[int], list[int], dict[int, int | None]]:
    """Random loads and resources and a monotone demand: non-decreasing in load, possibly
    beyond the range (None)."""
    loads = sorted(rng.sample(range(1, 40), rng.randint(1, most_loads)))
    resources = sorted(rng.sample(range(1, 40), rng.randint(1, 6)))
    frontier = sorted(rng.randint(0, len(resources)) for _ in loads)
    return loads, resources, {ld: (resources[i] if i < len(resources) else None)
                              for ld, i in zip(loads, frontier, strict=True)}


@pytest.mark.parametrize("lower_bound", [True, False])
@pytest.mark.parametrize("metric", ["demand", "capacity"])
@pytest.mark.parametrize("name", NAMES)
async def test_random_monotone_tables(name: str, metric: str, lower_bound: bool) -> None:
    """On any monotone table each strategy equals the truth, never repeats a run, and
    only reports a value whose experiment it ran and saw pass."""
    rng = random.Random(f"{name}-{metric}-{lower_bound}")
    for _ in range(200):
        loads, resources, demand = random_monotone(rng)
        truth_demand = dict(demand)

        def passes(load: float, res: float, demand: Mapping[Any, Any] = demand) -> bool:
            d = demand[load]
            return d is not None and res >= d

        table = Table(passes)
        found = await search(name, table, metric, lower_bound, loads, resources)
        if metric == "demand":
            assert found == truth_demand
        else:
            truth = {r: max((ld for ld in loads if passes(ld, r)), default=None) for r in resources}
            assert found == truth
        for key, value in found.items():
            if value is not None:
                pair = (value, key) if metric == "capacity" else (key, value)
                assert pair in table.calls and passes(*pair)


# ----------------------------------------------------------------- which experiments run


async def test_linear_with_lower_bound_runs_the_published_sequence() -> None:
    table = demand_table(DEMAND)
    await search("linear", table)
    assert table.calls == [
        (1000, 1),
        (2000, 1), (2000, 2),
        (3000, 2),
        (4000, 2), (4000, 3), (4000, 4),
    ]  # fmt: skip


async def test_linear_without_lower_bound_starts_every_load_at_the_bottom() -> None:
    table = demand_table(DEMAND)
    await search("linear", table, lower_bound=False)
    assert table.calls == [
        (1000, 1),
        (2000, 1), (2000, 2),
        (3000, 1), (3000, 2),
        (4000, 1), (4000, 2), (4000, 3), (4000, 4),
    ]  # fmt: skip


async def test_full_runs_every_pair_without_lower_bound() -> None:
    table = demand_table(DEMAND)
    await search("full", table, lower_bound=False)
    assert table.calls == list(itertools.product(LOADS, RESOURCES))


async def test_full_with_lower_bound_skips_resources_below_the_previous_demand() -> None:
    table = demand_table(DEMAND)
    await search("full", table)
    expected = [(ld, r) for ld, lo in zip(LOADS, [1, 1, 2, 2], strict=True) for r in RESOURCES if r >= lo]
    assert table.calls == expected


async def test_binary_demand_sequence() -> None:
    table = demand_table({1000: 4})
    assert await search("binary", table, loads=[1000]) == {1000: 4}
    # 3 fails -> upper half; 5 passes -> lower half; 4 passes -> done
    assert table.calls == [(1000, 3), (1000, 5), (1000, 4)]


async def test_initial_guess_starts_at_the_previous_demand_and_walks_down() -> None:
    table = demand_table({1000: 3, 2000: 2})  # demand falls (noise): guess walks down
    assert await search("initial-guess", table, loads=[1000, 2000], lower_bound=False) == {1000: 3, 2000: 2}
    assert table.calls == [(1000, 1), (1000, 2), (1000, 3), (2000, 3), (2000, 2), (2000, 1)]


async def test_initial_guess_walks_up_on_failure() -> None:
    table = demand_table({1000: 2, 2000: 4})
    await search("initial-guess", table, loads=[1000, 2000], lower_bound=False)
    assert table.calls == [(1000, 1), (1000, 2), (2000, 2), (2000, 3), (2000, 4)]


async def test_initial_guess_with_lower_bound_never_goes_below_it() -> None:
    table = demand_table({1000: 3, 2000: 2})
    assert await search("initial-guess", table, loads=[1000, 2000]) == {1000: 3, 2000: 3}
    assert (2000, 2) not in table.calls


@pytest.mark.parametrize("name", NAMES)
async def test_lower_bound_stops_after_a_load_without_demand(name: str) -> None:
    table = demand_table({1000: 2, 2000: None, 3000: None, 4000: None})
    assert await search(name, table) == {1000: 2, 2000: None, 3000: None, 4000: None}
    assert not [c for c in table.calls if c[0] > 2000], "nothing is tried after a load without demand"


@pytest.mark.parametrize("name", NAMES)
async def test_without_lower_bound_every_load_is_searched(name: str) -> None:
    table = demand_table({1000: 2, 2000: None, 3000: 5, 4000: None})
    found = await search(name, table, lower_bound=False)
    # 3000 passes only at the top: monotone per load, so every strategy finds it
    assert found == {1000: 2, 2000: None, 3000: 5, 4000: None}
    assert {c[0] for c in table.calls} == set(LOADS)


async def test_initial_guess_after_a_load_without_demand_tries_the_top_first() -> None:
    table = demand_table({1000: None, 2000: None})
    await search("initial-guess", table, loads=[1000, 2000], lower_bound=False)
    assert table.calls[5:] == [(2000, 5)]


async def test_linear_capacity_stops_at_the_first_failure() -> None:
    table = capacity_table({1: 2000})
    assert await search("linear", table, metric="capacity", resources=[1]) == {1: 2000}
    assert table.calls == [(1000, 1), (2000, 1), (3000, 1)]


async def test_capacity_lower_bound_starts_at_the_previous_capacity() -> None:
    table = capacity_table({1: 2000, 2: 3000, 3: None})
    found = await search("linear", table, metric="capacity", resources=[1, 2, 3])
    # resources 3 fails at its start (3000): loads below it are assumed to pass
    assert found == {1: 2000, 2: 3000, 3: 2000}
    assert table.calls == [
        (1000, 1), (2000, 1), (3000, 1),
        (2000, 2), (3000, 2), (4000, 2),
        (3000, 3),
    ]  # fmt: skip


async def test_capacity_lower_bound_after_nothing_starts_from_the_lowest_load() -> None:
    table = capacity_table({1: None, 2: 2000})
    found = await search("linear", table, metric="capacity", resources=[1, 2])
    assert found == {1: None, 2: 2000}
    assert table.calls == [(1000, 1), (1000, 2), (2000, 2), (3000, 2)]


async def test_initial_guess_capacity_walks_up_then_down() -> None:
    table = capacity_table({1: 2000, 2: 1000})
    found = await search("initial-guess", table, metric="capacity", resources=[1, 2], lower_bound=False)
    assert found == {1: 2000, 2: 1000}
    assert table.calls == [(1000, 1), (2000, 1), (3000, 1), (2000, 2), (1000, 2)]


# ----------------------------------------------------------------- non-monotone tables

# One load; over resources 1..5 the verdicts are F T F F T (a lucky pass at 2).
FLAKY = {(1000, 2), (1000, 5)}


@pytest.mark.parametrize(
    ("name", "expected", "runs"),
    [
        ("full", 2, 5),  # least passing of all five
        ("linear", 2, 2),  # first pass wins
        ("binary", 5, 3),  # 3 F -> right half; 5 T; 4 F -> 5: never sees 2
        ("initial-guess", 2, 2),  # from the bottom upwards, as linear
    ],
)
async def test_non_monotone_demand(name: str, expected: int, runs: int) -> None:
    table = explicit(FLAKY)
    assert await search(name, table, loads=[1000]) == {1000: expected}
    assert len(table.calls) == runs


# One resource; over loads 1000..4000 the verdicts are T F T F (a lucky pass at 3000).
FLAKY_CAPACITY = {(1000, 1), (3000, 1)}


@pytest.mark.parametrize(
    ("name", "expected", "runs"),
    [
        ("full", 3000, 4),  # greatest passing of all
        ("linear", 1000, 2),  # stops at the first failure
        ("binary", 3000, 2),  # 3000 T -> upper half; 4000 F -> done
        ("initial-guess", 1000, 2),  # from the bottom upwards, as linear
    ],
)
async def test_non_monotone_capacity(name: str, expected: int, runs: int) -> None:
    table = explicit(FLAKY_CAPACITY)
    found = await search(name, table, metric="capacity", resources=[1])
    assert found == {1: expected}
    assert len(table.calls) == runs


# Demand 3 at load 1000 but 1 at load 2000 (noise at the lower load).
FALLING = {(1000, 3), (1000, 4), (1000, 5), (2000, 1), (2000, 2), (2000, 3)}


@pytest.mark.parametrize(
    ("name", "lower_bound", "expected"),
    [
        *[(n, False, {1000: 3, 2000: 1}) for n in NAMES],
        # the restriction keeps demand from falling, by design
        *[(n, True, {1000: 3, 2000: 3}) for n in ("full", "linear", "initial-guess")],
        # binary probes 4 and 5 above the bound, both fail, and it trusts monotonicity
        ("binary", True, {1000: 3, 2000: None}),
    ],
)
async def test_non_monotone_across_loads(name: str, lower_bound: bool, expected: dict[int, int]) -> None:
    found = await search(name, explicit(FALLING), loads=[1000, 2000], lower_bound=lower_bound)
    assert found == expected


@pytest.mark.parametrize("lower_bound", [True, False])
@pytest.mark.parametrize("metric", ["demand", "capacity"])
@pytest.mark.parametrize("name", NAMES)
async def test_random_tables_never_repeat_a_run_and_are_deterministic(
    name: str, metric: str, lower_bound: bool
) -> None:
    rng = random.Random(7)
    for _ in range(100):
        passing = {pair for pair in itertools.product(LOADS, RESOURCES) if rng.random() < 0.5}
        first, second = explicit(passing), explicit(passing)
        one = await search(name, first, metric, lower_bound)
        two = await search(name, second, metric, lower_bound)  # Table asserts no repeats
        assert one == two and first.calls == second.calls
        expected_keys = LOADS if metric == "demand" else RESOURCES
        assert list(one) == expected_keys


# ----------------------------------------------------------------- bad problems


async def test_unknown_metric_is_rejected() -> None:
    with pytest.raises(ValueError, match="metric: 'latency' is not one of demand, capacity"):
        await search("linear", explicit(set()), metric="latency")


async def test_unsorted_values_are_rejected() -> None:
    with pytest.raises(ValueError, match="resources: must be strictly ascending"):
        await search("binary", explicit(set()), resources=[2, 1])


@pytest.mark.parametrize("name", NAMES)
async def test_empty_resources_give_no_demand(name: str) -> None:
    table = explicit(set())
    assert await search(name, table, resources=[]) == dict.fromkeys(LOADS)
    assert table.calls == []


async def test_memo_runs_each_pair_once() -> None:
    """Defence in depth: a strategy that meets itself must not pay for a pair twice."""
    from bench.search.strategies import Memo

    table = explicit({(1000, 1)})
    memo = Memo(table.run)
    assert [await memo(1000, 1), await memo(1000, 1), await memo(1000, 2), await memo(1000, 2)] == [
        True,
        True,
        False,
        False,
    ]
    assert table.calls == [(1000, 1), (1000, 2)]
