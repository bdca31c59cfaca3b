"""A sized run takes the loads of an earlier sized run in its results folder where its own
probe puts them in the same demands: the same question asked twice gets one table.

A probe's figure varies from run to run on one machine (UC3's eighth-core instances read
11,966 and 13,476 records/s each in two runs in a row), and the round loads follow it
across a rounding edge: `2000, 15000` then `2500, 20000`, two tables of the same curve
that no one can lay side by side. The earlier loads are taken only where this run's
probe measured them anew: the same use case, parameters and CPU limit, as many loads,
each asking as many instances at this probe's figure as the load this run chose in its
place, and none within :data:`EDGE` of an instance's boundary. Not a run whose loads
showed one demand (its table measured another load): UC3's `2500, 20000` did so once,
where the next run's own `2000, 15000` showed two. The run says which run's loads it
took, and the sizing file keeps them; nothing is kept outside the folder.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.results.sizing_file import read_sizing
from bench.results.store import read_object
from bench.search import sizing
from bench.search.load_values import RateOf
from bench.search.sizing_record import Sizing

#: an earlier load lies at least this share of one instance's figure from its boundaries
#: at this probe's figure (half the margin a load is chosen with, ``sizing.BOUNDARY_MARGIN``:
#: the figure's own spread between runs is a tenth or more)
EDGE = sizing.BOUNDARY_MARGIN / 2
RUN = re.compile(r"exp(\d+)-sizing\.json$")


def fits(earlier: list[float], own: list[float], capacity: float) -> bool:
    """Whether the earlier loads' records/s ask, rank by rank, the demands this run's own
    ask at ``capacity`` per instance, each at least :data:`EDGE` from a boundary."""
    if len(earlier) != len(own) or capacity <= 0 or not own:
        return False
    for old, new in zip(sorted(earlier), sorted(own), strict=True):
        share = old / capacity
        if sizing.sized_demand(old, capacity) != sizing.sized_demand(new, capacity):
            return False
        above_edge = share > 1 and share - math.floor(share) < EDGE  # just above k instances' figure
        if above_edge or math.ceil(share) - share < EDGE:  # or just below one
            return False
    return True


def earlier_loads(directory: Path, exp_id: int, use_case: str, params: dict[str, Any], made: Sizing,
                  rate_of: RateOf) -> tuple[int, dict[float, float]] | None:
    """(the run's id, its loads -> records/s) of the latest earlier sized run in
    ``directory`` whose loads this run's probe puts where its own are (:func:`fits`), else None."""
    if not made.loads:
        return None
    found = sorted((int(m.group(1)) for p in directory.glob("exp*-sizing.json")
                    if (m := RUN.search(p.name)) and int(m.group(1)) < exp_id), reverse=True)
    for other in found:
        run = read_object(directory / f"exp{other}-run.json") or {}
        doc = read_sizing(directory, other) or {}
        loads = doc.get("loads")
        if doc.get("added"):
            continue  # its loads showed one demand, and the run measured another load (flat_table)
        if run.get("useCase") != use_case or (run.get("params") or {}) != json.loads(json.dumps(params)) or not loads:
            continue
        if not math.isclose(float(doc.get("cpuPerInstance") or 0.0), made.cpu):
            continue
        try:
            rates = {float(v): float(rate_of(float(v))) for v in loads}
        except (TypeError, ValueError, KeyError, ArithmeticError):
            continue
        stored = {float(k): float(r) for k, r in doc.get("rates") or []}
        if any(not math.isclose(stored.get(v, -1.0), r, rel_tol=1e-6) for v, r in rates.items()):
            continue  # another load type or generator: the same values ask other records/s
        if set(rates) == set(made.loads):
            return None  # this run chose them too
        if fits(list(rates.values()), [made.rates[v] for v in made.loads], made.per_instance_rate):
            return other, rates
    return None


def reuse(made: Sizing, other: int, rates: dict[float, float], sized_resources: bool) -> Sizing:
    """``made`` with the earlier run's loads in place of its own (and the resources for them)."""
    loads = sorted(rates)
    return replace(made, loads=loads, rates={v: rates[v] for v in loads},
                   resources=sizing.resources_for(list(rates.values()), made.per_instance_rate)
                   if sized_resources else made.resources,
                   reason=f"{made.reason}; the loads of exp{other} (exp{other}-sizing.json), which this probe "
                          "puts in the same demands as its own")
