"""The bracket search: the monotone assumption used from both sides.

The reference's lower-bound restriction assumes that demand never falls as the load
rises, and uses it one way: a load's walk starts at the lighter load's demand. The
same assumption bounds a load from above by any heavier load's demand. bench's default
loads on a laptop (two loads, one to three instances) mostly give a flat table, and
there the reference's procedure measures every load at the same resource amount: at
300-s experiments and three repetitions each such experiment costs minutes for an
entry the heaviest load's demand already implies.

So the heaviest load is measured first (walking up from the fewest resources, as the
reference does), then the lightest below it, then the load halfway between two
measured ones, and so on. A load whose bounds meet (the lighter neighbour's demand
equals the heavier one's) takes that demand without an experiment, marked ``inferred``
in the table (:mod:`bench.results.tables` derives the same entries from the stored verdicts).
Between bounds that differ a load is walked as initial-guess walks, from a guess
interpolated between its neighbours', never outside the bounds: a failure everywhere
below the upper bound gives the upper bound, inferred (the heavier load passed there).

Capacity is the same search with the roles swapped: per resource amount the heaviest
passing load, which never falls as resources grow; the fewest resources are measured
first (walking up from the lightest load), then the most, then halfway.

Errors are not failures, as in :mod:`bench.search.strategies`: a walk goes on past them, an entry
an error could change stays undecided (no inferred demand is given to a load with an
error below it), and a bound next to an error is the error's index, not the entry's.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping

from bench.api import SearchProblem
from bench.config.base import BRACKET
from bench.search.strategies import Memo, Test, check_problem, guess_greatest, guess_least

NAME = BRACKET
DESCRIPTION = ("the heaviest load first, then halfway between measured loads; a load between two of the same "
               "demand takes it without an experiment (inferred). Capacity: the fewest resources first. "
               "Assumes monotone verdicts both ways (needs the lower bound); bench's default")


class _Bounds:
    """What the entries found so far say about the others, by outer index.

    ``low[i]``: the floor key i sets for heavier keys' entries; ``high[i]``: the ceiling it
    sets for lighter keys' (demand: index n is "no resource passes"; capacity: -1 is "no
    load passes"). Apart from errors both are key i's own entry.
    """

    def __init__(self) -> None:
        self.low: dict[int, int] = {}
        self.high: dict[int, int] = {}

    def between(self, i: int, floor: int, ceiling: int) -> tuple[int, int]:
        lows = [v for j, v in self.low.items() if j < i]
        highs = [v for j, v in self.high.items() if j > i]
        return max(lows, default=floor), min(highs, default=ceiling)

    def neighbours(self, i: int) -> tuple[int | None, int | None]:
        known = self.low.keys()
        below = [j for j in known if j < i]
        above = [j for j in known if j > i]
        return (max(below) if below else None), (min(above) if above else None)


def _guess(bounds: _Bounds, i: int, lo: int, hi: int, start: int, predicted: int | None = None) -> int:
    """The prediction's index where there is one (``bench run --predict``); else interpolated
    between the neighbours' bounds by position; ``start`` with one side unknown. The walk
    clamps it to the bounds."""
    if predicted is not None:
        return predicted
    below, above = bounds.neighbours(i)
    if below is None or above is None:
        return start
    return lo + round((hi - lo) * (i - below) / (above - below))


def _order(m: int, first_last: bool) -> list[int]:
    """The outer indices: both ends (``first_last``: the last one first), then halves."""
    if m == 0:
        return []
    if m == 1:
        return [0]
    order = [m - 1, 0] if first_last else [0, m - 1]
    spans = deque([(0, m - 1)])
    while spans:
        a, b = spans.popleft()
        if b - a < 2:
            continue
        mid = (a + b) // 2
        order.append(mid)
        spans.extend([(a, mid), (mid, b)])
    return order


async def _demand(problem: SearchProblem, run: Memo, guesses: Mapping[float, int]) -> dict[float, float | None]:
    loads, resources = list(problem.loads), list(problem.resources)
    n = len(resources)
    bounds = _Bounds()
    found: dict[int, int | None] = {}
    for i in _order(len(loads), first_last=True):
        lo, hi = bounds.between(i, 0, n)
        load = loads[i]
        if lo >= hi:  # the bounds meet: the heavier load's demand, or none when it is none
            found[i] = hi if hi < n else None
            bounds.low[i] = bounds.high[i] = hi
            continue
        least = await guess_least(_tester(run, load, resources), hi, lo,
                                   _guess(bounds, i, lo, hi, lo, guesses.get(load)))
        errors = [j for j in range(lo, hi) if run.verdicts.get((load, resources[j]), False) is None
                  and (least is None or j < least)]
        if least is not None:
            found[i] = least
        else:  # every walked amount failed: the upper bound (inferred), unless an error could be lower
            found[i] = None if errors or hi == n else hi
        top = least if least is not None else hi
        bounds.high[i] = top
        bounds.low[i] = min(errors) if errors else top
    return {loads[i]: (resources[v] if v is not None else None) for i, v in found.items()}


async def _capacity(problem: SearchProblem, run: Memo, guesses: Mapping[float, int]) -> dict[float, float | None]:
    loads, resources = list(problem.loads), list(problem.resources)
    m = len(loads)
    bounds = _Bounds()
    found: dict[int, int | None] = {}
    for i in _order(len(resources), first_last=False):
        lo, hi = bounds.between(i, -1, m - 1)
        res = resources[i]
        if lo >= hi:  # the bounds meet: the lighter resource amount's capacity
            found[i] = lo if lo >= 0 else None
            bounds.low[i] = bounds.high[i] = lo
            continue
        greatest = await guess_greatest(_tester(run, res, loads, capacity=True), hi + 1, lo + 1,
                                         _guess(bounds, i, lo, hi, lo + 1, guesses.get(res)))
        value = greatest if greatest is not None else lo  # loads up to lo pass by the lower bound
        failed = [j for j in range(lo + 1, hi + 1) if j > value and run.verdicts.get((loads[j], res)) is False]
        found[i] = value if value >= 0 else None
        bounds.low[i] = value
        bounds.high[i] = min(failed) - 1 if failed else hi
    return {resources[i]: (loads[v] if v is not None else None) for i, v in found.items()}


def _tester(run: Memo, key: float, values: list[float], capacity: bool = False) -> Test:
    """test(j): the verdict of ``key`` with the j-th value (capacity: the j-th load at ``key``)."""
    async def test(j: int) -> bool | None:
        return await (run(values[j], key) if capacity else run(key, values[j]))
    return test


async def bracket(problem: SearchProblem, guesses: Mapping[float, int] | None = None) -> dict[float, float | None]:
    """The table by the bracket search; ``guesses`` (key -> index, from ``bench run
    --predict``) start each key's walk at its prediction instead of the bottom or the
    interpolated guess. The order and the bounds stay bracket's: a prediction chooses
    where a walk begins, never what is inferred."""
    check_problem(problem)
    if not problem.lower_bound:
        raise ValueError("bracket: the search rests on the lower-bound assumption (demand never falls as the "
                         "load rises); without it use linear, binary, initial-guess or full")
    run = Memo(problem.run)
    if problem.metric == "demand":
        return await _demand(problem, run, guesses or {})
    return await _capacity(problem, run, guesses or {})
