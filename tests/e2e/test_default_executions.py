"""The default loads of UC1-UC4 straddle what one instance processes, on the real parts (issue 27).

tests/unit/test_default_executions.py checks the default executions without running
anything; whether their loads need one instance at the lowest and more at the highest
depends on what one instance of each use case processes, which only the real parts
tell. So, per use case, one SUT instance at the default ``cpuPerInstance`` is driven
at saturation on the embedded platform as ``bench run`` drives it (Apache Kafka,
Spark's Kafka connector, the platform and its lag sampling from the registry, the
experiment lifecycle of the engine's prediction probe, ``ExperimentRunner.probe``),
and its records/s are measured as ``bench run --predict`` measures them
(:func:`bench.prediction.measure`): the records/s the generators produced minus the
slope of the lag, after a short warm-up (UC4's lag counts its fed-back topic too, as
its lag SLO does, so its figure errs low by what that topic falls behind). Then, with the default loads converted to
records/s as the engine converts them (``load_rate`` of the deployment; UC4's load is
a nesting level, children^levels x 1000 / periodMs records/s), and resources r:

    lowest load  <  capacity x r_min  <  highest load  <=  capacity x r_max x 0.9

i.e. the lowest load passes at the lowest resource value, the highest fails there and
passes at some value of the table (0.9: instances share the partitions unevenly).

One setting differs from a run, so that 25 s of samples suffice:

* The probe's batches are capped at the records a load between the lowest and the
  highest default (their geometric mean, where the capacity lies when they straddle
  it) brings in one default trigger interval (2 s), and run back to back (trigger 0):
  batches of 1-5 s at the capacity. Uncapped, a
  saturated query's next batch takes all that arrived during the last one, so batches
  grow by load / capacity each time (2, 4, 8, 16 s at twice the capacity): a short
  run then holds one or two offset commits, and Spark's input rate is the arrival
  rate rather than the capacity. Capped, the batches have the size they have near the
  capacity in a run and the lag grows smoothly. (UC3's own trigger is 5 s: its run
  batches are larger, so its capacity here errs low.)

The use case's ``loadGenerationDelay`` is kept: UC4's first micro-batch starts its
Python operators, and without the delay none of its batches ended within the samples
(2026-11-27, commit 9c62609, on a machine with a load average of 4-15).

Time: the use cases are measured AT_ONCE at a time, each SUT in its own CPU cgroup;
one use case costs its SUT's start (15-30 s on an idle machine), its
``loadGenerationDelay``, WARMUP_S + SPAN_S of samples and its teardown; the generators
of the use cases measured side by side start together, once every SUT has started.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from bench.api import Series
from bench.engine import Engine, RunConfig
from bench.launch import PreparedRun, prepare_run
from bench.patching import find_kind
from bench.prediction import Probe, measure
from bench.slo_math import after_warmup, slope

from tests.unit.test_default_executions import load_rates, records_per_second

pytestmark = pytest.mark.e2e

USE_CASES = ("uc1", "uc2", "uc3", "uc4")
#: seconds of samples not counted (the first batches, the lag sampler's start) ...
WARMUP_S = 8.0
#: ... and counted
SPAN_S = 26.0
SAMPLE_S = 2.0
#: the Spark driver's trigger interval when neither the use case nor --trigger sets one
TRIGGER_S = 2.0
#: the probe's records/s: at least this times the highest default load's
PROBE_FACTOR = 1.5
#: the share of r_max x capacity the highest load may ask for
HEADROOM = 0.9
#: use cases measured side by side
AT_ONCE = 2
#: the longest a SUT waits for the one beside it to start
START_TIMEOUT_S = 240.0


@dataclass
class Measured:
    name: str
    loads: list[float]
    rates: list[float]
    resources: list[float]
    cpu_per_instance: float
    probe_load: float
    probe_rate: float
    batch_cap: int
    produced: float
    probe: Probe
    spark_rows: float
    spark_processed: float
    cpu_limit: dict[str, Any]
    seconds: float

    @property
    def capacity(self) -> float:
        return self.probe.per_instance_rate

    def describe(self) -> str:
        return (
            f"{self.name}: one instance at cpuPerInstance {self.cpu_per_instance:g} processes "
            f"{self.capacity:,.0f} records/s (produced {self.produced:,.0f} - lag slope {self.probe.lag_slope:,.0f}"
            f"{'' if self.probe.saturated else '; NOT saturated: a lower bound'}; Spark read {self.spark_rows:,.0f} "
            f"(its rows' slope), {self.spark_processed:,.0f} within batches); default loads "
            f"{[f'{v:g}' for v in self.loads]} = {[round(r) for r in self.rates]} records/s, resources "
            f"{[f'{v:g}' for v in self.resources]}; probe load {self.probe_load:g} = {self.probe_rate:,.0f} "
            f"records/s, batches of at most {self.batch_cap:,} records; {self.seconds:.0f} s"
        )


def probe_load(registry: Any, prepared: PreparedRun, rates: Sequence[float]) -> tuple[float, float]:
    """(records/s, load value): the lightest of a few loads heavier than the heaviest default
    that asks for at least PROBE_FACTOR times its records/s (a nesting level grows by steps)."""
    heaviest = prepared.execution.load.loadValues[max(range(len(rates)), key=lambda i: rates[i])]
    target = PROBE_FACTOR * max(rates)
    found: list[tuple[float, float]] = []
    for value in {heaviest * f for f in (1.25, 1.5, 2.0, 3.0, 4.0)} | {heaviest + k for k in (1, 2, 3)}:
        try:
            rate = records_per_second(registry, prepared, value)
        except (ValueError, KeyError, TypeError):  # a value the load type does not take
            continue
        if rate >= target:
            found.append((rate, value))
    if not found:
        raise AssertionError(f"{prepared.use_case.name}: no load near {heaviest:g} asks for {target:,.0f} records/s")
    return min(found)


def from_time(series: Series | None, start: float) -> tuple[list[float], list[float]]:
    """The samples of ``series`` from ``start`` on."""
    points = [(t, v) for t, v in zip(series.timestamps, series.values, strict=True) if t >= start] if series else []
    return [t for t, _ in points], [v for _, v in points]


def median_after(series: Series | None, start: float) -> float:
    """The median of the positive values sampled from ``start`` on (NaN: none)."""
    values = [v for v in from_time(series, start)[1] if v > 0]
    return statistics.median(values) if values else math.nan


def slope_after(series: Series | None, start: float) -> float:
    """The rate of a cumulative count from ``start`` on (NaN: fewer than two samples)."""
    t, v = from_time(series, start)
    return slope(t, v)[0] if len(t) >= 2 else math.nan


class Together:
    """The platform, except that its generators start only once every SUT measured beside
    it has started: a SUT starts without its CPU limit (bench.platforms.local_sut), which
    must not fall into another's samples."""

    def __init__(self, platform: Any, barrier: asyncio.Barrier) -> None:
        self.platform, self.barrier = platform, barrier

    def __getattr__(self, name: str) -> Any:
        return getattr(self.platform, name)

    async def start_generators(self, spec: Any) -> None:
        with contextlib.suppress(asyncio.BrokenBarrierError, TimeoutError):  # the other one failed
            await asyncio.wait_for(self.barrier.wait(), START_TIMEOUT_S)
        await self.platform.start_generators(spec)


async def measure_one(registry: Any, name: str, bootstrap: str, folder: Path, barrier: asyncio.Barrier) -> Measured:
    began = time.monotonic()
    try:
        default = prepare_run(registry, {"plugin": name, "results_dir": str(folder / "default")})
        ex = default.execution
        rates = load_rates(registry, default)
        rate, value = probe_load(registry, default, rates)
        sut = find_kind(default.benchmark.sut.resources, "BenchSut") or {}
        prepared = prepare_run(registry, {
            "plugin": name, "loads": f"{value:.12g}", "resources": "1", "duration": WARMUP_S + SPAN_S,
            "warmup": WARMUP_S, "sample_interval": SAMPLE_S, "bootstrap_servers": bootstrap, "trigger_seconds": 0,
            "results_dir": str(folder / "probe"),
        })
        probe_ex = prepared.execution.model_copy(update={"execution": prepared.execution.execution.model_copy(
            update={"afterTeardownDelay": 0})})
        cap = math.ceil(TRIGGER_S * math.sqrt(min(rates) * max(rates)))
        options = {**prepared.platform_options, "max_records_per_trigger": cap}
        platform = registry.platforms[options["platform"]].create(options, registry)
        config = RunConfig(use_case=prepared.use_case, benchmark=prepared.benchmark, execution=probe_ex,
                           results_dir=folder / "probe", params=prepared.params)
        engine = Engine(registry, config, Together(platform, barrier))
        await platform.open()
        try:
            samples, target = await engine.experiments.probe(value, 1, WARMUP_S + SPAN_S)
        finally:
            await platform.close()
    except BaseException:
        await barrier.abort()
        raise
    assert target == pytest.approx(rate), (target, rate)
    series = samples.series
    lag = series["lag"]
    produced, _ = slope(*after_warmup(series["generated-records"], WARMUP_S))
    start = lag.timestamps[0] + WARMUP_S
    return Measured(
        name=name, loads=list(ex.load.loadValues), rates=rates, resources=list(ex.resources.resourceValues),
        cpu_per_instance=float((sut.get("spec") or {}).get("cpuPerInstance") or 0), probe_load=value,
        probe_rate=rate, batch_cap=cap, produced=produced, probe=measure(lag, WARMUP_S, value, 1, produced),
        spark_rows=slope_after(series.get("spark-input-rows"), start),
        spark_processed=median_after(series.get("spark-processed-rate"), start),
        cpu_limit=dict(platform.cpu_limit_record), seconds=time.monotonic() - began,
    )


async def measure_all(registry: Any, bootstrap: str, folder: Path) -> dict[str, Measured | BaseException]:
    """AT_ONCE use cases at a time, the heaviest default loads beside the lightest."""
    rest = sorted(USE_CASES, key=lambda n: -max(load_rates(registry, prepare_run(
        registry, {"plugin": n, "results_dir": str(folder / n / "order")}))))
    order = []
    while rest:
        order += [rest.pop(0)] + ([rest.pop()] if rest else [])
    done: dict[str, Measured | BaseException] = {}
    for i in range(0, len(order), AT_ONCE):
        chunk = order[i:i + AT_ONCE]
        barrier = asyncio.Barrier(len(chunk))
        results = await asyncio.gather(*(measure_one(registry, n, bootstrap, folder / n, barrier) for n in chunk),
                                       return_exceptions=True)
        done.update(zip(chunk, results, strict=True))
    return done


@pytest.fixture(scope="module")
def measured(registry: Any, kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory
             ) -> dict[str, Measured | BaseException]:
    done = asyncio.run(measure_all(registry, kafka_bootstrap, tmp_path_factory.mktemp("defaults")))
    for result in done.values():
        print(result.describe() if isinstance(result, Measured) else f"failed: {result!r}")
    return done


def summary(done: dict[str, Measured | BaseException]) -> str:
    return "\n".join(r.describe() if isinstance(r, Measured) else f"{n}: not measured ({r!r})"
                     for n, r in done.items())


@pytest.mark.parametrize("name", USE_CASES)
def test_default_loads_straddle_one_instance(measured: dict[str, Measured | BaseException], name: str) -> None:
    result = measured[name]
    if isinstance(result, BaseException):
        raise result
    if result.cpu_limit.get("applied") is False:
        pytest.skip(f"{name}: the CPU limit per instance did not apply here ({result.cpu_limit.get('reason')}); "
                    "an unlimited instance is not what the default loads are chosen for")
    c = result.capacity
    lowest, highest = min(result.rates), max(result.rates)
    r_min, r_max = min(result.resources), max(result.resources)
    problems = []
    if not result.probe.saturated:
        problems.append(f"the probe did not saturate one instance: it processes at least {c:,.0f} records/s")
    if not lowest < c * r_min:
        problems.append(f"the lowest load ({lowest:,.0f} records/s) is more than {r_min:g} instance(s) process")
    if not c * r_min < highest:
        problems.append(f"{r_min:g} instance(s) keep up with the highest load ({highest:,.0f} records/s)")
    if not highest <= c * r_max * HEADROOM:
        problems.append(f"the highest load ({highest:,.0f} records/s) is above {HEADROOM:g} x {r_max:g} instances "
                        f"({c * r_max * HEADROOM:,.0f} records/s): no resource value may pass it")
    assert not problems, f"{result.describe()}\n" + "; ".join(problems) + f"\nall use cases:\n{summary(measured)}"
