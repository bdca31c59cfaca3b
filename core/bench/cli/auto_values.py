"""``--loads auto`` / ``--resources auto`` on the command line and in files: which values
bench sizes by a probe (:mod:`bench.search.sizing`) and which the user gave."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from bench.search.flat_table import demands_shown, path_bound
from bench.search.sizing import MIN_DEMANDS, distinct_demands
from bench.search.sizing_record import AutoSize, Sizing

#: ``--loads auto`` / ``loadValues: auto``: bench sizes the values by a probe (bench.search.sizing)
AUTO = "auto"


def auto_values(doc: dict[str, Any], defaults: dict[str, Any], raw: dict[str, Any] | None,
                 opts: dict[str, Any]) -> tuple[bool, bool]:
    """Whether the loads and the resources are left to bench: ``auto`` on the command line
    or in the execution file, or given nowhere (the use case's defaults are then only
    placeholders that keep ``--dry-run`` and the checks working). An ``auto`` in the
    document is replaced by those placeholders."""
    flags = []
    for option, key, name in (("loads", "load", "loadValues"), ("resources", "resources", "resourceValues")):
        in_file = isinstance(raw, dict) and isinstance(raw.get(key), dict) and name in raw[key]
        auto = opts.get(option) == AUTO or (opts.get(option) is None and (
            not in_file or (raw or {})[key][name] == AUTO))
        if doc.get(key, {}).get(name) == AUTO:
            doc[key][name] = defaults.get(key, {}).get(name)
        flags.append(auto)
    return flags[0], flags[1]


def cpu_given(params: dict[str, Any], bench_file: Any) -> str | None:
    """Where the user gave the SUT's CPU limit per instance (sizing never changes it), or None."""
    for key in params:
        if key.endswith(".cpuPerInstance"):
            return f"--set {key}"
    return "the --benchmark file" if bench_file else None


def placeholders(doc: dict[str, Any], laptop: dict[str, Any]) -> dict[str, Any]:
    """The defaults before any file or option: a use case's ``auto`` takes the laptop
    values as placeholders (in ``doc`` too) until the probe sizes them."""
    for key, values in (("load", "loadValues"), ("resources", "resourceValues")):
        if doc.get(key, {}).get(values) == AUTO:
            doc[key][values] = copy.deepcopy(laptop[key][values])
    return copy.deepcopy(doc)


def sizing_note(exp_id: int, made: Sizing | None, table: Mapping[float, float | None] | None = None) -> list[str]:
    """The lines under the printed table of a sized run: that it was sized, and how to
    give one's own values; what a flat table added; the advice where no curve fitted,
    unless the measured ``table`` shows one after all (UC4 at half a core: one load
    sized, the advice said, then the step added gave ``5: 1, 6: 2``)."""
    if made is None:
        return []
    lines = [f"  sized for this machine (exp{exp_id}-sizing.json): {made.per_instance_rate:,.0f} records/s "
             "per instance; --loads/--resources give your own"]
    if made.added:
        lines.append(f"  measured once more, the table being flat: {made.added['why']}")
    if made.advice and (table is None or demands_shown(table) < MIN_DEMANDS):
        lines.append(f"  {made.advice}")
    elif made.loads and table and made.probes:
        extra = (made.added or {}).get("load")  # measured once more, not sized
        sized = distinct_demands([made.rates[x] for x in made.loads if x in made.rates and x != extra],
                                 made.per_instance_rate)
        last = made.probes[-1]
        seen = None if last.path_limited else last.path_rate
        # a flat table's load added beyond sizing's guess of the path (flat_table.reach)
        usable = max([last.usable_rate, *(made.rates.get(x, 0.0) for x in table)])
        if (line := path_bound(table, made.rates, sized, usable, made.cpu, seen)) is not None:
            lines.append(f"  {line}")
    return lines


def auto_size(auto: list[bool], params: dict[str, Any], bench_file: Any) -> AutoSize | None:
    """The run's sizing request: [loads auto, resources auto] and where a CPU limit was given."""
    return AutoSize(auto[0], auto[1], cpu_given(params, bench_file)) if any(auto) else None
