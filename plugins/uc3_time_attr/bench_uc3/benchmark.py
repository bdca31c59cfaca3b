"""The default UC3 Benchmark: what `bench run --plugin uc3` measures without a file."""

from __future__ import annotations

from typing import Any


def _param(type_name: str, key: str) -> dict[str, Any]:
    return {
        "typeName": type_name,
        "patchers": [{"type": "ParamPatcher", "resource": "sut", "properties": {"key": key}}],
    }


def load_types() -> list[dict[str, Any]]:
    return [
        {"typeName": "NumSensors", "patchers": [{"type": "GeneratorLoadPatcher", "resource": "generator"}]},
        _param("WindowSize", "windowSizeMs"),
        _param("Advance", "advanceMs"),
        # k overlapping windows: advanceMs = windowSizeMs / k (see bench_uc3.params)
        _param("NumOverlappingWindows", "numOverlappingWindows"),
        # 24, 7 or 168 values: hourOfDay, dayOfWeek, hourOfWeek
        _param("NumTimeAttributeValues", "timeAttribute"),
        {
            "typeName": "MessagePeriod",
            "patchers": [
                {"type": "GenericResourcePatcher", "resource": "generator", "properties": {"path": "spec/periodMs"}}
            ],
        },
    ]


def default_benchmark() -> dict[str, Any]:
    return {
        "name": "uc3",
        "useCase": "uc3",
        "sut": {
            "resources": [{"kind": "BenchSut", "metadata": {"name": "sut"}, "spec": {"replicas": 1, "params": {}}}]
        },
        "loadGenerator": {
            "resources": [
                {
                    "kind": "BenchGenerator",
                    "metadata": {"name": "generator"},
                    "spec": {"replicas": 1, "sensors": 100, "periodMs": 1000, "maxPerInstance": 150000, "params": {}},
                }
            ]
        },
        "loadTypes": load_types(),
        "resourceTypes": [{"typeName": "Instances", "patchers": [{"type": "ReplicaPatcher", "resource": "sut"}]}],
        "slos": [
            {"name": "lag-trend", "sloType": "lag-trend", "properties": {"thresholdRelToLoad": 0.01}},
            {"name": "dropped-records", "sloType": "dropped-records", "properties": {"maxRatio": 0.01}},
        ],
        "kafkaConfig": {
            "topics": [{"name": "input", "numPartitions": 4}, {"name": "output", "numPartitions": 4}]
        },
    }
