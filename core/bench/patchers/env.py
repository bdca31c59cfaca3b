"""Environment variables of containers (and of the embedded platform's objects)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.api import Manifest
from bench.patchers.common import containers, each, require, scaled, text, to_int

#: the reference load generator's variable for its sensor count, which bench's generator
#: reads as ``spec.sensors`` (so a reference load type drives bench's generator too)
SENSORS_VARIABLE = "NUM_SENSORS"


def set_env(obj: Manifest, container: str | None, name: str, value: str, init: bool | None = None) -> None:
    """Set (or add) ``name`` in every matching container's env list.

    BenchSut/BenchGenerator keep their environment as a mapping in ``spec.env``; a
    BenchGenerator's ``NUM_SENSORS`` is its sensor count.
    """
    if obj.get("kind") in ("BenchSut", "BenchGenerator"):
        spec = obj.setdefault("spec", {})
        spec.setdefault("env", {})[name] = value
        if obj.get("kind") == "BenchGenerator" and name == SENSORS_VARIABLE:
            spec["sensors"] = to_int(value)
        return
    for target in containers(obj, container, init):
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
    init = str(properties.get("isInitContainer", "")).strip().lower() == "true" or None
    return each(objects, lambda obj: set_env(obj, container, name, rendered, init))
