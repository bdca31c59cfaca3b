"""UC2's registration and the shape of its default benchmark, which UC2 and UC3 share
(bench.api.windowed_slos, param_load_type, message_period_load_type; that shape is
tested once for both in tests/unit/test_windowed_shape.py)."""

from __future__ import annotations

from typing import Any


def test_plugins_are_found_through_their_entry_points(registry: Any) -> None:
    found = {p.name: p for p in registry.plugins}
    assert found["uc2"].distribution == "bench-uc2" and found["uc2"].error is None
    assert registry.use_cases["uc2"].topology is not None
