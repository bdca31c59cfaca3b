"""One load (or two resource amounts) more where a sized run's measured table came out flat.

The sized loads follow one probe's figure, which a real SUT's runs do not always agree
with. At an eighth of a core one Spark instance alone failed 0.2 x the two-instance
figure (UC1 210, UC3 230, UC4 256 records/s), so UC3's table read ``230: 2, 1500: 2``;
UC4's probe reads 2-10 x what its runs sustain and its steps are 4x apart, so its table
read ``5: 1, 7: none passed``, and once ``4: 1, 6: none passed`` with the resources
stopping at three. The measured verdicts say where the missing demand lies, so the run
measures once more there, in this order:

1. a load without a passing amount above one with a demand: a load between the two;
2. a load without a passing amount whose amounts stop below what the machine hosts:
   two amounts more;
3. every load one demand ``d``: a heavier one, above ``(d + 1) / d`` x the heaviest one's
   records/s and above what ``d`` instances read in the probe (``d + 1`` for a
   micro-batch SUT's figure), by a boundary's margin, where the load path pushes it
   (:func:`reach`);
   of a stepped load, the next step at or above ``(d + 1) / d`` x the heaviest.

Pure arithmetic on the table and ``rate_of``; the engine
(:mod:`bench.execution.flat_extension`) measures what it adds, once per run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bench.search.load_values import RateOf, candidates_near, round_candidates
from bench.search.sizing import BOUNDARY_MARGIN, MIN_DEMANDS, ROUND_BAND, half_cpu
from bench.search.sizing_record import ProbeFigures

#: where the load path kept up with the probe, how far beyond sizing's guess of it
#: (``sizing_record.PATH_HEADROOM`` x the probe's records/s) a flat table's heavier load
#: may go. The guess was 80,000 records/s on 2 cores (a probe of 40,000), where one
#: half-core UC1 instance passed 74,000 and 120,000: every table at a given half core came
#: out flat. The path pushed 240,000 beside one such instance, and two kept up with
#: 160,000, which one failed (docs/performance.md).
GUESS_REACH = 2.0


def reach(probe: ProbeFigures) -> float:
    """The most records/s a flat table's heavier load may ask: what sizing took the load
    path to push where it fell behind in the probe (its limit), :data:`GUESS_REACH` x that
    where it kept up (a guess)."""
    return probe.usable_rate if probe.path_limited else GUESS_REACH * probe.usable_rate


@dataclass(frozen=True)
class Extension:
    """What a flat table gets: a load (None: only resource amounts) and the run's amounts after it."""

    load: float | None
    rate: float
    resources: list[float]
    why: str

    def to_json(self) -> dict[str, object]:
        return {"load": self.load, "rate": self.rate, "resources": self.resources, "why": self.why}


def demands_shown(table: Mapping[float, float | None]) -> int:
    """How many different demands a measured table shows (a load without a passing amount shows none)."""
    return len({d for d in table.values() if d is not None})


def between(low: float, high: float, rate_of: RateOf) -> tuple[float, float] | None:
    """A load value asking records/s strictly between ``low`` and ``high`` (their geometric
    middle, at its roundest for a continuous load; the nearest step of a stepped one)."""
    target = math.sqrt(low * high)
    found = candidates_near(target, rate_of)
    near = {v: r for v, r in found.items() if low < r < high}
    if len(found) == 1 and near:  # continuous: a round value clear of both
        lo, hi = low * (1 + BOUNDARY_MARGIN), high / (1 + BOUNDARY_MARGIN)
        rounded = round_candidates(lo, hi, target, rate_of) if lo < hi else []
        return rounded[0] if rounded else next(iter(near.items()))
    if not near:
        return None
    # the nearest step to the middle, the heavier of two as near: further from the demand known below
    value = min(near, key=lambda v: (round(abs(math.log(near[v] / target)), 9), -near[v]))
    return value, near[value]


def heavier(rate: float, demand: float, usable: float, rate_of: RateOf, read: float = 0.0
            ) -> tuple[float, float] | None:
    """A load value asking more than ``demand`` instances' share of ``rate`` would: at
    least ``(d + 1) / d`` x ``rate`` and more than ``read`` (what ``d`` instances, or
    ``d + 1`` for a micro-batch figure, read in the probe: a SUT whose fixed cost its
    instances share reads more per instance the more there are), a boundary's margin above
    that, at most ``usable``. A stepped load takes its next step instead (see below)."""
    least = max(rate * (demand + 1) / demand, read)
    target = least * (1 + BOUNDARY_MARGIN)
    if least >= usable:
        return None
    found = candidates_near(min(target, usable), rate_of)
    near = {v: r for v, r in found.items() if least < r <= usable}
    if len(found) == 1:  # continuous
        rounded = round_candidates(max(least, target / ROUND_BAND), min(usable, target * ROUND_BAND), target,
                                   rate_of)
        return rounded[0] if rounded else next(iter(near.items()), None)
    # a stepped load: the next step above (d + 1) / d x the heaviest, already a step of 4x
    # for UC4, and the probe's figure left out: UC4's reads 2-10 x what its runs
    # sustain, and above it lay only 16,384 records/s, which no amount of half-core
    # instances on two cores kept up with, where 4,096 had been left out as one demand
    steps = {v: r for v, r in found.items() if rate * (demand + 1) / demand <= r <= usable}
    if len(steps) < 2:
        return None
    value = min(steps, key=lambda v: steps[v])
    return value, steps[value]


def extend(table: Mapping[float, float | None], rates: Mapping[float, float], resources: Sequence[float],
           rate_of: RateOf, usable: float, room: float | None, capacity: float = 0.0,
           batches: bool = False) -> Extension | None:
    """What a table with fewer than :data:`MIN_DEMANDS` demands measures more, or None.

    ``table``: load -> its demand (None: no passing amount); ``rates``: load -> records/s;
    ``usable``: the most records/s the load path pushes; ``room``: the instances the
    machine hosts at the run's CPU limit (None: unknown); ``capacity``: the probe's
    records/s per instance; ``batches``: read from a micro-batch SUT's batch ends, whose
    larger amounts read more per instance than its probe: the heavier load then goes
    above what ``d + 1`` instances read in the probe (two eighth-core UC3 instances read
    1,253 records/s each there and passed 3,000, 2.4 x that, in a run; two quarter-core
    UC1 instances passed 2.3 x their figure and failed 2.8 x)."""
    demands = {d for d in table.values() if d is not None}
    if len(demands) >= MIN_DEMANDS or not table:
        return None
    amounts = sorted(float(r) for r in resources)
    top = amounts[-1]
    unpassed = sorted((x for x, d in table.items() if d is None), key=lambda x: rates[x])
    passed = sorted((x for x, d in table.items() if d is not None), key=lambda x: rates[x])
    if unpassed and passed:
        # first: the missing demand between a demand and no passing amount lies within
        # what the machine hosts; more amounts of a load none passed measure at its edge,
        # where generator and broker share the cores (UC4 at an eighth of a core: 16,384
        # records/s failed on 3 to 7 instances, the last just, 912 against 819)
        above = [x for x in unpassed if rates[x] > rates[passed[-1]]]
        if above and (found := between(rates[passed[-1]], rates[above[0]], rate_of)) is not None:
            return Extension(found[0], found[1], amounts, f"{above[0]:g} had no passing amount and "
                             f"{passed[-1]:g} needs {table[passed[-1]]:g}: a load between them")
    if unpassed and room is not None and top + 1 <= room:
        more = [top + n for n in (1, 2) if top + n <= room]
        return Extension(None, 0.0, amounts + more, f"{unpassed[0]:g} had no passing amount up to {top:g} "
                         f"instances and the machine hosts {math.floor(room):d}: "
                         f"{', '.join(f'{m:g}' for m in more)} instances more")
    if len(demands) == 1 and passed:
        d = float(next(iter(demands)))
        heaviest = passed[-1]
        read = (d + 1 if batches else d) * capacity
        found = heavier(rates[heaviest], d, usable, rate_of, read)
        if found is not None and found[0] not in table:
            need = [float(n) for n in range(int(top) + 1, int(d) + 3)]
            probed = (f" and the {read:,.0f} {d + 1 if batches else d:g} instances read in the probe"
                      if found[1] > read > 0 else "")
            return Extension(found[0], found[1], amounts + need,
                             f"every load needs {d:g} instance(s): a heavier one, {found[1]:,.0f} records/s, "
                             f"above {(d + 1) / d:.3g} x {heaviest:g}'s {rates[heaviest]:,.0f}{probed}")
    return None


def path_bound(table: Mapping[float, float | None], rates: Mapping[float, float], sized: int, usable: float,
               cpu: float, seen: float | None = None) -> str | None:
    """One line where a measured table shows fewer demands than its loads were sized for
    (``sized``) and no heavier load shows another: the heaviest one passed on ``d``
    instances and ``(d + 1) / d`` x its records/s is more than the load path pushes
    (``usable``). A lower CPU limit makes each instance slower, so that the loads the path
    pushes need more of them; None where it does not apply or the SUT has no limit.

    Why: on a machine where two quarter-core UC1 instances kept up with the probe's
    40,000 records/s, the figure was a lower bound and the loads were sized for demands
    1, 2 and 3; one instance then passed 25,000 and two passed 74,000, the most the path
    was taken to push, and the table read ``4000: 1, 25000: 1, 74000: 2`` without a word.

    ``seen``: where the load path kept up with the probe, the records/s it kept up with;
    ``usable`` is then a guess, not its limit, and the line says so. Beside one half-core
    UC1 instance the path pushed 240,000 records/s, where the line had said "about
    80,000" (twice the probe's 40,000)."""
    shown = demands_shown(table)
    passed = sorted((x for x, d in table.items() if d is not None), key=lambda x: rates.get(x, 0.0))
    if cpu <= 0 or not passed or shown >= sized or any(d is None for d in table.values()):
        return None
    if table[passed[0]] != 1:
        # the demand missing is at the light end: one instance failed the lightest load
        # (its process's fixed cost), which a lower limit makes worse, not better
        return None
    heaviest = passed[-1]
    d = float(table[heaviest] or 0.0)
    lower = half_cpu(cpu)
    if d <= 0 or lower is None or rates.get(heaviest, 0.0) * (d + 1) / d <= usable:
        return None
    times = "twice" if seen and math.isclose(usable / seen, 2.0) else f"{usable / (seen or usable):.3g} x"
    path = (f"the load path here pushes about {usable:,.0f}" if seen is None else
            f"sizing goes no further than {usable:,.0f} records/s, {times} the {seen:,.0f} the load path kept up "
            "with in the probe (it may push more)")
    heavier_loads = "" if seen is None else ", or heavier loads (--loads ...)"
    return (f"{shown} demand(s) where {sized} were sized: {d:g} instance(s) kept up with {heaviest:g} "
            f"({rates[heaviest]:,.0f} records/s), and {path}; a lower CPU limit shows more "
            f"(--set sut.cpuPerInstance={lower:g}){heavier_loads}")
