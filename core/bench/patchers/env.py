"""Environment variables of containers (and of the embedded platform's objects)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.api import Manifest
from bench.patchers.common import containers, each, require, scaled, text


def set_env(obj: Manifest, container: str | None, name: str, value: str) -> None:
    """Set (or add) ``name`` in every matching container's env list.

    BenchSut/BenchGenerator keep their environment as a mapping in ``spec.env``.
    """
    if obj.get("kind") in ("BenchSut", "BenchGenerator"):
        obj.setdefault("spec", {}).setdefault("env", {})[name] = value
        return
    for target in containers(obj, container):
        env = target.setdefault("env", [])
        if env is None:
            env = target["env"] = []
        found = False
        for var in env:
            if var.get("name") == name:
                var.pop("valueFrom", None)
                var["value"] = value
                found = True
        if not found:
            env.append({"name": name, "value": value})


def env_var_patcher(objects: list[Manifest], value: Any, properties: Mapping[str, Any]) -> list[Manifest]:
    container = properties.get("container")
    name = str(require(properties, "variableName"))
    rendered = (
        f"{properties.get('prefix', '') or ''}"
        f"{text(scaled(value, properties.get('factor')))}"
        f"{properties.get('suffix', '') or ''}"
    )
    return each(objects, lambda obj: set_env(obj, container, name, rendered))
