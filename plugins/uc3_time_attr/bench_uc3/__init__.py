"""UC3 aggregation by time attribute: statistics per (sensor, hour of day | day of week |
hour of week) over hopping windows, emitted periodically (the Theodolite UC3), as a
bench plugin."""

from __future__ import annotations

from typing import Any

from bench.api import UseCase, hookimpl

from bench_uc3.benchmark import default_benchmark
from bench_uc3.panes import check_slis
from bench_uc3.params import DEFAULT_PARAMS, PARAMS, window_seconds
from bench_uc3.topology import topology

USE_CASE = UseCase(
    name="uc3",
    description="Aggregation by time attribute: hopping windows per (sensor, hour of day), periodic results",
    default_benchmark=default_benchmark,
    generator="active-power",
    topology=topology,
    dimensions=(
        "NumSensors", "WindowSize", "Advance", "NumOverlappingWindows", "NumTimeAttributeValues", "MessagePeriod",
        "AggregationDurationDays",
    ),
    default_params=dict(DEFAULT_PARAMS),
    params=PARAMS,
    check_slis=check_slis,
    window_seconds=window_seconds,
)


@hookimpl
def bench_register_use_cases(register: Any) -> None:
    register(USE_CASE)
