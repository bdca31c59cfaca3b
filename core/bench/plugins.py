"""Finding and loading plugins.

Built-in plugins are registered first, then every entry point in the ``bench.plugins``
group. ``BENCH_PLUGINS`` (comma-separated entry names) is an allow-list; when unset
every installed plugin loads. A name in it that no installed plugin has is warned
about (a typo would otherwise load nothing silently), and what it leaves out is kept in
``Registry.excluded`` so that a missing use case, SLO or patcher can say why it is
missing. A plugin that fails to import or register is reported
and skipped, so one broken third-party package cannot take the CLI down.

Hooks are called through pluggy (one plugin at a time, so that what each registers is
known and can be withdrawn), and every plugin is checked with ``check_pending``: a
``bench_*`` function that matches no hookspec (a misspelt hook) makes its plugin
broken instead of never being called. A name registered twice keeps the later plugin's
object, as before, but now with a warning naming both plugins.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any

import pluggy

from bench import hookspecs
from bench.api import GeneratorType, PatcherType, PlatformType, Registrar, SearchStrategy, SloType, UseCase
from bench.errors import UserError

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "bench.plugins"
ALLOW_ENV = "BENCH_PLUGINS"

BUILTIN_MODULES = (
    "bench.builtin.search",
    "bench.builtin.slos",
    "bench.builtin.patchers",
    "bench.builtin.platforms",
    "bench.builtin.generators",
    "bench.builtin.calibrated",
    "bench.builtin.job",
)

class PluginError(UserError):
    """A plugin's own code failed where bench called it (its ``default_benchmark()``):
    one line naming the plugin and what failed; ``-vv`` shows the traceback."""


#: the registrar method of each kind, for messages that say what to call
METHODS = {"use_cases": "use_case", "generators": "generator", "slos": "slo", "patchers": "patcher",
           "search_strategies": "search_strategy", "platforms": "platform"}

KINDS: dict[str, type] = {
    "use_cases": UseCase,
    "generators": GeneratorType,
    "slos": SloType,
    "patchers": PatcherType,
    "search_strategies": SearchStrategy,
    "platforms": PlatformType,
}


@dataclass
class PluginInfo:
    name: str
    distribution: str
    version: str
    builtin: bool
    provides: dict[str, list[str]] = field(default_factory=dict)
    error: str | None = None


@dataclass
class Registry:
    """Everything the loaded plugins registered, by kind and name."""

    use_cases: dict[str, UseCase] = field(default_factory=dict)
    generators: dict[str, GeneratorType] = field(default_factory=dict)
    slos: dict[str, SloType] = field(default_factory=dict)
    patchers: dict[str, PatcherType] = field(default_factory=dict)
    search_strategies: dict[str, SearchStrategy] = field(default_factory=dict)
    platforms: dict[str, PlatformType] = field(default_factory=dict)
    plugins: list[PluginInfo] = field(default_factory=list)
    pm: pluggy.PluginManager | None = None
    #: installed plugins that ``BENCH_PLUGINS`` left out
    excluded: list[str] = field(default_factory=list)

    def excluded_note(self) -> str:
        """`` (BENCH_PLUGINS leaves out: a, b)`` for error messages, or nothing."""
        return f" (BENCH_PLUGINS leaves out: {', '.join(self.excluded)})" if self.excluded else ""

    def table(self, kind: str) -> dict[str, Any]:
        table: dict[str, Any] = getattr(self, kind)
        return table

    def plugin_names(self) -> list[str]:
        return [p.name for p in self.plugins if p.error is None]


def _allowed() -> set[str] | None:
    raw = os.environ.get(ALLOW_ENV, "").strip()
    if not raw:
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


def _collect(registry: Registry, pm: pluggy.PluginManager, plugin: object, info: PluginInfo) -> None:
    """Call every registration hook of one plugin, through the manager, and file what
    it registers."""
    others = [p for p in pm.get_plugins() if p is not plugin]
    for kind, cls in KINDS.items():
        hook_name = f"bench_register_{kind}"
        found: list[Any] = []
        pm.subset_hook_caller(hook_name, remove_plugins=others)(register=Registrar(found.append))
        for item in found:
            if not isinstance(item, cls):
                raise TypeError(f"{hook_name} registered {_describe(item)}, not a {cls.__name__} "
                                f"(register.{METHODS[kind]}(bench.api.{cls.__name__}(...)))")
            if isinstance(item, UseCase):
                _check_use_case(item, info.name)
            name = str(getattr(item, "name", ""))
            table = registry.table(kind)
            if name in table:
                owner = next((p.name for p in [*registry.plugins, info] if name in p.provides.get(kind, [])), "?")
                log.warning("%s %r of plugin %s replaces the one of plugin %s",
                            kind.replace("_", " ").rstrip("s"), name, info.name, owner)
            table[name] = item
            info.provides.setdefault(kind, []).append(name)


def _describe(item: Any) -> str:
    """What was registered, in a few words (a dataclass's repr runs to a thousand characters)."""
    name = getattr(item, "name", None)
    kind = type(item).__name__
    return f"a {kind} named {name!r}" if isinstance(name, str) else f"a {kind}"


def _check_use_case(use_case: UseCase, plugin: str) -> None:
    """Refuse a use case that says no SUT (or two) when it is registered, so that
    ``bench run --dry-run`` names the plugin instead of a real run failing later, and make
    its ``default_benchmark()`` fail in one line naming the plugin."""
    if (use_case.topology is None) == (use_case.sut_process is None):
        which = "neither" if use_case.topology is None else "both"
        raise TypeError(f"use case {use_case.name!r} has {which} of topology and sut_process; give exactly one")
    if not callable(use_case.default_benchmark):
        raise TypeError(f"use case {use_case.name!r}: default_benchmark must be a function returning a dict")
    if not getattr(use_case.default_benchmark, "_bench_guarded", False):
        use_case.default_benchmark = _guarded(use_case.default_benchmark, use_case.name, plugin)


def _guarded(make: Callable[[], dict[str, Any]], use_case: str, plugin: str) -> Callable[[], dict[str, Any]]:
    def default_benchmark() -> dict[str, Any]:
        try:
            doc = make()
        except Exception as exc:  # noqa: BLE001 - the plugin's bug, reported in one line naming it
            raise PluginError(f"plugin {plugin}: use case {use_case!r}: default_benchmark() raised "
                              f"{type(exc).__name__}: {exc} (-vv shows the traceback)") from exc
        if not isinstance(doc, dict):
            raise PluginError(f"plugin {plugin}: use case {use_case!r}: default_benchmark() returned "
                              f"{type(doc).__name__}, not a dict (a Benchmark document)")
        return doc

    default_benchmark._bench_guarded = True  # type: ignore[attr-defined]
    default_benchmark.__doc__ = make.__doc__
    return default_benchmark


def load_plugins(extra: Iterable[object] = (), entry_points_: Iterable[EntryPoint] | None = None) -> Registry:
    """Build the registry: built-ins, then installed entry points, then ``extra``."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    registry = Registry(pm=pm)
    version = _version("bench")
    for module_name in BUILTIN_MODULES:
        module = importlib.import_module(module_name)
        info = PluginInfo(module_name.rsplit(".", 1)[1], "bench", version, builtin=True)
        _refuse_unmarked_hooks(module, module_name)
        pm.register(module, name=module_name)
        pm.check_pending()  # a misspelt hook in the core is a bug: fail loudly
        _collect(registry, pm, module, info)
        registry.plugins.append(info)
    allowed = _allowed()
    eps = entry_points(group=ENTRY_POINT_GROUP) if entry_points_ is None else entry_points_
    eps = list(eps)
    if allowed is not None:
        installed = {ep.name for ep in eps}
        for name in sorted(allowed - installed):
            log.warning("%s names %r, which is no installed plugin; installed: %s",
                        ALLOW_ENV, name, ", ".join(sorted(installed)) or "(none)")
    for ep in sorted(eps, key=lambda e: e.name):
        if allowed is not None and ep.name not in allowed:
            registry.excluded.append(ep.name)
            continue
        dist = ep.dist.name if ep.dist is not None else "?"
        dist_version = ep.dist.version if ep.dist is not None else "?"
        info = PluginInfo(ep.name, dist, dist_version, builtin=False)
        _safe_register(registry, pm, info, ep.load, ep.name)
    for plugin in extra:
        name = getattr(plugin, "__name__", type(plugin).__name__)
        info = PluginInfo(name, "?", "?", builtin=False)
        _safe_register(registry, pm, info, _constant(plugin), name)
    pm.check_pending()  # every plugin passed it alone; this keeps it true for the whole set
    return registry


def _refuse_unmarked_hooks(plugin: object, name: str) -> None:
    """A ``bench_*`` function without ``@hookimpl`` is never called by pluggy, so a
    plugin author who forgot the decorator would see their hook silently do nothing."""
    marker = f"{hookspecs.PROJECT}_impl"  # where pluggy's HookimplMarker stores its options
    unmarked = sorted(
        attr for attr in dir(plugin)
        if attr.startswith("bench_") and callable(getattr(plugin, attr, None))
        and getattr(getattr(plugin, attr), marker, None) is None
    )
    if unmarked:
        raise TypeError(
            f"plugin {name}: {', '.join(unmarked)} lack(s) the @hookimpl decorator, "
            "so bench would never call them"
        )


def _constant(plugin: object) -> Callable[[], object]:
    def load() -> object:
        return plugin

    return load


def _safe_register(
    registry: Registry, pm: pluggy.PluginManager, info: PluginInfo, load: Callable[[], object], name: str
) -> None:
    plugin: object | None = None
    try:
        plugin = load()
        _refuse_unmarked_hooks(plugin, name)
        pm.register(plugin, name=name)
        pm.check_pending()
        _collect(registry, pm, plugin, info)
    except Exception as exc:  # noqa: BLE001 - a broken plugin must not take the CLI down
        info.error = f"{type(exc).__name__}: {exc}"
        # What it registered before failing is withdrawn: half a plugin is worse than none.
        for kind, names in info.provides.items():
            for item_name in names:
                registry.table(kind).pop(item_name, None)
        info.provides = {}
        if plugin is not None and pm.is_registered(plugin):
            pm.unregister(plugin)
    registry.plugins.append(info)


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "0+unknown"
