"""Measuring once more where a sized run's table came out flat (:mod:`bench.search.flat_table`).

Only for loads bench chose (the user's are never changed, nor resource amounts the user
gave), the demand metric, and once per run: the addition is kept in
``exp<id>-sizing.json`` (``added``), so ``--resume`` measures the same loads and amounts
and adds nothing more. The verdicts already measured answer again from the runner's
cache; only the new pairs run.
"""

from __future__ import annotations

from collections.abc import Mapping

from bench.execution.config import RunConfig
from bench.search.flat_table import Extension, extend, reach
from bench.search.load_values import RateOf
from bench.search.sizing_record import Sizing


def plan(sized: Sizing | None, cfg: RunConfig, table: Mapping[float, float | None], rate_of: RateOf,
         cores: float | None) -> Extension | None:
    """What a flat sized table measures more, or None. ``cores``: the machine's, where the
    SUT runs on it (None elsewhere: how many instances a cluster hosts is not known here)."""
    if sized is None or not sized.loads or sized.added is not None or not sized.probes:
        return None
    ex = cfg.execution
    if ex.execution.metric != "demand" or set(ex.load.loadValues) != set(sized.loads):
        return None
    rates = {x: sized.rates.get(x) or rate_of(x) for x in table}
    given = sized.resources is None  # the user's resource amounts: kept as they are
    room = cores / sized.cpu if cores and sized.cpu > 0 and not given else None
    added = extend(table, rates, ex.resources.resourceValues, rate_of, reach(sized.probes[-1]), room,
                   sized.per_instance_rate, batches=sized.probes[-1].source == "batches")
    if added is None or (given and added.resources != list(ex.resources.resourceValues)):
        return None
    return added


def take(sized: Sizing, added: Extension) -> None:
    """The sizing with the addition in it: its loads, rates and resources."""
    if added.load is not None and sized.loads is not None:
        sized.loads = sorted({*sized.loads, added.load}, key=lambda x: sized.rates.get(x, added.rate))
        sized.rates[added.load] = added.rate
    sized.resources = list(added.resources)
    sized.added = added.to_json()
