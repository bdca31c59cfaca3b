"""Search strategies: which (load, resources) experiments to run, and what they mean.

An experiment costs minutes, so a strategy's whole job is to run as few of them as
its assumption allows. Strategies know nothing about how experiments run: they ask
``problem.run(load, resources)`` and get a verdict, which keeps them testable with a
table of verdicts.

Both metrics share one driver. For ``demand`` the outer dimension is the load and the
inner one the resources (we look for the *least passing* inner index); for
``capacity`` the outer dimension is the resources and the inner one the load (we look
for the *greatest passing* inner index). A strategy is then a pair of small inner
finders, one per goal.

Every search memoises its verdicts, so no pair is ever run twice within one search
even if two phases (e.g. the downward and upward walks of initial-guess) meet.

Errors are not failures. An experiment that ended in ``error`` (the runner answers
None: no verdict after its retries) says nothing about the SUT, so no strategy
concludes "needs more" from it: linear and full walks go on past it, binary search
drops the index from its range instead of cutting the range at it, initial-guess
walks on as if it were absent, and the lower bound of the next load (demand) starts
at the lowest errored resource amount below the demand found, not at the demand. The
table marks every entry an error could change as undecided (:mod:`bench.results.tables`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from bench.api import ExperimentRunner, SearchProblem, SearchStrategy

#: test(i) runs (or recalls) the experiment at inner index i: True passed, False failed,
#: None no verdict (error).
Test = Callable[[int], Awaitable[bool | None]]
#: finder(test, n, start, guess) -> index among [start, n) or None.
Finder = Callable[[Test, int, int, int], Awaitable[int | None]]

METRICS = ("demand", "capacity")


class Memo:
    """Caches verdicts so a search never pays twice for the same pair."""

    def __init__(self, run: ExperimentRunner) -> None:
        self._run = run
        self.verdicts: dict[tuple[float, float], bool | None] = {}

    async def __call__(self, load: float, resources: float) -> bool | None:
        key = (load, resources)
        if key not in self.verdicts:
            verdict = await self._run(load, resources)
            self.verdicts[key] = None if verdict is None else bool(verdict)
        return self.verdicts[key]


# ----------------------------------------------------------------- least passing (demand)


async def _linear_least(test: Test, n: int, start: int, guess: int) -> int | None:
    for i in range(start, n):
        if await test(i):
            return i
    return None


async def _binary_least(test: Test, n: int, start: int, guess: int) -> int | None:
    """Only indices that actually passed are returned, even if monotonicity is violated.

    An errored index leaves the range (no conclusion about its neighbours is drawn from it).
    """
    candidates = list(range(start, n))
    lo, hi, best = 0, len(candidates), None
    while lo < hi:
        mid = (lo + hi) // 2
        verdict = await test(candidates[mid])
        if verdict is None:
            del candidates[mid]
            hi -= 1
        elif verdict:
            best, hi = candidates[mid], mid
        else:
            lo = mid + 1
    return best


async def _full_least(test: Test, n: int, start: int, guess: int) -> int | None:
    passing = [i for i in range(start, n) if await test(i)]
    return min(passing) if passing else None


async def guess_least(test: Test, n: int, start: int, guess: int) -> int | None:
    """From the guess: walk down while not failing, or up until the first pass (errors are walked past)."""
    if start >= n:
        return None
    i = min(max(guess, start), n - 1)
    first = await test(i)
    if first:
        return await _walk(test, range(i - 1, start - 1, -1), i)
    for j in range(i + 1, n):
        if await test(j):
            return j
    if first is None:  # the guess errored: what lies below it is still open
        for j in range(i - 1, start - 1, -1):
            if await test(j):
                return await _walk(test, range(j - 1, start - 1, -1), j)
    return None


async def _walk(test: Test, indices: range, best: int) -> int:
    """The last passing index along ``indices`` before the first failure; errors do not stop it."""
    for j in indices:
        verdict = await test(j)
        if verdict is False:
            break
        if verdict:
            best = j
    return best


# ----------------------------------------------------------------- greatest passing (capacity)


async def _linear_greatest(test: Test, n: int, start: int, guess: int) -> int | None:
    best = None
    for i in range(start, n):
        verdict = await test(i)
        if verdict is False:
            break
        if verdict:
            best = i
    return best


async def _binary_greatest(test: Test, n: int, start: int, guess: int) -> int | None:
    candidates = list(range(start, n))
    lo, hi, best = 0, len(candidates), None
    while lo < hi:
        mid = (lo + hi) // 2
        verdict = await test(candidates[mid])
        if verdict is None:
            del candidates[mid]
            hi -= 1
        elif verdict:
            best, lo = candidates[mid], mid + 1
        else:
            hi = mid
    return best


async def _full_greatest(test: Test, n: int, start: int, guess: int) -> int | None:
    passing = [i for i in range(start, n) if await test(i)]
    return max(passing) if passing else None


async def guess_greatest(test: Test, n: int, start: int, guess: int) -> int | None:
    """From the guess: walk up while not failing, or down until the first pass (errors are walked past)."""
    if start >= n:
        return None
    i = min(max(guess, start), n - 1)
    first = await test(i)
    if first:
        return await _walk(test, range(i + 1, n), i)
    for j in range(i - 1, start - 1, -1):
        if await test(j):
            return j
    if first is None:  # the guess errored: what lies above it is still open
        for j in range(i + 1, n):
            if await test(j):
                return await _walk(test, range(j + 1, n), j)
    return None


# ----------------------------------------------------------------- drivers


async def _search_demand(problem: SearchProblem, find: Finder, run: Memo,
                         guesses: Mapping[float, int] | None = None) -> dict[float, float | None]:
    """Per load ascending, the least passing resource.

    Lower bound: demand never falls as load rises, so resources below the previous
    load's demand are skipped; if the previous load found none, nothing is tried.
    """
    resources = list(problem.resources)
    n = len(resources)
    table: dict[float, float | None] = {}
    previous: int | None = None
    first = True
    for load in problem.loads:
        if problem.lower_bound and not first and previous is None:
            table[load] = None
            continue
        start = previous if problem.lower_bound and previous is not None else 0
        # First load starts lowest; after a load with no demand the highest
        # resource is the likeliest to pass, so initial-guess starts there.
        guess = previous if previous is not None else (0 if first else n - 1)
        if guesses is not None and load in guesses:
            guess = guesses[load]

        async def test(i: int, load: float = load) -> bool | None:
            return await run(load, resources[i])

        found = await find(test, n, start, guess)
        table[load] = resources[found] if found is not None else None
        # an error below the demand found leaves the demand open down to it: the next
        # load's lower bound starts there, not at a demand an error may have raised
        errors = [i for i in range(start, found if found is not None else n)
                  if run.verdicts.get((load, resources[i]), False) is None]
        previous, first = (min(errors) if errors else found), False
    return table


async def _search_capacity(problem: SearchProblem, find: Finder, run: Memo,
                           guesses: Mapping[float, int] | None = None) -> dict[float, float | None]:
    """Per resource amount ascending, the greatest passing load.

    Lower bound: capacity never falls as resources grow, so loads below the previous
    capacity are assumed to pass and the search starts at that capacity. If nothing
    passes from there, the greatest assumed-passing load (just below the start) is
    reported: by the same assumption it holds, and it is never above a measured failure.
    """
    loads = list(problem.loads)
    n = len(loads)
    table: dict[float, float | None] = {}
    previous: int | None = None
    for res in problem.resources:
        start = previous if problem.lower_bound and previous is not None else 0
        guess = previous if previous is not None else 0
        if guesses is not None and res in guesses:
            guess = guesses[res]

        async def test(i: int, res: float = res) -> bool | None:
            return await run(loads[i], res)

        found = await find(test, n, start, guess)
        if found is None and problem.lower_bound and start > 0:
            found = start - 1
        table[res] = loads[found] if found is not None else None
        previous = found
    return table


@dataclass(frozen=True)
class _Strategy:
    least: Finder
    greatest: Finder

    async def __call__(self, problem: SearchProblem) -> dict[float, float | None]:
        check_problem(problem)
        run = Memo(problem.run)
        if problem.metric == "demand":
            return await _search_demand(problem, self.least, run)
        return await _search_capacity(problem, self.greatest, run)


async def predicted(problem: SearchProblem, guesses: Mapping[float, int]) -> dict[float, float | None]:
    """The search from a prediction (``bench.search.prediction``): per load (demand) or resource
    amount (capacity) start at the predicted index, and walk as initial-guess does: a
    pass is confirmed by its lower neighbour's failure (demand; capacity: its upper
    neighbour's), a failure walks on. Every entry is a measured verdict; ``guesses``
    only chooses where each walk begins, so a wrong prediction costs experiments, not
    a wrong table. The lower bound still applies (a guess below it starts at it)."""
    check_problem(problem)
    run = Memo(problem.run)
    if problem.metric == "demand":
        return await _search_demand(problem, guess_least, run, guesses)
    return await _search_capacity(problem, guess_greatest, run, guesses)


def check_problem(problem: SearchProblem) -> None:
    """What every strategy's index arithmetic needs: a known metric, loads in order of
    intensity, resources ascending. Wrong input fails loudly instead of searching nonsense."""
    if problem.metric not in METRICS:
        raise ValueError(f"metric: {problem.metric!r} is not one of {', '.join(METRICS)}")
    _check_monotonic("loads", problem.loads)
    _check_ascending("resources", problem.resources)


def _check_monotonic(name: str, values: Sequence[float]) -> None:
    """Loads come in order of intensity: ascending, or descending for a load type whose
    smaller values mean more load (see ``model.load_intensity_order``)."""
    seq = list(values)
    pairs = list(zip(seq, seq[1:], strict=False))
    if not (all(b > a for a, b in pairs) or all(b < a for a, b in pairs)):
        raise ValueError(f"{name}: must be strictly ascending or descending (by intensity), got {seq}")


def _check_ascending(name: str, values: Sequence[float]) -> None:
    """A strategy's index arithmetic is meaningless on an unsorted list; fail loudly."""
    seq = list(values)
    if any(b <= a for a, b in zip(seq, seq[1:], strict=False)):
        raise ValueError(f"{name}: must be strictly ascending, got {seq}")


#: how linear and binary walk from a prediction: as initial-guess, which finds their table
#: on monotone verdicts in fewer experiments
_AS_INITIAL_GUESS = "from the prediction, walking as initial-guess (in place of {}, which finds the same table on " \
                    "monotone verdicts)"

STRATEGIES: tuple[SearchStrategy, ...] = (
    SearchStrategy(
        "full",
        "run every (load, resources) pair, then derive the table (most runs, no assumptions)",
        _Strategy(_full_least, _full_greatest),
        measures_every_pair=True,
    ),
    SearchStrategy(
        "linear",
        "demand: resources ascending until the first pass; capacity: loads ascending "
        "until the first failure (the published default, with --lower-bound)",
        _Strategy(_linear_least, _linear_greatest),
        from_prediction=predicted,
        prediction_walk=_AS_INITIAL_GUESS.format("linear"),
    ),
    SearchStrategy(
        "binary",
        "binary search over the sorted resources (demand) or loads (capacity); assumes monotonicity",
        _Strategy(_binary_least, _binary_greatest),
        from_prediction=predicted,
        prediction_walk=_AS_INITIAL_GUESS.format("binary"),
    ),
    SearchStrategy(
        "initial-guess",
        "start at the previous load's demand (previous resource's capacity); "
        "walk towards fewer resources while passing, towards more while failing",
        _Strategy(guess_least, guess_greatest),
        from_prediction=predicted,
        guesses=("PrevResourceMinGuess",),  # the previous load's demand: how this walk starts
    ),
)
