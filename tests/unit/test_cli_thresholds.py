"""The command line's threshold options set one SLO property each, with its meaning.

Why: ``--threshold-rel-to-load`` meant a fraction of the records/s while the property
``thresholdRelToLoad`` means a factor of the load value (the reference's meaning);
``--threshold-rel-to-rate`` is the records/s form. Each replaces every threshold form
the benchmark's trend SLO had, so the SLO is never left with two.
"""

from __future__ import annotations

from typing import Any

import pytest
from bench.cli.launch import resolve_run
from bench.config.model import effective_slos
from bench.errors import UserError
from bench.plugins import load_plugins
from bench.results.tables import slo_override_notes


def trend_properties(**opts: Any) -> dict[str, Any]:
    prepared = resolve_run(load_plugins(), {"plugin": "uc4", "loads": "2,3", "resources": "1", **opts})
    (slo,) = effective_slos(prepared.benchmark, prepared.execution)
    return dict(slo.properties)


@pytest.mark.parametrize(("opts", "expected"), [
    ({}, {"thresholdRelToRate": 0.05}),  # UC4's default execution (bench_uc4.benchmark)
    ({"threshold_rel_to_rate": 0.01}, {"thresholdRelToRate": 0.01}),  # the benchmark's own
    ({"threshold_rel_to_load": 50.0}, {"thresholdRelToLoad": 50.0}),  # 50 x nesting levels: no cap at 1
    ({"threshold": 300.0}, {"threshold": 300.0}),
])
def test_each_option_sets_its_own_property(opts: dict[str, Any], expected: dict[str, Any]) -> None:
    assert trend_properties(**opts) == expected


@pytest.mark.parametrize(("opts", "message"), [
    ({"threshold_rel_to_rate": 2.0}, "--threshold-rel-to-rate 2: must be at most 1"),
    ({"threshold_rel_to_rate": 0.0}, "--threshold-rel-to-rate 0: must be a positive"),
    ({"threshold_rel_to_load": -1.0}, "--threshold-rel-to-load -1: must be a positive"),
    ({"threshold_rel_to_rate": 0.1, "threshold_rel_to_load": 0.1}, "exclude each other"),
])
def test_bad_threshold_options_are_refused(opts: dict[str, Any], message: str) -> None:
    with pytest.raises(UserError, match=message):
        trend_properties(**opts)


def test_an_empty_threshold_string_is_not_given_to_the_bounds() -> None:
    """The reference reads ``threshold: ""`` as not given and takes the next form."""
    from bench.config.bounds import BoundError, check_thresholds

    registry = load_plugins()
    check_thresholds(registry, "lag trend", {"threshold": "", "thresholdRelToLoad": 20}, "slo")
    with pytest.raises(BoundError, match="thresholdRelToLoad -1: must be more than 0"):
        check_thresholds(registry, "lag trend", {"threshold": " ", "thresholdRelToLoad": -1}, "slo")


@pytest.mark.parametrize(("opts", "judged"), [({}, "0.05"), ({"threshold": 300.0}, "threshold=300.0")])
def test_a_threshold_other_than_the_benchmarks_is_named_and_the_benchmark_keeps_its_own(
        opts: dict[str, Any], judged: str) -> None:
    """UC4's default execution judges at 5 % of the rate, the command line at what it
    says; the table's note names that and the benchmark's own 1 %, which stays as stated
    (the result files keep the benchmark as written)."""
    prepared = resolve_run(load_plugins(), {"plugin": "uc4", "loads": "2,3", "resources": "1", **opts})
    (own,) = prepared.benchmark.slos
    assert own.properties == {"thresholdRelToRate": 0.01}
    (note,) = slo_override_notes(prepared.benchmark.slos, effective_slos(prepared.benchmark, prepared.execution))
    assert judged in note and "the benchmark states thresholdRelToRate=0.01" in note, note


def test_no_note_when_the_execution_judges_as_the_benchmark_states() -> None:
    prepared = resolve_run(load_plugins(), {"plugin": "uc2", "loads": "2000", "resources": "1"})
    assert slo_override_notes(prepared.benchmark.slos, effective_slos(prepared.benchmark, prepared.execution)) == []
