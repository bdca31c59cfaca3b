"""A plugin's own words for users: ``bench run --plugin NAME --help`` and ``bench plugins --verbose``.

Everything shown is read from what the plugin registered (descriptions, declared
parameters with their docs, the load and resource types of its default benchmark), so
a plugin author documents a use case once, where it is defined.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.api import ParamSpec, UseCase
from bench.errors import UserError
from bench.plugins import METHODS, PluginInfo, Registry

Rows = list[tuple[str, list[tuple[str, str]]]]


def plugin_named(args: Sequence[str]) -> str | None:
    """The value of ``--plugin`` among raw ``bench run`` arguments, if any."""
    for i, arg in enumerate(args):
        if arg == "--plugin" and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--plugin="):
            return arg.split("=", 1)[1]
    return None


def _use_case(registry: Registry, name: str) -> UseCase | str:
    """The use case ``--plugin name`` selects, or why there is none."""
    if name in registry.use_cases:
        return registry.use_cases[name]
    for info in registry.plugins:
        if info.name == name and info.error:
            return f"the plugin is installed but broken: {info.error}"
        if info.name == name and len(info.provides.get("use_cases", [])) == 1:
            return registry.use_cases[info.provides["use_cases"][0]]
    return f"no use case or plugin {name!r}; known: {', '.join(sorted(registry.use_cases))}"


def param_line(spec: ParamSpec, default: Any = None) -> str:
    """``windowMs (int, at least 100; default 5000)``."""
    words = [spec.type.__name__ if spec.type is not object else "any"]
    if spec.choices:
        words.append("one of " + ", ".join(map(str, spec.choices)))
    if spec.min is not None:
        words.append(f"at least {spec.min:g}")
    if spec.max is not None:
        words.append(f"at most {spec.max:g}")
    text = f"{spec.name} ({', '.join(words)}"
    return text + (f"; default {default})" if default is not None else ")")


def _types(doc: dict[str, Any], key: str) -> list[tuple[str, str]]:
    rows = []
    for i, typedef in enumerate(doc.get(key) or []):
        patchers = ", ".join(f"{p.get('type')} on {p.get('resource') or 'every object'}"
                             for p in typedef.get("patchers") or [])
        direction = " (a smaller value is more load)" if typedef.get("direction") == "decreasing" else ""
        title = str(typedef.get("typeName")) + (" (default)" if i == 0 else "")
        rows.append((title, f"patchers: {patchers}{direction}"))
    return rows


def use_case_help(registry: Registry, name: str) -> tuple[str, Rows]:
    """The title and rows of the help section about the use case ``--plugin name`` runs."""
    found = _use_case(registry, name)
    if isinstance(found, str):
        return f"Use case {name}", [(found, [])]
    use_case = found
    rows: Rows = [(use_case.description, [])]
    generator = registry.generators.get(use_case.generator)
    rows.append((f"Generator: {use_case.generator}" + (f": {generator.description}" if generator else
                                                        " (not registered)"), []))
    params: list[tuple[str, str]] = [(param_line(p, use_case.default_params.get(p.name)), p.doc)
                                     for p in use_case.params or ()]
    if generator is not None:
        params += [(param_line(p), f"(generator) {p.doc}") for p in generator.params or ()]
    if params:
        rows.append(("Parameters (--set KEY=VALUE):", params))
    try:
        doc = use_case.default_benchmark()
    except UserError as exc:
        rows.append((f"Its default benchmark cannot be built: {exc}", []))
        return f"Use case {use_case.name}", rows
    body = doc.get("spec", doc) if isinstance(doc.get("spec"), dict) else doc
    rows.append(("Load types (--load-type NAME):", _types(body, "loadTypes")))
    rows.append(("Resource types (--resource-type NAME):", _types(body, "resourceTypes")))
    slos = []
    for slo in body.get("slos") or []:
        slo_type = registry.slos.get(str(slo.get("sloType")))
        what = slo_type.description if slo_type is not None else "(SLO type not installed)"
        slos.append((f"{slo.get('name')} ({slo.get('sloType')})", f"{what}; properties {slo.get('properties') or {}}"))
    rows.append(("SLOs of its default benchmark:", slos))
    if use_case.dimensions:
        rows.append((f"Workload dimensions: {', '.join(use_case.dimensions)}", []))
    return f"Use case {use_case.name} (--plugin {name})", rows


def provided_lines(registry: Registry, info: PluginInfo) -> list[str]:
    """One line per object the plugin registered: its kind, name and description, and
    for a use case its load types."""
    lines = []
    for kind, names in info.provides.items():
        for item_name in names:
            item = registry.table(kind).get(item_name)
            description = getattr(item, "description", "")
            lines.append(f"{METHODS[kind].replace('_', ' ')} {item_name}: {description}")
            if isinstance(item, UseCase):
                try:
                    doc = item.default_benchmark()
                except UserError as exc:
                    lines.append(f"  load types: cannot tell ({exc})")
                    continue
                body = doc.get("spec", doc) if isinstance(doc.get("spec"), dict) else doc
                loads = ", ".join(str(t.get("typeName")) for t in body.get("loadTypes") or [])
                resources = ", ".join(str(t.get("typeName")) for t in body.get("resourceTypes") or [])
                lines.append(f"  load types: {loads or '(none)'}; resource types: {resources or '(none)'}")
    return lines
