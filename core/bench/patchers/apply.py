"""Applying patchers to deployment objects.

A patcher's ``resource`` selects objects by ``metadata.name`` or by the file they came
from (annotation ``bench/source``, set when manifests are read from files), like the
reference's per-file patchers. The patcher itself only ever sees the selected objects.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

from bench.api import Manifest
from bench.plugins import Registry

SOURCE_ANNOTATION = "bench/source"


def select_indices(objects: list[Manifest], resource: str) -> list[int]:
    if not resource:
        return list(range(len(objects)))
    hits = []
    for i, obj in enumerate(objects):
        meta = obj.get("metadata") or {}
        source = (meta.get("annotations") or {}).get(SOURCE_ANNOTATION, "")
        if resource in (meta.get("name"), source):
            hits.append(i)
    return hits


def apply_patcher(
    registry: Registry,
    objects: list[Manifest],
    patcher_type: str,
    resource: str,
    properties: dict[str, Any],
    value: Any,
) -> list[Manifest]:
    """Return new objects with one patcher applied to the selected ones."""
    indices = select_indices(objects, resource)
    if not indices:
        raise ValueError(f"patcher {patcher_type}: resource {resource!r} selects no object")
    selected = [copy.deepcopy(objects[i]) for i in indices]
    patched = registry.patchers[patcher_type].patch(selected, value, properties)
    if len(patched) != len(selected):
        raise ValueError(f"patcher {patcher_type} returned {len(patched)} objects for {len(selected)}")
    result = list(objects)
    for i, obj in zip(indices, patched, strict=True):
        result[i] = obj
    return result


def apply_all(
    registry: Registry,
    objects: list[Manifest],
    patchers: Iterable[tuple[str, str, dict[str, Any], Any]],
) -> list[Manifest]:
    for patcher_type, resource, properties, value in patchers:
        objects = apply_patcher(registry, objects, patcher_type, resource, properties, value)
    return objects


def find_kind(objects: Sequence[Manifest], kind: str) -> Manifest | None:
    return next((obj for obj in objects if obj.get("kind") == kind), None)


def load_rate(objects: list[Manifest], load: float) -> float:
    """Records/s the generators are asked for: sensors x (1000 / periodMs)."""
    gen = find_kind(objects, "BenchGenerator")
    if gen is None:
        return load
    spec = gen.get("spec") or {}
    sensors = float(spec.get("sensors", load))
    period = float(spec.get("periodMs", 1000.0))
    return sensors * 1000.0 / period if period > 0 else sensors
