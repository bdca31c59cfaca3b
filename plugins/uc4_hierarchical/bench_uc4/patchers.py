"""Patchers that keep the generator's sensor count in step with the UC4 tree shape.

The engine derives the generated records/s (for thresholds relative to the load) and
the instance count from ``spec.sensors``; for UC4 that is children^levels, which no
reference patcher computes. This patcher runs after the ParamPatcher that sets the
load dimension and derives the rest from the generator's params.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Any

from bench.api import Manifest, PatcherType

from bench_uc4 import registry
from bench_uc4.generator import tree_shape

NAME = "Uc4SensorsPatcher"


def sensors_patcher(objects: list[Manifest], value: Any, properties: Mapping[str, Any]) -> list[Manifest]:
    result = []
    for obj in objects:
        clone = copy.deepcopy(obj)
        spec = clone.setdefault("spec", {})
        params = spec.setdefault("params", {})
        levels, children = tree_shape(None, params)
        registry.check_leaves(levels, children)
        sensors = children**levels
        if not params.get("registry"):  # refused before anything starts, not by every repetition's producer
            registry.check_full_tree(levels, children, f"the registry of {levels} levels of {children} children")
        spec["sensors"] = sensors
        per_instance = properties.get("maxPerInstance", spec.get("maxPerInstance"))
        if per_instance is not None:
            if float(per_instance) <= 0:
                raise ValueError(f"maxPerInstance must be positive, got {per_instance}")
            spec["replicas"] = max(1, math.ceil(sensors / float(per_instance)))
        result.append(clone)
    return result


PATCHER = PatcherType(
    name=NAME,
    description="BenchGenerator: spec.sensors = childrenPerGroup^nestedGroups (from spec.params), "
    "spec.replicas = ceil(sensors / maxPerInstance)",
    patch=sensors_patcher,
)
