"""Any field by path, and the embedded platform's SUT/generator parameters."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.api import Manifest
from bench.patchers.common import PatcherError, convert, decorate, each, require, spec_of


def parse_path(path: Any) -> list[str | int]:
    """``spec/template/spec/containers/0/image``, ``spec.replicas`` or a list of segments.

    Digit-only segments index lists. A path with a ``/`` is split on ``/`` only, so dotted
    keys such as annotation names survive there.
    """
    if isinstance(path, list | tuple):
        raw = [str(p) for p in path]
    else:
        text_path = str(path).strip().strip("/")
        raw = text_path.split("/") if "/" in text_path else text_path.split(".")
    segments: list[str | int] = []
    for part in raw:
        if part == "":
            raise PatcherError(f"path {path!r} has an empty segment")
        segments.append(int(part) if part.isdigit() else part)
    if not segments:
        raise PatcherError("path must not be empty")
    return segments


def set_path(obj: Any, path: list[str | int], value: Any, shown: str) -> None:
    """Walk the path; missing mapping keys are created, list indices must exist."""
    node = obj
    for depth, segment in enumerate(path):
        last = depth == len(path) - 1
        if isinstance(segment, int):
            if not isinstance(node, list) or segment >= len(node):
                raise PatcherError(f"path {shown!r}: no list element {segment} at segment {depth}")
            if last:
                node[segment] = value
            else:
                node = node[segment]
        else:
            if not isinstance(node, dict):
                raise PatcherError(f"path {shown!r}: segment {segment!r} is not inside a mapping")
            if last:
                node[segment] = value
            else:
                if node.get(segment) is None:
                    node[segment] = [] if isinstance(path[depth + 1], int) else {}
                node = node[segment]


def generic_resource_patcher(
    objects: list[Manifest], value: Any, properties: Mapping[str, Any]
) -> list[Manifest]:
    """The reference's decoration first (``factor``, then ``prefix``/``suffix`` as text),
    then the ``type`` conversion; without ``type`` a number stays a number."""
    shown = require(properties, "path")
    path = parse_path(shown)
    decorated = decorate(value, properties)
    converted = convert(decorated, properties.get("type"))
    return each(objects, lambda obj: set_path(obj, path, converted, str(shown)))


def param_patcher(objects: list[Manifest], value: Any, properties: Mapping[str, Any]) -> list[Manifest]:
    """``spec.params[key] = value``: how the embedded platform's SUT receives window sizes,
    trigger intervals and the like (``factor`` scales, ``properties.type`` converts;
    without a type a number stays a number)."""
    key = str(require(properties, "key", "variableName"))
    converted = convert(decorate(value, properties), properties.get("type"))

    def apply(obj: Manifest) -> None:
        params = spec_of(obj).get("params")
        if not isinstance(params, dict):
            params = spec_of(obj)["params"] = {}
        params[key] = converted

    return each(objects, apply)
