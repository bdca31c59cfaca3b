"""Plugins under plugins/ import only bench's public modules (docs/writing-a-plugin.md).

Why: a plugin that reaches into a core module breaks when that module moves or
changes, and shows that the public API is not enough. Imports inside functions count
too (a lazy import is still a dependency). A plugin's tests may in addition drive the
core the way a user does (load the plugins, parse a benchmark, run the CLI, use the
test harness), but not reach into the runtime either.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: what plugin code may import (docs/writing-a-plugin.md, "What a plugin may import")
PUBLIC = frozenset({"bench.api", "bench.slo_math", "bench.services"})
#: what a plugin's tests may import besides: the core's entry points a user drives
TEST_ENTRY_POINTS = frozenset(
    {"bench.testing", "bench.plugins", "bench.config.model", "bench.patchers.apply", "bench.cli.commands"}
)


def bench_imports(path: Path) -> list[tuple[int, str]]:
    """Every ``bench`` module ``path`` imports, with its line: ``from bench import x`` names
    ``bench.x``, since that is the module it reaches."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "bench"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "bench":
                found += [(node.lineno, f"bench.{a.name}") for a in node.names]
            elif node.module.split(".")[0] == "bench":
                found.append((node.lineno, node.module))
    return found


def violations(root: Path) -> list[str]:
    out = []
    for path in sorted(root.glob("plugins/*/**/*.py")):
        rel = path.relative_to(root)
        if "build" in rel.parts:
            continue
        allowed = PUBLIC | TEST_ENTRY_POINTS if "tests" in rel.parts else PUBLIC
        out += [f"{rel}:{line}: {module}" for line, module in bench_imports(path) if module not in allowed]
    return out


def test_plugins_import_only_the_public_modules() -> None:
    assert not violations(ROOT)


def test_the_check_finds_an_internal_import_even_inside_a_function(tmp_path: Path) -> None:
    code = tmp_path / "plugins" / "p" / "bench_p"
    code.mkdir(parents=True)
    (code / "__init__.py").write_text("from bench.api import UseCase\nfrom bench import slo_math\n")
    (code / "lazy.py").write_text("def f():\n    from bench.runtime.load.generator import run_active_power\n")
    (code / "star.py").write_text("import bench.slo.early_stop\nfrom bench import numbers\n")
    tests = tmp_path / "plugins" / "p" / "tests"
    tests.mkdir()
    (tests / "test_p.py").write_text(
        "from bench.plugins import load_plugins\nfrom bench.execution.engine import Engine\n"
    )
    assert violations(tmp_path) == [
        "plugins/p/bench_p/lazy.py:2: bench.runtime.load.generator",
        "plugins/p/bench_p/star.py:1: bench.slo.early_stop",
        "plugins/p/bench_p/star.py:2: bench.numbers",
        "plugins/p/tests/test_p.py:2: bench.execution.engine",
    ]
