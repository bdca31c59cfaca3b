"""The default UC2 Benchmark: what `bench run --plugin uc2` measures without a file."""

from __future__ import annotations

from typing import Any


def sut_resources() -> list[dict[str, Any]]:
    return [{"kind": "BenchSut", "metadata": {"name": "sut"}, "spec": {"replicas": 1, "params": {}}}]


def generator_resources() -> list[dict[str, Any]]:
    return [
        {
            "kind": "BenchGenerator",
            "metadata": {"name": "generator"},
            "spec": {"replicas": 1, "sensors": 100, "periodMs": 1000, "maxPerInstance": 150000, "params": {}},
        }
    ]


def param_load_type(type_name: str, key: str) -> dict[str, Any]:
    """A load type whose value becomes the SUT parameter ``key``."""
    return {
        "typeName": type_name,
        "patchers": [{"type": "ParamPatcher", "resource": "sut", "properties": {"key": key}}],
    }


def common_load_types() -> list[dict[str, Any]]:
    return [
        {"typeName": "NumSensors", "patchers": [{"type": "GeneratorLoadPatcher", "resource": "generator"}]},
        param_load_type("WindowSize", "windowSizeMs"),
        {
            "typeName": "MessagePeriod",
            "patchers": [
                {"type": "GenericResourcePatcher", "resource": "generator", "properties": {"path": "spec/periodMs"}}
            ],
        },
    ]


def benchmark(name: str, load_types: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "name": name,
        "useCase": name,
        "sut": {"resources": sut_resources()},
        "loadGenerator": {"resources": generator_resources()},
        "loadTypes": load_types,
        "resourceTypes": [{"typeName": "Instances", "patchers": [{"type": "ReplicaPatcher", "resource": "sut"}]}],
        "slos": [
            {"name": "lag-trend", "sloType": "lag-trend", "properties": {"thresholdRelToLoad": 0.01}},
            {"name": "dropped-records", "sloType": "dropped-records", "properties": {"maxRatio": 0.01}},
        ],
        "kafkaConfig": {
            "topics": [{"name": "input", "numPartitions": 4}, {"name": "output", "numPartitions": 4}]
        },
    }


def default_benchmark() -> dict[str, Any]:
    return benchmark("uc2", common_load_types())
