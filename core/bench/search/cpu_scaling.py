"""One instance's records/s at another CPU limit than the probe's, and the limit for a
wanted figure: what sizing estimates where it lowers the limit without probing again.

A Spark SUT process spends a fixed share of its CPU whatever its load (the JIT
compiler, the collector, the driver's planning), shared by its instances; only the rest
processes records. Taken in proportion to the whole limit, the estimate overstated what
UC4's instances sustained: from quarter-core figures of 6,518 and 6,653 records/s per
instance the limit went to 0.12 and 0.118 core for 3,140 each, and two such instances
fell 248 records/s short of 4,096 in one run of two (docs/performance.md). With the
fixed share taken off first the same figures put two instances at about 4,000 there:
on the boundary, as they were measured.
"""

from __future__ import annotations

from bench.search.sizing_record import ProbeFigures

#: cores a Spark SUT process spends whatever its load, shared by its instances: its JIT
#: compiler and collector took 0.085-0.112 of a quarter core (docs/performance.md,
#: "Observer effect"). Also the figure that puts the two UC4 runs above on their boundary,
#: and one UC1 instance at 0.139 core below the 5,000 records/s it failed, which the
#: estimate in proportion put at 10,005.
SPARK_PROCESS_CPU = 0.1


def _spare(probe: ProbeFigures, fixed: float) -> float:
    """The probe's cores left to its instances' records, or 0 where the fixed cost takes
    them all (the estimate then falls back to the proportion)."""
    spare = max(probe.instances, 1.0) * probe.cpu - fixed
    return spare if fixed > 0 and spare > 0 else 0.0


def rate_at(probe: ProbeFigures, cpu: float, fixed: float = 0.0) -> float:
    """One instance's records/s at ``cpu`` core (of as many instances as the probe ran),
    from the probe's at its own limit, ``fixed`` cores of the SUT process taken off first
    (0: in proportion to the limit)."""
    if probe.cpu <= 0:
        return probe.per_instance_rate
    spare = _spare(probe, fixed)
    if not spare:
        return probe.per_instance_rate * cpu / probe.cpu
    return probe.per_instance_rate * max(max(probe.instances, 1.0) * cpu - fixed, 0.0) / spare


def cpu_for(probe: ProbeFigures, rate: float, fixed: float = 0.0) -> float:
    """The CPU limit per instance at which one instance reads ``rate`` records/s by
    :func:`rate_at`."""
    if probe.per_instance_rate <= 0:
        return probe.cpu
    spare = _spare(probe, fixed)
    if not spare:
        return probe.cpu * rate / probe.per_instance_rate
    return (fixed + rate / probe.per_instance_rate * spare) / max(probe.instances, 1.0)
