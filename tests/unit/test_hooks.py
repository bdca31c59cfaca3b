"""Every lifecycle hook is called with the arguments its spec and docs/hooks.md promise,
and a ``bench_*`` function a plugin forgot to mark is refused instead of never running."""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import re
import sys
import types
from pathlib import Path
from typing import Any

import bench.api
import bench.hookspecs
import pytest
from bench.config.model import parse_benchmark, parse_execution
from bench.execution.config import RunConfig
from bench.execution.run import Engine
from bench.hookspecs import hookimpl
from bench.plugins import load_plugins

from .fakes import FAKE_USE_CASE, FakePlatform, fake_benchmark
from .test_engine import SimClock

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "tests" / "fixtures" / "example_plugin" / "bench_example" / "__init__.py"
DOC = (ROOT / "docs" / "hooks.md").read_text()


def _example_plugin() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("bench_example_for_hooks", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


async def _run(tmp_path: Path, plugin: types.ModuleType, repetitions: int) -> Any:
    registry = load_plugins(extra=[plugin])
    assert not [p for p in registry.plugins if p.error], [p.error for p in registry.plugins if p.error]
    registry.use_cases["fake"] = FAKE_USE_CASE
    execution = parse_execution({
        "benchmark": "fake",
        "load": {"loadType": "NumSensors", "loadValues": [1500, 2500]},
        "resources": {"resourceType": "Instances", "resourceValues": [1, 2, 3]},
        "execution": {"duration": 60, "warmup": 10, "repetitions": repetitions, "afterTeardownDelay": 0,
                      "sampleInterval": 5},
    })
    cfg = RunConfig(use_case=FAKE_USE_CASE, benchmark=parse_benchmark(fake_benchmark()), execution=execution,
                    results_dir=tmp_path)
    clock = SimClock()
    platform = FakePlatform()
    return await Engine(registry, cfg, platform, clock=clock, sleep=clock.sleep).run(), platform


async def test_lifecycle_hooks_get_matching_arguments(tmp_path: Path) -> None:
    plugin = _example_plugin()
    outcome, platform = await _run(tmp_path, plugin, repetitions=2)
    calls = plugin.CALLS
    started = [kw for name, kw in calls if name == "started"]
    finished = [kw for name, kw in calls if name == "finished"]
    run_finished = [kw for name, kw in calls if name == "run_finished"]
    # one started per repetition of every experiment the platform ran, in the same order
    assert [(kw["load"], kw["resources"]) for kw in started] == platform.experiments
    assert len(finished) == len(outcome.records) == len(set(platform.experiments))
    for done in finished:
        mine = [kw for kw in started if (kw["load"], kw["resources"]) == (done["load"], done["resources"])]
        assert {kw["experiment_id"] for kw in mine} == {done["experiment_id"]}, "one id per experiment"
        assert sorted(kw["repetition"] for kw in mine) == list(range(len(mine)))
        assert isinstance(done["passed"], bool) and set(done["details"]) == {"lag-trend"}
    assert len({kw["experiment_id"] for kw in finished}) == len(finished), "experiments have distinct ids"
    # every started comes before its experiment's finished, and the run ends last
    order = [name for name, _ in calls]
    assert order[-1] == "run_finished" and order.count("run_finished") == 1
    assert run_finished[0]["results_dir"] == str(tmp_path)
    assert run_finished[0]["metric"] == "demand"
    assert run_finished[0]["table"] == outcome.table


def test_a_bench_function_without_hookimpl_marks_the_plugin_broken() -> None:
    forgot = types.ModuleType("forgot_the_marker")

    def bench_experiment_finished(experiment_id: str) -> None:  # no @hookimpl
        raise AssertionError("never called")

    forgot.bench_experiment_finished = bench_experiment_finished  # type: ignore[attr-defined]
    registry = load_plugins(extra=[forgot])
    info = next(p for p in registry.plugins if p.name == "forgot_the_marker")
    assert info.error is not None and "bench_experiment_finished" in info.error and "@hookimpl" in info.error


def test_a_marked_hook_loads_cleanly() -> None:
    fine = types.ModuleType("marked_hook")
    fine.bench_run_finished = hookimpl(lambda results_dir: None)  # type: ignore[attr-defined]
    registry = load_plugins(extra=[fine])
    assert next(p for p in registry.plugins if p.name == "marked_hook").error is None


def _section(title: str) -> str:
    match = re.search(rf"^### `{re.escape(title)}.*?(?=^##)", DOC + "\n##", re.S | re.M)
    assert match, f"docs/hooks.md has no section for {title}"
    return match.group(0)


@pytest.mark.parametrize(
    ("hook", "kind"),
    [
        ("bench_register_use_cases", "UseCase"),
        ("bench_register_generators", "GeneratorType"),
        ("bench_register_slos", "SloType"),
        ("bench_register_patchers", "PatcherType"),
        ("bench_register_search_strategies", "SearchStrategy"),
        ("bench_register_platforms", "PlatformType"),
    ],
)
def test_docs_name_every_field_of_what_a_hook_registers(hook: str, kind: str) -> None:
    """The dataclasses grow; a field the docs never mention is a feature no plugin author finds."""
    cls = getattr(bench.api, kind)
    section = _section(hook)
    assert kind in section
    missing = [f.name for f in dataclasses.fields(cls) if f.name not in section]
    assert not missing, f"docs/hooks.md, {hook}: {kind} fields not described: {missing}"


def test_every_hookspec_has_a_section_with_its_exact_signature() -> None:
    specs = [(n, f) for n, f in inspect.getmembers(bench.hookspecs, inspect.isfunction) if n.startswith("bench_")]
    for name, fn in specs:
        assert f"### `{name}({', '.join(inspect.signature(fn).parameters)})`" in DOC
