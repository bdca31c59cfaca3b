"""Every workload dimension the method lists per use case is a load type of its default
benchmark, with its direction, and its README documents it."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench.config.model import parse_benchmark
from bench.plugins import load_plugins

ROOT = Path(__file__).resolve().parents[2]

#: use case -> {load type: direction}; README folder
DIMENSIONS = {
    "uc1": ({"NumSensors": "increasing", "MessagePeriod": "decreasing"}, "uc1_storage"),
    "uc2": ({"NumSensors": "increasing", "MessagePeriod": "decreasing", "WindowSize": "increasing"},
            "uc2_downsampling"),
    "uc3": ({"NumSensors": "increasing", "MessagePeriod": "decreasing", "WindowSize": "increasing",
             "Advance": "decreasing", "NumOverlappingWindows": "increasing", "NumTimeAttributeValues": "increasing"},
            "uc3_time_attr"),
    "uc4": ({"NumNestedGroups": "increasing", "ChildrenPerGroup": "increasing", "MessagePeriod": "decreasing",
             "WindowSize": "increasing"}, "uc4_hierarchical"),
    "calibrated": ({"NumSensors": "increasing", "MessagePeriod": "decreasing"}, None),
}


@pytest.mark.parametrize("name", list(DIMENSIONS))
def test_each_dimension_is_a_load_type_with_its_direction_and_documented(name: str) -> None:
    expected, folder = DIMENSIONS[name]
    bench = parse_benchmark(load_plugins().use_cases[name].default_benchmark())
    found = {t.typeName: t.direction for t in bench.loadTypes}
    assert {k: found.get(k) for k in expected} == expected
    assert all(t.patchers for t in bench.loadTypes)
    if folder is not None:
        readme = (ROOT / "plugins" / folder / "README.md").read_text()
        assert "## Workload dimensions" in readme
        assert all(f"`{k}`" in readme for k in expected), [k for k in expected if f"`{k}`" not in readme]
