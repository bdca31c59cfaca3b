"""UC4's default Benchmark definition (the shape the core's model reads)."""

from __future__ import annotations

from typing import Any

from bench.api import message_period_load_type, resource_types

from bench_uc4.patchers import NAME as SENSORS_PATCHER

#: Quarter-core instances, as the other use cases'. Measured 2026-11-27 (docs/performance.md,
#: "Each use case's defaults"): one instance keeps up with 3 levels of 4 children (64
#: sensors, 64 records/s), is at its limit at 4 (256 records/s: it passed once and failed
#: once) and falls far behind at 5 (1,024); two keep up with 5. On a machine of the same
#: kind at half the speed one instance fell behind 3 levels and two behind 5, so a third
#: resource value keeps the table from coming out flat there; the search reaches it only
#: when two fall behind. The generator starts 8 s after the SUT, not 30, so that the
#: worst case (4 experiments) still fits 8 minutes: bench's warm-up batches have run the
#: plan and the experiment's query has started before the delay begins.
CPU_PER_INSTANCE = 0.25
MAIN_JOB: dict[str, Any] = {
    "load": {"loadValues": [3, 5]},
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
