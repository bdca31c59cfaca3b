"""A third party's search strategy and platform option, chosen on ``bench run``'s command
line like built-in ones: the strategy by ``--search``, the option by the flag its
platform declares. Nothing in the core names them; the plugin is registered the way an
installed one is (a module with hook implementations, through ``load_plugins``), and
the run goes through the CLI on simulated time."""

from __future__ import annotations

import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from bench.api import (
    PlatformCapabilities,
    PlatformOption,
    PlatformType,
    Registrar,
    SearchProblem,
    SearchStrategy,
    hookimpl,
)
from bench.cli.commands import cli
from bench.execution.run import Engine
from bench.plugins import Registry, load_plugins
from click.testing import CliRunner

from .fakes import FakePlatform
from .test_engine import SimClock

#: what the third party's pieces saw, per test
SEEN: dict[str, Any] = {}


async def corners(problem: SearchProblem) -> dict[float, float | None]:
    """Measures only the heaviest load, at the fewest and the most resources."""
    load = problem.loads[-1]
    for resources in (problem.resources[0], problem.resources[-1]):
        SEEN.setdefault("asked", []).append((load, resources))
        if await problem.run(load, resources):
            return {load: resources}
    return {load: None}


def _toy(options: Mapping[str, Any], registry: Registry) -> FakePlatform:
    SEEN["options"] = dict(options)
    platform = FakePlatform()
    platform.now = SEEN["clock"]
    return platform


def _plugin() -> types.ModuleType:
    module = types.ModuleType("bench_third_party")

    @hookimpl
    def bench_register_search_strategies(register: Registrar) -> None:
        register.search_strategy(SearchStrategy("corners", "the heaviest load at both ends of the resources",
                                                corners))

    @hookimpl
    def bench_register_platforms(register: Registrar) -> None:
        register.platform(PlatformType(
            "toy", "a platform of simulated time", _toy,
            options=(PlatformOption("speed", "how fast the toy runs", "--toy-speed", int, default=1, min=1),),
            capabilities=PlatformCapabilities(slis=frozenset({"lag", "generated-records", "generator-rate"})),
        ))

    module.bench_register_search_strategies = bench_register_search_strategies  # type: ignore[attr-defined]
    module.bench_register_platforms = bench_register_platforms  # type: ignore[attr-defined]
    return module


@pytest.fixture
def third_party(monkeypatch: pytest.MonkeyPatch) -> Registry:
    SEEN.clear()
    SEEN["clock"] = clock = SimClock()
    registry = load_plugins(extra=[_plugin()], entry_points_=[])
    assert not [p.error for p in registry.plugins if p.error]
    monkeypatch.setattr("bench.cli.commands._registry", lambda: registry)
    monkeypatch.setattr("bench.cli.launch.Engine",
                        lambda *args: Engine(*args, clock=clock, sleep=clock.sleep))
    return registry


def bench_run(tmp_path: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, [
        "run", "--plugin", "calibrated", "--set", "capacity=1000", "--loads", "500,3000", "--resources", "1,2,4",
        "--duration", "60", "--warmup", "10", "--repetitions", "1", "--results", str(tmp_path / "r"), *args,
    ])


def test_a_plugins_strategy_and_platform_option_run_through_the_cli(third_party: Registry, tmp_path: Path) -> None:
    result = bench_run(tmp_path, "--platform", "toy", "--toy-speed", "3", "--search", "corners")
    assert result.exit_code == 0, result.output
    assert SEEN["options"]["speed"] == 3  # the declared option, typed, reached the platform
    assert SEEN["asked"] == [(3000.0, 1.0), (3000.0, 4.0)]  # the plugin's strategy chose the experiments
    assert "3000" in result.output.replace(",", "")


def test_the_plugins_option_is_in_help_and_checked_by_its_declaration(third_party: Registry,
                                                                       tmp_path: Path) -> None:
    help_text = CliRunner().invoke(cli, ["run", "--help"]).output
    assert "--toy-speed" in help_text and "corners" in help_text
    result = bench_run(tmp_path, "--platform", "toy", "--toy-speed", "0", "--search", "corners")
    assert result.exit_code == 2 and result.output.strip().splitlines() == [
        "bench: error: --toy-speed 0: the toy platform takes at least 1"]
    assert "options" not in SEEN  # refused before anything started


def test_another_platforms_option_is_refused_naming_the_platform(third_party: Registry, tmp_path: Path) -> None:
    result = bench_run(tmp_path, "--platform", "toy", "--brokers", "3")
    assert result.exit_code == 2 and "--brokers: the toy platform does not apply it (its options: --toy-speed)" \
        in result.output
    result = bench_run(tmp_path, "--toy-speed", "2", "--dry-run")  # the embedded platform
    assert result.exit_code == 2 and "--toy-speed: the embedded platform does not apply it" in result.output


def test_an_unknown_strategy_is_one_line_naming_the_known_ones(third_party: Registry, tmp_path: Path) -> None:
    result = bench_run(tmp_path, "--platform", "toy", "--search", "corner")
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "bench: error: --search: 'corner' is not one of binary, bracket, corners, full, initial-guess, linear"]


def test_the_core_asks_a_strategy_what_it_can_do(third_party: Registry, tmp_path: Path) -> None:
    """``corners`` declares no walk from a prediction and does not need the lower bound."""
    result = bench_run(tmp_path, "--platform", "toy", "--search", "corners", "--predict")
    assert result.exit_code == 2 and "--predict: the search strategy 'corners' cannot start from a prediction" \
        in result.output
    result = bench_run(tmp_path, "--platform", "toy", "--search", "corners", "--no-lower-bound")
    assert result.exit_code == 0, result.output
