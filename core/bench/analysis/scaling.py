"""Scaling efficiency and cost at the demand, from a demand table.

Scaling efficiency follows OSPBench (van Dongen and Van den Poel): the throughput
increase factor divided by the resource increase factor, both relative to the smallest
load that passed. 1.0 is linear scaling; below 1 each added instance buys less than
the first one did.

Cost is core-seconds per million records at the demand: ``resources x cores per
instance / records/s x 10^6``. The cores per instance are what an instance really had
at that experiment (``cores_per_instance`` of its record in the result JSON: a CPU
limit, ``CoresPerInstance``, executor cores, a Kubernetes CPU limit), so a quarter-core
instance costs a quarter of a one-core one. Efficiency compares the core counts too,
since a resource axis of ``CoresPerInstance`` or a CPU limit changes what one unit is.
Runs whose records do not say fall back to the environment file's ``cores_per_instance``,
then to one core, and :func:`cores_source` says which.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.analysis.runs import RunFiles
from bench.results.tables import RunTable


@dataclass(frozen=True)
class ScalingRow:
    """One demand entry; the figures are None where ``missing`` says why they could not be
    computed from a measurement (an inferred or undecided entry, a rate not recorded)."""

    load: float
    resources: float
    rate: float | None
    throughput_factor: float | None
    resource_factor: float | None
    efficiency: float | None
    core_seconds_per_million: float | None
    cores_per_instance: float | None
    #: "measured" (the experiment's record), "configuration" (the stored deployment and the
    #: environment's CPU limit record, for runs that did not record it) or "assumed" (one core)
    cores_source: str
    #: why the figures are absent ("" when computed)
    missing: str = ""


def _positive(raw: object) -> float | None:
    try:
        value = float(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return value if value > 0 else None


def cores_of(run: RunFiles, load: float, resources: float) -> tuple[float, str]:
    """Cores per instance at one experiment, and where the number comes from."""
    value = _positive((run.records().get((load, resources)) or {}).get("cores_per_instance"))
    if value is not None:
        return value, "measured"
    value = _positive((run.environment or {}).get("cores_per_instance"))
    if value is not None:
        return value, "configuration"
    value = _configured_cores(run, resources)
    if value is not None:
        return value, "configuration"
    return 1.0, "assumed"


def _configured_cores(run: RunFiles, resources: float) -> float | None:
    """What the stored deployment gave an instance: its SUT objects (``cpuPerInstance``,
    ``coresPerInstance``; the resource value itself on a CoresPerInstance axis), with the CPU
    limit only where the environment file does not say that the platform could not apply it."""
    from bench.execution.deployment import instance_cores

    objects = [dict(o) for o in ((run.benchmark or {}).get("sut") or {}).get("resources") or []
               if isinstance(o, dict)]
    if not objects:
        return None
    if run.resource_type() == "CoresPerInstance":
        for obj in objects:
            if obj.get("kind") == "BenchSut":
                obj["spec"] = {**(obj.get("spec") or {}), "coresPerInstance": resources}
    limit = (run.environment or {}).get("cpuLimit")
    applied = not (isinstance(limit, dict) and limit.get("applied") is False)
    if isinstance(limit, dict) and limit.get("applied") is True and _positive(limit.get("cpuPerInstance")):
        for obj in objects:  # the limit as it ran (a --set value is not in the benchmark file)
            if obj.get("kind") == "BenchSut":
                obj["spec"] = {**(obj.get("spec") or {}), "cpuPerInstance": limit["cpuPerInstance"]}
    return instance_cores(objects, applied)


def cores_per_instance(run: RunFiles) -> float:
    """The run's cores per instance where all its experiments agree (the first one otherwise)."""
    for load, resources in sorted(run.records()):
        return cores_of(run, load, resources)[0]
    return cores_of(run, 0.0, 0.0)[0]


def scaling_rows(run: RunFiles, table: dict[float, float | None] | RunTable) -> list[ScalingRow]:
    """One row per load that passed somewhere, in load order. Figures come only from a
    measured experiment at that entry (its records/s as the generators were asked): an
    entry the lower bound inferred, one left undecided, or one whose rate was not
    recorded gets a row without figures saying why (its load value is no records/s).
    The first computed row is the base of the factors."""
    run_table = table if isinstance(table, RunTable) else RunTable("demand", dict(table))
    rows: list[ScalingRow] = []
    base: tuple[float, float] | None = None
    entries = run_table.table

    def order(key: float) -> float:
        return run.target_rate(key, entries[key] or 0.0) or key

    for load in sorted(entries, key=order):
        resources = entries[load]
        if resources is None or resources <= 0:
            continue
        missing = ("inferred (not measured)" if run_table.inferred(load)
                   else "undecided" if run_table.undecided(load)
                   else "not measured" if (load, resources) not in run.records() else "")
        rate = None if missing else run.target_rate(load, resources)
        if rate is None or rate <= 0:
            rows.append(ScalingRow(load, resources, None, None, None, None, None, None, "",
                                   missing or "records/s not recorded"))
            continue
        cores, source = cores_of(run, load, resources)
        total = resources * cores
        if base is None:
            base = (rate, total)
        tf, rf = rate / base[0], total / base[1]
        rows.append(ScalingRow(load, resources, rate, tf, rf, tf / rf, total / rate * 1e6, cores, source))
    return rows
