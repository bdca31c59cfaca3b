"""Every setting a user can give bench, generated from the code (never listed by hand):

- ``cli:<command> <option>``: the click options of ``bench`` and its subcommands;
- ``set:<use case>:<key>``: ``--set`` keys, the ParamSpecs of the use cases and their
  generators, and ``set:<Kind>.<field>`` the object fields ``--set OBJECT.FIELD`` takes;
- ``config:<Model>.<field>``: the keys of the Benchmark and Execution documents (their
  pydantic models, nested models included);
- ``slo:<type>:<property>``: the property keys each registered SLO type declares;
- ``patcher:<module>:<property>``: the properties a patcher module reads
  (``properties.get("X")`` / ``properties["X"]`` in core/bench/patchers);
- ``env:<NAME>``: the ``BENCH_*`` environment variables bench's code names.

Used by tests/unit/test_no_inert_setting.py, which holds each setting's proof.
"""

from __future__ import annotations

import ast
import re
import typing
from pathlib import Path

import click
from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[2]


def cli_settings() -> set[str]:
    from bench.analysis.commands import bench_add_commands
    from bench.cli.commands import cli

    bench_add_commands(cli)
    found: set[str] = set()

    from bench.cli.platform_options import platform_params
    from bench.plugins import load_plugins

    generated = platform_params(load_plugins())  # bench run's platform options, from their declarations

    def walk(command: click.Command, path: str) -> None:
        for param in [*command.params, *(generated if path == "bench run" else [])]:
            if isinstance(param, click.Option):
                found.add(f"cli:{path} {max(param.opts, key=len)}".replace("  ", " "))
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                walk(sub, f"{path} {name}".strip())

    walk(cli, "bench")
    return found


def set_settings() -> set[str]:
    from bench.config.params import OBJECT_FIELDS
    from bench.plugins import load_plugins

    registry = load_plugins()
    found = {f"set:{kind}.{name}" for kind, fields in OBJECT_FIELDS.items() for name in fields}
    for name, use_case in registry.use_cases.items():
        found |= {f"set:{name}:{spec.name}" for spec in use_case.params or ()}
    for name, generator in registry.generators.items():
        found |= {f"set:generator {name}:{spec.name}" for spec in generator.params or ()}
    return found


def _models(model: type[BaseModel], seen: set[type[BaseModel]]) -> set[type[BaseModel]]:
    if model in seen:
        return seen
    seen.add(model)
    for field in model.model_fields.values():
        for arg in [field.annotation, *typing.get_args(field.annotation)]:
            for inner in [arg, *typing.get_args(arg)]:
                if isinstance(inner, type) and issubclass(inner, BaseModel):
                    _models(inner, seen)
    return seen


def config_settings() -> set[str]:
    from bench.config.base import Benchmark, Execution

    models = _models(Benchmark, set()) | _models(Execution, set())
    return {f"config:{m.__name__}.{name}" for m in models for name in m.model_fields}


def slo_settings() -> set[str]:
    from bench.config.slo_properties import COMMON_PROPERTIES
    from bench.plugins import load_plugins

    found = {f"slo:*:{key}" for key in COMMON_PROPERTIES}
    for name, slo_type in load_plugins().slos.items():
        found |= {f"slo:{name}:{key}" for key in slo_type.properties or ()}
    return found


def patcher_settings() -> set[str]:
    found = set()
    for path in sorted((ROOT / "core" / "bench" / "patchers").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            key = None
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "properties"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                key = node.args[0].value
            elif (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
                  and node.value.id == "properties" and isinstance(node.slice, ast.Constant)):
                key = node.slice.value
            if isinstance(key, str):
                found.add(f"patcher:{path.stem}:{key}")
    return found


def env_settings() -> set[str]:
    found = set()
    for path in (ROOT / "core" / "bench").rglob("*.py"):
        found |= {f"env:{m}" for m in re.findall(r"\"(BENCH_[A-Z0-9_]*[A-Z0-9])\"", path.read_text(encoding="utf-8"))}
    text = (ROOT / "core" / "bench" / "platforms" / "kubernetes" / "options.py").read_text(encoding="utf-8")
    if "BENCH_K8S_{key.upper()}" in text:  # every Kubernetes option read by option(), also from the environment
        from bench.platforms.kubernetes.options import DEFAULTS

        keys = set(DEFAULTS)
        for path in [*(ROOT / "core" / "bench" / "platforms" / "kubernetes").glob("*.py"),
                     ROOT / "core" / "bench" / "builtin" / "platforms.py"]:
            keys |= set(re.findall(r"option\([^,()]+, \"([a-z_]+)\"\)", path.read_text(encoding="utf-8")))
        found |= {f"env:BENCH_K8S_{key.upper()}" for key in keys}
    return found


def inventory() -> set[str]:
    return cli_settings() | set_settings() | config_settings() | slo_settings() | patcher_settings() | env_settings()
