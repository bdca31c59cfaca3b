"""UC3's panes method drops late records where Spark's counter cannot see them, so a run
that judges dropped records with it is refused in one line before it starts."""

from __future__ import annotations

import pytest
from bench.launch import resolve_run
from bench.model import ConfigError
from bench.plugins import load_plugins
from bench_uc3.panes import check_slis


def test_check_slis_refuses_dropped_records_with_panes_only() -> None:
    with pytest.raises(ValueError, match="SLO 'dropped' reads dropped-records"):
        check_slis({"windowMethod": "panes"}, {"lag": "lag", "dropped": "dropped-records"})
    check_slis({"windowMethod": "sliding"}, {"dropped": "dropped-records"})
    check_slis({"windowMethod": "panes"}, {"lag": "lag"})


def test_a_panes_run_with_the_default_dropped_records_slo_is_refused() -> None:
    registry = load_plugins()
    if "uc3" not in registry.use_cases:
        pytest.skip("use case uc3 not installed")
    resolve_run(registry, {"plugin": "uc3"})  # sliding by default: accepted
    with pytest.raises(ConfigError) as info:
        resolve_run(registry, {"plugin": "uc3", "sets": ["windowMethod=panes"]})
    line = str(info.value)
    assert "\n" not in line
    assert line.startswith("use case uc3: SLO ") and "windowMethod=panes" in line
