"""CPU and memory limits and requests of a container."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.api import Manifest
from bench.patchers.common import PatcherError, containers, each, require, scaled, text

_RESOURCES = ("cpu", "memory")


def quantity(value: Any, fmt: str | None, factor: Any | None) -> str:
    """The reference's rule: with a format or factor a numeric value becomes
    ``value * factor`` followed by the format (e.g. 2, factor 500, "m" -> "1000m");
    a value that is already a quantity ("2Gi") is used as it is."""
    if fmt is None and factor is None:
        return text(value)
    try:
        float(value)
    except (TypeError, ValueError):
        return text(value)
    return f"{text(scaled(value, factor))}{fmt or ''}"


def _set(obj: Manifest, container: str | None, section: str, resource: str, amount: str) -> None:
    if obj.get("kind") == "SparkApplication":
        _set_spark(obj, container, section, resource, amount)
        return
    if obj.get("kind") in ("BenchSut", "BenchGenerator"):
        spec = obj.setdefault("spec", {})
        spec.setdefault("resources", {}).setdefault(section, {})[resource] = amount
        return
    for target in containers(obj, container):
        resources = target.setdefault("resources", {})
        resources.setdefault(section, {})[resource] = amount


def _set_spark(obj: Manifest, role: str | None, section: str, resource: str, amount: str) -> None:
    """The Spark operator names these fields per role: cores/coreRequest/coreLimit/memory."""
    for target in containers(obj, role):
        if resource == "memory":
            target["memory"] = amount
        elif section == "limits":
            target["coreLimit"] = amount
        else:
            try:
                cores = float(amount)
            except ValueError:
                target["coreRequest"] = amount
            else:
                if cores == int(cores) and cores >= 1:
                    target["cores"] = int(cores)
                else:
                    target["coreRequest"] = amount


def _make(section: str, resource_keys: tuple[str, ...]) -> Any:
    def patch(objects: list[Manifest], value: Any, properties: Mapping[str, Any]) -> list[Manifest]:
        container = properties.get("container")
        resource = str(require(properties, *resource_keys)).lower()
        if resource not in _RESOURCES:
            raise PatcherError(f"{resource_keys[0]} must be one of {', '.join(_RESOURCES)}, got {resource!r}")
        amount = quantity(value, properties.get("format"), properties.get("factor"))
        return each(objects, lambda obj: _set(obj, container, section, resource, amount))

    return patch


resource_limit_patcher = _make("limits", ("limitedResource", "resource", "variableName"))
resource_request_patcher = _make("requests", ("requestedResource", "resource", "variableName"))
