"""Scaling efficiency and cost at the demand, from a demand table.

Scaling efficiency follows OSPBench (van Dongen and Van den Poel): the throughput
increase factor divided by the resource increase factor, both relative to the smallest
load that passed. 1.0 is linear scaling; below 1 each added instance buys less than
the first one did.

Cost is core-seconds per million records at the demand: ``resources x cores per
instance / records/s x 10^6``. bench's embedded instances have one core each, so the
default is one core per instance; a run whose environment file names
``cores_per_instance`` uses that.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.analysis.runs import RunFiles


@dataclass(frozen=True)
class ScalingRow:
    load: float
    rate: float
    resources: float
    throughput_factor: float
    resource_factor: float
    efficiency: float
    core_seconds_per_million: float


def cores_per_instance(run: RunFiles) -> float:
    raw = (run.environment or {}).get("cores_per_instance")
    try:
        value = float(raw) if raw is not None else 1.0
    except (TypeError, ValueError):
        value = 1.0
    return value if value > 0 else 1.0


def scaling_rows(run: RunFiles, table: dict[float, float | None]) -> list[ScalingRow]:
    """One row per load that passed somewhere, in load order; the first is the base."""
    cores = cores_per_instance(run)
    rows: list[ScalingRow] = []
    base: tuple[float, float] | None = None
    for load in sorted(table):
        resources = table[load]
        if resources is None or resources <= 0:
            continue
        rate = run.target_rate(load, resources) or load
        if base is None:
            base = (rate, resources)
        tf, rf = rate / base[0], resources / base[1]
        rows.append(ScalingRow(load, rate, resources, tf, rf, tf / rf, resources * cores / rate * 1e6))
    return rows
