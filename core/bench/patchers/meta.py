"""Names, labels, selectors, image, node selector and scheduler of workloads."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.api import Manifest
from bench.patchers.common import containers, each, pod_spec, require, spec_of, text


def _labels_at(obj: Manifest, *path: str) -> dict[str, Any]:
    node: dict[str, Any] = obj
    for key in path:
        child = node.get(key)
        if not isinstance(child, dict):
            child = node[key] = {}
        node = child
    return node


def _label_patcher(*path: str) -> Any:
    def patch(objects: list[Manifest], value: Any, properties: Mapping[str, Any]) -> list[Manifest]:
        label = str(require(properties, "labelName", "variableName", "label"))
        rendered = text(value)

        def apply(obj: Manifest) -> None:
            _labels_at(obj, *path)[label] = rendered

        return each(objects, apply)

    return patch


label_patcher = _label_patcher("metadata", "labels")
match_label_patcher = _label_patcher("spec", "selector", "matchLabels")
template_label_patcher = _label_patcher("spec", "template", "metadata", "labels")
service_selector_patcher = _label_patcher("spec", "selector")


def name_patcher(objects: list[Manifest], value: Any, properties: Mapping[str, Any]) -> list[Manifest]:
    rendered = text(value)
    return each(objects, lambda obj: _labels_at(obj, "metadata").__setitem__("name", rendered))


def image_patcher(objects: list[Manifest], value: Any, properties: Mapping[str, Any]) -> list[Manifest]:
    """The image of the named container (all when unnamed); a SparkApplication or a
    BenchSut carries one image in ``spec.image``."""
    container = properties.get("container")
    image = text(value)
    pull = properties.get("pullPolicy")

    def apply(obj: Manifest) -> None:
        if obj.get("kind") in ("SparkApplication", "BenchSut", "BenchGenerator"):
            spec_of(obj)["image"] = image
            if pull and obj.get("kind") == "SparkApplication":
                spec_of(obj)["imagePullPolicy"] = str(pull)
            return
        for target in containers(obj, container, init=False):
            target["image"] = image
            if pull:
                target["imagePullPolicy"] = str(pull)

    return each(objects, apply)


def _pod_field(obj: Manifest) -> dict[str, Any] | None:
    if obj.get("kind") == "SparkApplication":
        return None
    return pod_spec(obj)


def node_selector_patcher(
    objects: list[Manifest], value: Any, properties: Mapping[str, Any]
) -> list[Manifest]:
    label = str(require(properties, "nodeLabelName", "variableName"))
    rendered = text(value)

    def apply(obj: Manifest) -> None:
        if obj.get("kind") == "SparkApplication":
            spec = spec_of(obj)
            for role in ("driver", "executor"):
                spec.setdefault(role, {}).setdefault("nodeSelector", {})[label] = rendered
            return
        inner = _pod_field(obj)
        if inner is not None:
            selector = inner.get("nodeSelector")
            if not isinstance(selector, dict):
                selector = inner["nodeSelector"] = {}
            selector[label] = rendered

    return each(objects, apply)


def scheduler_name_patcher(
    objects: list[Manifest], value: Any, properties: Mapping[str, Any]
) -> list[Manifest]:
    rendered = text(value)

    def apply(obj: Manifest) -> None:
        if obj.get("kind") == "SparkApplication":
            spec_of(obj)["batchScheduler"] = rendered
            return
        inner = _pod_field(obj)
        if inner is not None:
            inner["schedulerName"] = rendered

    return each(objects, apply)


def volumes_config_map_patcher(
    objects: list[Manifest], value: Any, properties: Mapping[str, Any]
) -> list[Manifest]:
    """The ConfigMap a pod's volume mounts: every volume whose ``configMap.name`` is
    ``volumeName`` mounts the ConfigMap named by the value instead."""
    volume = str(require(properties, "volumeName"))
    rendered = text(value)

    def apply(obj: Manifest) -> None:
        inner = _pod_field(obj)
        for vol in (inner or {}).get("volumes") or []:
            config_map = vol.get("configMap") if isinstance(vol, dict) else None
            if isinstance(config_map, dict) and config_map.get("name") == volume:
                config_map["name"] = rendered

    return each(objects, apply)
