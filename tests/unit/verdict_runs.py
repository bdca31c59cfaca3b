"""Runs of the real engine whose verdicts a test chooses: a stored result folder per example.

``VerdictPlatform`` answers each (load, resources) with the outcome a test gives it: a
flat lag (passed), a lag growing 10,000 records/s (failed), or a SUT that dies in every
attempt (error; ``late-error``: only from the second repetition on, so that the first
repetition's series are stored).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench.api import ExperimentSpec, Sample, message_period_load_type
from bench.config.model import parse_benchmark, parse_execution
from bench.execution.config import RunConfig, no_progress
from bench.execution.run import Engine
from bench.plugins import Registry, load_plugins
from bench.results.outcome import RunOutcome

from tests.unit.fakes import FAKE_USE_CASE, FakePlatform, fake_benchmark
from tests.unit.test_engine import SimClock

_REGISTRY: Registry | None = None


def registry() -> Registry:
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = load_plugins()
        _REGISTRY.use_cases["fake"] = FAKE_USE_CASE
    return _REGISTRY


class VerdictPlatform(FakePlatform):
    def __init__(self, outcomes: Mapping[tuple[float, float], str], growth: float = 10_000.0) -> None:
        """``growth``: the records/s a failing experiment's lag grows by."""
        super().__init__()
        self.outcomes = dict(outcomes)
        self.growth = growth
        self.starts: dict[tuple[float, float], int] = {}

    async def start_sut(self, spec: ExperimentSpec) -> None:
        await super().start_sut(spec)
        key = (float(spec.load), float(spec.resources))
        self.starts[key] = self.starts.get(key, 0) + 1

    async def sample(self, spec: ExperimentSpec) -> Sample:
        key = (float(spec.load), float(spec.resources))
        outcome = self.outcomes.get(key, "failed")
        if outcome == "error" or (outcome == "late-error" and self.starts[key] > 1):
            raise RuntimeError("SUT died")
        self.clock += self.interval
        self.samples_in_rep += 1
        growth = self.growth if outcome == "failed" else 0.0
        self.lag = self.lag + growth * self.interval
        return Sample(self.clock, {"lag": self.lag + (self.samples_in_rep % 2) * 10.0})


def config(folder: Path, metric: str, load_type: str, loads: list[float], resources: list[float], *,
           strategy: str = "linear", lower_bound: bool = True, repetitions: int = 1) -> RunConfig:
    doc = fake_benchmark()
    doc["loadTypes"].append(message_period_load_type())
    execution = parse_execution({
        "benchmark": "fake", "load": {"loadType": load_type, "loadValues": loads},
        "resources": {"resourceType": "Instances", "resourceValues": resources},
        "execution": {"metric": metric, "duration": 60, "warmup": 10, "repetitions": repetitions,
                      "afterTeardownDelay": 0, "sampleInterval": 5, "earlyStop": False,
                      "strategy": {"name": strategy, "restrictions": ["LowerBound"] if lower_bound else []}},
    })
    return RunConfig(use_case=FAKE_USE_CASE, benchmark=parse_benchmark(doc), execution=execution,
                     results_dir=folder, retries=0)


async def run(cfg: RunConfig, outcomes: Mapping[tuple[float, float], str]) -> tuple[RunOutcome, Engine]:
    clock = SimClock()
    engine = Engine(registry(), cfg, VerdictPlatform(outcomes), no_progress, clock=clock, sleep=clock.sleep)
    return await engine.run(), engine


def rows(table: Mapping[float, Any]) -> dict[float, Any]:
    return dict(sorted(table.items()))
