"""Configuration validation: every bad field is rejected by name before anything runs."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from bench.config.base import ConfigError
from bench.config.model import (
    effective_slos,
    parse_benchmark,
    parse_execution,
    validate_benchmark,
    validate_execution,
)

from .fakes import fake_benchmark


def execution_doc(**ex: Any) -> dict[str, Any]:
    return {
        "benchmark": "fake",
        "load": {"loadType": "NumSensors", "loadValues": [100, 200]},
        "resources": {"resourceType": "Instances", "resourceValues": [1, 2]},
        "execution": {"duration": 120, "warmup": 30, **ex},
    }


def test_valid_pair_passes(registry) -> None:
    bench = parse_benchmark(fake_benchmark())
    validate_benchmark(bench, registry)
    execution = parse_execution(execution_doc())
    validate_execution(execution, bench, registry)
    assert execution.execution.strategy.resolved() == ("bracket", True)


def test_reference_shaped_documents_are_unwrapped(registry) -> None:
    doc = {"apiVersion": "theodolite.rocks/v1beta1", "kind": "execution", "metadata": {"name": "ex1"},
           "spec": {**execution_doc(), "execution": {"strategy": {"name": "RestrictionSearch",
                                                                  "restrictions": ["LowerBound"],
                                                                  "searchStrategy": "BinarySearch"}}}}
    execution = parse_execution(doc)
    assert execution.name == "ex1"
    assert execution.execution.strategy.resolved() == ("binary", True)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["execution"].update(duration=-1), "execution.execution.duration"),
        (lambda d: d["execution"].update(repetitions=0), "execution.execution.repetitions"),
        (lambda d: d["execution"].update(metric="speed"), "execution.execution.metric"),
        (lambda d: d["execution"].update(warmup=500), "warmup (500 s) must be shorter than duration"),
        (lambda d: d["load"].update(loadValues=[]), "execution.load.loadValues"),
        (lambda d: d["load"].update(loadValues=[100, -5]), "must be a positive number"),
        (lambda d: d["resources"].update(resourceValues=[1, 1]), "duplicates"),
        (lambda d: d.update(colour="blue"), "execution.colour: unknown field"),
        (lambda d: d["execution"].update(strategy={"name": "linear", "restrictions": ["Upper"]}),
         "execution.execution.strategy.restrictions.0"),
    ],
)
def test_bad_execution_fields_are_named(mutate, message: str) -> None:
    doc = execution_doc()
    mutate(doc)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_execution(doc)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(benchmark="other"), "execution.benchmark: 'other' is not one of fake"),
        (lambda d: d["load"].update(loadType="Bogus"), "execution.load.loadType: 'Bogus' is not one of NumSensors"),
        (lambda d: d["resources"].update(resourceType="Cpu"), "execution.resources.resourceType: 'Cpu'"),
        (lambda d: d.update(slos=[{"name": "nope"}]), r"execution.slos\[0\].name: 'nope' is not one of lag-trend"),
        (lambda d: d["execution"].update(strategy={"name": "random"}), "strategy.name: 'random' is not one of"),
        (lambda d: d.update(slos=[{"name": "lag-trend", "properties": {"threshold": "high"}}]), "threshold"),
        (lambda d: d.update(configOverrides=[{"patcher": {"type": "Nope", "resource": "sut"}, "value": 1}]),
         r"configOverrides\[0\].patcher.type: 'Nope'"),
    ],
)
def test_execution_checked_against_benchmark_and_plugins(registry, mutate, message: str) -> None:
    bench = parse_benchmark(fake_benchmark())
    doc = execution_doc()
    mutate(doc)
    with pytest.raises(ConfigError, match=message):
        validate_execution(parse_execution(doc), bench, registry)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(useCase="uc99"), "benchmark.useCase: 'uc99' is not one of"),
        (lambda d: d["loadTypes"][0]["patchers"][0].update(type="Nope"),
         r"benchmark.loadTypes\[0\].patchers\[0\].type: 'Nope' is not one of .*ReplicaPatcher"),
        (lambda d: d["resourceTypes"][0]["patchers"][0].update(resource="ghost"),
         r"benchmark.resourceTypes\[0\].patchers\[0\].resource: 'ghost' is not one of generator, sut"),
        (lambda d: d["slos"][0].update(sloType="throughput"), r"benchmark.slos\[0\].sloType: 'throughput'"),
        (lambda d: d["slos"][0].update(name="lag_trend"), "must be non-empty and contain no '_'"),
        (lambda d: d["slos"].append(copy.deepcopy(d["slos"][0])), "is used twice"),
        (lambda d: d["slos"][0]["properties"].update(threshold=5), "threshold"),
        (lambda d: d.update(loadTypes=[]), "benchmark.loadTypes"),
        (lambda d: d["kafkaConfig"]["topics"][0].update(numPartitions=0), "numPartitions"),
    ],
)
def test_bad_benchmark_fields_are_named(registry, mutate, message: str) -> None:
    doc = fake_benchmark()
    mutate(doc)
    with pytest.raises(ConfigError, match=message):
        validate_benchmark(parse_benchmark(doc), registry)


def test_execution_slo_overrides_merge_properties() -> None:
    bench = parse_benchmark(fake_benchmark())
    execution = parse_execution({**execution_doc(), "slos": [{"name": "lag-trend", "properties": {"warmup": 5}}]})
    (slo,) = effective_slos(bench, execution)
    assert slo.properties == {"thresholdRelToRate": 0.01, "warmup": 5}
