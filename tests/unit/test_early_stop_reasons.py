"""Why a repetition ended early, or why it ran its full duration: said on the progress
line and kept in the repetition's result file, so that a user watching a long run (or
reading its results later) need not guess what the early-stopping rules saw."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bench.execution.run import Engine
from bench.plugins import load_plugins

from .fakes import FAKE_USE_CASE, FakePlatform
from .test_engine import SimClock, _config


@pytest.fixture(scope="module")
def registry():  # type: ignore[no-untyped-def]
    reg = load_plugins()
    reg.use_cases["fake"] = FAKE_USE_CASE
    return reg


class NoisyPlatform(FakePlatform):
    """A lag so noisy that no trend can be told from it within the repetition."""

    def __init__(self) -> None:
        super().__init__()
        self.rng = np.random.default_rng(11)

    async def sample(self, spec: Any) -> Any:
        sample = await super().sample(spec)
        sample.values["lag"] = 1_000_000.0 + float(self.rng.normal(0.0, 500_000.0))
        return sample


async def _run(registry, tmp_path: Path, platform: FakePlatform, load: float) -> list[str]:  # type: ignore[no-untyped-def]
    lines: list[str] = []
    cfg = _config(tmp_path, [load], [1], earlyStop=True, repetitions=1, duration=120)
    clock = SimClock()
    platform.now = clock
    await Engine(registry, cfg, platform, progress=lambda msg, *_: lines.append(msg), clock=clock,
                 sleep=clock.sleep).run()
    return lines


def _stored(tmp_path: Path) -> dict[str, Any]:
    (path,) = tmp_path.glob("exp*_generator_0.json")
    doc: dict[str, Any] = json.loads(path.read_text())
    return doc


async def test_an_early_end_says_which_decision_ended_it_and_keeps_it(registry, tmp_path: Path) -> None:
    lines = await _run(registry, tmp_path, FakePlatform(), 1500)  # one instance of 1,000 records/s
    (line,) = [x for x in lines if "decided early at" in x]
    assert "(lag-trend: fail: slope " in line and " vs " in line
    doc = _stored(tmp_path)
    assert doc["early_stopped"] is True
    assert len(doc["early_decisions"]) == 1 and doc["early_decisions"][0].startswith("lag-trend: fail: slope ")


async def test_a_full_repetition_says_what_was_still_undecided(registry, tmp_path: Path) -> None:
    lines = await _run(registry, tmp_path, NoisyPlatform(), 500)
    assert not [x for x in lines if "decided early at" in x]
    (line,) = [x for x in lines if "ran its full" in x]
    assert line.startswith("load=500 resources=1 rep 1/1: ran its full 120 s, undecided early: lag-trend: ")
    doc = _stored(tmp_path)
    assert doc["early_stopped"] is False
    assert doc["early_decisions"] == [line.split("undecided early: ", 1)[1]]


async def test_without_early_stopping_nothing_is_said_about_it(registry, tmp_path: Path) -> None:
    lines: list[str] = []
    cfg = _config(tmp_path, [500], [1], earlyStop=False, repetitions=1, duration=120)
    platform, clock = NoisyPlatform(), SimClock()
    platform.now = clock
    await Engine(registry, cfg, platform, progress=lambda msg, *_: lines.append(msg), clock=clock,
                 sleep=clock.sleep).run()
    assert not [x for x in lines if "ran its full" in x or "decided early" in x]
    assert _stored(tmp_path)["early_decisions"] == []
