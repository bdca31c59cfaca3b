"""The built-in ``calibrated`` use case: a SUT whose capacity is known by construction.

Its SUT is a consumer group of N plain Kafka consumers (``bench.runtime.calibrated_sut``),
each processing at most ``capacity`` records/s, so the demand for a load L must come
out as ceil(L / capacity). It checks a setup (broker, generator, lag sampling, SLO,
search) end to end without Spark. It also writes every processed record to ``output``,
``delayMs`` later (default 0), so that the latency SLI has a known delay to find.

For the capacities to add up exactly, every instance must get its share of the load:
the generator spreads keys round-robin over the partitions instead of hashing them
(every partition carries the same load within one key), and each SUT instance gets
capacity x instances x (its partitions / all partitions), so the group has exactly
N x capacity however the 12 partitions split. 12, not more: tansu's CPU use and
lag noise grow with partitions x small batches (60 partitions drifted by ~1 % of
the load per second on it).
"""

from __future__ import annotations

from typing import Any

from bench.api import ParamSpec, Registrar, UseCase, standard_benchmark
from bench.hookspecs import hookimpl

PARTITIONS = 12
#: the output carries every processed record (for the latency SLI); 4 partitions are plenty
OUTPUT_PARTITIONS = 4

#: The method's main SLO (median over repetitions of the lag's OLS slope < 1 % of the
#: load rate) written with the built-in ``generic`` type: a use case of the core must
#: not need a plugin installed. Same numbers, verdict and early stop as the plugin's
#: type; its name is data, kept as the reference's analysis finds lag series by it.
TREND_SLO: dict[str, Any] = {
    "name": "lag-trend",
    "sloType": "generic",
    "properties": {
        "sli": "lag",
        "queryAggregation": "trend",
        "repetitionAggregation": "median",
        "operator": "lt",
        "thresholdRelToRate": 0.01,
    },
}


#: The demand is known: 1 at 500 records/s, 3 at 2,500 (2 instances process 2,000), so
#: the default run shows the search walking up and stopping at the exact value. Failing
#: experiments end early; the whole run takes about five minutes.
MAIN_JOB: dict[str, Any] = {
    "load": {"loadValues": [500, 2500]},
    "resources": {"resourceValues": [1, 2, 3]},
    "execution": {"duration": 60, "warmup": 15, "sampleInterval": 2, "repetitions": 1, "afterTeardownDelay": 2},
}


def default_benchmark() -> dict[str, Any]:
    return standard_benchmark(
        "calibrated",
        {"input": PARTITIONS, "output": OUTPUT_PARTITIONS},
        sut_params={"capacity": 1000},
        generator={"params": {"partitioner": "round-robin"}},
        slos=[TREND_SLO],
        default_execution=MAIN_JOB,
    )


CALIBRATED = UseCase(
    name="calibrated",
    description="consumer group of N processes, each processing at most `capacity` records/s "
    "(--set capacity=...); demand must be ceil(load / capacity)",
    default_benchmark=default_benchmark,
    generator="active-power",
    sut_process="bench.runtime.calibrated_sut",
    dimensions=("NumSensors",),
    default_params={"capacity": 1000, "delayMs": 0},
    params=(
        ParamSpec("capacity", float, min=1, doc="records/s one instance processes at most"),
        ParamSpec("capacityMode", str, choices=("share", "instance"),
                  doc="share: the group has N x capacity however partitions split; instance: each has capacity"),
        ParamSpec("sessionTimeoutMs", int, min=1000, doc="consumer session timeout"),
        ParamSpec("delayMs", float, min=0, doc="a processed record appears on `output` this many ms later "
                  "(a known processing delay for the latency SLI)"),
    ),
)


@hookimpl
def bench_register_use_cases(register: Registrar) -> None:
    register.use_case(CALIBRATED)
