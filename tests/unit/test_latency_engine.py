"""A latency-SLO demand search and the informational SLI files, on the engine's fake platform."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from bench.api import ExperimentSpec, Sample, standard_benchmark
from bench.config.model import parse_benchmark, parse_execution
from bench.execution.config import RunConfig
from bench.execution.run import Engine
from bench.plugins import load_plugins
from bench.results.store import read_series

from .fakes import FAKE_USE_CASE, FakePlatform
from .test_engine import SimClock

DELAY_MS = 200.0


class LatencyPlatform(FakePlatform):
    """The fake SUT's output latency: a fixed delay plus the time its backlog takes to process."""

    async def sample(self, spec: ExperimentSpec) -> Sample:
        sample = await super().sample(spec)
        sut = next(o for o in spec.objects if o["kind"] == "BenchSut")
        capacity = sut["spec"]["replicas"] * 1000.0
        latency = DELAY_MS + 1000.0 * self.lag / capacity
        sample.values.update({"latency-p50": latency, "latency-p99": latency * 1.1, "host-load1": 1.5,
                              "latency-max": math.nan if self.samples_in_rep == 1 else latency * 1.2})
        return sample


def _config(tmp_path: Path, slo: dict[str, Any], early_stop: bool = True) -> RunConfig:
    bench = parse_benchmark(standard_benchmark("fake", {"input": 4, "output": 4}, generator={"sensors": 10},
                                               slos=[slo]))
    execution = parse_execution({
        "benchmark": "fake",
        "load": {"loadType": "NumSensors", "loadValues": [1500, 2500]},
        "resources": {"resourceType": "Instances", "resourceValues": [1, 2, 3, 4]},
        "execution": {"duration": 60, "warmup": 10, "repetitions": 2, "afterTeardownDelay": 0, "sampleInterval": 5,
                      "earlyStop": early_stop},
    })
    return RunConfig(use_case=FAKE_USE_CASE, benchmark=bench, execution=execution, results_dir=tmp_path)


@pytest.fixture(scope="module")
def registry():  # type: ignore[no-untyped-def]
    reg = load_plugins()
    reg.use_cases["fake"] = FAKE_USE_CASE
    return reg


async def test_a_latency_slo_finds_the_demand(registry, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    slo = {"name": "latency", "sloType": "latency", "properties": {"percentile": 99, "threshold": 1000}}
    clock = SimClock()
    outcome = await Engine(registry, _config(tmp_path, slo), LatencyPlatform(), clock=clock, sleep=clock.sleep).run()
    assert outcome.table == {1500.0: 2.0, 2500.0: 3.0}
    exp = outcome.exp_id
    series = read_series(tmp_path / f"exp{exp}_1500_2_sli_latency_0.csv")  # the SLO's file: its SLI's samples
    assert series.values[-1] == pytest.approx(DELAY_MS * 1.1)


async def test_every_sampled_sli_is_kept_as_an_info_file_and_summarised(registry, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    slo = {"name": "latency", "sloType": "latency", "properties": {"percentile": 50, "threshold": 1000}}
    clock = SimClock()
    outcome = await Engine(registry, _config(tmp_path, slo, early_stop=False), LatencyPlatform(), clock=clock,
                           sleep=clock.sleep).run()
    exp = outcome.exp_id
    names = {p.name for p in tmp_path.iterdir()}
    for sli in ("lag", "latency-p50", "latency-p99", "latency-max", "host-load1"):
        assert f"exp{exp}_1500_2_info_{sli}_0.csv" in names
        assert f"exp{exp}_1500_2_info_{sli}_1.csv" in names
    assert not any("_sli_" in n and "info" in n for n in names)
    gaps = read_series(tmp_path / f"exp{exp}_1500_2_info_latency-max_0.csv")
    assert math.isnan(gaps.values[0]) and not math.isnan(gaps.values[1])
    result = json.loads((tmp_path / f"exp{exp}-result.json").read_text())
    info = next(e for e in result["experiments"] if (e["load"], e["resources"]) == (1500, 2))["info"]
    assert info["host-load1"]["mean"] == 1.5
    assert info["latency-p50"]["median"] == pytest.approx(DELAY_MS)
    assert info["latency-p50"]["repetitions"] == 2
    assert info["latency-max"]["samples"] == 2 * 11  # 13 samples (0 ... 60 s) per repetition, 0 and 5 s in the warm-up


async def test_a_latency_slo_stops_early_with_the_same_table(registry, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The latency SLO decides repetitions early (bench.slo.early_rules): fewer samples, same demand."""
    slo = {"name": "latency", "sloType": "latency", "properties": {"percentile": 99, "threshold": 1000}}
    counts = {}
    tables = {}
    for early in (False, True):
        clock, platform = SimClock(), LatencyPlatform()
        outcome = await Engine(registry, _config(tmp_path / str(early), slo, early_stop=early), platform,
                               clock=clock, sleep=clock.sleep).run()
        counts[early], tables[early] = platform.sample_calls, outcome.table
    assert tables[True] == tables[False] == {1500.0: 2.0, 2500.0: 3.0}
    assert counts[True] < 0.8 * counts[False]
