"""UC4's default Benchmark definition (the shape the core's model reads)."""

from __future__ import annotations

from typing import Any

from bench.api import message_period_load_type, param_load_type, resource_types

from bench_uc4.patchers import NAME as SENSORS_PATCHER

#: A quarter core per instance, loads 4 and 5 levels of 4 children (256 and 1,024
#: records/s), measured on a 2-core machine after the registry join went from
#: one Python call per child to one per bucket and the JVM to the C1 compiler only
#: (docs/measurements-log.md, "UC4: the JIT's share"): 4: 1, 5: 2 three times, 7 min 49-53 s, and
#: twice more at 5 % (below). One instance's lag at 1,024 records/s rose by 123-512 records/s
#: in 120-s experiments while its batches grew, then held: a start-up transient, flagged
#: unstable, and at 300 s one instance keeps up (docs/measurements-log.md, "Every default
#: twice with the early-stopping rule, and UC4's threshold"). A micro-batch still carries
#: about 2.4 CPU-seconds of fixed cost, so a quarter-core instance runs 6-10-s batches
#: and the passes near an edge come out flagged. Half a core kept up with 4,096 records/s
#: (6 levels): no load a power of 4 apart then needs two instances on two cores. 1-2
#: instances, as UC2 and UC3, so that 120-s experiments fit 8 minutes. The
#: generator starts 8 s after the SUT, not 30: bench's warm-up batches have run the plan
#: and the experiment's query has started before the delay begins. On a faster machine of
#: the same kind the same defaults printed 4: 1, 5: 1: one instance passed even 6 levels, and 7
#: levels failed on 1-4 instances as the 2-core machine saturated, so no pair of levels
#: shows a curve there (docs/measurements-log.md, "The other use cases' defaults").
CPU_PER_INSTANCE = 0.25
#: The default execution judges the lag trend at 5 % of the generated records/s, not
#: the benchmark's 1 %: the method asks that a micro-batch SUT's threshold respect its
#: batch period, and a quarter-core instance's 6-10-s batches draw a saw-tooth of
#: thousands of records whose slope over 90 s is known to +-10-25 records/s, against
#: 1 % thresholds of 2.56 and 10.24. Every pass of three default runs at 1 % was flagged
#: unstable (95 % intervals up to 9.6 at 4 levels on one instance, 31.6 at 5 levels on
#: two: 3.75 % and 3.1 % of their rates, docs/measurements-log.md); at 5 % the passes of two
#: more runs were clear. `bench run` names the changed threshold under the table;
#: `--threshold-rel-to-rate 0.01` restores the benchmark's.
DEFAULT_THRESHOLD_REL_TO_RATE = 0.05
MAIN_JOB: dict[str, Any] = {
    "load": {"loadValues": [4, 5]},
    "resources": {"resourceValues": [1, 2]},
    "execution": {"duration": 120, "warmup": 30, "sampleInterval": 2, "loadGenerationDelay": 8, "repetitions": 1},
    "slos": [{"name": "lag-trend", "properties": {"thresholdRelToRate": DEFAULT_THRESHOLD_REL_TO_RATE}}],
}


def _param(key: str) -> dict[str, Any]:
    return {"type": "ParamPatcher", "resource": "generator", "properties": {"key": key, "type": "int"}}


def default_benchmark() -> dict[str, Any]:
    sensors_patcher = {"type": SENSORS_PATCHER, "resource": "generator"}
    return {
        "name": "uc4",
        "useCase": "uc4",
        "sut": {
            "resources": [
                {
                    "kind": "BenchSut",
                    "metadata": {"name": "sut"},
                    "spec": {"replicas": 1, "cpuPerInstance": CPU_PER_INSTANCE, "params": {}},
                }
            ]
        },
        "loadGenerator": {
            "resources": [
                {
                    "kind": "BenchGenerator",
                    "metadata": {"name": "generator"},
                    "spec": {
                        "replicas": 1,
                        "sensors": 16,
                        "periodMs": 1000,
                        "maxPerInstance": 150000,
                        "params": {"nestedGroups": 2, "childrenPerGroup": 4},
                    },
                }
            ]
        },
        "loadTypes": [
            {"typeName": "NumNestedGroups", "patchers": [_param("nestedGroups"), sensors_patcher]},
            {"typeName": "ChildrenPerGroup", "patchers": [_param("childrenPerGroup"), sensors_patcher]},
            message_period_load_type(),
            # the tumbling window of every group's aggregation (ms): the work per record at a constant load
            param_load_type("WindowSize", "windowSizeMs"),
        ],
        "resourceTypes": resource_types(),
        "slos": [{"name": "lag-trend", "sloType": "lag-trend", "properties": {"thresholdRelToRate": 0.01}}],
        # The load is a number of nesting levels, not records/s (the core's laptop defaults of
        # 2000 and 8000 would mean 4^2000 sensors). The query's first micro-batch starts
        # three Python sources and two Python operators, so the generator waits for it.
        "defaultExecution": MAIN_JOB,
        "kafkaConfig": {
            "topics": [
                {"name": "input", "numPartitions": 4},
                {"name": "output", "numPartitions": 4},
                {"name": "configuration", "numPartitions": 1},
                {"name": "aggregation-feedback", "numPartitions": 4},
            ]
        },
    }
