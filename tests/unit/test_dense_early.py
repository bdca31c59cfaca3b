"""Denser samples for the early decision (``execution.earlySampleInterval``): they end
a repetition sooner, are never recorded, and never decide against the recorded samples."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bench.api import Series
from bench.cli.launch import resolve_run
from bench.config.base import ExecutionParams, SloDef
from bench.config.model import parse_benchmark, parse_execution
from bench.execution.config import RunConfig
from bench.execution.run import Engine
from bench.plugins import load_plugins
from bench.results.store import read_series
from bench.slo import early_stop
from bench.slo.evaluator import SloEvaluator

from .fakes import FAKE_USE_CASE, FakePlatform, fake_benchmark
from .test_early_stop import REGISTRY, Spec, execution, lag_slo, series
from .test_engine import SimClock


@pytest.fixture(scope="module")
def registry():  # type: ignore[no-untyped-def]
    reg = load_plugins()
    reg.use_cases["fake"] = FAKE_USE_CASE
    return reg


def _config(tmp_path: Path, dense: float | None) -> RunConfig:
    execution = parse_execution({
        "benchmark": "fake",
        "load": {"loadType": "NumSensors", "loadValues": [1500]},
        "resources": {"resourceType": "Instances", "resourceValues": [1, 2]},
        "execution": {"duration": 300, "warmup": 60, "repetitions": 3, "afterTeardownDelay": 0,
                      "sampleInterval": 5, "earlySampleInterval": dense},
    })
    return RunConfig(use_case=FAKE_USE_CASE, benchmark=parse_benchmark(fake_benchmark()), execution=execution,
                     results_dir=tmp_path)


async def _run(registry: Any, tmp_path: Path, dense: float | None) -> tuple[Any, float, int]:
    clock, platform = SimClock(), FakePlatform()
    platform.now = clock
    outcome = await Engine(registry, _config(tmp_path, dense), platform, clock=clock, sleep=clock.sleep).run()
    return outcome, clock.now, platform.sample_calls


async def test_dense_samples_decide_sooner_with_the_same_table_and_the_same_recorded_grid(
    registry: Any, tmp_path: Path
) -> None:
    plain, plain_s, _ = await _run(registry, tmp_path / "plain", None)
    dense, dense_s, calls = await _run(registry, tmp_path / "dense", 1.0)
    assert dense.table == plain.table == {1500.0: 2.0}
    assert dense_s < 0.8 * plain_s
    recorded = read_series(tmp_path / "dense" / f"exp{dense.exp_id}_1500_2_sli_lag-trend_0.csv")
    assert set(np.diff(recorded.timestamps)) == {5.0}  # only the grid's samples are stored
    assert calls > 2 * len(recorded.values)  # ... though the platform was asked far more often


def test_a_dense_decision_the_recorded_samples_contradict_does_not_stand() -> None:
    """Dense samples flat, the few recorded ones rising steeply: the recorded verdict
    (what this repetition would be judged on) fails, so "pass" must not end it."""
    flat = series(0.0, seconds=60, step=1.0)
    rising = series(2000.0, seconds=60, step=20.0)
    [d] = early_stop.decide([lag_slo()], REGISTRY, {"lag": rising}, execution(), Spec(), 0.0, {"lag": flat})
    assert d.passed is None
    [agreed] = early_stop.decide([lag_slo()], REGISTRY, {"lag": series(0.0, seconds=60, step=20.0)},
                                 execution(), Spec(), 0.0, {"lag": flat})
    assert agreed.passed is True and "dense" in agreed.reason


def test_trend_and_dropped_records_slos_ask_for_dense_samples_latency_does_not() -> None:
    params = ExecutionParams(duration=300, warmup=60, sampleInterval=5)
    latency = SloDef(name="latency", sloType="latency", properties={"percentile": 99, "threshold": 1000})
    assert SloEvaluator(REGISTRY, [lag_slo()], params).wants_dense()
    assert SloEvaluator(REGISTRY, [_dropped_slo()], params).wants_dense()
    assert not SloEvaluator(REGISTRY, [latency], params).wants_dense()


def _dropped_slo() -> SloDef:
    return SloDef(name="dropped-records", sloType="dropped-records", properties={})


def _counter(values: list[float], step: float) -> Series:
    return Series([1_700_000_000.0 + i * step for i in range(len(values))], values)


def test_dense_samples_pass_the_dropped_records_slo_sooner() -> None:
    """UC3's third repetition waits for the dropped-records SLO only (its lag trend is
    settled by the first two), and on 5-s samples its "pass" needs 10 of them after the
    warm-up: 50 s. On 1-s samples 20 s of a flat counter bound its growth as well."""
    warmup = 10.0
    recorded = _counter([0.0] * 7, 5.0)  # 30 s: 5 samples after the warm-up, too few alone
    fine = _counter([0.0] * 31, 1.0)
    ex = ExecutionParams(duration=300, warmup=warmup, sampleInterval=5, earlyStop=True, repetitions=3)
    [plain] = early_stop.decide([_dropped_slo()], REGISTRY, {"dropped-records": recorded}, ex, Spec(), 0.0)
    assert plain.passed is None, plain.reason
    [d] = early_stop.decide([_dropped_slo()], REGISTRY, {"dropped-records": recorded}, ex, Spec(), 0.0,
                            {"dropped-records": fine})
    assert d.passed is True and "dense" in d.reason, d.reason


def test_a_dense_dropped_records_pass_the_recorded_samples_contradict_does_not_stand() -> None:
    """The recorded samples already hold more drops than the ratio allows so far (a
    reading the dense ones missed): judged now, the repetition fails, so no "pass"."""
    ex = ExecutionParams(duration=300, warmup=10.0, sampleInterval=5, earlyStop=True, repetitions=3)
    recorded = _counter([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 5_000.0], 5.0)
    fine = _counter([0.0] * 31, 1.0)
    [d] = early_stop.decide([_dropped_slo()], REGISTRY, {"dropped-records": recorded}, ex, Spec(), 0.0,
                            {"dropped-records": fine})
    assert d.passed is not True, d.reason


def test_the_setting_is_checked() -> None:
    with pytest.raises(ValueError, match="earlySampleInterval"):
        ExecutionParams(earlySampleInterval=-1)
    assert ExecutionParams().earlySampleInterval == 1


@pytest.mark.parametrize(("given", "expected"), [(None, 1.0), (2.5, 2.5), (0.0, 0.0)])
def test_the_command_line_sets_it_and_zero_turns_it_off(given: float | None, expected: float | None) -> None:
    prepared = resolve_run(REGISTRY, {"plugin": "uc1", "loads": "1000", "resources": "1",
                                      "early_sample_interval": given})
    assert prepared.execution.execution.earlySampleInterval == expected


def test_a_dense_decision_stands_only_where_the_reported_interval_agrees() -> None:
    """Dense samples sure of a "fail", the recorded ones agreeing on the slope's side but
    with an interval that holds the threshold: ended there, the repetition would be
    reported "fail" and flagged unstable in the same breath (UC4 at 1,024 records/s on
    one instance), so the dense decision must wait."""
    from bench.analysis.confidence import fit_repetition, judge

    threshold = 0.01 * 1000.0
    recorded = series(3 * threshold, seconds=60, step=5.0, noise=40 * threshold, seed=7)
    fine = series(3 * threshold, seconds=60, step=1.0, noise=threshold, seed=7)
    alone = REGISTRY.slos["lag-trend"].decide_early(fine, early_stop.SloContext(
        load=1000.0, resources=1.0, warmup=10.0, properties=lag_slo().properties, load_rate=1000.0))
    assert alone.passed is False  # the dense samples alone are sure
    t, v = np.array(recorded.timestamps), np.array(recorded.values)
    keep = t >= t[0] + 10.0
    reported = judge([fit_repetition(t[keep], v[keep])], threshold)
    assert reported.median >= threshold and reported.inside_noise  # the report would flag it
    [d] = early_stop.decide([lag_slo()], REGISTRY, {"lag": recorded}, execution(), Spec(), 0.0, {"lag": fine})
    assert d.passed is None, d.reason
