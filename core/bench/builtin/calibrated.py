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

Two dimensions (:mod:`bench.search.grid`): the number of keys (``NumSensors``: the
generator's keys, also handed to the SUT as ``keys``) and the message period
(``MessagePeriod``, ms per key; decreasing), so records/s = keys x 1000 / period. With
``keyCost`` k > 0 every key costs state upkeep, as a job keeping state per key does:
an instance processes capacity / (1 + k x keys) records/s, and the demand is
ceil(keys x 1000 / period x (1 + k x keys) / capacity) (:func:`model_demand`), which
grows along both axes and not as a function of records/s alone.
"""

from __future__ import annotations

import math
from typing import Any

from bench.api import ParamSpec, Registrar, UseCase, message_period_load_type, standard_benchmark
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
    doc = standard_benchmark(
        "calibrated",
        {"input": PARTITIONS, "output": OUTPUT_PARTITIONS},
        sut_params={"capacity": 1000},
        generator={"params": {"partitioner": "round-robin"}},
        load_types=[message_period_load_type()],
        slos=[TREND_SLO],
        default_execution=MAIN_JOB,
    )
    # the SUT learns the number of keys, for the cost per key (keyCost)
    sensors = next(t for t in doc["loadTypes"] if t["typeName"] == "NumSensors")
    sensors["patchers"].append({"type": "ParamPatcher", "resource": "sut", "properties": {"key": "keys"}})
    return doc


def model_demand(keys: float, period_ms: float, capacity: float, key_cost: float = 0.0) -> int:
    """The instances the calibrated SUT needs for ``keys`` keys each sending every
    ``period_ms``: what a grid run of it must find at every point (keyCost: see the module)."""
    rate = keys * 1000.0 / period_ms
    return math.ceil(rate * (1.0 + key_cost * keys) / capacity - 1e-9)


CALIBRATED = UseCase(
    name="calibrated",
    description="consumer group of N processes, each processing at most `capacity` records/s "
    "(--set capacity=...); demand must be ceil(load / capacity)",
    default_benchmark=default_benchmark,
    generator="active-power",
    sut_process="bench.runtime.calibrated_sut",
    dimensions=("NumSensors", "MessagePeriod"),
    default_params={"capacity": 1000, "delayMs": 0},
    params=(
        ParamSpec("capacity", float, min=1, doc="records/s one instance processes at most"),
        ParamSpec("workUs", float, min=0, doc="CPU microseconds each record costs, computed: the instance's "
                  "records/s then follow its CPU limit (at most cpuPerInstance x 10^6 / workUs); 0: none"),
        ParamSpec("capacityMode", str, choices=("share", "instance"),
                  doc="share: the group has N x capacity however partitions split; instance: each has capacity"),
        ParamSpec("sessionTimeoutMs", int, min=1000, doc="consumer session timeout"),
        ParamSpec("keyCost", float, min=0, doc="share of a record's cost each key adds (state upkeep): an "
                  "instance processes capacity / (1 + keyCost x keys) records/s; 0: keys cost nothing"),
        ParamSpec("keys", float, min=0, doc="the number of keys the generator sends (set by the NumSensors load "
                  "type; for keyCost)"),
        ParamSpec("soloShare", float, min=0.01, max=1, doc="share of `capacity` a group of one instance "
                  "processes (a fixed cost more instances share: one Spark instance alone at an eighth of a core); "
                  "1: none"),
        ParamSpec("delayMs", float, min=0, doc="a processed record appears on `output` this many ms later "
                  "(a known processing delay for the latency SLI)"),
    ),
)


@hookimpl
def bench_register_use_cases(register: Registrar) -> None:
    register.use_case(CALIBRATED)
