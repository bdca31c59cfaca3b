"""One load (or two resource amounts) more where a sized run's measured table came out flat.

The sized loads follow one probe's figure, which a real SUT's runs do not always agree
with. At an eighth of a core one Spark instance alone failed 0.2 x the two-instance
figure (UC1 210, UC3 230, UC4 256 records/s), so UC3's table read ``230: 2, 1500: 2``;
UC4's probe reads 2-10 x what its runs sustain and its steps are 4x apart, so its table
read ``5: 1, 7: none passed``, and once ``4: 1, 6: none passed`` with the resources
stopping at three. The measured verdicts say where the missing demand lies, so the run
measures once more there, in this order:

1. a load without a passing amount whose amounts stop below what the machine hosts:
   two amounts more;
2. a load without a passing amount above one with a demand: a load between the two;
3. every load one demand ``d``: a heavier one, above ``(d + 1) / d`` x the heaviest one's
   records/s and above what ``d`` instances read in the probe, by a boundary's margin,
   where the load path pushes it.

Pure arithmetic on the table and ``rate_of``; the engine
(:mod:`bench.execution.flat_extension`) measures what it adds, once per run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bench.search.load_values import RateOf, candidates_near, round_candidates
from bench.search.sizing import BOUNDARY_MARGIN, MIN_DEMANDS, ROUND_BAND


@dataclass(frozen=True)
class Extension:
    """What a flat table gets: a load (None: only resource amounts) and the run's amounts after it."""

    load: float | None
    rate: float
    resources: list[float]
    why: str

    def to_json(self) -> dict[str, object]:
        return {"load": self.load, "rate": self.rate, "resources": self.resources, "why": self.why}


def between(low: float, high: float, rate_of: RateOf) -> tuple[float, float] | None:
    """A load value asking records/s strictly between ``low`` and ``high`` (their geometric
    middle, at its roundest for a continuous load; the nearest step of a stepped one)."""
    target = math.sqrt(low * high)
    near = {v: r for v, r in candidates_near(target, rate_of).items() if low < r < high}
    if len(near) == 1:  # continuous: a round value clear of both
        lo, hi = low * (1 + BOUNDARY_MARGIN), high / (1 + BOUNDARY_MARGIN)
        rounded = round_candidates(lo, hi, target, rate_of) if lo < hi else []
        return rounded[0] if rounded else next(iter(near.items()))
    if not near:
        return None
    value = min(near, key=lambda v: abs(math.log(near[v] / target)))
    return value, near[value]


def heavier(rate: float, demand: float, usable: float, rate_of: RateOf, read: float = 0.0
            ) -> tuple[float, float] | None:
    """A load value asking more than ``demand`` instances' share of ``rate`` would: at
    least ``(d + 1) / d`` x ``rate`` and more than ``read`` (what ``d`` instances read in
    the probe: a SUT whose fixed cost its instances share reads more per instance the
    more there are), a boundary's margin above that, at most ``usable``."""
    least = max(rate * (demand + 1) / demand, read)
    target = least * (1 + BOUNDARY_MARGIN)
    if least >= usable:
        return None
    near = {v: r for v, r in candidates_near(min(target, usable), rate_of).items() if least < r <= usable}
    if len(near) == 1:
        rounded = round_candidates(max(least, target / ROUND_BAND), min(usable, target * ROUND_BAND), target,
                                   rate_of)
        return rounded[0] if rounded else next(iter(near.items()))
    if not near:
        return None
    value = min(near, key=lambda v: near[v])  # the lightest step above
    return value, near[value]


def extend(table: Mapping[float, float | None], rates: Mapping[float, float], resources: Sequence[float],
           rate_of: RateOf, usable: float, room: float | None, capacity: float = 0.0) -> Extension | None:
    """What a table with fewer than :data:`MIN_DEMANDS` demands measures more, or None.

    ``table``: load -> its demand (None: no passing amount); ``rates``: load -> records/s;
    ``usable``: the most records/s the load path pushes; ``room``: the instances the
    machine hosts at the run's CPU limit (None: unknown); ``capacity``: the probe's
    records/s per instance."""
    demands = {d for d in table.values() if d is not None}
    if len(demands) >= MIN_DEMANDS or not table:
        return None
    amounts = sorted(float(r) for r in resources)
    top = amounts[-1]
    unpassed = sorted((x for x, d in table.items() if d is None), key=lambda x: rates[x])
    if unpassed and room is not None and top + 1 <= room:
        more = [top + n for n in (1, 2) if top + n <= room]
        return Extension(None, 0.0, amounts + more, f"{unpassed[0]:g} had no passing amount up to {top:g} "
                         f"instances and the machine hosts {math.floor(room):d}: "
                         f"{', '.join(f'{m:g}' for m in more)} instances more")
    passed = sorted((x for x, d in table.items() if d is not None), key=lambda x: rates[x])
    if unpassed and passed:
        above = [x for x in unpassed if rates[x] > rates[passed[-1]]]
        if above and (found := between(rates[passed[-1]], rates[above[0]], rate_of)) is not None:
            return Extension(found[0], found[1], amounts, f"{above[0]:g} had no passing amount and "
                             f"{passed[-1]:g} needs {table[passed[-1]]:g}: a load between them")
    if len(demands) == 1 and passed:
        d = float(next(iter(demands)))
        heaviest = passed[-1]
        found = heavier(rates[heaviest], d, usable, rate_of, d * capacity)
        if found is not None and found[0] not in table:
            need = [float(n) for n in range(int(top) + 1, int(d) + 3)]
            return Extension(found[0], found[1], amounts + need,
                             f"every load needs {d:g} instance(s): a heavier one, above {(d + 1) / d:.3g} x "
                             f"{heaviest:g}'s {rates[heaviest]:,.0f} records/s")
    return None
