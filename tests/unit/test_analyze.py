"""`bench analyze` against an independent re-implementation of the reference's analysis.

The reference (Theodolite's offline demand analysis) reads every file whose name
holds ``lag-trend``, splits the name on ``_`` (load, resources at positions 1 and 2),
keeps the rows whose time since the file's first row is >= the warm-up, fits a linear
regression of column 2 on column 1, takes the median slope per (load, resources), and
keeps per load the least resources whose median is < the threshold. ``reference_demand``
below does exactly that with the standard library's regression, sharing no code with
bench.
"""

from __future__ import annotations

import csv
import json
import random
import statistics
from pathlib import Path

import click
import numpy as np
import pytest
from bench.analysis.analyze import analyze, run_settings
from bench.analysis.commands import bench_add_commands
from bench.analysis.runs import open_run
from bench.cli.commands import cli as bench_cli
from click.testing import CliRunner

CAPACITY_PER_INSTANCE = 1000.0  # records/s one simulated instance keeps up with


def reference_demand(directory: Path, exp_id: int, threshold: float, warmup: float) -> dict[int, int]:
    """The reference's algorithm, written from its description (not from bench)."""
    slopes: dict[tuple[int, int], list[float]] = {}
    for path in sorted(directory.iterdir()):
        name = path.name
        if not (name.startswith(f"exp{exp_id}_") and "lag-trend" in name and name.endswith(".csv")):
            continue
        parts = name[:-4].split("_")
        load, resources = int(parts[1]), int(parts[2])
        with open(path, newline="") as fh:
            rows = list(csv.reader(fh))[1:]
        first = float(rows[0][1])
        kept = [(float(r[1]), float(r[2])) for r in rows if float(r[1]) - first >= warmup]
        fitted = statistics.linear_regression([t for t, _ in kept], [v for _, v in kept])
        slopes.setdefault((load, resources), []).append(fitted.slope)
    demand: dict[int, int] = {}
    for (load, resources), values in slopes.items():
        if statistics.median(values) < threshold and (load not in demand or resources < demand[load]):
            demand[load] = resources
    return demand


def write_lag(directory: Path, exp_id: int, load: int, resources: int, rep: int, rng: random.Random,
              seconds: int = 300, step: float = 5.0, noise: float = 3000.0) -> None:
    """A lag series like a micro-batch SUT's: a start-up backlog, a trend, a saw-tooth, noise.

    The backlog drains in the first 50 s, so a warm-up that is ignored changes the
    slopes; repetition 0 samples on exact 5 s steps, so one sample sits on the
    warm-up boundary, where the order of float operations decides.
    """
    growth = load - CAPACITY_PER_INSTANCE * resources + rng.uniform(-300, 300)
    t0 = 1_700_000_000 + rng.uniform(0, 1000)
    path = directory / f"exp{exp_id}_{load}_{resources}_sli_lag-trend_{rep}.csv"
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["labels", "timestamp", "value"])
        for i in range(int(seconds / step) + 1):
            t = t0 + i * step + (rng.uniform(-0.2, 0.2) if rep else 0.0)
            backlog = max(0.0, 60000.0 * (1.0 - (t - t0) / 50.0))
            lag = backlog + max(0.0, growth) * (t - t0) + (i % 3) * 2000 + rng.uniform(0, noise)
            writer.writerow(["consumergroup=bench", f"{t:.3f}", repr(lag)])


def make_run(directory: Path, exp_id: int, loads: list[int], resources: list[int], reps: int = 3,
             seed: int = 1) -> None:
    rng = random.Random(seed)
    for load in loads:
        for res in resources:
            for rep in range(reps):
                write_lag(directory, exp_id, load, res, rep, rng)


@pytest.mark.parametrize(("threshold", "warmup", "reps"), [
    (2000.0, 60.0, 3), (500.0, 60.0, 3), (100.0, 120.0, 3), (2000.0, 0.0, 2), (1000.0, 30.0, 4),
])
def test_demand_agrees_with_the_reference_algorithm(tmp_path: Path, threshold: float, warmup: float,
                                                    reps: int) -> None:
    loads, resources = [1000, 2000, 3000, 4000], [1, 2, 3, 4]
    make_run(tmp_path, 1, loads, resources, reps=reps)
    make_run(tmp_path, 10, [1000], [1], reps=1, seed=2)  # exp10 must not leak into exp1
    run = open_run(tmp_path, 1)
    result = analyze(run, run_settings(run, threshold=threshold, warmup=warmup))
    expected = reference_demand(tmp_path, 1, threshold, warmup)
    ours = {int(k): int(v) for k, v in result.table.items() if v is not None}
    assert ours == expected
    assert set(result.table) == {float(x) for x in loads}  # loads without a pass stay, as None
    assert all(result.table[float(k)] is None for k in loads if k not in expected)


def test_slopes_match_the_reference_regression(tmp_path: Path) -> None:
    make_run(tmp_path, 0, [3000], [1, 2], reps=3)
    run = open_run(tmp_path)
    result = analyze(run, run_settings(run, threshold=2000, warmup=60))
    for (load, res), exp in result.experiments.items():
        for rep, ours in enumerate(exp.slopes):
            path = tmp_path / f"exp0_{int(load)}_{int(res)}_sli_lag-trend_{rep}.csv"
            rows = list(csv.reader(open(path)))[1:]
            t = np.array([float(r[1]) for r in rows])
            v = np.array([float(r[2]) for r in rows])
            keep = t - t[0] >= 60
            # numpy's own fit on centred time (epoch seconds squared would lose digits)
            t_kept = t[keep] - t[keep].mean()
            assert ours == pytest.approx(np.polyfit(t_kept, v[keep], 1)[0], rel=1e-9)


def test_threshold_rel_to_rate_uses_the_generated_rate(tmp_path: Path) -> None:
    make_run(tmp_path, 0, [2000], [1, 2, 3], reps=3)
    run = open_run(tmp_path)
    # slope at 1 instance 700 ... 1300/s: 0.3 x 2000 = 600 fails it, 0.8 x 2000 = 1600 passes it
    assert analyze(run, run_settings(run, rel_to_rate=0.3, warmup=60)).table == {2000.0: 2.0}
    assert analyze(run, run_settings(run, rel_to_rate=0.8, warmup=60)).table == {2000.0: 1.0}


@pytest.mark.parametrize(("option", "value", "demand"), [
    ("--threshold-rel-to-rate", "0.3", "2"),   # 0.3 x 2000 records/s
    ("--threshold-rel-to-load", "0.8", "1"),   # 0.8 x the load value 2000
])
def test_cli_threshold_options_set_their_own_form(tmp_path: Path, option: str, value: str, demand: str) -> None:
    make_run(tmp_path, 0, [2000], [1, 2, 3], reps=3)
    out = CliRunner().invoke(cli_group(), ["analyze", str(tmp_path), option, value, "--warmup", "60"])
    assert out.exit_code == 0, out.output
    rows = list(csv.reader(open(tmp_path / "exp0-analysis-demand.csv")))
    assert rows[1] == ["2000", demand]
    settings = json.loads((tmp_path / "exp0-analysis.json").read_text())["settings"]
    key = "thresholdRelToRate" if option.endswith("rate") else "thresholdRelToLoad"
    assert settings[key] == float(value)


def test_capacity_table(tmp_path: Path) -> None:
    make_run(tmp_path, 0, [1000, 2000, 3000], [1, 2], reps=3)
    run = open_run(tmp_path)
    result = analyze(run, run_settings(run, threshold=500, warmup=60), metric="capacity")
    assert result.table == {1.0: 1000.0, 2.0: 2000.0}


def test_settings_default_to_the_runs_own(tmp_path: Path) -> None:
    make_run(tmp_path, 0, [2000], [1, 2, 3], reps=3)
    (tmp_path / "exp0-benchmark-configuration.json").write_text(json.dumps(
        {"slos": [{"name": "lag-trend", "sloType": "lag-trend", "properties": {"threshold": 3000}}]}))
    (tmp_path / "exp0-execution-configuration.json").write_text(json.dumps(
        {"execution": {"warmup": 90, "metric": "demand"}, "slos": []}))
    settings = run_settings(open_run(tmp_path))
    assert (settings.threshold, settings.warmup) == (3000.0, 90.0)


def cli_group() -> click.Group:
    """The real ``bench`` group (its error handling included) with these commands on it."""
    bench_add_commands(bench_cli)
    return bench_cli


def test_cli_prints_and_writes_the_table_with_empty_rows(tmp_path: Path) -> None:
    make_run(tmp_path, 0, [1000, 5000], [1, 2], reps=3)
    out = CliRunner().invoke(cli_group(), ["analyze", str(tmp_path), "--threshold", "500", "--warmup", "60"])
    assert out.exit_code == 0, out.output
    assert "none passed" in out.output
    assert "interval" in out.output
    rows = list(csv.reader(open(tmp_path / "exp0-analysis-demand.csv")))
    assert rows == [["load", "resources"], ["1000", "1"], ["5000", "null"]]
    doc = json.loads((tmp_path / "exp0-analysis.json").read_text())
    assert doc["settings"]["threshold"] == 500
    first = doc["experiments"][0]
    assert {"slopes", "confidence", "unstable", "passed"} <= set(first)
    assert first["confidence"]["low"] < first["confidence"]["median"] < first["confidence"]["high"]


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    out = CliRunner().invoke(cli_group(), ["analyze", str(tmp_path)])
    assert out.exit_code == 2
    assert "no result files" in out.output
    make_run(tmp_path, 0, [1000], [1], reps=1)
    out = CliRunner().invoke(cli_group(), ["analyze", str(tmp_path), "--threshold", "1",
                                           "--threshold-rel-to-load", "0.1"])
    assert out.exit_code == 2 and "only one of" in out.output
    out = CliRunner().invoke(cli_group(), ["analyze", str(tmp_path), "--exp", "7"])
    assert out.exit_code == 2 and "no files of exp7" in out.output


def test_too_few_samples_after_warmup_fail_the_experiment(tmp_path: Path) -> None:
    make_run(tmp_path, 0, [1000], [1, 2], reps=3)
    run = open_run(tmp_path)
    result = analyze(run, run_settings(run, threshold=2000, warmup=299))
    assert result.table == {1000.0: None}
    assert all(e.error and "usable sample" in e.error for e in result.experiments.values())


def test_a_run_judged_against_records_per_second_is_re_evaluated_so(tmp_path: Path) -> None:
    """The built-in defaults say ``thresholdRelToRate``: the analysis takes it from the run
    (no generator record here, so the rate is the load value, one record/s per key)."""
    make_run(tmp_path, 0, [2000], [1, 2, 3], reps=3)
    (tmp_path / "exp0-benchmark-configuration.json").write_text(json.dumps(
        {"slos": [{"name": "lag-trend", "sloType": "lag-trend", "properties": {"thresholdRelToRate": 0.3}}]}))
    run = open_run(tmp_path)
    settings = run_settings(run, warmup=60)
    assert (settings.threshold_key, settings.threshold_value) == ("thresholdRelToRate", 0.3)
    assert analyze(run, settings).table == {2000.0: 2.0}  # 600 records/s fails one instance


class _Rated:
    """A run whose generators were asked for twice the load value in records/s."""

    def target_rate(self, load: float, resources: float) -> float:
        return 2 * load


@pytest.mark.parametrize(("key", "value", "expected"), [
    ("threshold", 700.0, 700.0),
    ("thresholdRelToRate", 0.3, 0.3 * 4000),        # x the generated records/s
    ("thresholdRelToLoad", 0.3, 0.3 * 2000),        # x the load value, as the reference
    ("thresholdRelToResources", 100.0, 100.0 * 3),
    ("thresholdFromExpression", "100*R + L/10", 300.0 + 200.0),
])
def test_every_threshold_form_resolves_as_the_trend_slos_do(key: str, value: float | str, expected: float) -> None:
    from bench.analysis.analyze import Settings

    settings = Settings(60.0, key, value)
    assert settings.threshold_for(_Rated(), 2000.0, 3.0) == pytest.approx(expected)  # type: ignore[arg-type]
    assert f"threshold {str(value).removesuffix('.0')}" in settings.describe()


@pytest.mark.parametrize(("override", "expected"), [
    ({"thresholdRelToRate": 0.05}, ("thresholdRelToRate", 0.05)),  # UC4's default execution over 0.01
    ({"thresholdRelToLoad": 50}, ("thresholdRelToLoad", 50)),  # another form replaces it too
])
def test_a_stored_runs_threshold_is_the_one_its_execution_judged_with(
        tmp_path: Path, override: dict[str, float], expected: tuple[str, float]) -> None:
    """The result files keep the benchmark as written (1 % of the rate) and the
    execution's override beside it; the re-evaluation must take the override's form,
    not the first form of the two merged (the benchmark's absolute threshold would come
    first in the order the trend SLOs read)."""
    from bench.analysis.runs import RunFiles

    benchmark = {"slos": [{"name": "lag-trend", "sloType": "lag-trend",
                           "properties": {"threshold": 2000, "thresholdRelToRate": 0.01}}]}
    execution = {"slos": [{"name": "lag-trend", "properties": override}]}
    run = RunFiles(tmp_path, 0, benchmark=benchmark, execution=execution)
    settings = run_settings(run, warmup=60)
    assert (settings.threshold_key, settings.threshold_value) == expected
