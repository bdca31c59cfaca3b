"""UC4's default Benchmark definition (the shape the core's model reads)."""

from __future__ import annotations

from typing import Any

from bench.api import message_period_load_type, resource_types

from bench_uc4.patchers import NAME as SENSORS_PATCHER

#: Half-core instances, measured 2026-11-27 after the CPU limit began to hold the SUT's
#: Python workers, which run UC4's registry join (commit 39e36f3; docs/performance.md,
#: "The CPU limit and the Python workers"). On the slower of two 2-core machines one
#: half-core instance keeps up with 3 levels of 4 children (64 sensors, 64 records/s;
#: slope -4.5 against 0.64, 8-s micro-batches), one and two fall behind 4 levels (256
#: records/s; 12.3 and 3.8 against 2.56, both flagged unstable) and three keep up with
#: it (-6.7): the table 3: 1, 4: 3 in 10 min 41 s. At 5 levels (1,024 records/s) even
#: three half-core instances fell behind, and at a quarter core one instance's batches
#: took 14-20 s at 64 records/s. The generator starts 8 s after the SUT, not 30: bench's
#: warm-up batches have run the plan and the experiment's query has started before the
#: delay begins.
CPU_PER_INSTANCE = 0.5
MAIN_JOB: dict[str, Any] = {
    "load": {"loadValues": [3, 4]},
    "resources": {"resourceValues": [1, 2, 3]},
    "execution": {"duration": 90, "warmup": 30, "sampleInterval": 2, "loadGenerationDelay": 8, "repetitions": 1},
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
