"""--resume refuses what it cannot continue, and run ids are never shared.

A resumed run under another configuration would mix results of different durations,
loads or use cases under one id; a corrupt file would end in a traceback; two runs
in one folder picking the same id would overwrite each other's files.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from bench.config.model import parse_benchmark, parse_execution
from bench.errors import UserError
from bench.execution.config import RunConfig
from bench.execution.run import Engine
from bench.plugins import load_plugins
from bench.results.store import ResultStore

from .fakes import FAKE_USE_CASE, FakePlatform, fake_benchmark
from .test_engine import Killed, SimClock


@pytest.fixture(scope="module")
def registry():  # type: ignore[no-untyped-def]
    reg = load_plugins()
    reg.use_cases["fake"] = FAKE_USE_CASE
    return reg


def _config(tmp_path: Path, duration: float = 60, loads: list[float] | None = None, **kw: Any) -> RunConfig:
    execution = parse_execution({
        "benchmark": "fake",
        "load": {"loadType": "NumSensors", "loadValues": loads or [1500, 2500]},
        "resources": {"resourceType": "Instances", "resourceValues": [1, 2, 3]},
        # the file names these tests corrupt are the linear walk's experiments
        "execution": {"duration": duration, "warmup": 10, "repetitions": 2, "afterTeardownDelay": 0,
                      "sampleInterval": 5, "strategy": {"name": "linear"}},
    })
    return RunConfig(use_case=FAKE_USE_CASE, benchmark=parse_benchmark(fake_benchmark()), execution=execution,
                     results_dir=tmp_path, **kw)


async def _run(registry, cfg: RunConfig, platform: FakePlatform):  # type: ignore[no-untyped-def]
    clock = SimClock()
    return await Engine(registry, cfg, platform, clock=clock, sleep=clock.sleep).run()


async def _interrupted(registry, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(Killed):
        await _run(registry, _config(tmp_path), FakePlatform(faults={6: Killed()}))


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"duration": 120}, "execution.execution.duration: stored 60.0 vs asked 120.0"),
        ({"loads": [1500, 3000]}, "execution.load.loadValues"),
        ({"params": {"capacity": 700}}, "run.params"),
    ],
)
async def test_resume_refuses_another_configuration(registry, tmp_path: Path, change: dict[str, Any],
                                                    named: str) -> None:
    await _interrupted(registry, tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    platform = FakePlatform()
    with pytest.raises(UserError) as err:
        await _run(registry, _config(tmp_path, resume=True, **change), platform)
    message = str(err.value)
    assert "\n" not in message and "exp0" in message and named in message, message
    assert platform.experiments == [] and platform.open_count == 0
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # nothing touched


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("exp0-result.json", '{"id": 0, "experiments": [{"load": 1500'),
        ("exp0_2500_2_generator_0.json", "{"),
        ("exp0_2500_2_sli_lag-trend_0.csv", "labels,timestamp,value\nbench-sut,17000000"),
        ("exp0-execution-configuration.json", "[]"),
    ],
)
async def test_a_corrupt_or_partial_file_gets_one_line_naming_it(registry, tmp_path: Path, name: str,
                                                                 content: str) -> None:
    await _interrupted(registry, tmp_path)
    (tmp_path / name).write_text(content)
    with pytest.raises(UserError) as err:
        await _run(registry, _config(tmp_path, resume=True), FakePlatform())
    assert "\n" not in str(err.value) and str(tmp_path / name) in str(err.value), str(err.value)


async def test_a_missing_sli_file_of_a_finished_repetition_is_named(registry, tmp_path: Path) -> None:
    await _interrupted(registry, tmp_path)
    (tmp_path / "exp0_2500_2_sli_lag-trend_0.csv").unlink()
    with pytest.raises(UserError, match="exp0_2500_2_sli_lag-trend_0.csv is missing"):
        await _run(registry, _config(tmp_path, resume=True), FakePlatform())


def test_any_exp_file_reserves_its_id(tmp_path: Path) -> None:
    (tmp_path / "exp4_demand.csv").write_text("load,resources\n")
    (tmp_path / "exp12_1000_1_sli_lag-trend_0.csv").write_text("")
    (tmp_path / "experiments.txt").write_text("")  # not exp<N>
    assert ResultStore.reserved_ids(tmp_path) == [4, 12]
    assert ResultStore.reserve_id(tmp_path, {}) == 13
    assert ResultStore.reserve_id(tmp_path, {}) == 14  # the reservation itself reserves


def test_concurrent_reservations_get_distinct_ids(tmp_path: Path) -> None:
    async def many() -> list[int]:
        return list(await asyncio.gather(*(asyncio.to_thread(ResultStore.reserve_id, tmp_path, {"n": i})
                                           for i in range(16))))

    ids = asyncio.run(many())
    assert sorted(ids) == list(range(16))
    assert json.loads((tmp_path / "exp3-run.json").read_text())["n"] in range(16)


async def test_two_engines_in_one_folder_do_not_share_an_id(registry, tmp_path: Path) -> None:
    clock = SimClock()
    first = Engine(registry, _config(tmp_path), FakePlatform(), clock=clock, sleep=clock.sleep)
    second = Engine(registry, _config(tmp_path), FakePlatform(), clock=clock, sleep=clock.sleep)
    assert first.store.id != second.store.id  # allocated before either wrote a configuration
