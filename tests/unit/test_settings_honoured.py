"""Every SLO setting is honoured or refused before anything starts.

Why: a threshold option used to drop every SLO that does not take it (UC2's and
UC3's dropped records vanished from the verdicts), an Execution naming one SLO did
the same, a misspelt property (``treshold``) validated and judged by the default, and
an external checker's address on a type that never calls one was accepted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from bench.cli.launch import resolve_run
from bench.config.model import effective_slos
from bench.errors import UserError
from bench.plugins import load_plugins

REGISTRY = load_plugins()


def judged(**opts: Any) -> dict[str, dict[str, Any]]:
    prepared = resolve_run(REGISTRY, {"loads": "2000", "resources": "1", **opts})
    return {s.name: dict(s.properties) for s in effective_slos(prepared.benchmark, prepared.execution)}


@pytest.mark.parametrize("option", ["threshold", "threshold_rel_to_rate", "threshold_rel_to_load"])
@pytest.mark.parametrize("plugin", ["uc2", "uc3"])
def test_a_threshold_option_keeps_the_dropped_records(plugin: str, option: str) -> None:
    slos = judged(plugin=plugin, **{option: 0.02})
    assert set(slos) == {"lag-trend", "dropped-records"}
    assert slos["dropped-records"]["maxRatio"] > 0
    key = {"threshold": "threshold", "threshold_rel_to_rate": "thresholdRelToRate",
           "threshold_rel_to_load": "thresholdRelToLoad"}[option]
    assert slos["lag-trend"] == {key: 0.02}


def test_panes_is_still_refused_under_a_threshold_option() -> None:
    with pytest.raises(UserError, match="windowMethod=panes"):
        judged(plugin="uc3", threshold_rel_to_rate=0.02, sets=("windowMethod=panes",))


def test_an_execution_naming_one_slo_keeps_the_others(tmp_path: Path) -> None:
    path = tmp_path / "execution.yaml"
    path.write_text(yaml.safe_dump({"slos": [{"name": "lag-trend", "properties": {"thresholdRelToRate": 0.03}}]}))
    slos = judged(plugin="uc2", execution_file=path)
    assert set(slos) == {"lag-trend", "dropped-records"}
    assert slos["lag-trend"] == {"thresholdRelToRate": 0.03}


def _benchmark_with(tmp_path: Path, slos: list[dict[str, Any]], plugin: str = "uc1") -> Path:
    doc = REGISTRY.use_cases[plugin].default_benchmark()
    doc["slos"] = slos
    path = tmp_path / "benchmark.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_a_threshold_option_no_slo_takes_is_refused(tmp_path: Path) -> None:
    bench = _benchmark_with(tmp_path, [{"name": "ratio", "sloType": "lag trend ratio", "properties": {"ratio": 0.1}}])
    with pytest.raises(UserError, match=r"^--threshold: no SLO of this run takes a threshold option .*ratio"):
        judged(plugin="uc1", benchmark_file=bench, threshold=100.0)


def test_a_threshold_form_the_type_does_not_read_is_refused(tmp_path: Path) -> None:
    bench = _benchmark_with(tmp_path, [{"name": "lt", "sloType": "lag trend", "properties": {"threshold": 100}}])
    with pytest.raises(UserError, match=r"--threshold-rel-to-rate: SLO 'lt' of type 'lag trend' has no "
                                        r"thresholdRelToRate"):
        judged(plugin="uc1", benchmark_file=bench, threshold_rel_to_rate=0.01)
    assert judged(plugin="uc1", benchmark_file=bench, threshold_rel_to_load=3.0)["lt"] == {"thresholdRelToLoad": 3.0}


@pytest.mark.parametrize(("slo", "message"), [
    ({"name": "d", "sloType": "dropped-records", "properties": {"maxRatoi": 0.1}},
     "maxRatoi: not a property of SLO type 'dropped-records' (did you mean 'maxRatio'?)"),
    ({"name": "l", "sloType": "latency", "properties": {"treshold": 50}},
     "treshold: not a property of SLO type 'latency' (did you mean 'threshold'?)"),
    ({"name": "g", "sloType": "lag-trend", "properties": {"treshold": 50}},
     "treshold: not a property of SLO type 'lag-trend' (did you mean 'threshold'?)"),
    ({"name": "x", "sloType": "lag-trend", "properties": {"externalSloUrl": "http://checker:8080/"}},
     "externalSloUrl: SLO type 'lag-trend' never calls an external checker"),
    ({"name": "x", "sloType": "dropped-records", "properties": {"externalSloChecker": "http://c:8080/"}},
     "externalSloChecker: SLO type 'dropped-records' never calls an external checker"),
    ({"name": "x", "sloType": "latency", "properties": {"threshold": 5, "externalSloUrl": "http://c:8080/"}},
     "externalSloUrl: SLO type 'latency' never calls an external checker"),
])
def test_unknown_slo_properties_are_refused_with_the_nearest(tmp_path: Path, slo: dict[str, Any],
                                                             message: str) -> None:
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
        judged(plugin="uc1", benchmark_file=_benchmark_with(tmp_path, [slo]))


def test_warmup_seconds_is_the_slo_warmup() -> None:
    from bench.config.slo_properties import warmup_of

    assert warmup_of({"warmupSeconds": 12}, 30.0) == 12.0
    assert warmup_of({"warmup": 5, "warmupSeconds": 12}, 30.0) == 5.0
    assert warmup_of({}, 30.0) == 30.0


def test_analyze_counts_every_slo_the_run_judged() -> None:
    """An experiment whose dropped records fail is no PASS in ``bench analyze``
    (over an engine-written folder: tests/unit/test_analyze_agrees_with_run.py)."""
    from bench.analysis.analyze import ExperimentResult
    from bench.api import SloVerdict

    alone = ExperimentResult(1000.0, 1.0, 100.0, slos={"lag-trend": SloVerdict(True, {})})
    assert alone.passed and alone.verdict is True
    dropped = ExperimentResult(1000.0, 1.0, 100.0, slos={"lag-trend": SloVerdict(True, {}),
                                                         "dropped-records": SloVerdict(False, {})})
    assert not dropped.passed and dropped.verdict is False
