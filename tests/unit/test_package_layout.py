"""The core's layout at package level, as ``test_import_cycles`` guards it at module level.

Why: a package per concept of the method only helps a reader if the packages stand in
one order, each importing only from below, so that any one can be understood (and
changed) with only what lies under it in mind. The checks here:

- the top of ``core/bench`` holds only the public surface and the floor;
- no import loop between packages, counting imports inside functions (a lazy import
  hides a loop from the interpreter, not from the design);
- every import between packages goes down the declared :data:`LAYERS`, except the
  few in :data:`EXCEPTIONS`, each with its reason;
- no core module outside ``search/`` switches on a search strategy's name: the core
  asks a strategy what it is (:class:`bench.api.SearchStrategy`), so a plugin's works
  like a built-in one;
- every platform option is declared once, by its platform (:class:`bench.api.
  PlatformOption`), and the command line is generated from those declarations.

docs/architecture.md draws the same layers; the last test holds the two together.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

import click
import pytest

from .test_import_cycles import cycles, import_graph

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "core" / "bench"

#: what may sit at the top of core/bench: the public surface plugins and their tests
#: import, and the floor everything stands on
PUBLIC_SURFACE = (
    "api", "generator_contract", "slo_math", "services", "hookspecs", "plugins", "testing", "pytest_plugin",
)
#: (expressions: thresholdFromExpression's parser of numbers and operators, importing
#: nothing of bench, which slo_math evaluates)
FLOOR = ("errors", "numbers", "metrics", "expressions")

#: the layers from the bottom up; a package (or top-level module) imports only from its
#: own layer's packages below it in this list, never from above. Within a layer the
#: packages must not import each other in a loop.
LAYERS: tuple[tuple[str, ...], ...] = (
    FLOOR,
    # the contract plugins implement, and its registry
    ("api", "generator_contract", "slo_math", "hookspecs", "plugins"),
    ("patchers",),  # turning a load or resource value into deployment changes
    ("config",),  # documents, parameters, bounds, the reference's schema
    ("slo",),  # SLO types, early decisions, external checkers
    ("search",),  # strategies, bracket, prediction
    ("runtime",),  # Kafka, Spark, the load generator, host probes
    ("platforms",),  # where a run happens: local, embedded, external
    ("platforms.kubernetes",),
    ("services", "testing", "pytest_plugin"),  # the public helpers over the runtime, for plugins and their tests
    ("results",),  # store, tables, plots, environment
    ("execution",),  # one run: experiments, collector, evaluator
    ("analysis",),  # analyze, compare, report
    ("builtin",),  # the built-in plugins, registered through the same hooks as any other
    ("stages", "cli"),  # the front end
)

#: (importing module, imported module) pairs that go against the layers, and why. Each is
#: a debt with its reason, not a licence: remove an entry when its import goes.
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("bench.patchers.configmap", "bench.config.files"):
        "a ConfigMap's YAML file is user input: the patcher parses it with the same guarded "
        "parser as every benchmark file (depth, alias bombs, keys given twice) rather than a twin",
    ("bench.execution.experiments", "bench.analysis.confidence"):
        "the confidence of a verdict is an SLO concern that still lives in analysis/; it moves "
        "to slo/ with the one SLO path of `bench run` and `bench analyze` (issue 68)",
    ("bench.execution.probe_verdict", "bench.analysis.confidence"):
        "the sizing probe's verdict is judged sure by the same confidence rules as an "
        "experiment's; the same debt as the runner's import, and moves with it",
    ("bench.results.plots", "bench.analysis.runs"):
        "the plots title a series as its SLO type says, through the registry cache of the "
        "offline analysis; goes with the one SLO path (issue 68)",
    ("bench.stages.commands", "bench.cli.checks"):
        "`bench stages` checks its results folder and Kafka address with the run's own checks; "
        "both front-end packages, until those checks live with results/ and runtime/kafka/",
}


def package_of(module: str) -> str:
    """``bench.config.model`` -> ``config``; ``bench.api`` -> ``api``;
    ``bench.platforms.kubernetes.client`` -> ``platforms.kubernetes``."""
    parts = module.split(".")[1:]
    if parts[:2] == ["platforms", "kubernetes"]:
        return "platforms.kubernetes"
    return parts[0] if parts else "bench"


def layer_of() -> dict[str, int]:
    return {pkg: i for i, layer in enumerate(LAYERS) for pkg in layer}


def package_edges(graph: dict[str, set[str]]) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(package, package) -> the module imports behind it, without the excepted ones."""
    edges: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for source, targets in graph.items():
        for target in targets:
            a, b = package_of(source), package_of(target)
            if a != b and a != "bench" and b != "bench" and (source, target) not in EXCEPTIONS:
                edges.setdefault((a, b), []).append((source, target))
    return edges


def against_the_layers(graph: dict[str, set[str]]) -> list[str]:
    layers = layer_of()
    out = []
    for (a, b), why in sorted(package_edges(graph).items()):
        if a not in layers or b not in layers:
            out.append(f"{a} -> {b}: a package not in LAYERS")
        elif layers[b] > layers[a]:
            out.append(f"{a} -> {b} goes up: {', '.join(f'{s} -> {t}' for s, t in sorted(why))}")
    return out


def package_loops(graph: dict[str, set[str]]) -> list[list[str]]:
    packages: dict[str, set[str]] = {}
    for a, b in package_edges(graph):
        packages.setdefault(a, set()).add(b)
        packages.setdefault(b, set())
    return cycles(packages)


# ----------------------------------------------------------------------- the layout


def test_the_top_of_core_bench_holds_only_the_public_surface_and_the_floor() -> None:
    top = {p.stem for p in CORE.glob("*.py") if p.stem != "__init__"}
    stray = sorted(top - set(PUBLIC_SURFACE) - set(FLOOR))
    assert not stray, f"core/bench/ holds modules outside the public surface and the floor: {stray}"


def test_every_package_is_in_a_layer() -> None:
    packages = {p.name for p in CORE.iterdir() if (p / "__init__.py").exists()}
    packages |= {"platforms.kubernetes"} | {p.stem for p in CORE.glob("*.py") if p.stem != "__init__"}
    assert sorted(packages - set(layer_of())) == []


def test_no_import_loop_between_packages() -> None:
    assert package_loops(import_graph()) == []


def test_every_import_between_packages_goes_down_the_layers() -> None:
    assert against_the_layers(import_graph()) == []


def test_every_exception_is_still_an_import() -> None:
    graph = import_graph()
    stale = [pair for pair in EXCEPTIONS if pair[1] not in graph.get(pair[0], set())]
    assert not stale, f"EXCEPTIONS lists imports that are gone (remove them): {stale}"


def test_the_checks_find_a_loop_and_an_import_upwards() -> None:
    graph = {
        "bench.config.model": {"bench.search.strategies"},  # goes up
        "bench.search.strategies": {"bench.config.model"},
        "bench.api": set(),
    }
    assert package_loops(graph) == [["config", "search"]]
    assert against_the_layers(graph) == ["config -> search goes up: bench.config.model -> bench.search.strategies"]


# ----------------------------------------------------------------------- strategies


def builtin_strategy_names() -> set[str]:
    from bench.plugins import load_plugins

    return set(load_plugins(entry_points_=[]).search_strategies)


def _strings(node: ast.AST) -> Iterable[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.Tuple | ast.List | ast.Set):
        for item in node.elts:
            yield from _strings(item)


def name_switches(sources: dict[str, str], names: set[str]) -> list[str]:
    """Where a module compares with a strategy's name, or lists strategy names (a
    ``click.Choice``, a tuple of the ones some rule applies to), directly or through a
    constant that holds one."""
    trees = {rel: ast.parse(text) for rel, text in sources.items()}
    constants = {
        target.id
        for tree in trees.values()
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Constant)
        and node.value.value in names
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    }

    def named(node: ast.AST) -> bool:
        if any(s in names for s in _strings(node)):
            return True
        return (isinstance(node, ast.Name) and node.id in constants) or (
            isinstance(node, ast.Attribute) and node.attr in constants)

    found = []
    for rel, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare) and any(named(n) for n in [node.left, *node.comparators]):
                found.append(f"{rel}:{node.lineno}: compares with a strategy's name")
            elif isinstance(node, ast.Tuple | ast.List | ast.Set) and len(set(_strings(node)) & names) >= 2:
                found.append(f"{rel}:{node.lineno}: lists strategy names")
    return found


def test_no_core_module_switches_on_a_strategy_name() -> None:
    """search/ defines the strategies and builtin/search.py registers them; everyone
    else asks a strategy's declared properties."""
    sources = {
        p.relative_to(ROOT).as_posix(): p.read_text()
        for p in CORE.glob("**/*.py")
        if "search" not in p.relative_to(CORE).parts and p.relative_to(CORE).as_posix() != "builtin/search.py"
    }
    assert name_switches(sources, builtin_strategy_names()) == []


def test_the_strategy_check_finds_a_switch_through_a_constant_and_a_choice() -> None:
    sources = {
        "a.py": 'BRACKET = "bracket"\n',
        "b.py": "from a import BRACKET\nif name == BRACKET:\n    pass\n",
        "c.py": 'import click\nclick.Choice(["bracket", "full"])\n',
        "d.py": 'if strategy != "full":\n    pass\n',
        "e.py": 'DEFAULT = "bracket"  # a default is not a switch\n',
    }
    assert name_switches(sources, {"bracket", "full"}) == [
        "b.py:2: compares with a strategy's name",
        "c.py:2: lists strategy names",
        "d.py:1: compares with a strategy's name",
    ]


# ----------------------------------------------------------------------- platform options


def _flags(params: Iterable[click.Parameter]) -> list[str]:
    return [flag for p in params for flag in (*p.opts, *p.secondary_opts)]


def test_platform_options_are_declared_once_by_their_platforms() -> None:
    """No hand-written twin of a declared option in the CLI: ``bench run``'s own options
    hold none, and the generated ones are each declared flag exactly once."""
    from bench.cli import commands
    from bench.plugins import load_plugins

    declared = {o.flag for p in load_plugins(entry_points_=[]).platforms.values() for o in p.options if o.flag}
    assert declared, "the built-in platforms declare options"
    written = set(_flags(commands.run.params)) & declared
    assert not written, f"bench run writes platform options by hand: {sorted(written)}"
    ctx = click.Context(commands.run)
    generated = _flags(commands.run.get_params(ctx))
    assert sorted(f for f in generated if f in declared) == sorted(declared)


def test_the_architecture_page_draws_the_same_layers() -> None:
    """docs/architecture.md lists the layers in a line per layer, bottom first, in a
    block the test can find: ``layer N: a, b``."""
    doc = (ROOT / "docs" / "architecture.md").read_text()
    drawn = re.findall(r"^layer (\d+): (.+)$", doc, re.M)
    assert [tuple(n.strip() for n in names.split(",")) for _, names in drawn] == list(LAYERS)


@pytest.mark.parametrize("pair", sorted(EXCEPTIONS))
def test_every_exception_says_why(pair: tuple[str, str]) -> None:
    assert len(EXCEPTIONS[pair].split()) >= 8
