"""Sane bounds of the numbers a run is made of, one table for every way to give them.

Why: a value can be well-formed and still absurd (a load of 10^15 records/s, a
duration of 30 years, 100,000 repetitions, a CPU limit of -1 or NaN cores); such a run
either cannot be measured or runs for ever, and finding out after the broker started
costs minutes. The same bound applies whether the value came from the command line,
``--set``, an Execution file or a Benchmark file: ``bench.cli.checks`` calls
:func:`check_value` for options, :mod:`bench.config.model`'s validation calls
:func:`check_benchmark` and :func:`check_execution`, and the launch checks every built
deployment with :func:`check_objects`. The bounds are documented in docs/bounds.md.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bench.errors import UserError

# The model's Benchmark and Execution and the Registry are typed Any below: the model
# calls these checks from its validation, so this module imports neither.



class BoundError(UserError, ValueError):
    """A value outside its sane range; the message names the value and where it came from."""


@dataclass(frozen=True)
class Bound:
    """``low <= value <= high`` (``low < value`` when ``low_open``), finite, whole if ``whole``."""

    low: float
    high: float
    unit: str = ""
    low_open: bool = False
    whole: bool = False
    #: why the upper bound is where it is (shown when it is exceeded)
    why: str = ""

    def problem(self, value: Any) -> str | None:
        """What is wrong with ``value``, or None."""
        if isinstance(value, bool):
            return "must be a number, not true/false"
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError):
            return "must be a number"
        if not math.isfinite(number):
            return "must be a finite number"
        unit = f" {self.unit}" if self.unit else ""
        if self.low_open and number <= self.low:
            return f"must be more than {self.low:g}{unit}"
        if number < self.low:
            return f"must be at least {self.low:g}{unit}"
        if number > self.high:
            return f"must be at most {self.high:g}{unit}" + (f" ({self.why})" if self.why else "")
        if self.whole and not number.is_integer():
            return "must be a whole number"
        return None


DAY = 86_400.0
#: execution fields (``execution.execution.*``) and command-line options
DURATION = Bound(1, DAY, "s", why="a day per repetition; split longer runs")
WARMUP = Bound(0, DAY, "s", why="a day")
REPETITIONS = Bound(1, 100, whole=True, why="more repetitions do not narrow a verdict further")
SAMPLE_INTERVAL = Bound(0.1, 3600, "s", why="an hour")
DELAY = Bound(0, 3600, "s", why="an hour")
TRIGGER = Bound(0, 3600, "s", why="an hour")
LOAD_VALUE = Bound(0, 1e9, low_open=True, why="beyond what any Kafka cluster takes")
#: resource values per resource type; another type only needs a positive finite value
RESOURCE_VALUE: Mapping[str, Bound] = {
    "Instances": Bound(1, 1000, whole=True, why="a thousand Spark instances"),
    "CoresPerInstance": Bound(1, 256, whole=True, why="cores of the largest machines"),
    "MemoryPerInstance": Bound(64, 1024 * 1024, "MiB", why="1 TiB"),
    "ThreadsAndPodResources": Bound(1, 256, whole=True, why="cores of the largest machines"),
}
ANY_VALUE = Bound(0, 1e12, low_open=True)
#: topics of a benchmark
PARTITIONS = Bound(1, 10_000, whole=True, why="beyond what one topic of a benchmark needs")
REPLICATION = Bound(1, 16, whole=True, why="more replicas than any cluster keeps")
#: thresholds of SLOs that take the command line's threshold options. A fraction of the
#: generated records/s above 1 would pass a SUT that processes nothing; the load value
#: (sensors, a window size, nesting levels) is not a rate, so its factor has no such limit
THRESHOLDS: Mapping[str, tuple[str, Bound]] = {
    "threshold": ("--threshold", Bound(0, 1e12, "records/s", low_open=True)),
    "thresholdRelToRate": ("--threshold-rel-to-rate", Bound(
        0, 1, low_open=True, why="a lag growing as fast as the load means nothing is processed")),
    "thresholdRelToLoad": ("--threshold-rel-to-load", Bound(0, 1e12, low_open=True)),
    "thresholdRelToResources": ("--threshold", Bound(0, 1e12, low_open=True)),
}
#: the command line's threshold options (click's names) and the SLO property each sets
CLI_THRESHOLD_OPTIONS: Mapping[str, str] = {
    "threshold": "threshold",
    "threshold_rel_to_rate": "thresholdRelToRate",
    "threshold_rel_to_load": "thresholdRelToLoad",
}
#: fields of the embedded kinds that platforms read
OBJECT_FIELDS: Mapping[str, Mapping[str, Bound]] = {
    "BenchSut": {
        "replicas": RESOURCE_VALUE["Instances"],
        "cpuPerInstance": Bound(0, 1024, "cores", why="cores of the largest machines; 0 is no limit"),
        "coresPerInstance": RESOURCE_VALUE["CoresPerInstance"],
        "memoryPerInstanceMb": RESOURCE_VALUE["MemoryPerInstance"],
    },
    "BenchGenerator": {
        "replicas": Bound(1, 1000, whole=True),
        "sensors": Bound(1, 1e9, whole=True, why="beyond what any Kafka cluster takes"),
        "periodMs": Bound(0.001, 3_600_000, "ms", why="an hour"),
        "maxPerInstance": Bound(1, 1e9, whole=True),
    },
}
#: load values x resource values: at two minutes each, 2,500 experiments take 3.5 days
MAX_EXPERIMENTS = 2_500
#: the smallest CPU limit that still runs a JVM thread (below: 0 means no limit)
MIN_CPU_LIMIT = 0.01
#: task slots (instances x cores) per core of this machine a local platform may start
SLOTS_PER_CORE = 16
#: the largest magnitude of a numeric use-case parameter whose plugin declares no maximum
PARAM_MAX = 1e12


def check_value(bound: Bound, value: Any, where: str) -> None:
    """``where`` names the value as the user gave it (``--duration``, ``exec.yaml: execution.duration``)."""
    problem = bound.problem(value)
    if problem is not None:
        raise BoundError(f"{where} {_show(value)}: {problem}")


def _show(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def check_execution(execution: Any, bench: Any, registry: Any = None) -> None:
    """An Execution's numbers (from a file, the use case's defaults or options merged in)."""
    ex = execution.execution
    for key, bound in (("duration", DURATION), ("warmup", WARMUP), ("repetitions", REPETITIONS),
                       ("sampleInterval", SAMPLE_INTERVAL), ("loadGenerationDelay", DELAY),
                       ("afterTeardownDelay", DELAY)):
        check_value(bound, getattr(ex, key), f"execution.execution.{key}")
    if ex.earlySampleInterval:  # 0 or None: off
        check_value(SAMPLE_INTERVAL, ex.earlySampleInterval, "execution.execution.earlySampleInterval")
    experiments = len(execution.load.loadValues) * len(execution.resources.resourceValues)
    if experiments > MAX_EXPERIMENTS:
        raise BoundError(f"execution: {experiments:,} experiments (load values x resource values), more than "
                         f"the {MAX_EXPERIMENTS:,} any search could run; give fewer values")
    for value in execution.load.loadValues:
        check_value(LOAD_VALUE, value, "execution.load.loadValues")
    bound = RESOURCE_VALUE.get(execution.resources.resourceType, ANY_VALUE)
    for value in execution.resources.resourceValues:
        check_value(bound, value, f"execution.resources.resourceValues ({execution.resources.resourceType})")
    if registry is not None:  # the SLOs as the run applies them (model.effective_slos)
        from bench.slo_math import override_properties

        overrides = {o.name: o.properties for o in execution.slos}
        for slo in bench.slos:
            if not overrides or slo.name in overrides:
                judged = override_properties(slo.properties, overrides.get(slo.name, {}))
                check_thresholds(registry, slo.sloType, judged, f"slo {slo.name!r} properties")


def check_thresholds(registry: Any, slo_type: str, properties: Mapping[str, Any], where: str) -> None:
    """The thresholds an SLO type takes from the command line: the command line's bounds."""
    stype = registry.slos.get(slo_type)
    if stype is None or not stype.takes_cli_threshold(properties):
        return
    for key, (option, bound) in THRESHOLDS.items():
        # the reference reads an empty string as "not given"
        if properties.get(key) is not None and not (isinstance(properties[key], str) and not properties[key].strip()):
            problem = bound.problem(properties[key])
            if problem is not None:
                raise BoundError(f"{where}.{key} {_show(properties[key])}: {problem} (as {option} would refuse)")


def check_slos(slos: Sequence[Any], duration: float) -> None:
    """Rules every SLO type shares, checked on the SLOs as the run judges them: a warm-up
    is a number of seconds within the duration (a longer one leaves no sample, and every
    experiment would end undecided), and a threshold given as a number is not negative
    (no dropped-record count, lag slope or latency is below -1; every verdict would be the
    same). An expression's sign is checked over the load grid (bench.cli.checks)."""
    from bench.slo_math import THRESHOLD_FORMS

    for slo in slos:
        where = f"slo {slo.name!r} properties"
        warmup = slo.properties.get("warmup")
        if warmup is not None:
            check_value(WARMUP, warmup, f"{where}.warmup")
            if float(warmup) >= duration:
                raise BoundError(f"{where}.warmup {_show(warmup)}: must be shorter than the duration "
                                 f"({duration:g} s); no sample would be left to judge")
        for key in THRESHOLD_FORMS:
            value = slo.properties.get(key)
            if key == "thresholdFromExpression" or value is None or (isinstance(value, str) and not value.strip()):
                continue
            problem = Bound(0, 1e15).problem(value)
            if problem is not None:
                raise BoundError(f"{where}.{key} {_show(value)}: {problem}")


def check_benchmark(bench: Any, registry: Any = None) -> None:
    """A Benchmark's numbers: topics, SLO thresholds and the fields of its embedded objects."""
    for i, topic in enumerate(bench.kafkaConfig.topics):
        check_value(PARTITIONS, topic.numPartitions, f"benchmark.kafkaConfig.topics[{i}].numPartitions")
        check_value(REPLICATION, topic.replicationFactor, f"benchmark.kafkaConfig.topics[{i}].replicationFactor")
    if registry is not None:
        for i, slo in enumerate(bench.slos):
            check_thresholds(registry, slo.sloType, slo.properties, f"benchmark.slos[{i}].properties")
    for group in ("sut", "loadGenerator"):
        for i, obj in enumerate(getattr(bench, group).resources):
            check_object(obj, f"benchmark.{group}.resources[{i}]")


def check_object(obj: Mapping[str, Any], where: str) -> None:
    """The fields of a BenchSut or BenchGenerator that platforms read with int()/float()."""
    fields = OBJECT_FIELDS.get(str(obj.get("kind")))
    spec = obj.get("spec")
    if fields is None or not isinstance(spec, Mapping):
        return
    for key, bound in fields.items():
        if key in spec and spec[key] is not None:
            check_value(bound, spec[key], f"{where}.spec.{key}")
    cpu = spec.get("cpuPerInstance")
    if isinstance(cpu, int | float) and not isinstance(cpu, bool) and 0 < cpu < MIN_CPU_LIMIT:
        raise BoundError(f"{where}.spec.cpuPerInstance {cpu:g}: must be 0 (no limit) or at least "
                         f"{MIN_CPU_LIMIT:g} cores")


def check_sets(params: Mapping[str, Any]) -> None:
    """``--set OBJECT.FIELD=V`` for the bounded fields, named as typed (before any patching)."""
    for key, value in params.items():
        _, _, field = key.partition(".")
        bound = next((fields[field] for fields in OBJECT_FIELDS.values() if field in fields), None)
        if bound is not None:
            problem = bound.problem(value)
            if problem is not None:
                raise BoundError(f"--set {key}={_show(value)}: {problem}")
        if field == "cpuPerInstance" and isinstance(value, int | float) and 0 < value < MIN_CPU_LIMIT:
            raise BoundError(f"--set {key}={_show(value)}: must be 0 (no limit) or at least {MIN_CPU_LIMIT:g} cores")


def check_objects(objects: Sequence[Mapping[str, Any]], where: str) -> None:
    """Every built object of one experiment (after patchers, overrides and ``--set``)."""
    for obj in objects:
        name = (obj.get("metadata") or {}).get("name", "?")
        check_object(obj, f"{where} {obj.get('kind')}/{name}")


def check_host_slots(objects: Sequence[Mapping[str, Any]], where: str) -> None:
    """Task slots a local platform would start, relative to this machine's cores."""
    cores = os.cpu_count() or 1
    for obj in objects:
        spec = obj.get("spec")
        if obj.get("kind") != "BenchSut" or not isinstance(spec, Mapping):
            continue
        try:
            slots = int(spec.get("replicas") or 1) * int(spec.get("coresPerInstance") or 1)
        except (TypeError, ValueError):
            continue
        if slots > SLOTS_PER_CORE * cores:
            raise BoundError(f"{where}: {slots} Spark task slots on a machine with {cores} cores "
                             f"(at most {SLOTS_PER_CORE} per core); lower the resource values")


def check_params(declared: Mapping[str, Any], given: Mapping[str, Mapping[str, Any]]) -> None:
    """Numeric use-case parameters (``where`` -> parameters, e.g. ``--set`` -> {...}) whose
    plugin declares no maximum: at most :data:`PARAM_MAX` in magnitude."""
    for where, params in given.items():
        for key, value in params.items():
            spec = declared.get(key)
            if spec is None or spec.type not in (int, float) or spec.max is not None:
                continue
            try:
                number = float(value)
            except (TypeError, ValueError):
                continue  # the declaration's own check says what is wrong
            if abs(number) > PARAM_MAX:
                raise BoundError(f"{where} {key}={_show(value)}: must be at most {PARAM_MAX:g} in magnitude "
                                 "(beyond what any run could measure)")
