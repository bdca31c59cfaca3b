"""UC2 downsampling: tumbling event-time windows per sensor with count, sum, min, max,
mean and population variance (the Theodolite UC2), as a bench plugin."""

from __future__ import annotations

from typing import Any

from bench.api import UseCase, hookimpl

from bench_uc2.benchmark import default_benchmark
from bench_uc2.params import DEFAULT_PARAMS, PARAMS
from bench_uc2.topology import topology

USE_CASE = UseCase(
    name="uc2",
    description="Downsampling: tumbling windows per sensor (count, sum, min, max, mean, variance)",
    default_benchmark=default_benchmark,
    generator="active-power",
    topology=topology,
    dimensions=("NumSensors", "WindowSize", "MessagePeriod"),
    default_params=dict(DEFAULT_PARAMS),
    params=PARAMS,
)


@hookimpl
def bench_register_use_cases(register: Any) -> None:
    register(USE_CASE)
