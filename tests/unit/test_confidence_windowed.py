"""The verdict confidence of a windowed use case's lag (UC3): over the lag's whole cycles.

The plain fit's error sees a saw-tooth of 10-s batches as correlated noise and flagged
a clear "pass" "margin inside the noise" that the early rule over whole periods had
decided; the means over whole cycles cancel the wave. With too few cycles the plain
fit's error stands, and ``bench analyze`` re-evaluates with the period the run stored.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from bench.analysis.analyze import analyze, run_settings, stored_period
from bench.analysis.confidence import MIN_CYCLES, annotate, fit_repetition, judge
from bench.analysis.runs import open_run
from bench.api import Series
from bench.results.store import ExperimentRecord, ResultStore

T0 = 1_800_000_000.0
THRESHOLD = 15.0  # 1 % of 1,500 records/s
PERIOD = 5.0  # the output period UC3 declares (its trigger); its batches took 8-15 s


def sawtooth(seconds: float, slope: float = -30.0, cycle: float = 11.0, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A lag rising at 1,500 records/s between commits 11 s apart, sampled every 2 s."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, seconds, 2.0)
    v = 25_000 + slope * t + 1_500 * (t % cycle) + rng.normal(0.0, 200.0, t.size)
    return t, v


def test_whole_cycles_make_a_clear_pass_stable_where_the_plain_fit_flags_it() -> None:
    t, v = sawtooth(120.0)
    plain = judge([fit_repetition(t, v)], THRESHOLD)
    cycles = judge([fit_repetition(t, v, PERIOD)], THRESHOLD)
    assert plain.median == cycles.median < THRESHOLD  # the verdict's own slope is untouched
    assert plain.inside_noise, plain
    assert not cycles.unstable, cycles
    assert cycles.high is not None and cycles.high < THRESHOLD


def test_too_few_cycles_keep_the_plain_fit() -> None:
    t, v = sawtooth(11.0 * (MIN_CYCLES - 1))
    assert fit_repetition(t, v, PERIOD) == fit_repetition(t, v)


def test_a_trend_near_the_threshold_stays_flagged_over_whole_cycles() -> None:
    t, v = sawtooth(120.0, slope=THRESHOLD - 5.0)
    assert judge([fit_repetition(t, v, PERIOD)], THRESHOLD).inside_noise


def _run(tmp_path: Path, period: float | None) -> dict[str, object]:
    store = ResultStore(tmp_path, 0)
    t, v = sawtooth(150.0, slope=-20.0)
    store.write_series(1500, 1, "lag-trend", 0, Series(list(T0 + t), list(v)))
    slope = float(np.polyfit(t[t >= 30.0], v[t >= 30.0], 1)[0])
    details = {"passed": slope < THRESHOLD, "slopes": [slope], "median": slope, "threshold": THRESHOLD,
               "warmup": 30.0, "intercepts": [0.0]}
    record = ExperimentRecord(load=1500, resources=1, passed=slope < THRESHOLD, slos={"lag-trend": details})
    annotate(record, store, ["lag-trend"], period)
    store.add_experiment(record)
    doc = json.loads((tmp_path / "exp0-result.json").read_text())
    return dict(doc["experiments"][0]["slos"]["lag-trend"])


def test_the_run_stores_the_period_and_analyze_judges_with_it(tmp_path: Path) -> None:
    stored = _run(tmp_path / "windowed", PERIOD)
    plain = _run(tmp_path / "plain", None)
    assert stored["period"] == PERIOD and "period" not in plain
    assert stored["confidence"]["unstable"] is False and plain["confidence"]["unstable"] is True  # type: ignore[index]
    assert stored_period({"slos": {"lag-trend": stored}}) == PERIOD
    run = open_run(tmp_path / "windowed", 0)
    again = analyze(run, run_settings(run, threshold=THRESHOLD, warmup=30.0)).experiments[(1500.0, 1.0)]
    assert again.confidence is not None
    assert again.confidence.high == stored["confidence"]["high"]  # type: ignore[index]
