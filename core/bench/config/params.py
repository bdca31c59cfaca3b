"""Use-case parameters and ``--set OBJECT.FIELD=V`` paths, checked before a run.

Split from :mod:`bench.config.model` (which re-exports these names), where the Benchmark and
Execution documents live: these checks read the documents but are about what the
plugins declared and what the deployment objects hold.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from bench.api import Manifest, ParamSpec, UseCase
from bench.config.base import Benchmark, ConfigError, nearest
from bench.plugins import Registry

#: the fields of the embedded kinds that ``--set OBJECT.FIELD=V`` may set, with their
#: ranges; the platforms read them with ``int()``/``float()``, so a bad value would end
#: in a traceback of a child process.
OBJECT_FIELDS: dict[str, dict[str, ParamSpec]] = {
    "BenchSut": {"replicas": ParamSpec("replicas", int, min=1)},
    "BenchGenerator": {
        "replicas": ParamSpec("replicas", int, min=1),
        "sensors": ParamSpec("sensors", int, min=1),
        "periodMs": ParamSpec("periodMs", float, min=0.001),
        "maxPerInstance": ParamSpec("maxPerInstance", int, min=1),
    },
}


def declared_params(use_case: UseCase, registry: Registry) -> tuple[dict[str, ParamSpec], bool]:
    """The parameters of a use case and its generator (every ``--set`` key reaches both),
    and whether the list is complete: only then is an unknown key refused."""
    generator = registry.generators.get(use_case.generator)
    generator_params = generator.params if generator is not None else None
    specs = [*(use_case.params or ()), *(generator_params or ())]
    return {spec.name: spec for spec in specs}, use_case.params is not None and generator_params is not None


def _show(value: Any) -> str:
    return value if isinstance(value, str) and value.strip() == value and value else repr(value)


def validate_params(params: Mapping[str, Any], declared: Mapping[str, ParamSpec], complete: bool, where: str) -> None:
    """Each key is declared (when the declaration is complete) and its value fits.

    ``where`` starts the message (``--set``, ``benchmark.params``), so the user sees the
    key and value as given: ``--set capacity=-5: capacity must be at least 1``.
    """
    for key, value in params.items():
        check_param(key, value, declared, complete, f"{where} {key}={_show(value)}")


def check_param(key: str, value: Any, declared: Mapping[str, ParamSpec], complete: bool, prefix: str) -> None:
    """One parameter; ``prefix`` begins the message (how the user wrote it)."""
    spec = declared.get(key)
    if spec is None:
        if complete:
            raise ConfigError(f"{prefix}: unknown parameter {key!r}{nearest(key, declared)}")
        return
    try:
        spec.check(value)
    except ValueError as exc:
        raise ConfigError(f"{prefix}: {key} {exc}") from None


def validate_object_params(bench: Benchmark, declared: Mapping[str, ParamSpec], complete: bool) -> None:
    """``spec.params`` of the benchmark's BenchSut/BenchGenerator objects, as ``--set`` is."""
    for group in ("sut", "loadGenerator"):
        for i, obj in enumerate(getattr(bench, group).resources):
            if obj.get("kind") in OBJECT_FIELDS and isinstance((obj.get("spec") or {}).get("params"), dict):
                where = f"benchmark.{group}.resources[{i}].spec.params"
                validate_params(obj["spec"]["params"], declared, complete, where)


def validate_deployment_paths(
    objects: list[Manifest], params: Mapping[str, Any], declared: Mapping[str, ParamSpec], complete: bool
) -> None:
    """``--set OBJECT.FIELD=V``: the object exists and so does the field, with a value of
    the same kind (a number stays a number); ``OBJECT.params.KEY`` is checked as a
    parameter. ``objects`` are the patched objects *without* these settings (setting a
    path creates it, so afterwards every path would exist)."""
    from bench.patchers.apply import select_indices

    names = [str((o.get("metadata") or {}).get("name", "")) for o in objects]
    for key, value in params.items():
        if "." not in key:
            continue
        obj_name, _, path = key.partition(".")
        where = f"--set {key}={_show(value)}"
        indices = select_indices(objects, obj_name) if obj_name else []
        if not indices:
            raise ConfigError(f"{where}: no deployment object {obj_name!r}{nearest(obj_name, names)}")
        parts = path.split(".")
        if not all(parts):
            raise ConfigError(f"{where}: empty field name in {path!r}")
        for i in indices:
            obj = objects[i]
            if parts[0] == "params" and len(parts) == 2 and obj.get("kind") in OBJECT_FIELDS:
                check_param(parts[1], value, declared, complete, where)
                continue
            _check_field(where, obj, parts, value)


def _check_field(where: str, obj: Manifest, parts: list[str], value: Any) -> None:
    target: Any = obj.get("spec") or {}
    for depth, part in enumerate(parts):
        if not isinstance(target, dict) or part not in target:
            known = list(target) if isinstance(target, dict) else []
            field = ".".join(["spec", *parts[: depth + 1]])
            raise ConfigError(f"{where}: {names_of(obj)} has no field {field}{nearest(part, known)}")
        target = target[part]
    spec = OBJECT_FIELDS.get(str(obj.get("kind")), {}).get(parts[0]) if len(parts) == 1 else None
    if spec is not None:
        try:
            spec.check(value)
        except ValueError as exc:
            raise ConfigError(f"{where}: {parts[0]} {exc}") from None
    elif not _same_kind(target, value):
        raise ConfigError(f"{where}: {names_of(obj)} field spec.{'.'.join(parts)} holds {_kind(target)}, "
                          f"not {_kind(value)}")


def names_of(obj: Manifest) -> str:
    return f"{obj.get('kind', '?')}/{(obj.get('metadata') or {}).get('name', '?')}"


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return "a string" if isinstance(value, str) else type(value).__name__


def _same_kind(old: Any, new: Any) -> bool:
    if old is None:
        return True
    if _kind(old) == "a number" and isinstance(new, str):
        try:
            return math.isfinite(float(new))
        except ValueError:
            return False
    if _kind(old) == "a string":
        return _kind(new) in ("a string", "a number")
    return _kind(old) == _kind(new)


def check_sets_kept(objects: list[Manifest], params: Mapping[str, Any], where: str) -> None:
    """``--set OBJECT.FIELD=V`` is applied before the load and resource patchers: one that
    writes the same field (the generator's instance count from the load, the SUT's
    from the resources) would replace the value each experiment without a word. Refused,
    naming what sets it instead (``objects``: one experiment's deployment, patched)."""
    from bench.patchers.apply import select_indices

    for key, value in params.items():
        obj_name, _, path = key.partition(".")
        if not path or path.startswith("params."):
            continue
        for i in select_indices(objects, obj_name):
            target: Any = objects[i].get("spec") or {}
            for part in path.split("."):
                target = target.get(part) if isinstance(target, dict) else None
            if target != value:
                raise ConfigError(f"--set {key}={_show(value)}: {where} a load or resource patcher sets "
                                  f"{path} to {_show(target)} in each experiment; set what it reads instead "
                                  "(--resources for the SUT's instances, --set generator.maxPerInstance=N "
                                  "for the generator's)")

