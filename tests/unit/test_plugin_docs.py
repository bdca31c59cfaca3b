"""docs/writing-a-plugin.md and docs/hooks.md say what the code does.

Why: the plugin author reads only these pages. Every Python block of the guide runs
here as one plugin module and registers; every ``Register X(...)`` signature is compared
with the dataclass it names; the testing kit's documented signatures and fixtures are
compared with bench.testing and bench.pytest_plugin; and ``hookimpl`` comes from one
place only.
"""

from __future__ import annotations

import ast
import asyncio
import dataclasses
import inspect
import re
import sys
import types
from pathlib import Path
from typing import Any

import bench.api
import bench.pytest_plugin
import bench.testing
import pytest
from bench.api import GeneratorSpec
from bench.plugins import load_plugins

ROOT = Path(__file__).resolve().parents[2]
GUIDE = (ROOT / "docs" / "writing-a-plugin.md").read_text()
HOOKS = (ROOT / "docs" / "hooks.md").read_text()


def signature(cls: type) -> str:
    """``Name(field, field=default, ...)`` of a dataclass, as the docs write it."""
    parts = []
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            value: Any = f.default
        elif f.default_factory is not dataclasses.MISSING:
            value = f.default_factory()
        else:
            parts.append(f.name)
            continue
        if isinstance(value, type):
            text = value.__name__
        elif dataclasses.is_dataclass(value):
            text = f"{type(value).__name__}()"
        else:
            text = repr(value)
        parts.append(f"{f.name}={text}")
    return f"{cls.__name__}({', '.join(parts)})"


@pytest.mark.parametrize("kind", ["UseCase", "GeneratorType", "SloType", "PatcherType", "SearchStrategy",
                                  "PlatformType"])
def test_every_registered_kind_has_its_exact_signature_in_hooks_md(kind: str) -> None:
    assert f"Register `{signature(getattr(bench.api, kind))}`" in HOOKS


@pytest.mark.parametrize("kind", ["GeneratorSpec", "GeneratorReport"])
def test_the_generator_contract_types_have_their_exact_signature(kind: str) -> None:
    expected = signature(getattr(bench.api, kind))
    assert f"`{expected}`" in HOOKS and f"`{expected}`" in " ".join(GUIDE.split())


def test_the_docs_import_hookimpl_from_bench_api_only() -> None:
    for text in (GUIDE, HOOKS):
        assert "bench.hookspecs" not in text
    assert "from bench.api import Registrar, hookimpl" in GUIDE
    example = ROOT / "tests" / "fixtures" / "example_plugin" / "bench_example" / "__init__.py"
    assert "bench.hookspecs" not in example.read_text()


def _guide_module() -> types.ModuleType:
    blocks = re.findall(r"^```python\n(.*?)^```", GUIDE, re.S | re.M)
    assert len(blocks) >= 6
    module = types.ModuleType("doc_plugin_from_the_guide")
    sys.modules[module.__name__] = module
    exec(compile("\n".join(blocks), "docs/writing-a-plugin.md", "exec"), module.__dict__)  # noqa: S102
    return module


def test_the_guide_is_one_plugin_that_registers_and_runs_its_own_test() -> None:
    module = _guide_module()
    registry = load_plugins(extra=[module])
    info = next(p for p in registry.plugins if p.name == module.__name__)
    assert info.error is None, info.error
    assert info.provides == {"use_cases": ["doc-wordcount"], "generators": ["doc-text", "doc-ticks"],
                             "slos": ["doc-max-lag"], "patchers": ["doc-words"]}
    module.test_the_plugin_registers_and_its_benchmark_is_valid()
    # the record function makes what the page says: wordsPerRecord words of text
    record = module.records_for(GeneratorSpec("x:1", "t", ["s_0"], params={"wordsPerRecord": 3}))
    assert len(record("s_0", 0).split()) == 3
    # the loop of its own stops on the signal and reports
    control = bench.api.GeneratorControl(progress=lambda event: None)

    async def drive() -> Any:
        bench.api.set_generator_control(control)
        task = asyncio.ensure_future(module.TICKS.run(GeneratorSpec("x:1", "t", ["s_0"])))
        await asyncio.sleep(0.1)
        control.stop.set()
        return await asyncio.wait_for(task, 2.0)

    assert asyncio.run(drive()).records == 0


@pytest.mark.parametrize("name", ["run_topology", "run_generator", "bench_run"])
def test_the_kit_helpers_have_the_documented_parameters_in_order(name: str) -> None:
    documented = re.search(rf"`{name}\(([^`]*)\)", " ".join(GUIDE.split()))
    assert documented, f"writing-a-plugin.md does not show {name}(...)"
    tree = ast.parse(f"def f({documented.group(1).replace(', ...', '')}): pass")
    args = tree.body[0].args  # type: ignore[attr-defined]
    shown = [a.arg for a in [*args.args, *args.kwonlyargs]]
    actual = list(inspect.signature(getattr(bench.testing, name)).parameters)
    assert [p for p in actual if p in shown] == shown


def test_every_documented_fixture_is_in_the_pytest_plugin() -> None:
    table = GUIDE.split("## 8.")[1].split("\n\n")[2]
    fixtures = re.findall(r"^\| `(\w+)`", table, re.M)
    assert set(fixtures) == {"kafka_bootstrap", "spark", "bench_registry", "topology_runner", "generator_runner",
                             "bench_runner"}
    for name in fixtures:
        assert callable(getattr(bench.pytest_plugin, name))
