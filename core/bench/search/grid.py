"""The demand over two load dimensions at once: the bracket search on a grid.

The method's workload dimensions (records/s, number of keys, window size, ...) each
get a benchmark of their own; a job that keeps state per key scales with the product
of two of them, and only a grid shows how. A grid of m x p loads and n resource
amounts would cost up to m x p x n experiments. The monotone assumption of
:mod:`bench.search.bracket` holds along both axes (more of either dimension never
needs fewer resources), so a point's demand is bounded below by the demand of any
point lighter in both dimensions and above by that of any point heavier in both. A
point whose bounds meet takes the demand without an experiment (``inferred``); between
bounds that differ it is searched by halving between them (the least passing amount,
confirmed by a failure just below it or by the lower bound), never outside them.

The order makes bounds meet early: the heaviest corner first, then the lightest one
(equal demands there decide the whole grid), then the other two corners, then the
slices halfway between measured ones (heaviest slice first) and in each slice the
loads halfway between measured ones, as bracket orders loads.

Errors are not failures (:mod:`bench.search.strategies`): a walk goes on past them, a
point an error could lower stays ``undecided``, and the floor it sets for heavier
points is the error's index, not its demand.

Only the demand metric: capacity over two load dimensions has no one "greatest
load" per resource amount.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from bench.search.bracket import _order
from bench.search.strategies import _binary_least

#: run(load, load2, resources): True passed, False failed, None error (no verdict)
GridRun = Callable[[float, float, float], Awaitable[bool | None]]
#: a grid point by its two load values
Point = tuple[float, float]

INFERRED = "inferred"
UNDECIDED = "undecided"


@dataclass(frozen=True)
class GridProblem:
    """Loads of both dimensions in order of intensity (least load first; a decreasing
    load type's values reversed, :func:`bench.config.model.load_intensity_order`),
    resources ascending."""

    loads: Sequence[float]
    loads2: Sequence[float]
    resources: Sequence[float]
    run: GridRun


@dataclass
class GridResult:
    """Demand per point (None: no resource amount passes), notes per point
    (``inferred``, ``undecided``; measured points have none) and what it cost."""

    demand: dict[Point, float | None]
    notes: dict[Point, str] = field(default_factory=dict)
    experiments: int = 0

    def slice(self, load2: float) -> tuple[dict[float, float | None], dict[float, str]]:
        """The one-dimensional table (and notes) of one value of the second dimension."""
        table = {a: v for (a, b), v in self.demand.items() if b == load2}
        notes = {a: n for (a, b), n in self.notes.items() if b == load2}
        return table, notes


def grid_order(m: int, p: int) -> list[tuple[int, int]]:
    """Indices (load, load2) in the order they are decided: corners first (heaviest,
    lightest, then the mixed two), then slices and loads by halving."""
    corners = [(m - 1, p - 1), (0, 0), (m - 1, 0), (0, p - 1)]
    order: list[tuple[int, int]] = []
    for point in [*corners, *((i, j) for j in _order(p, first_last=True) for i in _order(m, first_last=True))]:
        if point not in order and 0 <= point[0] < m and 0 <= point[1] < p:
            order.append(point)
    return order


class _Bounds:
    """``low[pt]``: the floor a decided point sets for points heavier in both dimensions;
    ``high[pt]``: the ceiling it sets for points lighter in both (index n: none passes)."""

    def __init__(self) -> None:
        self.low: dict[tuple[int, int], int] = {}
        self.high: dict[tuple[int, int], int] = {}

    def between(self, i: int, j: int, n: int) -> tuple[int, int]:
        lows = [v for (a, b), v in self.low.items() if a <= i and b <= j]
        highs = [v for (a, b), v in self.high.items() if a >= i and b >= j]
        return max(lows, default=0), min(highs, default=n)


async def grid_search(problem: GridProblem) -> GridResult:
    """The demand at every point of the grid, by as few experiments as the bounds allow."""
    loads, loads2, resources = list(problem.loads), list(problem.loads2), list(problem.resources)
    if not loads or not loads2 or not resources:
        raise ValueError("grid: loads, loads2 and resources must each have at least one value")
    if any(b <= a for a, b in zip(resources, resources[1:], strict=False)):
        raise ValueError(f"resources: must be strictly ascending, got {resources}")
    n = len(resources)
    verdicts: dict[tuple[float, float, float], bool | None] = {}

    async def run(load: float, load2: float, res: float) -> bool | None:
        key = (load, load2, res)
        if key not in verdicts:
            verdict = await problem.run(load, load2, res)
            verdicts[key] = None if verdict is None else bool(verdict)
        return verdicts[key]

    bounds = _Bounds()
    demand: dict[Point, float | None] = {}
    notes: dict[Point, str] = {}
    for i, j in grid_order(len(loads), len(loads2)):
        point = (loads[i], loads2[j])
        lo, hi = bounds.between(i, j, n)
        if lo >= hi:  # the bounds meet: a heavier point's demand (none when it is none)
            demand[point] = resources[hi] if hi < n else None
            notes[point] = INFERRED
            bounds.low[(i, j)] = bounds.high[(i, j)] = hi
            continue

        async def test(k: int, load: float = point[0], load2: float = point[1]) -> bool | None:
            return await run(load, load2, resources[k])

        least = await _binary_least(test, hi, lo, lo)
        errors = [k for k in range(lo, hi) if verdicts.get((*point, resources[k]), False) is None
                  and (least is None or k < least)]
        if least is not None:
            demand[point] = resources[least]
        elif errors or hi == n:
            demand[point] = None
        else:  # every amount below the heavier point's demand failed: that demand, inferred
            demand[point] = resources[hi]
            notes[point] = INFERRED
        if errors:
            notes[point] = UNDECIDED
        top = least if least is not None else hi
        bounds.high[(i, j)] = top
        bounds.low[(i, j)] = min(errors) if errors else top
    return GridResult(demand, notes, experiments=len(verdicts))
