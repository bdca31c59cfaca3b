"""Helpers shared by the patchers: copying, value conversion, finding containers."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from bench.api import Manifest
from bench.numbers import finite_float


class PatcherError(ValueError):
    """A patcher cannot apply its value (missing property, bad value, wrong object)."""


#: kinds whose pod template sits at spec.template.spec
_TEMPLATE_KINDS = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "ReplicationController"}


def each(objects: list[Manifest], fn: Callable[[Manifest], None]) -> list[Manifest]:
    """Apply an in-place edit to deep copies, so the caller's objects stay untouched."""
    result = []
    for obj in objects:
        clone = copy.deepcopy(obj)
        fn(clone)
        result.append(clone)
    return result


def require(properties: Mapping[str, Any], *names: str) -> Any:
    """The first property present among ``names`` (aliases), or a clear error."""
    for name in names:
        if name in properties and properties[name] is not None:
            return properties[name]
    raise PatcherError(f"missing patcher property {names[0]!r}")


def to_number(value: Any) -> float:
    return finite_float(value, f"value {value!r}", PatcherError)


def to_int(value: Any) -> int:
    """Integral patcher values arrive as 3, 3.0 or "3"; anything fractional is an error."""
    number = to_number(value)
    if number != int(number):
        raise PatcherError(f"value {value!r} is not a whole number")
    return int(number)


def plain(value: Any) -> Any:
    """Whole floats become ints (load values are floats in the engine, 1000.0 -> 1000)."""
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        return int(value)
    return value


def text(value: Any) -> str:
    return str(plain(value))


def scaled(value: Any, factor: Any | None) -> Any:
    """``value * factor`` when both are numeric; otherwise the value unchanged."""
    if factor is None:
        return plain(value)
    try:
        return plain(float(value) * float(factor))
    except (TypeError, ValueError):
        return value


def decorate(value: Any, properties: Mapping[str, Any]) -> Any:
    """The reference's decoration of a patcher value: ``value x factor`` (a whole number),
    then ``prefix`` and ``suffix`` around it as text; the value unchanged without them."""
    factor = properties.get("factor")
    if factor is not None and str(factor) != "":
        value = to_int(to_number(value) * to_number(factor))
    prefix, suffix = properties.get("prefix"), properties.get("suffix")
    if prefix is None and suffix is None:
        return value
    return f"{prefix or ''}{text(value)}{suffix or ''}"


def convert(value: Any, type_name: str | None) -> Any:
    """Convert a value to a named type (int|integer, float|number, string, bool|boolean)."""
    if type_name is None:
        return plain(value)
    kind = str(type_name).lower()
    if kind in ("int", "integer"):
        return to_int(value)
    if kind in ("float", "number", "double"):
        return to_number(value)
    if kind in ("str", "string"):
        return text(value)
    if kind in ("bool", "boolean"):
        if isinstance(value, str):
            return value.strip().lower() in ("true", "1", "yes", "on")
        return bool(value)
    raise PatcherError(f"unknown type {type_name!r}: use int, float, string or bool")


def pod_spec(obj: Manifest) -> dict[str, Any] | None:
    """The pod spec inside a workload object, or None for objects without pods."""
    kind = obj.get("kind")
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return None
    if kind == "Pod":
        return spec
    if kind == "CronJob":
        template = spec.get("jobTemplate", {}).get("spec", {}).get("template", {})
    elif kind in _TEMPLATE_KINDS or "template" in spec:
        template = spec.get("template", {})
    else:
        return None
    inner = template.get("spec") if isinstance(template, dict) else None
    return inner if isinstance(inner, dict) else None


def containers(obj: Manifest, name: str | None, init: bool | None = None) -> Iterator[dict[str, Any]]:
    """Containers named ``name`` (all when None) of a workload; ``init`` True: only the
    init containers, False: only the others, None: both.

    A SparkApplication has no containers list; its roles ``driver`` and ``executor``
    act as containers, so env and resource patchers work on it too.
    """
    if obj.get("kind") == "SparkApplication":
        spec = obj.setdefault("spec", {})
        for role in ("driver", "executor"):
            if name is None or name == role:
                yield spec.setdefault(role, {})
        return
    inner = pod_spec(obj)
    if inner is None:
        return
    keys = {None: ("containers", "initContainers"), True: ("initContainers",), False: ("containers",)}[init]
    for key in keys:
        for container in inner.get(key, []) or []:
            if name is None or container.get("name") == name:
                yield container


def spec_of(obj: Manifest) -> dict[str, Any]:
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        raise PatcherError(f"object {obj.get('metadata', {}).get('name')!r} has a non-mapping spec")
    return spec
